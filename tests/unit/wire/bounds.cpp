// The client's bounds against hostile or stuck servers (loopback stubs): a
// call deadline that includes retries, header and idle read timeouts, reply
// caps enforced while reading (memory stays under the cap plus a constant),
// gzip decoded within the cap (a gzip bomb is refused), an encoding that was
// not offered refused; gzip uploads only when asked. Each stub would hold the client forever (or grow it
// without bound) if the bound were missing; run_coro's deadline fails the
// test then.
#include <prism_e2b/e2b/client.hpp>

#include "client_fixture.hpp"
#include "run_coro.hpp"
#include "sanitizers.hpp"
#include "test_http_server.hpp"
#include "wire/http_transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <functional>
#include <thread>
#include <zlib.h>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(test_bounds)

namespace {

/// A loopback server whose every connection runs `behave` (after reading the
/// request head). Its own io_context and thread; counts connections.
class hostile_server {
public:
    using behaviour = std::function<asio::awaitable<void>(tcp::socket&)>;

    explicit hostile_server(behaviour b)
        : behave_(std::move(b)), acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0})
    {
        asio::co_spawn(ioc_, accept_loop(), asio::detached);
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~hostile_server()
    {
        ioc_.stop();
        thread_.join();
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
    std::size_t connections() const { return connections_.load(); }

private:
    asio::awaitable<void> accept_loop()
    {
        for (;;) {
            auto [ec, s] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            ++connections_;
            asio::co_spawn(ioc_, serve(std::move(s)), asio::detached);
        }
    }
    asio::awaitable<void> serve(tcp::socket s)
    {
        // Read the request head (these tests send no bodies).
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
            auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
            head.append(buf, n);
        }
        co_await behave_(s);
    }

    behaviour behave_;
    asio::io_context ioc_;
    tcp::acceptor acceptor_;
    std::thread thread_;
    std::atomic<std::size_t> connections_{0};
};

asio::awaitable<void> pause_for(tcp::socket& s, std::chrono::milliseconds d)
{
    asio::steady_timer t(s.get_executor(), d);
    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
}

/// Holds the connection open without a byte, until the client closes it.
asio::awaitable<void> never_answer(tcp::socket& s)
{
    char c;
    co_await s.async_read_some(asio::buffer(&c, 1), asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<bool> send(tcp::socket& s, std::string_view bytes)
{
    auto [ec, n] = co_await asio::async_write(s, asio::buffer(bytes), asio::as_tuple(asio::use_awaitable));
    co_return !ec;
}

std::shared_ptr<e2b::client> client_for(asio::any_io_executor ex, e2b::client_options o)
{
    auto c = e2b::make_client(ex, std::move(o));
    BOOST_TEST_REQUIRE(c.has_value());
    return *c;
}

/// gzip of `data` (zlib, gzip wrapper).
std::string gzip(std::string const& data)
{
    z_stream z{};
    BOOST_TEST_REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, data.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    BOOST_TEST_REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

/// The data of a gzip member (zlib).
std::string gunzip(std::string const& packed)
{
    z_stream z{};
    BOOST_TEST_REQUIRE(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
    std::string out;
    char buf[16384];
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    z.avail_in = static_cast<uInt>(packed.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
    }
    inflateEnd(&z);
    BOOST_TEST(rc == Z_STREAM_END);
    return out;
}

/// A /proc/self/status field in KiB (VmRSS, VmHWM).
std::size_t status_kib(std::string const& field)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field + ":", 0) == 0) return std::stoul(line.substr(field.size() + 1));
    return 0;
}

/// get_sandbox_info against `url` with `configure`d options fails with `expected`.
void expect_info_fails(std::string const& url, std::function<void(e2b::client_options&)> const& configure,
                       errc expected)
{
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto o = options_for(url);
            o.request_timeout = 10min;  // the per-attempt and call bounds alone would hold the test
            o.call_timeout = 0ms;
            o.max_retries = 0;
            configure(o);
            auto c = client_for(ex, o);
            std::string const id = "sbx1";  // named: g++ 12 and temporaries inside co_await
            auto r = co_await c->async_get_sandbox_info(id);
            BOOST_TEST_REQUIRE(r.has_error());
            BOOST_TEST((r.error() == expected), r.error().to_string());
        },
        std::chrono::seconds(180));  // sanitizer builds pump the 48 MiB slowly
}

}  // namespace

