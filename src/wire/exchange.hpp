// The one interface every layer of the transport implements, so layers stack
// as decorators (as google-cloud-cpp's stubs): the HTTP/1.1 transport at the
// bottom (an HTTP/2 connection slots in behind the same interface), the retry
// decorator above it, the clients on top. A call carries its call_options
// down the stack; each layer uses the part that concerns it.
#ifndef PRISM_E2B_WIRE_EXCHANGE_HPP
#define PRISM_E2B_WIRE_EXCHANGE_HPP

#include "wire/http_message.hpp"
#include "wire/origin.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <memory>

namespace prism_e2b::wire {

/// When a failed attempt is tried again (used by the retry decorator).
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

/// How one call is made. Bounds are absolute where they span attempts.
struct call_options {
    using clock = std::chrono::steady_clock;
    /// Bound on one attempt: writing the request and reading the whole
    /// response (request()) or its head (open_stream()); 0 disables.
    std::chrono::milliseconds attempt_timeout{0};
    /// The whole call, retries and their backoff included; max() = none.
    clock::time_point deadline = clock::time_point::max();
    /// Cap on the decoded response body of request(); 0 = the transport's default.
    std::size_t max_response_bytes = 0;
    retry_policy retry;

    /// min(now + attempt_timeout, deadline); max() when neither bounds.
    clock::time_point attempt_deadline() const noexcept;
};

/// Sends requests to origins. Errors: transport errors pass through (asio,
/// ssl, beast categories), a deadline is errc::timed_out, cancellation
/// errc::cancelled, a body over its cap errc::limit_exceeded. HTTP statuses are
/// answers, not errors. Per-operation cancellation: terminal.
/// Thread safety: implementations allow concurrent calls.
class exchange {
public:
    virtual ~exchange() = default;
    /// Sends `req` and reads the whole (decoded) response.
    virtual boost::asio::awaitable<result<http_response>> request(origin o, http_request req, call_options opts) = 0;
    /// Sends `req` and reads the response head; the body is read through the stream.
    virtual boost::asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream(origin o, http_request req,
                                                                                     call_options opts) = 0;
};

}  // namespace prism_e2b::wire

#endif
