// The hardened listener, in process: credentials judged from the head before a
// body byte is read, bodies bounded by a server-wide budget (checked through the
// listener's own accounting), the connection cap, and header/idle timeouts
// against slow clients (short configured timeouts; the test waits with a deadline
// for the server to close, it never sleeps).
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "raw_tcp.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <sys/wait.h>

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

struct tool_run {
    int exit_code = -1;
    std::string output;  ///< stdout and stderr
};

/// Runs a host HTTP client (curl, nghttp) to completion; `args` are trusted test strings.
tool_run run_tool(std::string const& command)
{
    tool_run r;
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    BOOST_TEST_REQUIRE(p != nullptr);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
    int const status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

std::string header_args(header_pairs const& headers)
{
    std::string s;
    for (auto const& [n, v] : headers) s += " -H '" + n + ": " + v + "'";
    return s;
}

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

BOOST_AUTO_TEST_CASE(head_and_bodiless_statuses_send_no_body_over_http1_and_h2)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    // HTTP/1.1: a HEAD gets the GET's head, Content-Length included, and not one body byte:
    // the next response on the connection starts right after it.
    raw_tcp c(f.port());
    BOOST_TEST_REQUIRE(c.send(head_for("HEAD", "/health", {})));
    auto head = c.read_head(15s);
    BOOST_TEST(starts_with_status(head, 200), head);
    BOOST_TEST(head.find("Content-Length: 16\r\n") != std::string::npos, head);
    BOOST_TEST_REQUIRE(c.send(head_for("GET", "/health", {})));
    head = c.read_head(15s);
    BOOST_TEST(starts_with_status(head, 200), head);

    // HTTP/2 (h2c with prior knowledge, the same sessions as h2 over TLS), with two clients
    // that treat DATA after a HEAD's or a 204's headers as a protocol error.
    auto const url = "http://127.0.0.1:" + std::to_string(f.port()) + "/health";
    auto r = run_tool("curl -sS --max-time 30 --http2-prior-knowledge -I " + url);
    BOOST_TEST(r.exit_code == 0, r.output);
    BOOST_TEST(r.output.starts_with("HTTP/2 200"), r.output);
    BOOST_TEST(r.output.find("content-length: 16") != std::string::npos, r.output);
    r = run_tool("curl -sS --max-time 30 --http2-prior-knowledge -o /dev/null -w '%{http_code}'" +
                 header_args(envd_headers(sb)) + " " + url);  // envd's health: 204
    BOOST_TEST(r.exit_code == 0, r.output);
    BOOST_TEST(r.output == "204", r.output);
    r = run_tool("nghttp -n --timeout=30 -H ':method: HEAD' " + url);
    BOOST_TEST(r.exit_code == 0, r.output);
    r = run_tool("nghttp -n --timeout=30" + header_args(envd_headers(sb)) + " " + url);
    BOOST_TEST(r.exit_code == 0, r.output);
    // The server still serves this connection's peers afterwards.
    BOOST_TEST(raw_http(f.port()).request("GET", "/health").status == 200);
}

BOOST_AUTO_TEST_SUITE_END()
