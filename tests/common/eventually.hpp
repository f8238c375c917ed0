// Waits for a state instead of sleeping a fixed time: polls `pred` until it
// holds or `deadline` passes (then returns false, so the test fails).
#ifndef PRISM_E2B_TESTS_COMMON_EVENTUALLY_HPP
#define PRISM_E2B_TESTS_COMMON_EVENTUALLY_HPP

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <thread>
#include <type_traits>

namespace prism_e2b::test {

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds deadline = std::chrono::seconds(20))
{
    auto const until = std::chrono::steady_clock::now() + deadline;
    for (;;) {
        if (pred()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

/// The same inside a coroutine: the io_context keeps running while it waits.
/// `pred` returns bool, or awaitable<bool> to ask through the API under test.
/// A template on purpose (callers pass a named closure): a std::function
/// temporary inside co_await hits g++ 12's double destruction.
template <class Pred>
boost::asio::awaitable<bool> async_eventually(Pred pred, std::chrono::milliseconds deadline = std::chrono::seconds(20))
{
    namespace asio = boost::asio;
    auto const until = std::chrono::steady_clock::now() + deadline;
    asio::steady_timer t(co_await asio::this_coro::executor);
    for (;;) {
        bool holds = false;
        if constexpr (std::is_same_v<decltype(pred()), asio::awaitable<bool>>)
            holds = co_await pred();
        else
            holds = pred();
        if (holds) co_return true;
        if (std::chrono::steady_clock::now() >= until) co_return false;
        t.expires_after(std::chrono::milliseconds(2));
        co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

}  // namespace prism_e2b::test

#endif