// Today's failure: 4 attempts x 60 s. The call deadline bounds the attempt in
// flight and no retry starts after it: one attempt, timed_out.
BOOST_AUTO_TEST_CASE(a_server_that_never_answers_fails_the_call_at_its_deadline_retries_included)
{
    hostile_server server(never_answer);
    // GET is idempotent: retried on timeouts, but not past the call's deadline.
    expect_info_fails(
        server.url(),
        [](e2b::client_options& o) {
            o.header_timeout = 0ms;
            o.call_timeout = 300ms;
            o.max_retries = 3;
        },
        errc::timed_out);
    BOOST_TEST(server.connections() == 1u);  // no retry started past the deadline
}

// Today's failure: one header line a second was still pending after 200 s.
BOOST_AUTO_TEST_CASE(drip_fed_headers_are_cut_by_the_header_timeout)
{
    hostile_server server([](tcp::socket& s) -> asio::awaitable<void> {
        if (!co_await send(s, "HTTP/1.1 200 OK\r\n")) co_return;
        for (int i = 0;; ++i) {
            if (!co_await send(s, "X-Drip-" + std::to_string(i) + ": 1\r\n")) co_return;
            co_await pause_for(s, 20ms);
        }
    });
    expect_info_fails(
        server.url(), [](e2b::client_options& o) { o.header_timeout = 300ms; }, errc::timed_out);
}

BOOST_AUTO_TEST_CASE(a_body_that_stalls_is_cut_by_the_idle_timeout)
{
    hostile_server server([](tcp::socket& s) -> asio::awaitable<void> {
        if (!co_await send(s,
                           "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":"))
            co_return;
        co_await never_answer(s);
    });
    expect_info_fails(
        server.url(), [](e2b::client_options& o) { o.read_idle_timeout = 300ms; }, errc::timed_out);
}

// Today's failure: an endless chunked body grew the CLI to 534 MB (2x the
// 256 MiB cap: the string doubled). Now the cap is enforced as bytes arrive and
// the peak RSS (VmHWM, reset first) stays under the cap plus a constant.
BOOST_AUTO_TEST_CASE(an_endless_chunked_body_fails_at_the_cap_within_the_cap_plus_a_constant)
{
    static std::string const chunk = [] {
        std::string body(64 * 1024, 'x');
        char size[16];
        std::snprintf(size, sizeof size, "%zx\r\n", body.size());
        return size + body + "\r\n";
    }();
    hostile_server server([](tcp::socket& s) -> asio::awaitable<void> {
        if (!co_await send(s,
                           "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"))
            co_return;
        while (co_await send(s, chunk)) {
        }
    });
    constexpr std::size_t cap = 48u << 20;
    {
        std::ofstream reset("/proc/self/clear_refs");
        reset << "5";  // resets VmHWM to the current RSS
    }
    auto const before = status_kib("VmRSS");
    expect_info_fails(
        server.url(), [&](e2b::client_options& o) { o.max_response_bytes = cap; }, errc::limit_exceeded);
    auto const peak = status_kib("VmHWM");
    BOOST_TEST_REQUIRE(before > 0u);
    BOOST_TEST_MESSAGE("peak growth " << (peak - before) << " KiB for a cap of " << cap / 1024 << " KiB");
    // Not under sanitizers: TSan's shadow memory is several times the heap and
    // ASan's quarantine keeps up to 256 MiB of freed memory resident.
    if (!prism_e2b::test::under_sanitizer)
        BOOST_TEST((peak - before) * 1024 < cap + (16u << 20), "peak grew by " << (peak - before) << " KiB");
}

BOOST_AUTO_TEST_CASE(gzip_is_offered_decoded_and_bounded_by_its_decoded_size)
{
    std::string const json =
        R"({"templateID":"base","sandboxID":"sbx1","clientID":"c","startedAt":"s","endAt":"e","cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"state":"running","envdVersion":"0.5.7"})";
    std::string const bomb = gzip(std::string(64u << 20, '\0'));  // 64 MiB of zeros in ~64 KiB
    test_http_server server([&](recorded_request const& r) {
        scripted_response s = scripted_response::json(200, gzip(json));
        s.headers.emplace_back("Content-Encoding", "gzip");
        if (r.path() == "/sandboxes/bomb") s.body = bomb;
        if (r.path() == "/sandboxes/br") s.headers.back().second = "br";
        if (r.path() == "/sandboxes/corrupt") s.body = "\x1f\x8b garbage";
        return s;
    });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url());
        o.max_response_bytes = 1u << 20;
        o.max_retries = 0;
        auto c = client_for(ex, o);
        std::string const id_sbx1 = "sbx1", id_bomb = "bomb", id_br = "br", id_corrupt = "corrupt";
        auto ok = co_await c->async_get_sandbox_info(id_sbx1);
        BOOST_TEST_REQUIRE(ok.has_value(), ok.error().to_string());
        BOOST_TEST(ok->sandbox_id == "sbx1");
        auto bomb_r = co_await c->async_get_sandbox_info(id_bomb);
        BOOST_TEST_REQUIRE(bomb_r.has_error());
        BOOST_TEST((bomb_r.error() == errc::limit_exceeded), bomb_r.error().to_string());
        auto br = co_await c->async_get_sandbox_info(id_br);
        BOOST_TEST_REQUIRE(br.has_error());
        BOOST_TEST((br.error() == errc::protocol_error), br.error().to_string());
        auto bad = co_await c->async_get_sandbox_info(id_corrupt);
        BOOST_TEST_REQUIRE(bad.has_error());
        BOOST_TEST((bad.error() == errc::protocol_error), bad.error().to_string());
    });
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(!reqs.empty());
    BOOST_TEST(reqs[0].header("Accept-Encoding").value_or("") == "gzip");
}

