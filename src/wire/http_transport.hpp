// HTTP/1.1 client over Beast: per-origin keep-alive pool, TLS with peer
// verification, per-step deadlines, cancellation, bounded bodies, and a
// streaming read for Connect server streams. The interface is Beast-free.
#ifndef PRISM_E2B_WIRE_HTTP_TRANSPORT_HPP
#define PRISM_E2B_WIRE_HTTP_TRANSPORT_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
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

/// scheme://host[:port][/base-path] of a server.
struct origin {
    bool tls = true;
    std::string host;       ///< without brackets for IPv6
    std::string port;       ///< always set ("443", "80" or explicit)
    std::string base_path;  ///< prefix of every target, without a trailing '/'

    /// "https://host:port": the pool key (base_path excluded).
    std::string key() const;
    /// Host header value (port omitted when it is the scheme's default).
    std::string host_header() const;
};

/// Parses an http:// or https:// URL. errc::invalid_argument otherwise.
result<origin> parse_origin(std::string_view url);

struct http_request {
    std::string method = "GET";
    std::string target = "/";  ///< path and query, already encoded; base_path is prepended
    header_list headers;
    std::string body;
};

struct http_response {
    int status = 0;
    header_list headers;
    std::string body;
    std::string const* header(std::string_view name) const noexcept { return find_header(headers, name); }
};

struct transport_options {
    std::chrono::milliseconds connect_timeout{10000};  ///< resolve + connect + TLS handshake; 0 disables
    std::size_t max_connections_per_origin = 200;
    std::chrono::milliseconds pool_idle_timeout{30000};
    std::optional<std::string> ca_file;           ///< added to the system trust store
    std::size_t max_response_bytes = 256u << 20;  ///< bound on a buffered response body
    log_sink logger;
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

/// Counters for tests and benchmarks.
struct transport_stats {
    std::size_t connections_opened = 0;
    std::size_t connections_reused = 0;
    std::size_t requests = 0;
};

/// The HTTP/1.1 client. Connections are pooled per origin key: at most
/// max_connections_per_origin are open at once (busy + idle); a request that
/// finds every connection busy waits in FIFO order. A connection goes back to
/// the pool only after a complete response that allows keep-alive. A request
/// that fails on a reused connection before any response byte arrived (the
/// server closed it while idle) is replayed once on a new connection.
/// Streams hold their connection until read to the end, so with HTTP/1.1 at
/// most max_connections_per_origin streams (plus unary calls) run at once per
/// origin; more wait.
///
/// Errors: transport errors pass through (asio, ssl, beast categories), a
/// deadline is errc::timed_out, cancellation errc::cancelled, a body over the
/// bound errc::limit_exceeded. HTTP statuses are not errors here.
/// Per-operation cancellation: terminal, on request() and open_stream().
/// Thread safety: all members may be called concurrently (the pool map and each
/// pool are guarded by mutexes; each connection runs on its own strand).
class http_transport : public std::enable_shared_from_this<http_transport> {
public:
    /// errc::invalid_argument when the CA file cannot be loaded.
    static result<std::shared_ptr<http_transport>> create(boost::asio::any_io_executor ex, transport_options opts);
    ~http_transport();

    /// Sends `req` and reads the whole response. `timeout` bounds writing the
    /// request and reading the response (0 disables).
    boost::asio::awaitable<result<http_response>> request(origin o, http_request req,
                                                          std::chrono::milliseconds timeout);

    /// Sends `req` and reads the response header; the body is read through the
    /// returned stream. `timeout` bounds the request up to the header.
    boost::asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream(origin o, http_request req,
                                                                             std::chrono::milliseconds timeout);

    transport_stats stats() const;
    /// Connections currently open to an origin (busy + idle).
    std::size_t open_connections(origin const& o) const;

    struct impl;

private:
    explicit http_transport(std::unique_ptr<impl> p);
    std::unique_ptr<impl> impl_;
};

}  // namespace prism_e2b::wire

#endif
