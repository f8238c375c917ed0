#include "core/async_semaphore.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace asio = boost::asio;

namespace prism_e2b {

using acquired = void(result<semaphore_permit>);

// A queued acquire(): its completion handler and where it runs. About 120
// bytes, where a one-slot channel per waiter took over a kilobyte. Whoever
// takes the waiter off the queue completes it, exactly once.
struct async_semaphore::waiter {
    // Boost 1.81's any_completion_handler is move-constructible but its move
    // assignment recurses: it is built here, in place, and never assigned.
    template <class Handler>
    waiter(Handler&& h, asio::any_io_executor ex) : handler(std::forward<Handler>(h)), executor(std::move(ex))
    {
    }
    asio::any_completion_handler<acquired> handler;
    asio::any_io_executor executor;

    // Call without the mutex held: the waiter resumes through its executor.
    static void complete(std::shared_ptr<waiter> w, result<semaphore_permit> r)
    {
        auto ex = w->executor;
        asio::post(ex, [w = std::move(w), r = std::move(r)]() mutable { std::move(w->handler)(std::move(r)); });
    }
};

namespace {
error closed_error() { return error(errc::cancelled, "the semaphore was closed"); }
}  // namespace

std::shared_ptr<async_semaphore> async_semaphore::create(std::size_t units)
{
    return std::shared_ptr<async_semaphore>(new async_semaphore(units));
}

void semaphore_permit::reset() noexcept
{
    if (auto s = std::exchange(sem_, nullptr)) s->release();
}

semaphore_permit async_semaphore::try_acquire()
{
    std::lock_guard lock(mutex_);
    if (take_free_locked()) return semaphore_permit(shared_from_this());
    return {};
}

asio::awaitable<result<semaphore_permit>> async_semaphore::acquire()
{
    {
        std::lock_guard lock(mutex_);
        if (closed_) co_return closed_error();
        if (take_free_locked()) co_return semaphore_permit(shared_from_this());
    }
    // Named, not a temporary of the co_await: g++ 12 destroys those twice.
    auto queue_me = [this](auto handler) {
        auto ex = asio::get_associated_executor(handler, asio::system_executor());
        auto slot = asio::get_associated_cancellation_slot(handler);
        auto w = std::make_shared<waiter>(std::move(handler), std::move(ex));
        if (slot.is_connected()) {
            // Any type: a waiter still queued has done nothing, so leaving is
            // terminal, partial and total at once. Weak both: the waiter's own
            // coroutine holds this handler.
            slot.assign([sem = weak_from_this(), weak = std::weak_ptr<waiter>(w)](asio::cancellation_type) {
                auto s = sem.lock();
                auto w = weak.lock();
                if (s && w) s->cancel(w);
            });
        }
        enqueue(std::move(w));
    };
    // Asio throws here, before the waiter is queued, if the caller was
    // cancelled already (throw_if_cancelled).
    co_return co_await asio::async_initiate<asio::use_awaitable_t<> const, acquired>(queue_me, asio::use_awaitable);
}

void async_semaphore::enqueue(std::shared_ptr<waiter> w)
{
    result<semaphore_permit> now = closed_error();
    {
        std::lock_guard lock(mutex_);
        if (!closed_) {
            if (!take_free_locked()) {
                queue_.push_back(std::move(w));
                return;
            }
            now = semaphore_permit(shared_from_this());
        }
    }
    waiter::complete(std::move(w), std::move(now));
}

void async_semaphore::cancel(std::shared_ptr<waiter> const& w) noexcept
{
    {
        std::lock_guard lock(mutex_);
        auto it = std::find(queue_.begin(), queue_.end(), w);
        if (it == queue_.end()) return;  // granted or closed already: that completion stands
        queue_.erase(it);
    }
    waiter::complete(w, error(errc::cancelled, "cancelled while waiting for a slot"));
}

void async_semaphore::close() noexcept
{
    std::deque<std::shared_ptr<waiter>> orphans;
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        orphans.swap(queue_);
    }
    for (auto& w : orphans) waiter::complete(std::move(w), closed_error());
}

void async_semaphore::release() noexcept
{
    std::shared_ptr<waiter> next;
    {
        std::lock_guard lock(mutex_);
        if (queue_.empty()) {
            ++free_;
            return;
        }
        next = std::move(queue_.front());
        queue_.pop_front();
    }
    waiter::complete(std::move(next), semaphore_permit(shared_from_this()));
}

std::size_t async_semaphore::available() const
{
    std::lock_guard lock(mutex_);
    return free_;
}

std::size_t async_semaphore::waiting() const
{
    std::lock_guard lock(mutex_);
    return queue_.size();
}

}  // namespace prism_e2b
