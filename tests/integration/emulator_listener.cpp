// The hardened listener, in process: credentials judged from the head before a
// body byte is read, bodies bounded by a server-wide budget (checked through the
// listener's own accounting), the connection cap, and header/idle timeouts
// against slow clients (short configured timeouts; the test waits with a deadline
// for the server to close, it never sleeps).
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "raw_tcp.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b::test;
using namespace std::chrono_literals;

namespace {

std::string head_for(std::string const& method, std::string const& target, header_pairs const& headers)
{
    std::string s = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (auto const& [n, v] : headers) s += n + ": " + v + "\r\n";
    return s + "\r\n";
}

header_pairs upload_headers(sandbox_ref const& sb, std::size_t length)
{
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/octet-stream");
    h.emplace_back("Content-Length", std::to_string(length));
    return h;
}

bool starts_with_status(std::string const& head, int status)
{
    return head.rfind("HTTP/1.1 " + std::to_string(status) + " ", 0) == 0;
}

constexpr std::size_t MiB = 1u << 20;

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_listener)

BOOST_AUTO_TEST_CASE(unauthenticated_bodies_are_refused_before_they_are_read)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto const peak_before = f.server().listener_stats().peak_buffered_bytes;
    // Heads announcing 60 MB bodies that are never sent: the answer must come anyway.
    {
        raw_tcp c(f.port());
        auto h = upload_headers({sb.id, "wrong-token"}, 60 * MiB);
        BOOST_TEST_REQUIRE(c.send(head_for("POST", "/files?path=/workspace/x", h)));
        auto head = c.read_head(15s);
        BOOST_TEST(starts_with_status(head, 401), head);
    }
    {
        raw_tcp c(f.port());
        header_pairs h = {{"X-API-KEY", "nope"}, {"Content-Type", "application/json"}, {"Content-Length", "900000"}};
        BOOST_TEST_REQUIRE(c.send(head_for("POST", "/sandboxes", h)));
        auto head = c.read_head(15s);
        BOOST_TEST(starts_with_status(head, 401), head);
    }
    {
        raw_tcp c(f.port());  // chunked, no length at all
        header_pairs h = {{"E2b-Sandbox-Id", sb.id}, {"Transfer-Encoding", "chunked"}};
        BOOST_TEST_REQUIRE(c.send(head_for("POST", "/files?path=/workspace/x", h)));
        auto head = c.read_head(15s);
        BOOST_TEST(starts_with_status(head, 401), head);
    }
    {
        raw_tcp c(f.port());  // a sandbox that does not exist
        auto h = upload_headers({"nosuchsandbox", "t"}, 60 * MiB);
        BOOST_TEST_REQUIRE(c.send(head_for("POST", "/files?path=/workspace/x", h)));
        auto head = c.read_head(15s);
        BOOST_TEST(starts_with_status(head, 502), head);
    }
    auto const st = f.server().listener_stats();
    BOOST_TEST(st.peak_buffered_bytes == peak_before);  // not one body byte was held
    // The create's body is released once its answer is written, which the client may read first.
    BOOST_TEST(eventually([&] { return f.server().listener_stats().buffered_bytes == 0u; }));
}

