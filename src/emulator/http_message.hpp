// Beast-free HTTP request/response types and the response sink the route
// handlers write to; http_listener.cpp implements the sink over Beast.
#ifndef PRISM_E2B_EMULATOR_HTTP_MESSAGE_HPP
#define PRISM_E2B_EMULATOR_HTTP_MESSAGE_HPP

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prism_e2b::local::detail {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct http_request {
    std::string method;   ///< "GET", "POST", ...
    std::string target;   ///< as received
    std::string path;     ///< target without the query, percent-decoded
    std::string query;    ///< raw query string (after '?'), not decoded
    header_list headers;  ///< names lower-cased
    std::string body;
    std::chrono::steady_clock::time_point received;  ///< when the request was complete
    /// A HEAD request: routed as the GET it stands for (method says "GET"), answered with
    /// that GET's status and headers and no body (RFC 9110 9.3.2).
    bool head = false;

    /// Sets method from the request line or :method; HEAD becomes GET with `head` set.
    void set_method(std::string m)
    {
        head = m == "HEAD";
        method = head ? std::string("GET") : std::move(m);
    }

    /// First header with this lower-case name, or empty.
    std::string_view header(std::string_view lower_name) const noexcept
    {
        for (auto const& [n, v] : headers)
            if (n == lower_name) return v;
        return {};
    }
    bool has_header(std::string_view lower_name) const noexcept
    {
        for (auto const& [n, v] : headers)
            if (n == lower_name) return true;
        return false;
    }
};

/// Whether a response with this status never has a body (RFC 9110 6.4.1: 1xx, 204, 304).
constexpr bool status_has_no_body(int status) noexcept
{
    return (status >= 100 && status < 200) || status == 204 || status == 304;
}

struct http_response {
    int status = 200;
    std::string content_type = "application/json";
    header_list headers;
    std::string body;
};

/// 204 No Content: no body, so no Content-Type either.
inline http_response no_content()
{
    http_response r;
    r.status = 204;
    r.content_type.clear();
    return r;
}

/// Where a handler writes its answer: either one send(), or begin_stream() followed
/// by write_chunk()s and finish_stream() (chunked transfer encoding, each chunk
/// flushed). Every call returns false once the peer is gone. Used from the
/// session's strand only.
class response_sink {
public:
    virtual ~response_sink() = default;
    virtual boost::asio::awaitable<bool> send(http_response r) = 0;
    virtual boost::asio::awaitable<bool> begin_stream(int status, std::string content_type, header_list headers) = 0;
    virtual boost::asio::awaitable<bool> write_chunk(std::string data) = 0;
    virtual boost::asio::awaitable<bool> finish_stream() = 0;
    /// Closes the connection at once (no terminating chunk): a cut stream.
    virtual void abort() = 0;
    virtual bool responded() const noexcept = 0;
    /// Completes once the client closed the connection (never while it stays open);
    /// honours cancellation. Used to stop streams nobody reads.
    virtual boost::asio::awaitable<void> wait_peer_closed() = 0;
};

/// Percent-decodes (and '+' as space when `plus_is_space`). In http_listener.cpp.
std::string url_decode(std::string_view s, bool plus_is_space = true);

/// Handles one request; must answer through the sink (the listener answers 500 otherwise).
using request_handler = std::function<boost::asio::awaitable<void>(http_request, response_sink&)>;
/// What the listener does with a request once its head is read, before any body byte.
struct head_verdict {
    std::size_t body_limit = 1u << 20;    ///< larger bodies are answered 413
    std::optional<http_response> refuse;  ///< answered at once (Connection: close); the body is never read
};
/// Judges a request from its head (method, path, query and headers; body still empty):
/// credentials and the route's body limit.
using head_check_fn = std::function<head_verdict(http_request const& head)>;

/// The Server-Timing value of a response to a request received at `since` ("app;dur=<ms>"),
/// the same on HTTP/1.1 and HTTP/2.
std::string server_timing(std::chrono::steady_clock::time_point since);

}  // namespace prism_e2b::local::detail

#endif
