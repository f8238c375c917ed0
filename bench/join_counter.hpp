// Waits for a count of detached coroutines to finish.
#ifndef PRISM_E2B_BENCH_JOIN_COUNTER_HPP
#define PRISM_E2B_BENCH_JOIN_COUNTER_HPP

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>

namespace prism_e2b::bench {

/// Counts outstanding coroutines; wait() returns when the count reaches zero.
/// Thread safety: the count is atomic and the waiter polls it with its own
/// timer every millisecond, so no I/O object is shared between threads of a
/// multi-threaded io_context (the wall-clock error is at most 1 ms).
class join_counter {
public:
    void add(std::size_t n) { left_ += n; }
    void done() { --left_; }
    std::size_t left() const { return left_.load(); }
    boost::asio::awaitable<void> wait()
    {
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
        while (left_.load() != 0) {
            t.expires_after(std::chrono::milliseconds(1));
            auto [ec] = co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
            (void)ec;
        }
    }

private:
    std::atomic<std::size_t> left_{0};
};

}  // namespace prism_e2b::bench

#endif
