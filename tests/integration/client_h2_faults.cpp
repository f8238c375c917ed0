// The client's HTTP/2 against an in-test HTTP/2 server (the local server's own
// nghttp2 session, serve_h2, with a scripted handler and its fault hooks):
// GOAWAY sends new streams to a new connection while the stream in flight
// finishes; RST_STREAM is a typed error, and mid-exec an unknown outcome, never
// an exit code; a reader that does not read holds the server back (flow
// control) instead of buffering without bound.
#include <prism_e2b/e2b/client.hpp>

#include "emulator/h2_connection.hpp"
#include "eventually.hpp"
#include "protocol/envelope.hpp"
#include "run_coro.hpp"

#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::ip::tcp;
using local::detail::h2_serve_options;

namespace {

/// An HTTP/2 (h2c) server on its own thread; `accepted` counts connections.
struct h2_test_server {
    asio::io_context ioc{1};
    tcp::acceptor acceptor{ioc};
    h2_serve_options opts;
    std::atomic<int> accepted{0};
    std::thread thread;

    explicit h2_test_server(local::detail::request_handler h, local::detail::h2_faults f = {})
    {
        opts.handler = std::move(h);
        opts.faults = f;
        tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
        acceptor.open(ep.protocol());
        acceptor.bind(ep);
        acceptor.listen();
        asio::co_spawn(ioc, accept_loop(this), asio::detached);
        thread = std::thread([this] { ioc.run(); });
    }
    ~h2_test_server()
    {
        ioc.stop();
        thread.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()); }

    static asio::awaitable<void> serve_one(std::shared_ptr<beast::tcp_stream> s, h2_serve_options const* o)
    {
        std::string none;  // named: g++ 12 must not see temporaries inside co_await
        co_await local::detail::serve_h2(*s, std::move(none), *o);
    }
    static asio::awaitable<void> accept_loop(h2_test_server* t)
    {
        for (;;) {
            auto [ec, sock] = co_await t->acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            ++t->accepted;
            auto s = std::make_shared<beast::tcp_stream>(std::move(sock));
            asio::co_spawn(t->ioc, serve_one(s, &t->opts), asio::detached);
        }
    }
};

e2b::client_options h2c_options(std::string const& url)
{
    e2b::client_options o;
    o.api_key = "e2b_test_key_0123456789";
    o.api_url = url;
    o.sandbox_url = url;
    o.h2c_prior_knowledge = true;
    o.retry_base_delay = std::chrono::milliseconds(1);
    return o;
}

e2b::envd_target target()
{
    e2b::envd_target t;
    t.sandbox_id = "sbx1";
    t.access_token = "envd-token-abcdef";
    t.envd_version = "0.5.7";
    return t;
}

std::string const start_event = wire::encode_envelope(R"({"event":{"start":{"pid":7}}})");
std::string const end_event = wire::encode_envelope(R"({"event":{"end":{"exited":true,"status":"exit status 0"}}})");
std::string const end_of_stream = wire::encode_envelope("{}", wire::envelope_flag_end_stream);

std::string data_event(std::string const& base64)
{
    return wire::encode_envelope(R"({"event":{"data":{"stdout":")" + base64 + R"("}}})");
}

e2b::start_process_params sh(std::string script)
{
    e2b::start_process_params p;
    p.process.cmd = "/bin/sh";
    p.process.args = {"-c", std::move(script)};
    return p;
}

/// A gate the test opens from its own thread; the handler waits on it on the server's thread.
struct gate {
    asio::steady_timer* timer = nullptr;  // server thread only
    bool open = false;                    // server thread only
    void open_from(asio::io_context& ioc)
    {
        asio::post(ioc, [this] {
            open = true;
            if (timer) timer->cancel();
        });
    }
    asio::awaitable<void> wait()
    {
        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer t(ex, std::chrono::steady_clock::time_point::max());
        timer = &t;
        while (!open) co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        timer = nullptr;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(client_h2_faults)

BOOST_AUTO_TEST_CASE(goaway_moves_new_streams_to_a_new_connection_and_lets_the_open_one_finish)
{
    gate g;
    local::detail::h2_faults f;
    f.goaway_after_first_request = true;
    h2_test_server srv(
        [&g](local::detail::http_request req, local::detail::response_sink& sink) -> asio::awaitable<void> {
            if (req.path == "/health") {
                local::detail::http_response r;
                r.status = 204;
                co_await sink.send(std::move(r));
                co_return;
            }
            std::string type = "application/connect+json", hi = data_event("aGk=");  // "hi"
            local::detail::header_list none;
            co_await sink.begin_stream(200, std::move(type), std::move(none));
            co_await sink.write_chunk(start_event);
            co_await g.wait();
            co_await sink.write_chunk(std::move(hi));
            co_await sink.write_chunk(end_event);
            co_await sink.write_chunk(end_of_stream);
            co_await sink.finish_stream();
        },
        f);
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto c = e2b::make_client(ex, h2c_options(srv.url()));
        BOOST_REQUIRE(c);
        auto const t = target();  // named: g++ 12 must not see temporaries inside co_await
        auto const p = sh("true");
        auto s = co_await (*c)->async_start_process(t, p);
        BOOST_REQUIRE_MESSAGE(s, (s ? "" : s.error().message()));
        auto first = co_await (*s)->async_next();
        BOOST_REQUIRE(first);
        BOOST_REQUIRE(*first);
        BOOST_TEST(std::holds_alternative<e2b::start_event>(**first));
        // The server sent GOAWAY (last stream id: this stream's): a new request opens a new connection.
        auto h = co_await (*c)->async_health(t);
        BOOST_REQUIRE_MESSAGE(h, (h ? "" : h.error().message()));
        BOOST_TEST(*h);
        BOOST_TEST(srv.accepted.load() == 2);
        // The stream below the last stream id goes on to its end.
        g.open_from(srv.ioc);
        std::string out;
        std::optional<std::int32_t> code;
        for (;;) {
            auto ev = co_await (*s)->async_next();
            BOOST_REQUIRE_MESSAGE(ev, (ev ? "" : ev.error().message()));
            if (!*ev) break;
            if (auto const* d = std::get_if<e2b::data_event>(&**ev)) out += d->bytes;
            if (auto const* e = std::get_if<e2b::end_event>(&**ev)) code = e->exit_code;
        }
        BOOST_TEST(out == "hi");
        BOOST_TEST((code && *code == 0));
    });
}

