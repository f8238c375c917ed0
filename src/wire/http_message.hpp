// The transport's Beast-free vocabulary: headers, a request, a buffered
// response and a streamed one. Any HTTP version behind `exchange` speaks it.
#ifndef PRISM_E2B_WIRE_HTTP_MESSAGE_HPP
#define PRISM_E2B_WIRE_HTTP_MESSAGE_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prism_e2b::wire {

using header_list = std::vector<std::pair<std::string, std::string>>;

/// Case-insensitive header lookup; nullptr when absent.
std::string const* find_header(header_list const& headers, std::string_view name) noexcept;

/// A request body produced piece by piece (a streamed upload), so the sender
/// holds one piece at a time. The transport rewinds it before each attempt and
/// sends Content-Length: size().
class body_source {
public:
    virtual ~body_source() = default;
    virtual std::uint64_t size() const noexcept = 0;
    virtual result<void> rewind() = 0;
    /// The next piece, valid until the next call; empty at the end.
    virtual result<std::string_view> next() = 0;
};

struct http_request {
    std::string method = "GET";
    std::string target = "/";  ///< path and query, already encoded; base_path is prepended
    header_list headers;
    std::string body;
    std::shared_ptr<body_source> body_stream;  ///< set: the body, streamed (`body` is then empty)
};

/// Header injection guard: names are tokens, values and the target carry no
/// CR, LF or NUL (a sandbox id or path from user input must not add headers).
/// The reason when `r` is not sendable, else nullopt.
std::optional<std::string> invalid_request(http_request const& r);

struct http_response {
    int status = 0;
    header_list headers;
    std::string body;  ///< decoded (Content-Encoding removed)
    std::string const* header(std::string_view name) const noexcept { return find_header(headers, name); }
};

/// An open streamed response: the status and headers are known, the body
/// arrives piecewise. Destroying it before the body was read to its end closes
/// the connection (it never returns to the pool half-read).
/// Thread safety: one read_some() at a time; close() may be called from any thread.
class http_stream {
public:
    virtual ~http_stream() = default;
    virtual int status() const noexcept = 0;
    virtual header_list const& headers() const noexcept = 0;
    /// Next piece of the body; an empty string once the body is complete.
    /// Errors: the transport's (cut: asio/beast codes), errc::cancelled,
    /// errc::timed_out when `idle_timeout` (0 = none) passes without data.
    virtual boost::asio::awaitable<result<std::string>> read_some(std::chrono::milliseconds idle_timeout) = 0;
    /// True once the whole body was read.
    virtual bool done() const noexcept = 0;
    /// Closes the connection; a pending read_some() fails.
    virtual void close() noexcept = 0;
};

}  // namespace prism_e2b::wire

#endif
