// Keep-alive connections per origin: at most `max_per_origin` open (busy +
// idle) per origin key, later requests wait in FIFO order for a slot; idle
// connections older than the idle timeout are closed instead of reused.
#ifndef PRISM_E2B_WIRE_CONNECTION_POOL_HPP
#define PRISM_E2B_WIRE_CONNECTION_POOL_HPP

#include "core/async_semaphore.hpp"
#include "wire/connection.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace prism_e2b::wire {

/// One origin's slots and idle connections. Thread safety: all members may be
/// called concurrently (a mutex guards the idle list and the count).
struct origin_pool {
    explicit origin_pool(std::size_t cap) : slots(async_semaphore::create(cap)) {}
    std::shared_ptr<async_semaphore> slots;
    std::mutex mutex;
    std::vector<std::shared_ptr<connection>> idle;  // most recently used last
    std::size_t open = 0;                           // guarded by mutex

    /// The freshest idle connection younger than `max_idle` and still open.
    std::shared_ptr<connection> take_idle(std::chrono::milliseconds max_idle);
    void put_idle(std::shared_ptr<connection> c);
    void opened();
    /// Closes `c` (on its strand) and forgets it.
    void discard(std::shared_ptr<connection> const& c);
};

/// A connection checked out of its pool plus the slot it occupies. On
/// destruction the connection returns to the pool when `reusable`, else closes.
struct lease {
    lease() = default;
    lease(lease&&) = default;
    lease& operator=(lease&& o) noexcept;
    ~lease() { reset(); }
    void reset() noexcept;

    std::shared_ptr<origin_pool> pool;
    std::shared_ptr<connection> conn;
    semaphore_permit permit;
    bool reusable = false;
};

/// The pools of one transport. Thread safety: all members may be called concurrently.
class connection_pool {
public:
    connection_pool(boost::asio::any_io_executor ex, lazy_tls_context& tls, std::size_t max_per_origin,
                    std::chrono::milliseconds idle_timeout, std::chrono::milliseconds connect_timeout)
        : ex_(std::move(ex)),
          tls_(tls),
          max_per_origin_(std::max<std::size_t>(1, max_per_origin)),
          idle_timeout_(idle_timeout),
          connect_timeout_(connect_timeout)
    {
    }

    /// A slot of the origin's pool plus an idle connection, or a new one when
    /// `fresh` or none is idle. Errors: those of open_connection(), errc::cancelled.
    boost::asio::awaitable<result<lease>> acquire(origin const& o, bool fresh);

    std::size_t opened() const noexcept { return opened_.load(); }
    std::size_t reused() const noexcept { return reused_.load(); }
    /// Connections open to `o` now (busy + idle).
    std::size_t open_connections(origin const& o) const;

private:
    std::shared_ptr<origin_pool> pool_for(origin const& o);

    boost::asio::any_io_executor ex_;
    lazy_tls_context& tls_;
    std::size_t const max_per_origin_;
    std::chrono::milliseconds const idle_timeout_;
    std::chrono::milliseconds const connect_timeout_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<origin_pool>> pools_;
    std::atomic<std::size_t> opened_{0}, reused_{0};
};

}  // namespace prism_e2b::wire

#endif
