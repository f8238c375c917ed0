// Retry policy of the control plane and envd calls: 429 with exponential
// backoff and full jitter, honouring an integer Retry-After; idempotent
// requests also on 5xx and network errors. Sleeps honour cancellation.
#ifndef PRISM_E2B_WIRE_RETRY_HPP
#define PRISM_E2B_WIRE_RETRY_HPP

#include "wire/http_transport.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

namespace prism_e2b::wire {

struct retry_policy {
    unsigned max_retries = 3;
    std::chrono::milliseconds base_delay{250};
    std::chrono::milliseconds max_delay{30000};
    /// Retry 5xx (except `no_retry_status`) and transport errors too.
    bool idempotent = false;
    /// A status that is an answer, not a failure (502 for /health).
    int no_retry_status = 0;
    /// A Retry-After longer than this is not waited for: the 429 is returned
    /// (the official SDK gives up when the wait would pass its request deadline).
    std::chrono::milliseconds max_retry_after{60000};
};

/// Retry-After as whole seconds (the only form the official SDK honours).
std::optional<std::chrono::seconds> parse_retry_after(std::string const* value) noexcept;

/// The delay before retry number `attempt` (0-based): Retry-After when given,
/// else a uniformly random delay in [0, min(max_delay, base * 2^attempt)].
std::chrono::milliseconds backoff_delay(retry_policy const& p, unsigned attempt,
                                        std::optional<std::chrono::seconds> retry_after);

/// Runs `attempt` until it yields a final answer. A 429 still present after the
/// last retry is returned as the response (the caller maps it to rate_limited).
/// Errors: those of `attempt`; errc::cancelled when cancelled during a sleep.
boost::asio::awaitable<result<http_response>> with_retries(
    retry_policy policy, std::function<boost::asio::awaitable<result<http_response>>()> attempt);

}  // namespace prism_e2b::wire

#endif
