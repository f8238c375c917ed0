// exec_governor: max_commands accounting plus an async FIFO semaphore.
//
// Synchronisation: one std::mutex in the shared state guards the counters and
// the wait queue. It is never held while a handler runs or a coroutine is
// suspended: completions are moved out under the lock and posted afterwards to
// the waiter's associated executor.
#include <prism_e2b/exec_governor.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace prism_e2b {

namespace asio = boost::asio;

namespace detail {

using acquire_signature = void(result<exec_permit>);
using acquire_handler = asio::any_completion_handler<acquire_signature>;

// A queued acquirer: its type-erased handler and the executor it completes on
// (kept concrete because any_completion_executor cannot post in Boost 1.81).
// Only ever move-constructed: Boost 1.81's any_completion_handler move
// assignment wraps the handler in itself recursively (stack overflow).
struct acquire_waiter {
    acquire_handler handler;
    asio::any_io_executor executor;
};

}  // namespace detail

using detail::acquire_handler;
using detail::acquire_signature;
using detail::acquire_waiter;

// Shared by the governor, every permit and every cancellation handler, so a
// permit or a late cancellation may outlive the governor safely.
struct exec_permit::shared_state : std::enable_shared_from_this<shared_state> {
    explicit shared_state(sandbox_limits const& l) : limits(l) {}

    sandbox_limits const limits;

    mutable std::mutex mutex;
    std::uint32_t admitted = 0;   // commands counted against max_commands
    std::uint32_t in_flight = 0;  // slots held by permits (or being handed to a waiter)
    bool closed = false;          // the governor is gone: no more queueing
    std::atomic<std::uint64_t> next_id{0};
    // Ids grow monotonically, so begin() is the oldest waiter: FIFO.
    std::map<std::uint64_t, acquire_waiter> waiters;

    // Runs the waiter with `r` on its executor, never inline: the caller may
    // be a permit's destructor or the initiating function.
    static void complete(acquire_waiter w, result<exec_permit> r)
    {
        auto ex = std::move(w.executor);
        asio::post(ex, [h = std::move(w.handler), r = std::move(r)]() mutable { std::move(h)(std::move(r)); });
    }

    template <class Handler>
    static acquire_waiter make_waiter(Handler&& handler)
    {
        asio::any_io_executor ex = asio::get_associated_executor(handler);
        return {acquire_handler(std::forward<Handler>(handler)), std::move(ex)};
    }

    exec_permit make_permit() { return exec_permit(shared_from_this(), limits.max_output_bytes); }

    // Returns a slot; hands it directly to the oldest waiter if there is one.
    void release() noexcept
    {
        std::optional<acquire_waiter> next;
        {
            std::lock_guard lock(mutex);
            if (waiters.empty()) {
                --in_flight;
                return;
            }
            // The slot moves to the waiter: in_flight stays unchanged.
            auto it = waiters.begin();
            next.emplace(std::move(it->second));
            waiters.erase(it);
        }
        bool handed = false;
        try {
            auto permit = make_permit();
            handed = true;
            complete(std::move(*next), std::move(permit));
        } catch (...) {
            // Out of memory. If the permit exists, destroying it (with the
            // unrun handler) returned the slot already; otherwise return it here.
            if (!handed) {
                std::lock_guard lock(mutex);
                --in_flight;
            }
        }
    }

    // The waiter `id` leaves the queue if it is still there.
    void cancel(std::uint64_t id)
    {
        std::optional<acquire_waiter> h;
        {
            std::lock_guard lock(mutex);
            auto it = waiters.find(id);
            if (it == waiters.end()) return;  // already granted, cancelled or failed
            h.emplace(std::move(it->second));
            waiters.erase(it);
            --admitted;  // refund: the command never ran
        }
        complete(std::move(*h), error(errc::cancelled, "cancelled while waiting for an exec slot", {"acquire"}));
    }

    // Installed in the waiter's cancellation slot. It may fire after the waiter
    // was granted (it stays installed until the slot is reused): then it finds
    // nothing to do. It holds the state weakly so it never keeps it alive.
    struct waiter_cancellation {
        std::weak_ptr<shared_state> state;
        std::uint64_t id;

