// TLS of the client: the context (system trust store plus an optional CA
// file, TLS 1.2+), per-connection SNI and host-name verification, and the
// reason a handshake failed. Peer verification is always on.
#ifndef PRISM_E2B_WIRE_TLS_CLIENT_HPP
#define PRISM_E2B_WIRE_TLS_CLIENT_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <optional>
#include <string>

namespace prism_e2b::wire {

using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

/// Configures `ctx` for verified client connections. errc::invalid_argument
/// when the trust store or `ca_file` cannot be loaded.
result<void> configure_client_context(boost::asio::ssl::context& ctx, std::optional<std::string> const& ca_file);

/// SNI (names only, never IP literals) and verification of `host` on `s`.
result<void> prepare_tls(tls_stream& s, std::string const& host);

/// The error of a failed handshake on `s`, with the certificate problem when
/// verification failed (the peer is refused, never retried unverified).
error handshake_error(boost::system::error_code ec, tls_stream& s, std::string const& what);

}  // namespace prism_e2b::wire

#endif
