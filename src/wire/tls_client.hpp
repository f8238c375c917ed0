// TLS of the client: the context (system trust store plus an optional CA
// file, TLS 1.2+), made on the first TLS connection and shared by a client's
// transports, per-connection SNI, ALPN and host-name verification, and the
// reason a handshake failed. Peer verification is always on.
#ifndef PRISM_E2B_WIRE_TLS_CLIENT_HPP
#define PRISM_E2B_WIRE_TLS_CLIENT_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace prism_e2b::wire {

using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

/// Configures `ctx` for verified client connections. errc::invalid_argument
/// when the trust store or `ca_file` cannot be loaded.
result<void> configure_client_context(boost::asio::ssl::context& ctx, std::optional<std::string> const& ca_file);

/// The client's TLS context, configured on the first call of get(): parsing the system trust
/// store costs tens of milliseconds, which a client that only speaks plain HTTP (the CLI
/// against a local server) never pays. One per client, shared by its HTTP/1.1 and HTTP/2
/// transports (ALPN is set per connection). Thread safety: get() may be called concurrently.
class lazy_tls_context {
public:
    /// errc::invalid_argument at once when `ca_file` cannot be opened (a typo fails where it
    /// is given); its contents are read with the trust store, on first use.
    static result<std::shared_ptr<lazy_tls_context>> create(std::optional<std::string> ca_file);
    explicit lazy_tls_context(std::optional<std::string> ca_file) : ca_file_(std::move(ca_file)) {}

    /// The configured context; the same errc::invalid_argument every time when the trust store
    /// or the CA file cannot be loaded.
    result<boost::asio::ssl::context*> get();

private:
    std::optional<std::string> ca_file_;
    std::once_flag once_;
    std::optional<boost::asio::ssl::context> ctx_;
    std::optional<error> error_;
};

/// SNI (names only, never IP literals) and verification of `host` on `s`; ALPN offers h2 and
/// http/1.1 when `offer_h2` (else none: the server speaks HTTP/1.1).
result<void> prepare_tls(tls_stream& s, std::string const& host, bool offer_h2 = false);

/// The error of a failed handshake on `s`, with the certificate problem when
/// verification failed (the peer is refused, never retried unverified).
error handshake_error(boost::system::error_code ec, tls_stream& s, std::string const& what);

}  // namespace prism_e2b::wire

#endif
