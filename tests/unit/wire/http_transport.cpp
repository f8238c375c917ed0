// The HTTP transport alone: URL parsing, keep-alive reuse, idle expiry, the
// body bound, streamed bodies that return their connection only when read to
// the end, and retries of idempotent requests on network errors.
#include "wire/http_transport.hpp"

#include "run_coro.hpp"
#include "test_http_server.hpp"
#include "wire/retry.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>

using namespace prism_e2b;
using namespace prism_e2b::test;
using namespace prism_e2b::wire;
namespace asio = boost::asio;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(test_http_transport)

namespace {

std::shared_ptr<http_transport> make(asio::any_io_executor ex, transport_options o = {})
{
    auto t = http_transport::create(ex, std::move(o));
    BOOST_TEST_REQUIRE(t.has_value());
    return *t;
}

origin at(std::string const& url)
{
    auto o = parse_origin(url);
    BOOST_TEST_REQUIRE(o.has_value());
    return *o;
}

http_request get(std::string target)
{
    http_request r;
    r.target = std::move(target);
    return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(parse_origin_cases)
{
    auto a = parse_origin("https://api.e2b.app");
    BOOST_TEST_REQUIRE(a.has_value());
    BOOST_TEST(a->tls);
    BOOST_TEST(a->host == "api.e2b.app");
    BOOST_TEST(a->port == "443");
    BOOST_TEST(a->host_header() == "api.e2b.app");
    auto b = parse_origin("http://127.0.0.1:8080/base/");
    BOOST_TEST(!b->tls);
    BOOST_TEST(b->port == "8080");
    BOOST_TEST(b->base_path == "/base");
    BOOST_TEST(b->host_header() == "127.0.0.1:8080");
    BOOST_TEST(b->key() == "http://127.0.0.1:8080");
    auto c = parse_origin("http://[::1]:9/");
    BOOST_TEST(c->host == "::1");
    BOOST_TEST(c->host_header() == "[::1]:9");
    for (auto const* bad : {"ftp://x", "http://", "http://:80", "http://h:0", "http://h:99999", "http://u@h",
                            "http://h?q=1", "https://h:8a"})
        BOOST_TEST((parse_origin(bad).error() == errc::invalid_argument), bad);
}

BOOST_AUTO_TEST_CASE(base_path_prefixes_every_target)
{
    test_http_server server([](recorded_request const&) { return scripted_response::empty(204); });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto t = make(ex);
        auto r = co_await t->request(at(server.url() + "/prefix"), get("/health"), 5s);
        BOOST_TEST(r->status == 204);
    });
    BOOST_TEST(server.requests().at(0).target == "/prefix/health");
}

BOOST_AUTO_TEST_CASE(idle_connections_expire)
{
    test_http_server server([](recorded_request const&) { return scripted_response::empty(204); });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        transport_options o;
        o.pool_idle_timeout = 50ms;
        auto t = make(ex, o);
        auto origin = at(server.url());
        BOOST_TEST((co_await t->request(origin, get("/a"), 5s))->status == 204);
        BOOST_TEST((co_await t->request(origin, get("/b"), 5s))->status == 204);  // reused
        asio::steady_timer timer(ex, 120ms);
        co_await timer.async_wait(asio::use_awaitable);
        BOOST_TEST((co_await t->request(origin, get("/c"), 5s))->status == 204);  // expired: a new one
        BOOST_TEST(t->stats().connections_opened == 2u);
        BOOST_TEST(t->stats().connections_reused == 1u);
        BOOST_TEST(t->open_connections(origin) == 1u);
    });
    BOOST_TEST(server.accepted_connections() == 2u);
}

BOOST_AUTO_TEST_CASE(response_body_is_bounded)
{
    test_http_server server(
        [](recorded_request const&) { return scripted_response::json(200, std::string(4096, 'x')); });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        transport_options o;
        o.max_response_bytes = 1024;
        auto t = make(ex, o);
        auto origin = at(server.url());
        auto r = co_await t->request(origin, get("/big"), 5s);
        BOOST_TEST_REQUIRE(r.has_error());
        BOOST_TEST((r.error() == errc::limit_exceeded), r.error().to_string());
        BOOST_TEST(t->open_connections(origin) == 0u);  // a half-read connection is never pooled
    });
}

