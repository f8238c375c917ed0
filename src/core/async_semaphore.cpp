#include "core/async_semaphore.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <tuple>

namespace asio = boost::asio;

namespace prism_e2b {

// A waiter owns a one-slot channel: release() try_sends into it, which is
// thread-safe and never lost even if the waiter has not started waiting yet.
struct async_semaphore::waiter {
    explicit waiter(asio::any_io_executor const& ex) : channel(ex, 1) {}
    asio::experimental::concurrent_channel<void(boost::system::error_code)> channel;
    bool granted = false;  // guarded by the semaphore's mutex
    bool closed = false;   // set under the mutex before the wake-up
};

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
    if (free_ > 0 && queue_.empty()) {
        --free_;
        return semaphore_permit(shared_from_this());
    }
    return {};
}

asio::awaitable<result<semaphore_permit>> async_semaphore::acquire()
{
    auto self = shared_from_this();
    std::shared_ptr<waiter> w;
    {
        std::lock_guard lock(mutex_);
        if (closed_) co_return error(errc::cancelled, "the semaphore was closed");
        if (free_ > 0 && queue_.empty()) {
            --free_;
            co_return semaphore_permit(self);
        }
        w = std::make_shared<waiter>(co_await asio::this_coro::executor);
        queue_.push_back(w);
    }
    boost::system::error_code ec;
    try {
        std::tie(ec) = co_await w->channel.async_receive(asio::as_tuple(asio::use_awaitable));
    } catch (...) {
        // Cancelled before the wait began (throw_if_cancelled): leave the queue
        // or pass on a unit granted meanwhile, then let the caller see it.
        if (leave(w)) release();
        throw;
    }
    bool const granted = leave(w);
    if (granted && !ec && !w->closed) co_return semaphore_permit(self);
    if (granted) release();  // granted and cancelled at once: pass the unit on
    if (w->closed) co_return error(errc::cancelled, "the semaphore was closed");
    co_return error(errc::cancelled, "cancelled while waiting for a slot");
}

bool async_semaphore::leave(std::shared_ptr<waiter> const& w) noexcept
{
    std::lock_guard lock(mutex_);
    if (!w->granted) queue_.erase(std::remove(queue_.begin(), queue_.end(), w), queue_.end());
    return w->granted;
}

void async_semaphore::close() noexcept
{
    std::deque<std::shared_ptr<waiter>> orphans;
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        orphans.swap(queue_);
        for (auto& w : orphans) w->closed = true;
    }
    for (auto& w : orphans) w->channel.try_send(boost::system::error_code{});
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
        next->granted = true;
    }
    next->channel.try_send(boost::system::error_code{});
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