BOOST_AUTO_TEST_CASE(request_bodies_are_bounded_by_the_server_wide_budget)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) {
        o.max_buffered_bytes = 4 * MiB;
        o.max_file_bytes = 64 * MiB;
    });
    auto sb = create_sandbox(f);
    std::string const body(3 * MiB, 'x');
    // A holds 3 MiB of the 4 MiB budget while its body is still arriving.
    raw_tcp a(f.port());
    BOOST_TEST_REQUIRE(a.send(head_for("POST", "/files?path=/workspace/a", upload_headers(sb, body.size()))));
    BOOST_TEST_REQUIRE(a.send(std::string_view(body).substr(0, MiB)));
    BOOST_TEST_REQUIRE(eventually([&] { return f.server().listener_stats().buffered_bytes >= body.size(); }));
    // B does not fit: 503 at once, its body unread.
    {
        raw_tcp b(f.port());
        BOOST_TEST_REQUIRE(b.send(head_for("POST", "/files?path=/workspace/b", upload_headers(sb, body.size()))));
        auto head = b.read_head(15s);
        BOOST_TEST(starts_with_status(head, 503), head);
        BOOST_TEST(head.find("Retry-After: 1") != std::string::npos, head);
    }
    // C, chunked, is cut once it outgrows what is left.
    {
        raw_tcp c(f.port());
        auto h = envd_headers(sb);
        h.emplace_back("Transfer-Encoding", "chunked");
        BOOST_TEST_REQUIRE(c.send(head_for("POST", "/files?path=/workspace/c", h)));
        std::string chunk(256 * 1024, 'y');
        char size_line[32];
        std::snprintf(size_line, sizeof size_line, "%zx\r\n", chunk.size());
        for (int i = 0; i < 64 && c.send(std::string(size_line) + chunk + "\r\n"); ++i) {
        }
        auto head = c.read_head(15s);
        BOOST_TEST(starts_with_status(head, 503), head);
    }
    BOOST_TEST(f.server().listener_stats().peak_buffered_bytes <= 4 * MiB);
    // A completes; its bytes go back to the budget and the next upload fits.
    BOOST_TEST_REQUIRE(a.send(std::string_view(body).substr(MiB)));
    auto head = a.read_head(15s);
    BOOST_TEST(starts_with_status(head, 200), head);
    BOOST_TEST(eventually([&] { return f.server().listener_stats().buffered_bytes == 0; }));
    raw_http d(f.port());
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/octet-stream");
    BOOST_TEST(d.request("POST", "/files?path=/workspace/d", body, h).status == 200);
    BOOST_TEST(f.server().listener_stats().peak_buffered_bytes <= 4 * MiB);
}

BOOST_AUTO_TEST_CASE(connections_past_the_cap_get_503)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.max_connections = 2; });
    raw_http first(f.port()), second(f.port());
    BOOST_TEST_REQUIRE(first.request("GET", "/health").status == 200);  // both are sessions now
    BOOST_TEST_REQUIRE(second.request("GET", "/health").status == 200);
    {
        raw_tcp third(f.port());
        third.send(head_for("GET", "/health", {}));
        auto head = third.read_head(15s);
        BOOST_TEST(starts_with_status(head, 503), head);
        BOOST_TEST(head.find("Retry-After: 1") != std::string::npos, head);
    }
    BOOST_TEST(f.server().listener_stats().refused_connections >= 1u);
    BOOST_TEST(first.request("GET", "/health").status == 200);  // the admitted ones keep working
}

BOOST_AUTO_TEST_CASE(a_head_that_trickles_in_is_cut_after_the_header_timeout)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) {
        o.header_timeout = 300ms;
        o.idle_timeout = std::chrono::hours(1);
    });
    raw_tcp slow(f.port());
    std::string const head = head_for("GET", "/health", {{"X-Padding", std::string(4000, 'p')}});
    // One byte every 20 ms would take 80 s; the server must hang up long before.
    bool closed = false;
    for (std::size_t i = 0; i < head.size() && !closed; ++i)
        closed = !slow.send(head.substr(i, 1)) || slow.closed_by_peer(20ms);
    BOOST_TEST(closed);
    raw_http c(f.port());
    BOOST_TEST(c.request("GET", "/health").status == 200);
}

BOOST_AUTO_TEST_CASE(idle_connections_and_stalled_bodies_are_closed)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) {
        o.idle_timeout = 300ms;
        o.header_timeout = std::chrono::hours(1);
    });
    raw_tcp idle(f.port());
    BOOST_TEST(idle.closed_by_peer(30s));
    auto sb = create_sandbox(f);
    raw_tcp stalled(f.port());
    BOOST_TEST_REQUIRE(stalled.send(head_for("POST", "/files?path=/workspace/s", upload_headers(sb, 1000)) + "abc"));
    BOOST_TEST(stalled.closed_by_peer(30s));
    BOOST_TEST(eventually([&] { return f.server().listener_stats().buffered_bytes == 0; }));
}

BOOST_AUTO_TEST_SUITE_END()