        void operator()(asio::cancellation_type_t type)
        {
            // Terminal, partial and total are all satisfied: a queued waiter has
            // had no side effect and its command count is refunded.
            if ((type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                         asio::cancellation_type::total)) == asio::cancellation_type::none)
                return;
            if (auto s = state.lock()) s->cancel(id);
        }
    };

    struct initiate_acquire {
        std::shared_ptr<shared_state> state;

        template <class Handler>
        void operator()(Handler&& handler) const
        {
            auto& s = *state;
            // Type-erase first: any_completion_handler puts its own forwarding
            // state into the caller's slot (replacing whatever was there) and
            // exposes a child slot, which is where our handler belongs.
            auto waiter = make_waiter(std::forward<Handler>(handler));
            // Install the cancellation handler before the waiter can become
            // visible to another thread (which could complete it and let the
            // coroutine reuse its slot), and outside the lock. If the waiter is
            // never queued, the handler later finds nothing to cancel.
            auto const id = s.next_id.fetch_add(1, std::memory_order_relaxed);
            auto slot = waiter.handler.get_cancellation_slot();
            if (slot.is_connected()) slot.template emplace<waiter_cancellation>(waiter_cancellation{state, id});

            std::unique_lock lock(s.mutex);
            if (s.closed) {
                lock.unlock();
                return s.complete(std::move(waiter),
                                  error(errc::cancelled, "the exec governor was destroyed", {"acquire"}));
            }
            if (s.admitted >= s.limits.max_commands) {
                auto const max = s.limits.max_commands;
                lock.unlock();
                return s.complete(
                    std::move(waiter),
                    error(errc::limit_exceeded, "max_commands = " + std::to_string(max) + " commands already admitted",
                          {"acquire"}));
            }
            if (s.waiters.empty() && s.in_flight < s.limits.max_concurrent_execs) {
                auto permit = s.make_permit();
                ++s.admitted;
                ++s.in_flight;
                lock.unlock();
                return s.complete(std::move(waiter), std::move(permit));
            }
            s.waiters.emplace(id, std::move(waiter));
            ++s.admitted;
        }
    };
};

// ---- output_budget -----------------------------------------------------------

bool output_budget::consume(std::uint64_t n) noexcept
{
    std::uint64_t prev = used_.load(std::memory_order_relaxed);
    std::uint64_t next = 0;
    do {
        // Saturate instead of wrapping around.
        next = n > UINT64_MAX - prev ? UINT64_MAX : prev + n;
    } while (!used_.compare_exchange_weak(prev, next, std::memory_order_acq_rel, std::memory_order_relaxed));
    if (next > max_) {
        overflowed_.store(true, std::memory_order_release);
        return false;
    }
    return true;
}

// ---- exec_permit ---------------------------------------------------------------

exec_permit::exec_permit(std::shared_ptr<shared_state> s, std::uint64_t max_output)
    : state_(std::move(s)), budget_(std::make_unique<output_budget>(max_output))
{
}

exec_permit::exec_permit(exec_permit&& other) noexcept
    : state_(std::move(other.state_)), budget_(std::move(other.budget_))
{
}

exec_permit& exec_permit::operator=(exec_permit&& other) noexcept
{
    if (this != &other) {
        reset();
        state_ = std::move(other.state_);
        budget_ = std::move(other.budget_);
    }
    return *this;
}

exec_permit::~exec_permit() { reset(); }

void exec_permit::reset() noexcept
{
    if (auto s = std::move(state_)) s->release();
    budget_.reset();
}

// ---- exec_governor -------------------------------------------------------------

exec_governor::exec_governor(sandbox_limits const& limits) : state_(std::make_shared<exec_permit::shared_state>(limits))
{
}

exec_governor::~exec_governor()
{
    // Queued waiters would otherwise wait forever: fail them (refunded).
    std::map<std::uint64_t, acquire_waiter> orphans;
    {
        std::lock_guard lock(state_->mutex);
        state_->closed = true;
        orphans.swap(state_->waiters);
        state_->admitted -= static_cast<std::uint32_t>(orphans.size());
    }
    for (auto& [id, h] : orphans) {
        try {
            exec_permit::shared_state::complete(std::move(h),
                                                error(errc::cancelled, "the exec governor was destroyed", {"acquire"}));
        } catch (...) {
            // Could not post (out of memory): the handler is destroyed unrun.
        }
    }
}

asio::awaitable<result<exec_permit>> exec_governor::acquire()
{
    // Not a coroutine: the operation's handler is the awaiting coroutine's
    // own, so its cancellation slot is the caller's per-operation slot.
    using initiation = exec_permit::shared_state::initiate_acquire;
    return asio::async_initiate<decltype(asio::use_awaitable), acquire_signature>(initiation{state_},
                                                                                  asio::use_awaitable);
}

result<void> exec_governor::admit()
{
    std::lock_guard lock(state_->mutex);
    if (state_->admitted >= state_->limits.max_commands)
        return error(errc::limit_exceeded,
                     "max_commands = " + std::to_string(state_->limits.max_commands) + " commands already admitted",
                     {"admit"});
    ++state_->admitted;
    return {};
}

std::uint32_t exec_governor::commands_admitted() const noexcept
{
    std::lock_guard lock(state_->mutex);
    return state_->admitted;
}

std::uint32_t exec_governor::in_flight() const noexcept
{
    std::lock_guard lock(state_->mutex);
    return state_->in_flight;
}

std::uint32_t exec_governor::waiting() const noexcept
{
    std::lock_guard lock(state_->mutex);
    return static_cast<std::uint32_t>(state_->waiters.size());
}

sandbox_limits const& exec_governor::limits() const noexcept { return state_->limits; }

}  // namespace prism_e2b
