// The HTTP/1.1 transport: the bottom of the exchange stack. It composes the
// connection pool (connection_pool.hpp), one exchange per request
// (http1_exchange.hpp) or a streamed response (http1_stream.hpp), the one
// stale-connection replay (stale_replay.hpp) and the log line
// (transport_log.hpp). The interface is Beast-free; an HTTP/2 transport is
// another `exchange` with the same options.
#ifndef PRISM_E2B_WIRE_HTTP_TRANSPORT_HPP
#define PRISM_E2B_WIRE_HTTP_TRANSPORT_HPP

#include <prism_e2b/log.hpp>

#include "wire/exchange.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace prism_e2b::wire {

class lazy_tls_context;  // tls_client.hpp

struct transport_options {
    std::chrono::milliseconds connect_timeout{10000};  ///< resolve + connect + TLS handshake; 0 disables
    /// The complete response head must arrive this long after sending of the
    /// request began (a server dripping its headers is cut); 0: only the attempt bound.
    std::chrono::milliseconds header_timeout{30000};
    /// Longest silence while reading a buffered body; 0: only the attempt bound.
    std::chrono::milliseconds read_idle_timeout{30000};
    std::size_t max_connections_per_origin = 200;
    std::chrono::milliseconds pool_idle_timeout{30000};
    std::optional<std::string> ca_file;           ///< added to the system trust store
    std::size_t max_response_bytes = 256u << 20;  ///< decoded body cap when a call names none
    bool accept_gzip = true;                      ///< send Accept-Encoding: gzip on buffered requests
    log_sink logger;
    /// HTTP/2 (h2_transport.hpp): offer ALPN h2 on TLS origins.
    bool http2 = true;
    /// HTTP/2 without TLS (h2c, prior knowledge) on http:// origins.
    bool h2c_prior_knowledge = false;
    /// Streams one HTTP/2 connection carries before another is opened.
    std::size_t max_streams_per_connection = 100;
    /// Per-stream receive window: what one slow reader may leave buffered.
    std::uint32_t h2_stream_window = 256u << 10;
    /// Whole-connection receive window.
    std::uint32_t h2_connection_window = 16u << 20;
};

/// Counters for tests and benchmarks.
struct transport_stats {
    std::size_t connections_opened = 0;
    std::size_t connections_reused = 0;
    std::size_t requests = 0;
};

/// Connections are pooled per origin key: at most max_connections_per_origin
/// are open at once (busy + idle); a request that finds every connection busy
/// waits in FIFO order. A connection goes back to the pool only after a
/// complete response that allows keep-alive. Streams hold their connection
/// until read to the end, so with HTTP/1.1 at most max_connections_per_origin
/// streams (plus unary calls) run at once per origin; more wait.
/// call_options::retry is not used here (the retry decorator's).
/// Thread safety: all members may be called concurrently (each connection runs
/// on its own strand).
class http_transport final : public exchange, public std::enable_shared_from_this<http_transport> {
public:
    /// errc::invalid_argument when the CA file cannot be read. `tls`: a context shared with
    /// another transport of the same client (null: its own, from opts.ca_file).
    static result<std::shared_ptr<http_transport>> create(boost::asio::any_io_executor ex, transport_options opts,
                                                          std::shared_ptr<lazy_tls_context> tls = nullptr);
    ~http_transport() override;

    boost::asio::awaitable<result<http_response>> request(origin o, http_request req, call_options opts) override;
    boost::asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream(origin o, http_request req,
                                                                             call_options opts) override;

    /// request() with only an attempt timeout (0 disables).
    boost::asio::awaitable<result<http_response>> request(origin o, http_request req,
                                                          std::chrono::milliseconds timeout);
    /// open_stream() with only an attempt timeout (0 disables).
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