BOOST_AUTO_TEST_CASE(rst_stream_mid_exec_is_an_unknown_outcome_and_a_typed_error)
{
    h2_test_server srv(
        [](local::detail::http_request req, local::detail::response_sink& sink) -> asio::awaitable<void> {
            std::string type = req.path == "/health" ? "text/plain" : "application/connect+json";
            local::detail::header_list none;
            co_await sink.begin_stream(200, std::move(type), std::move(none));
            if (req.path != "/health") co_await sink.write_chunk(start_event);
            sink.abort();  // RST_STREAM(INTERNAL_ERROR)
        });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto c = e2b::make_client(ex, h2c_options(srv.url()));
        BOOST_REQUIRE(c);
        auto const t = target();  // named: g++ 12 must not see temporaries inside co_await
        auto const p = sh("true");
        auto s = co_await (*c)->async_start_process(t, p);
        BOOST_REQUIRE(s);
        auto first = co_await (*s)->async_next();
        BOOST_REQUIRE(first);
        auto cut = co_await (*s)->async_next();
        BOOST_REQUIRE(!cut);
        BOOST_TEST((cut.error() == errc::unknown_outcome));  // never an exit code
        BOOST_TEST(cut.error().message().find("reset") != std::string::npos, cut.error().message());
        // A unary call cut by RST_STREAM: the error carries the HTTP/2 error code.
        auto h = co_await (*c)->async_health(t);
        BOOST_REQUIRE(!h);
        BOOST_TEST(std::string(h.error().code().category().name()) == "http2", h.error().message());
        BOOST_TEST(h.error().code().value() == 2);  // INTERNAL_ERROR
        // Every attempt stayed on the one connection: a reset stream does not end it.
        BOOST_TEST(srv.accepted.load() == 1);
    });
}

BOOST_AUTO_TEST_CASE(a_reader_that_does_not_read_holds_the_server_back)
{
    constexpr std::size_t total = 8u << 20;  // 8 MiB of output
    std::atomic<std::size_t> written{0}, chunks{0};
    std::string const chunk = data_event(std::string(65536, 'A'));  // 48 KiB decoded, one envelope
    h2_test_server srv([&](local::detail::http_request, local::detail::response_sink& sink) -> asio::awaitable<void> {
        std::string type = "application/connect+json";
        local::detail::header_list none;
        co_await sink.begin_stream(200, std::move(type), std::move(none));
        co_await sink.write_chunk(start_event);
        while (written.load() < total) {
            if (!co_await sink.write_chunk(chunk)) co_return;
            written += chunk.size();
            ++chunks;
        }
        co_await sink.write_chunk(end_event);
        co_await sink.write_chunk(end_of_stream);
        co_await sink.finish_stream();
    });
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto c = e2b::make_client(ex, h2c_options(srv.url()));
            BOOST_REQUIRE(c);
            auto const t = target();
            auto const p = sh("true");
            auto s = co_await (*c)->async_start_process(t, p);
            BOOST_REQUIRE(s);
            // Nothing is read: the server gets at most the stream's window (256 KiB)
            // plus its own per-stream queue (256 KiB) ahead, never the 8 MiB.
            constexpr std::size_t bound = (256u << 10) + (256u << 10) + 2 * 65600;
            bool const ran_ahead =
                co_await async_eventually([&] { return written.load() > bound; }, std::chrono::seconds(3));
            BOOST_TEST(!ran_ahead, "the server wrote " << written.load() << " bytes to a reader that read none");
            // Reading lets it go on, to the end.
            std::size_t got = 0;
            for (;;) {
                auto ev = co_await (*s)->async_next();
                BOOST_REQUIRE_MESSAGE(ev, (ev ? "" : ev.error().message()));
                if (!*ev) break;
                if (auto const* d = std::get_if<e2b::data_event>(&**ev)) got += d->bytes.size();
            }
            BOOST_TEST(got == chunks.load() * 49152u);  // each envelope carries 48 KiB
        },
        std::chrono::seconds(120));
}

BOOST_AUTO_TEST_SUITE_END()
