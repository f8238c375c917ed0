// Coroutine helpers shared by the unit and integration tests: a plain sleep,
// cancellation after a delay, and a thread-safe output collector.
#ifndef PRISM_E2B_TESTS_COMMON_CORO_HELPERS_HPP
#define PRISM_E2B_TESTS_COMMON_CORO_HELPERS_HPP

#include <prism_e2b/process.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

namespace prism_e2b::test {

/// Waits `d` (returns early, without throwing, when cancelled).
inline boost::asio::awaitable<void> sleep_for(std::chrono::milliseconds d)
{
    namespace asio = boost::asio;
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

/// Runs `op` and emits terminal cancellation on it after `after`.
template <class T>
boost::asio::awaitable<T> cancel_after(boost::asio::awaitable<T> op, std::chrono::milliseconds after)
{
    namespace asio = boost::asio;
    auto ex = co_await asio::this_coro::executor;
    asio::cancellation_signal sig;
    asio::steady_timer t(ex, after);
    t.async_wait([&sig](boost::system::error_code ec) {
        if (!ec) sig.emit(asio::cancellation_type::terminal);
    });
    auto r = co_await asio::co_spawn(ex, std::move(op), asio::bind_cancellation_slot(sig.slot(), asio::use_awaitable));
    t.cancel();
    co_return r;
}

/// Collects streamed output; the callback may run on any thread.
struct collector {
    std::mutex mu;
    std::string data;
    output_callback cb()
    {
        return [this](output_stream, std::string_view d) {
            std::lock_guard lk(mu);
            data += d;
        };
    }
    std::string get()
    {
        std::lock_guard lk(mu);
        return data;
    }
};

}  // namespace prism_e2b::test

#endif
