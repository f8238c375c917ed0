// The library's error model: one error_code category, a redacted error value,
// result<T>, and the exception that result<T>::value() throws.
#ifndef PRISM_E2B_ERROR_HPP
#define PRISM_E2B_ERROR_HPP

#include <prism_e2b/export.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>
#include <boost/system/system_error.hpp>

#include <string>
#include <string_view>

namespace prism_e2b {

/// Conditions the library reports. Asio, SSL and Beast errors pass through
/// unchanged in their own categories.
enum class errc {
    /// A request or option is malformed (bad env name, NUL byte, bad URL). Fix the input.
    invalid_argument = 1,
    /// A contract limit was hit (max_commands, max_output_bytes, env caps, session caps).
    limit_exceeded,
    /// The sandbox is paused. Call resume() first; activity never resumes it.
    paused,
    /// The sandbox, process, file or path does not exist (any more).
    not_found,
    /// The API key or envd access token is missing or wrong (HTTP 401, Connect unauthenticated).
    unauthenticated,
    /// The caller may not do this (HTTP 403, Connect permission_denied).
    permission_denied,
    /// The vendor throttled us (HTTP 429) and retries were exhausted. Slow down.
    rate_limited,
    /// The vendor refused for now (HTTP 503). Retry later; nothing changed.
    service_busy,
    /// The vendor's state conflicts with the request (HTTP 409).
    conflict,
    /// The target exists already (Connect already_exists).
    already_exists,
    /// The sandbox's labels, id or workspace do not match what the caller expected. Nothing was done.
    wrong_owner,
    /// This backend does not offer the operation. Nothing was done.
    unsupported,
    /// The peer sent something that does not follow the protocol (bad JSON, bad framing).
    protocol_error,
    /// The operation may or may not have happened (stream cut before its end). Inspect the sandbox.
    unknown_outcome,
    /// A deadline passed before the operation finished.
    timed_out,
    /// The operation was cancelled by the caller.
    cancelled,
    /// The vendor failed (HTTP 5xx other than 503, Connect internal/unknown).
    server_error,
};

/// The category of errc values; its name is "prism_e2b".
PRISM_E2B_API boost::system::error_category const& error_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

/// True for conditions where the same request may succeed later unchanged
/// (rate_limited, service_busy, timed_out, server_error and transient network errors).
PRISM_E2B_API bool is_retryable(boost::system::error_code const& ec) noexcept;

/// Where an error came from, beyond its code. Every text is redacted at construction.
struct error_details {
    std::string operation;    ///< e.g. "pause", "process.Start"; empty when not applicable
    int http_status = 0;      ///< 0 when no HTTP response was involved
    std::string vendor_code;  ///< Connect code name or REST "code" field, as sent by the vendor
};

/// An error: a code, a message and details, with every known secret replaced by
/// `[REDACTED]` (see secret_redactor::global()) when it is built.
class PRISM_E2B_API error {
public:
    error() = default;
    /// An error with `code`; `message` and `details` are redacted here.
    error(boost::system::error_code code, std::string_view message, error_details details = {});
    /// An error with a prism_e2b code; `message` and `details` are redacted here.
    error(errc code, std::string_view message, error_details details = {})
        : error(make_error_code(code), message, std::move(details))
    {
    }

    boost::system::error_code const& code() const noexcept
    {
        return code_;
    }  ///< the code (an errc, or a system/transport code passed through)
    std::string const& message() const noexcept { return message_; }              ///< the redacted message
    std::string const& operation() const noexcept { return details_.operation; }  ///< what was being done, e.g. "pause"
    int http_status() const noexcept { return details_.http_status; }  ///< the vendor's HTTP status, 0 when none
    std::string const& vendor_code() const noexcept
    {
        return details_.vendor_code;
    }  ///< the vendor's error code text, when it sent one

    /// One line: "<operation>: <message> [<code message>, HTTP <status>, <vendor code>]", redacted.
    std::string to_string() const;

    friend bool operator==(error const& e, errc c) noexcept
    {
        return e.code_ == make_error_code(c);
    }  ///< true when `e` carries the errc `c`

private:
    boost::system::error_code code_;
    std::string message_;
    error_details details_;
};

/// Result of every fallible operation. `.value()` throws prism_e2b::exception.
template <class T>
using result = boost::system::result<T, error>;

/// The exception thrown by result<T>::value(); what() is redacted.
class PRISM_E2B_API exception : public boost::system::system_error {
public:
    explicit exception(error err);                            ///< the error thrown; what() is its to_string()
    error const& get_error() const noexcept { return err_; }  ///< the error thrown

private:
    error err_;
};

/// ADL hook used by boost::system::result<T, error>::value().
[[noreturn]] PRISM_E2B_API void throw_exception_from_error(error const& e, boost::source_location const& loc);

}  // namespace prism_e2b

namespace boost::system {
template <>
struct is_error_code_enum<prism_e2b::errc> : std::true_type {
};
}  // namespace boost::system

#endif
