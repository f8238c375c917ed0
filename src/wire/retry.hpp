// The retry decorator: the one retry loop of the client, around any exchange.
// 429 with exponential backoff and full jitter, honouring an integer
// Retry-After; idempotent requests also on 5xx and network errors. Never
// past the call's deadline; sleeps honour cancellation.
#ifndef PRISM_E2B_WIRE_RETRY_HPP
#define PRISM_E2B_WIRE_RETRY_HPP

#include "wire/exchange.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace prism_e2b::wire {

/// Retry-After as whole seconds (the only form the official SDK honours).
std::optional<std::chrono::seconds> parse_retry_after(std::string const* value) noexcept;

/// The delay before retry number `attempt` (0-based): Retry-After when given,
/// else a uniformly random delay in [0, min(max_delay, base * 2^attempt)].
std::chrono::milliseconds backoff_delay(retry_policy const& p, unsigned attempt,
                                        std::optional<std::chrono::seconds> retry_after);

/// Wraps `inner` so every call is retried by its call_options::retry:
/// request() on 429 (and, when idempotent, on 5xx and network errors);
/// open_stream() on a 429 head only (a stream request is not replayed once
/// it may have started a process). A 429 still present after the last retry,
/// or whose Retry-After would pass the deadline, is returned as the answer
/// (the caller maps it to rate_limited). A retry that cannot start before the
/// deadline is not made: the last answer or error is returned. Errors: those of
/// `inner`; errc::cancelled when cancelled during a backoff sleep.
std::shared_ptr<exchange> make_retrying(std::shared_ptr<exchange> inner);

}  // namespace prism_e2b::wire

#endif
