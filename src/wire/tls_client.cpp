#include "wire/tls_client.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_context.hpp>

#include <unistd.h>

namespace asio = boost::asio;
namespace ssl = asio::ssl;

namespace prism_e2b::wire {

namespace {

bool is_ip_literal(std::string const& host)
{
    boost::system::error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

}  // namespace

result<void> configure_client_context(ssl::context& ctx, std::optional<std::string> const& ca_file)
{
    boost::system::error_code ec;
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                    ec);
    ctx.set_default_verify_paths(ec);
    if (ec) return error(errc::invalid_argument, "cannot load the system trust store: " + ec.message());
    if (ca_file) {
        ctx.load_verify_file(*ca_file, ec);
        if (ec) return error(errc::invalid_argument, "cannot load CA file '" + *ca_file + "': " + ec.message());
    }
    ctx.set_verify_mode(ssl::verify_peer);
    return result<void>{};
}

result<std::shared_ptr<lazy_tls_context>> lazy_tls_context::create(std::optional<std::string> ca_file)
{
    if (ca_file && ::access(ca_file->c_str(), R_OK) != 0)
        return error(errc::invalid_argument, "cannot read CA file '" + *ca_file + "'");
    return std::make_shared<lazy_tls_context>(std::move(ca_file));
}

result<ssl::context*> lazy_tls_context::get()
{
    std::call_once(once_, [this] {
        ctx_.emplace(ssl::context::tls_client);
        if (auto ok = configure_client_context(*ctx_, ca_file_); !ok) error_ = ok.error();
    });
    if (error_) return *error_;
    return &*ctx_;
}

result<void> prepare_tls(tls_stream& s, std::string const& host, bool offer_h2)
{
    // Offered per connection, not per context: the HTTP/1.1 transport shares the context.
    static constexpr unsigned char alpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    if (offer_h2 && SSL_set_alpn_protos(s.native_handle(), alpn, sizeof alpn) != 0)
        return error(errc::invalid_argument, "cannot offer ALPN h2");
    bool const ip = is_ip_literal(host);
    // SNI carries names only, never IP literals (RFC 6066, section 3).
    if (!ip && !SSL_set_tlsext_host_name(s.native_handle(), host.c_str()))
        return error(errc::invalid_argument, "cannot set SNI");
    s.set_verify_mode(ssl::verify_peer);
    // Chain check by OpenSSL, then the name check of asio; a name mismatch is
    // recorded so the error says so.
    s.set_verify_callback(
        [check = ssl::host_name_verification(host), ip](bool preverified, ssl::verify_context& ctx) mutable {
            bool const ok = check(preverified, ctx);
            if (preverified && !ok)
                X509_STORE_CTX_set_error(ctx.native_handle(),
                                         ip ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
            return ok;
        });
    return result<void>{};
}

error handshake_error(boost::system::error_code ec, tls_stream& s, std::string const& what)
{
    auto const verify = SSL_get_verify_result(s.native_handle());
    std::string detail = ec.message();
    if (verify != X509_V_OK) detail += std::string(" (certificate: ") + X509_verify_cert_error_string(verify) + ")";
    return error(ec, what + ": TLS handshake failed: " + detail);
}

}  // namespace prism_e2b::wire
