// Test helpers: run an awaitable to completion on a fresh io_context with a
// deadline, so a hung test fails instead of hanging CI.
#ifndef PRISM_E2B_TESTS_COMMON_RUN_CORO_HPP
#define PRISM_E2B_TESTS_COMMON_RUN_CORO_HPP

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace prism_e2b::test {

/// run_coro's timeout for a test that starts real sandboxes and processes.
inline constexpr std::chrono::milliseconds long_test = std::chrono::seconds(120);

/// Runs `make(executor)`'s awaitable on `ioc` (restarted first) driven by
/// `threads` threads; fails the test (throws) when it has not finished within
/// `timeout`. For tests whose objects need the executor before the coroutine
/// runs (a fake client constructed with it).
template <class MakeAwaitable>
auto run_coro(boost::asio::io_context& ioc, MakeAwaitable make,
              std::chrono::milliseconds timeout = std::chrono::seconds(60), int threads = 1)
{
    ioc.restart();
    auto fut = boost::asio::co_spawn(ioc, make(ioc.get_executor()), boost::asio::use_future);
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back([&] { ioc.run(); });
    auto const deadline = std::chrono::steady_clock::now() + timeout;
    while (fut.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
        if (std::chrono::steady_clock::now() > deadline) {
            ioc.stop();
            for (auto& t : pool) t.join();
            throw std::runtime_error("run_coro: timed out");
        }
        ioc.run_for(std::chrono::milliseconds(20));
    }
    ioc.stop();
    for (auto& t : pool) t.join();
    return fut.get();
}

/// Runs `make(executor)`'s awaitable on a fresh io_context driven by `threads`
/// threads; fails the test (throws) when it has not finished within `timeout`.
template <class MakeAwaitable>
auto run_coro(MakeAwaitable make, std::chrono::milliseconds timeout = std::chrono::seconds(60), int threads = 1)
{
    boost::asio::io_context ioc(threads);
    return run_coro(ioc, std::move(make), timeout, threads);
}

}  // namespace prism_e2b::test

#endif