BOOST_AUTO_TEST_CASE(a_list_reply_over_the_json_cap_is_refused_while_reading)
{
    // 8 MiB of list reply against a 1 MiB cap (the default cap is 32 MiB: a
    // 100 MB list reply is refused instead of taking 714 MB).
    std::string big = "[";
    std::string const one =
        R"({"templateID":"t","sandboxID":"sbx1","clientID":"c","startedAt":"s","endAt":"e","cpuCount":1,"memoryMB":1,"diskSizeMB":1,"state":"running","envdVersion":"0.5.7"})";
    while (big.size() < (8u << 20)) big += one + ",";
    big.back() = ']';
    test_http_server server([&](recorded_request const&) { return scripted_response::json(200, big); });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url());
        o.max_response_bytes = 1u << 20;
        auto c = client_for(ex, o);
        e2b::list_params const params;
        auto r = co_await c->async_list_sandboxes(params);
        BOOST_TEST_REQUIRE(r.has_error());
        BOOST_TEST((r.error() == errc::limit_exceeded), r.error().to_string());
    });
}

BOOST_AUTO_TEST_CASE(uploads_are_gzipped_only_when_asked)
{
    std::string const data(100000, 'a');
    test_http_server server([](recorded_request const&) {
        return scripted_response::json(200, R"([{"path":"/w/f","name":"f","type":"file"}])");
    });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto plain_opts = options_for(server.url());
        auto gzip_opts = plain_opts;
        gzip_opts.gzip_uploads = true;
        auto plain = client_for(ex, plain_opts);
        auto packed = client_for(ex, gzip_opts);
        auto const t = target_for("0.5.7");
        std::string const path = "/w/f";
        BOOST_TEST((co_await plain->async_write_file(t, path, data)).has_value());
        BOOST_TEST((co_await packed->async_write_file(t, path, data)).has_value());
    });
    auto reqs = server.requests();
    // Each write is followed by a Stat (the file's real entry); only the uploads matter here.
    std::erase_if(reqs, [](recorded_request const& r) { return r.path() != "/files"; });
    BOOST_TEST_REQUIRE(reqs.size() == 2u);
    BOOST_TEST(!reqs[0].header("Content-Encoding"));
    BOOST_TEST(reqs[0].body == data);
    BOOST_TEST(reqs[1].header("Content-Encoding").value_or("") == "gzip");
    BOOST_TEST(reqs[1].body.size() < data.size() / 10);
    BOOST_TEST(gunzip(reqs[1].body) == data);
}

BOOST_AUTO_TEST_SUITE_END()
