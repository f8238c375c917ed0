// The one stale-connection replay path: a request that fails on a reused
// keep-alive connection before any response byte arrived (the server closed
// it while it sat idle) is replayed once on a new connection. Nothing was
// processed, so this is safe for every method, streams included.
#ifndef PRISM_E2B_WIRE_STALE_REPLAY_HPP
#define PRISM_E2B_WIRE_STALE_REPLAY_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>

namespace prism_e2b::wire {

/// One attempt's outcome and whether it may be replayed.
template <class T>
struct attempt_outcome {
    result<T> value;
    bool stale = false;  ///< reused connection, no response byte, a stale-connection error
};

/// Runs `attempt(fresh = false)`; when that failed stale, `attempt(true)` once.
template <class T>
boost::asio::awaitable<result<T>> replay_if_stale(
    std::function<boost::asio::awaitable<attempt_outcome<T>>(bool)> attempt)
{
    auto first = co_await attempt(false);
    if (first.value || !first.stale) co_return std::move(first.value);
    auto second = co_await attempt(true);
    co_return std::move(second.value);
}

}  // namespace prism_e2b::wire

#endif
