// TLS: a server whose certificate chain is generated at test time (a CA and
// leaves for "localhost" and for "other.test", with the openssl CLI) is refused
// with the system trust store, accepted with its CA given, and refused when the
// name we connect to is not the certificate's (IP vs DNS name, other name). The
// trust store and the CA file are read on the first TLS connection only.
#include <prism_e2b/e2b/client.hpp>

#include "client_fixture.hpp"
#include "run_coro.hpp"
#include "test_pki.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(test_tls)

namespace {

test_http_server::options server_for(test_pki const& pki, std::string const& name)
{
    test_http_server::options o;
    o.tls = true;
    o.cert_chain_file = pki.file(name + ".pem");
    o.key_file = pki.file(name + ".key");
    return o;
}

test_pki& pki()
{
    static test_pki p;
    return p;
}

scripted_response healthy(recorded_request const&) { return scripted_response::empty(204); }

/// health() against `url`, with or without our CA.
result<bool> probe(std::string const& url, std::optional<std::string> ca, int calls = 1)
{
    return run_coro([&](asio::any_io_executor ex) -> asio::awaitable<result<bool>> {
        auto o = options_for(url);
        o.ca_file = ca;
        o.max_retries = 0;
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        auto t = target_for();
        result<bool> r = false;
        for (int i = 0; i < calls; ++i) r = co_await (*c)->async_health(t);
        co_return r;
    });
}

}  // namespace

BOOST_AUTO_TEST_CASE(refused_by_default)
{
    test_http_server server(healthy, server_for(pki(), "localhost"));
    auto r = probe(server.url("localhost"), std::nullopt);
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST_MESSAGE(r.error().to_string());
    BOOST_TEST(r.error().message().find("certificate") != std::string::npos, r.error().to_string());
    BOOST_TEST(server.request_count() == 0u);  // nothing was sent over an unverified channel
}

BOOST_AUTO_TEST_CASE(accepted_with_its_ca_and_reused)
{
    test_http_server server(healthy, server_for(pki(), "localhost"));
    auto r = probe(server.url("localhost"), pki().file("ca.pem"), 5);
    BOOST_TEST_REQUIRE(r.has_value(), r.error().to_string());
    BOOST_TEST(*r == true);
    BOOST_TEST(server.request_count() == 5u);
    // This server speaks HTTP/1.1 only: the first connection answered ALPN without
    // h2 and was closed, then one HTTP/1.1 session served all five, kept alive.
    BOOST_TEST(server.accepted_connections() == 2u);
    BOOST_TEST(server.requests()[0].header("Host").value_or("") == "localhost:" + std::to_string(server.port()));
    BOOST_TEST((server.sni_names() == std::vector<std::string>{"localhost", "localhost"}));  // SNI sent
}

BOOST_AUTO_TEST_CASE(refused_when_connecting_by_ip_to_a_dns_only_certificate)
{
    test_http_server server(healthy, server_for(pki(), "localhost"));
    auto r = probe(server.url("127.0.0.1"), pki().file("ca.pem"));
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST(r.error().message().find("IP address mismatch") != std::string::npos);
    BOOST_TEST((server.sni_names() == std::vector<std::string>{""}));  // no SNI for an IP literal
    BOOST_TEST_MESSAGE(r.error().to_string());
    BOOST_TEST(r.error().message().find("certificate") != std::string::npos, r.error().to_string());
    BOOST_TEST(server.request_count() == 0u);
}

BOOST_AUTO_TEST_CASE(refused_when_the_certificate_names_another_host)
{
    test_http_server server(healthy, server_for(pki(), "other.test"));
    auto r = probe(server.url("localhost"), pki().file("ca.pem"));
    BOOST_TEST_REQUIRE(r.has_error());
    BOOST_TEST(r.error().message().find("hostname mismatch") != std::string::npos);
    BOOST_TEST_MESSAGE(r.error().to_string());
    BOOST_TEST(r.error().message().find("certificate") != std::string::npos, r.error().to_string());
    BOOST_TEST(server.request_count() == 0u);
}

// Loading the trust store costs tens of milliseconds: a client of a plain-HTTP server never
// does it (a CA file that is no certificate at all does no harm there), the first TLS
// connection does, and fails on it before anything is sent.
BOOST_AUTO_TEST_CASE(the_trust_store_is_loaded_on_the_first_tls_connection_only)
{
    auto const bad = fs::temp_directory_path() / ("prism-e2b-not-a-ca-" + std::to_string(::getpid()) + ".pem");
    {
        std::ofstream out(bad);
        out << "not a certificate\n";
    }
    test_http_server plain(healthy);
    auto ok = probe(plain.url("127.0.0.1"), bad.string());
    BOOST_TEST(ok.has_value(), (ok ? std::string() : ok.error().to_string()));
    test_http_server tls(healthy, server_for(pki(), "localhost"));
    auto refused = probe(tls.url("localhost"), bad.string(), 2);
    BOOST_TEST_REQUIRE(refused.has_error());
    BOOST_TEST((refused.error() == errc::invalid_argument));
    BOOST_TEST(refused.error().message().find("cannot load CA file") != std::string::npos, refused.error().to_string());
    BOOST_TEST(tls.request_count() == 0u);
    fs::remove(bad);
}

BOOST_AUTO_TEST_SUITE_END()
