// The HTTP/2 transport, the bottom of the exchange stack when HTTP/2 is on:
// TLS origins are offered ALPN h2 and http/1.1, and an origin whose server
// picks http/1.1 is served by the HTTP/1.1 transport from then on; plain
// http:// origins use h2c with prior knowledge when asked (off by default, as
// in the official SDK), else HTTP/1.1. Streams are multiplexed over at most
// max_connections_per_origin connections per origin, each carrying up to
// min(max_streams_per_connection, the server's SETTINGS_MAX_CONCURRENT_STREAMS)
// before another connection is opened; past both caps, streams queue on the
// least loaded connection.
#ifndef PRISM_E2B_WIRE_H2_TRANSPORT_HPP
#define PRISM_E2B_WIRE_H2_TRANSPORT_HPP

#include "wire/http_transport.hpp"

namespace prism_e2b::wire {

/// Thread safety: all members may be called concurrently.
class h2_transport final : public exchange {
public:
    /// errc::invalid_argument when the CA file cannot be loaded.
    static result<std::shared_ptr<h2_transport>> create(boost::asio::any_io_executor ex, transport_options opts);
    ~h2_transport() override;

    boost::asio::awaitable<result<http_response>> request(origin o, http_request req, call_options opts) override;
    boost::asio::awaitable<result<std::unique_ptr<http_stream>>> open_stream(origin o, http_request req,
                                                                             call_options opts) override;

    /// HTTP/2 and HTTP/1.1 together; connections_reused counts streams that
    /// shared an open HTTP/2 connection.
    transport_stats stats() const;
    /// HTTP/2 connections open to `o` now (the HTTP/1.1 ones: http1()).
    std::size_t open_connections(origin const& o) const;
    /// The HTTP/1.1 transport serving origins that do not speak HTTP/2.
    http_transport& http1() noexcept;

    struct impl;

private:
    explicit h2_transport(std::shared_ptr<impl> p);
    std::shared_ptr<impl> impl_;
};

/// The transport `opts` asks for: h2_transport when opts.http2 or
/// opts.h2c_prior_knowledge, else http_transport.
result<std::shared_ptr<exchange>> make_transport(boost::asio::any_io_executor ex, transport_options opts);

}  // namespace prism_e2b::wire

#endif