BOOST_AUTO_TEST_CASE(streams_return_their_connection_only_when_read_to_the_end)
{
    test_http_server server([](recorded_request const& r) {
        scripted_response s;
        s.chunks = {"one", "two", "three"};
        if (r.path() == "/empty") return scripted_response::empty(204);
        return s;
    });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        transport_options o;
        o.max_connections_per_origin = 1;
        auto t = make(ex, o);
        auto origin = at(server.url());
        {
            auto s = co_await t->open_stream(origin, get("/s"), 5s);
            BOOST_TEST_REQUIRE(s.has_value());
            BOOST_TEST((*s)->status() == 200);
            std::string body;
            while (!(*s)->done()) {
                auto piece = co_await (*s)->read_some(5s);
                BOOST_TEST_REQUIRE(piece.has_value());
                body += *piece;
            }
            BOOST_TEST(body == "onetwothree");
            // Read to the end: back in the pool even before the stream is destroyed,
            // so the single slot is free for the next request.
            BOOST_TEST((co_await t->request(origin, get("/empty"), 5s))->status == 204);
        }
        {
            auto s = co_await t->open_stream(origin, get("/s"), 5s);
            auto piece = co_await (*s)->read_some(5s);
            BOOST_TEST(piece.has_value());
        }  // destroyed half-read: closed, not pooled
        BOOST_TEST(t->open_connections(origin) == 0u);
        BOOST_TEST((co_await t->request(origin, get("/empty"), 5s))->status == 204);
        BOOST_TEST(t->stats().connections_opened == 2u);
    });
    BOOST_TEST(server.accepted_connections() == 2u);
}

BOOST_AUTO_TEST_CASE(idempotent_requests_are_retried_on_network_errors_others_are_not)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        if (n++ % 2 == 0) {
            scripted_response r;
            r.raw = std::string();  // close without answering
            return r;
        }
        return scripted_response::empty(204);
    });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto t = make(ex);
        auto origin = at(server.url());
        call_options idem;
        idem.attempt_timeout = 5s;
        idem.retry.base_delay = 1ms;
        idem.retry.idempotent = true;
        auto r = co_await make_retrying(t)->request(origin, get("/x"), idem);
        BOOST_TEST_REQUIRE(r.has_value(), r.error().to_string());
        BOOST_TEST(r->status == 204);
        call_options once = idem;
        once.retry.idempotent = false;
        auto fresh = make(ex);  // a fresh pool: no stale-connection replay either
        auto r2 = co_await make_retrying(fresh)->request(origin, get("/x"), once);
        BOOST_TEST(r2.has_error());
    });
    BOOST_TEST(n.load() == 3);
}

BOOST_AUTO_TEST_CASE(connection_refused_and_connect_deadline)
{
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        transport_options o;
        o.connect_timeout = 300ms;
        auto t = make(ex, o);
        // Nothing listens on port 1 of loopback.
        auto r = co_await t->request(at("http://127.0.0.1:1"), get("/"), 5s);
        BOOST_TEST_REQUIRE(r.has_error());
        BOOST_TEST((r.error().code() == asio::error::connection_refused), r.error().to_string());
        // A listener that never accepts: TCP connects (the kernel's backlog),
        // the TLS handshake never answers, the connect deadline fires.
        asio::ip::tcp::acceptor silent(ex, {asio::ip::make_address("127.0.0.1"), 0});
        auto const port = std::to_string(silent.local_endpoint().port());
        // The request's own deadline is ten minutes: only the connect deadline ends it now.
        auto r2 = co_await t->request(at("https://127.0.0.1:" + port), get("/"), 10min);
        BOOST_TEST_REQUIRE(r2.has_error());
        BOOST_TEST((r2.error() == errc::timed_out), r2.error().to_string());
    });
}

BOOST_AUTO_TEST_SUITE_END()
