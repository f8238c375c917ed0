// The one FIFO async semaphore of the library: bounds connections per origin,
// envd requests in flight and a sandbox's concurrent execs (exec_governor).
// Waiters queue in arrival order instead of failing.
#ifndef PRISM_E2B_CORE_ASYNC_SEMAPHORE_HPP
#define PRISM_E2B_CORE_ASYNC_SEMAPHORE_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

namespace prism_e2b {

class async_semaphore;

/// One unit of an async_semaphore; returned on destruction (move-only).
class semaphore_permit {
public:
    semaphore_permit() = default;
    semaphore_permit(semaphore_permit&& o) noexcept : sem_(std::exchange(o.sem_, nullptr)) {}
    semaphore_permit& operator=(semaphore_permit&& o) noexcept
    {
        if (this != &o) {
            reset();
            sem_ = std::exchange(o.sem_, nullptr);
        }
        return *this;
    }
    ~semaphore_permit() { reset(); }
    void reset() noexcept;
    explicit operator bool() const noexcept { return sem_ != nullptr; }
    /// Lets go of the unit without returning it: its owner returns it later
    /// with async_semaphore::release_detached() (for a holder whose layout is
    /// fixed, as exec_permit's).
    void detach() noexcept { sem_.reset(); }

private:
    friend class async_semaphore;
    explicit semaphore_permit(std::shared_ptr<async_semaphore> s) noexcept : sem_(std::move(s)) {}
    std::shared_ptr<async_semaphore> sem_;
};

/// Counting semaphore whose acquire() suspends the coroutine when no unit is
/// free; units are handed to waiters in FIFO order.
///
/// Thread safety: all members may be called concurrently (a mutex guards the
/// count and the queue). A queued waiter is its completion handler: whoever
/// takes it off the queue (release, close, its cancellation) posts it to the
/// waiter's executor, so it never resumes on the thread that let it go.
/// Per-operation cancellation of acquire(): terminal, partial and total (the
/// coroutine's filter decides which arrive); a waiter still queued
/// then gets errc::cancelled and holds no unit. One granted a unit before the
/// cancellation arrived keeps it: the result is the permit.
class async_semaphore : public std::enable_shared_from_this<async_semaphore> {
public:
    static std::shared_ptr<async_semaphore> create(std::size_t units);

    /// Errors: errc::cancelled when cancelled while queued (no unit is held)
    /// or when the semaphore is closed.
    boost::asio::awaitable<result<semaphore_permit>> acquire();
    /// A unit if one is free now, else an empty permit.
    semaphore_permit try_acquire();
    /// Returns a unit whose permit was detach()ed.
    void release_detached() noexcept { release(); }
    /// Fails every queued and later acquire() with errc::cancelled (the owner
    /// is going away); units already held are unaffected.
    void close() noexcept;

    std::size_t available() const;
    std::size_t waiting() const;
    std::size_t capacity() const noexcept { return units_; }

    struct waiter;  // private to the implementation

private:
    explicit async_semaphore(std::size_t units) : units_(units), free_(units) {}
    friend class semaphore_permit;
    void release() noexcept;
    /// Takes a free unit if no one is queued before us; call with mutex_ held.
    bool take_free_locked() noexcept
    {
        if (free_ == 0 || !queue_.empty()) return false;
        --free_;
        return true;
    }
    /// Queues a waiter, or completes it at once (through a post) when a unit
    /// was freed or the semaphore closed since acquire() looked.
    void enqueue(std::shared_ptr<waiter> w);
    /// Takes `w` off the queue and fails it with errc::cancelled, unless
    /// release() or close() took it first.
    void cancel(std::shared_ptr<waiter> const& w) noexcept;

    std::size_t const units_;
    mutable std::mutex mutex_;
    std::size_t free_;
    bool closed_ = false;
    std::deque<std::shared_ptr<waiter>> queue_;
};

}  // namespace prism_e2b

#endif
