// prism-e2b-local never falls over on bad input: malformed JSON, bad
// envelopes, invalid base64, unknown pids, traversal, oversized bodies and
// wrong credentials each get E2B's status or Connect code, and the server
// keeps serving.
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace prism_e2b::test;
namespace json = boost::json;

namespace {

std::string code_of(http_reply const& r)
{
    auto v = r.json().as_object();
    return v["code"].is_string() ? std::string(v["code"].as_string()) : std::to_string(v["code"].to_number<int>());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_bad_input)

BOOST_AUTO_TEST_CASE(control_plane_rejects_bad_json_and_credentials)
{
    local_server_fixture f;
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"templateID":)", api_headers(f)).status == 400);
    BOOST_TEST(c.request("POST", "/sandboxes", R"([1,2])", api_headers(f)).status == 400);
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"timeout":5})", api_headers(f)).status == 400);
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"templateID":"base","timeout":"x"})", api_headers(f)).status == 400);
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"templateID":"base","timeout":-1})", api_headers(f)).status == 400);
    // Doubles out of int64's range were converted unchecked: undefined behaviour (an HTTP fuzz seed).
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"templateID":"base","timeout":1e300})", api_headers(f)).status ==
               400);
    BOOST_TEST(
        c.request("POST", "/sandboxes", R"({"templateID":"base","timeout":9223372036854775808.0})", api_headers(f))
            .status == 400);
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"templateID":"base","metadata":{"a":1}})", api_headers(f)).status ==
               400);
    auto unauth = c.request("POST", "/sandboxes", R"({"templateID":"base"})", {{"X-API-KEY", "nope"}});
    BOOST_TEST(unauth.status == 401);
    BOOST_TEST(unauth.json().as_object()["code"].as_int64() == 401);
    BOOST_TEST(c.request("GET", "/v2/sandboxes").status == 401);
    BOOST_TEST(c.request("GET", "/sandboxes/doesnotexist", {}, api_headers(f)).status == 404);
    BOOST_TEST(c.request("POST", "/sandboxes/doesnotexist/pause", {}, api_headers(f)).status == 404);
    BOOST_TEST(c.request("POST", "/sandboxes/doesnotexist/connect", R"({"timeout":5})", api_headers(f)).status == 404);
    auto sb = create_sandbox(f);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb.id + "/connect", {}, api_headers(f)).status == 400);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb.id + "/pause", R"({"memory":"yes"})", api_headers(f)).status ==
               400);
    // Still serving.
    BOOST_TEST(c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).status == 200);
}

BOOST_AUTO_TEST_CASE(envd_rejects_wrong_tokens)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto other = create_sandbox(f);
    raw_http c(f.port());
    auto wrong = rpc_headers({sb.id, other.token});  // another sandbox's token
    auto r = c.request("POST", "/process.Process/List", "{}", wrong);
    BOOST_TEST(r.status == 401);
    BOOST_TEST(code_of(r) == "unauthenticated");
    BOOST_TEST(c.request("GET", "/files?path=/workspace", {}, {{"E2b-Sandbox-Id", sb.id}}).status == 401);
    // Routing by Host works as well.
    auto byhost = c.request("POST", "/process.Process/List", "{}",
                            {{"Host", "49983-" + sb.id + ".e2b.local"},
                             {"X-Access-Token", sb.token},
                             {"Content-Type", "application/json"}});
    BOOST_TEST(byhost.status == 200);
    BOOST_TEST(c.request("GET", "/health", {}, {{"E2b-Sandbox-Id", "nosuchsandbox"}}).status == 502);
    event_stream s(f.port(), "/process.Process/Start", start_json("echo x"),
                   {{"E2b-Sandbox-Id", sb.id}, {"X-Access-Token", "bad"}});
    BOOST_TEST(s.status() == 401);
}

BOOST_AUTO_TEST_CASE(bad_envelopes_and_messages_end_the_stream_with_an_error)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto check = [&](std::string body, bool raw, std::string const& code) {
        event_stream s(f.port(), "/process.Process/Start", body, envd_headers(sb), std::chrono::seconds(10), raw);
        BOOST_TEST(s.status() == 200);
        BOOST_TEST(!s.next_event());
        BOOST_REQUIRE(s.end_message());
        auto e = *s.end_message();
        BOOST_REQUIRE(e.contains("error"));
        BOOST_TEST(std::string(e["error"].as_object()["code"].as_string()) == code);
    };
    check(std::string("\x00\x00\x00\x00", 4), true, "invalid_argument");               // truncated header
    check(std::string("\x00\x7f\xff\xff\xff{}", 7), true, "invalid_argument");         // absurd length
    check(std::string("\x01\x00\x00\x00\x02{}", 7), true, "invalid_argument");         // compressed flag
    check("not json", false, "invalid_argument");                                      // bad message
    check(R"({"process":{"args":["x"]}})", false, "invalid_argument");                 // no cmd
    check(R"({"process":{"cmd":"/nonexistent/binary"}})", false, "invalid_argument");  // exec fails
    check(R"({"process":{"cmd":"/bin/true","cwd":"/workspace/missing"}})", false, "invalid_argument");
    // Connect to an unknown pid.
    event_stream s(f.port(), "/process.Process/Connect", R"({"process":{"pid":4000000000}})", envd_headers(sb));
    BOOST_TEST(!s.next_event());
    BOOST_REQUIRE(s.end_message());
    auto endm = *s.end_message();
    BOOST_TEST(std::string(endm["error"].as_object()["code"].as_string()) == "not_found");
    BOOST_TEST(run_command(f, sb, "echo still-fine").stdout_text == "still-fine\n");
}

BOOST_AUTO_TEST_CASE(unary_rpcs_reject_bad_input)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    auto h = rpc_headers(sb);
    auto r = c.request("POST", "/process.Process/SendSignal",
                       R"({"process":{"pid":99999999},"signal":"SIGNAL_SIGKILL"})", h);
    BOOST_TEST(r.status == 404);
    BOOST_TEST(code_of(r) == "not_found");
    r = c.request("POST", "/process.Process/SendInput", "{oops", h);
    BOOST_TEST(r.status == 400);
    BOOST_TEST(code_of(r) == "invalid_argument");

    // Invalid base64 to a live process.
    event_stream s(f.port(), "/process.Process/Start", start_json("cat", true), envd_headers(sb));
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto pid = std::to_string((*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>());
    r = c.request("POST", "/process.Process/SendInput",
                  R"({"process":{"pid":)" + pid + R"(},"input":{"stdin":"!!notbase64"}})", h);
    BOOST_TEST(r.status == 400);
    BOOST_TEST(code_of(r) == "invalid_argument");
    r = c.request("POST", "/process.Process/SendInput",
                  R"({"process":{"pid":)" + pid + R"(},"input":{"stdin":"aGkK"}})", h);
    BOOST_TEST(r.status == 200);
    r = c.request("POST", "/process.Process/SendSignal",
                  R"({"process":{"pid":)" + pid + R"(},"signal":"SIGNAL_BOGUS"})", h);
    BOOST_TEST(r.status == 400);
    r = c.request("POST", "/process.Process/CloseStdin", R"({"process":{"pid":)" + pid + "}}", h);
    BOOST_TEST(r.status == 200);
    std::string out;
    std::optional<json::object> end;
    while (auto ev = s.next_event()) {
        auto& e = (*ev)["event"].as_object();
        if (e.contains("data")) out += decode_b64_for_tests(e["data"].as_object()["stdout"].as_string());
        if (e.contains("end")) end = e["end"].as_object();
    }
    BOOST_TEST(out == "hi\n");
    BOOST_REQUIRE(end);
    BOOST_TEST(!end->contains("exitCode"));  // 0 is omitted
    BOOST_TEST(std::string((*end)["status"].as_string()) == "exit status 0");

    r = c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/none"})", h);
    BOOST_TEST(r.status == 404);
    BOOST_TEST(code_of(r) == "not_found");
    r = c.request("POST", "/process.Process/StreamInput", "{}", h);
    BOOST_TEST(code_of(r) == "unimplemented");

    // Found by fuzz_http_request: moving a directory into itself (EINVAL) was a 500 internal error.
    r = c.request("POST", "/filesystem.Filesystem/MakeDir", R"({"path":"/workspace/d"})", h);
    BOOST_TEST(r.status == 200);
    r = c.request("POST", "/filesystem.Filesystem/Move", R"({"source":"/workspace/d","destination":"/workspace/d/e"})",
                  h);
    BOOST_TEST(r.status == 400);
    BOOST_TEST(code_of(r) == "invalid_argument");
    r = c.request("POST", "/filesystem.Filesystem/MakeDir", R"({"path":"/workspace/f/g"})", h);
    BOOST_TEST(r.status == 200);
    r = c.request("POST", "/filesystem.Filesystem/Move", R"({"source":"/workspace/d","destination":"/workspace/f"})",
                  h);
    BOOST_TEST(r.status != 500);  // a non-empty directory is not replaced (ENOTEMPTY or EEXIST)
    BOOST_TEST((code_of(r) == "failed_precondition" || code_of(r) == "already_exists"));
    r = c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/d"})", h);
    BOOST_TEST(r.status == 200);  // and nothing was lost
}

BOOST_AUTO_TEST_CASE(input_to_a_closed_stdin_is_an_error_not_a_sigpipe)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    event_stream s(f.port(), "/process.Process/Start", start_json("exec 0<&-; echo closed; sleep 5", true),
                   envd_headers(sb));
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto pid = std::to_string((*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>());
    BOOST_REQUIRE(s.next_event());  // "closed": stdin is gone now
    raw_http c(f.port());
    auto r = c.request("POST", "/process.Process/SendInput",
                       R"({"process":{"pid":)" + pid + R"(},"input":{"stdin":"aGkK"}})", rpc_headers(sb));
    BOOST_TEST(r.status == 400);
    BOOST_TEST(code_of(r) == "invalid_argument");
    BOOST_TEST(c.request("POST", "/process.Process/SendSignal",
                         R"({"process":{"pid":)" + pid + R"(},"signal":"SIGNAL_SIGKILL"})", rpc_headers(sb))
                   .status == 200);
}

BOOST_AUTO_TEST_CASE(traversal_out_of_the_sandbox_is_refused)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    auto h = envd_headers(sb);
    BOOST_TEST(c.request("GET", "/files?path=../../../etc/passwd", {}, h).status == 400);
    BOOST_TEST(c.request("GET", "/files?path=/workspace/../../../etc/passwd", {}, h).status == 400);
    BOOST_TEST(
        c.request("POST", "/files?path=/../escape.txt", "x", {h[0], h[1], {"Content-Type", "application/octet-stream"}})
            .status == 400);
    auto r = c.request("POST", "/filesystem.Filesystem/ListDir", R"({"path":"/home/user/../../.."})", rpc_headers(sb));
    BOOST_TEST(r.status == 400);
    BOOST_TEST(code_of(r) == "invalid_argument");
    r = c.request("POST", "/filesystem.Filesystem/Move", R"({"source":"/workspace","destination":"/../../x"})",
                  rpc_headers(sb));
    BOOST_TEST(r.status == 400);

    // A symlink pointing outside resolves inside the sandbox root, never on the host.
    BOOST_REQUIRE(
        run_command(f, sb, "ln -s /etc /workspace/etc-link && ln -s ../../../../../../etc/hostname /workspace/rel-link")
            .end);
    auto write_through = [&] {
        return c.request("POST", "/files?path=/workspace/etc-link/pwned", "x",
                         {h[0], h[1], {"Content-Type", "application/octet-stream"}});
    };
    if (f.server().isolation() == "namespaces") {
        // envd runs inside the sandbox: the link is the sandbox's own /etc (its passwd knows
        // "user"), as the sandbox's commands see it: its writable system, not the host's.
        auto passwd = c.request("GET", "/files?path=/workspace/etc-link/passwd", {}, h);
        BOOST_TEST(passwd.status == 200);
        BOOST_TEST(passwd.body.rfind("user:x:1000:1000:", 0) == 0);
        auto w = write_through();
        BOOST_TEST_INFO("write through the link: " << w.status << " " << w.body);
        BOOST_TEST(w.status == 200);
        BOOST_TEST(run_command(f, sb, "cat /etc/pwned").stdout_text == "x");
    } else {
        BOOST_TEST(c.request("GET", "/files?path=/workspace/etc-link/passwd", {}, h).status == 404);
        BOOST_TEST(c.request("GET", "/files?path=/workspace/rel-link", {}, h).status == 404);
        // Writing through it lands under the sandbox root's /etc (absent here), never in the host's.
        BOOST_TEST(write_through().status == 404);
    }
    std::error_code ec;
    BOOST_TEST(!std::filesystem::exists("/etc/pwned", ec));
    // The symlink itself is reported as one.
    r = c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/etc-link"})", rpc_headers(sb));
    BOOST_TEST(r.status == 200);
    BOOST_TEST(std::string(r.json().as_object()["entry"].as_object()["type"].as_string()) == "FILE_TYPE_SYMLINK");
}

BOOST_AUTO_TEST_CASE(oversized_bodies_are_refused)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.max_file_bytes = 256 * 1024; });
    auto sb = create_sandbox(f);
    {
        raw_http c(f.port());
        std::string big(2u << 20, 'a');
        auto r =
            c.request("POST", "/sandboxes", R"({"templateID":"base","metadata":{"x":")" + big + "\"}}", api_headers(f));
        BOOST_TEST(r.status == 413);
    }
    {
        raw_http c(f.port());
        auto h = envd_headers(sb);
        auto r = c.request("POST", "/files?path=/workspace/big", std::string(300 * 1024, 'b'),
                           {h[0], h[1], {"Content-Type", "application/octet-stream"}});
        BOOST_TEST(r.status == 413);
    }
    raw_http c(f.port());
    auto h = envd_headers(sb);
    auto r = c.request("POST", "/files?path=/workspace/ok", std::string(200 * 1024, 'b'),
                       {h[0], h[1], {"Content-Type", "application/octet-stream"}});
    BOOST_TEST(r.status == 200);
    BOOST_TEST(c.request("GET", "/files?path=/workspace/ok", {}, h).body.size() == 200u * 1024u);
}

BOOST_AUTO_TEST_CASE(garbage_on_the_socket_never_takes_the_server_down)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    std::uint32_t seed = 12345;
    auto next = [&] {
        seed = seed * 1664525u + 1013904223u;
        return seed >> 8;
    };
    std::vector<std::string> payloads = {
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        "POST /sandboxes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST /process.Process/Start HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: " + sb.id + "\r\nX-Access-Token: " +
            sb.token + "\r\nContent-Type: application/connect+json\r\nContent-Length: 3\r\n\r\n\x00\x00\x00",
        "GET /" + std::string(100000, 'a') + " HTTP/1.1\r\n\r\n",
        "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  // a TLS ClientHello on the plain port
    };
    for (int i = 0; i < 40; ++i) {
        std::string junk(1 + next() % 600, '\0');
        for (auto& c : junk) c = static_cast<char>(next() & 0xff);
        if (i % 2) junk = "POST /files?path=x HTTP/1.1\r\n" + junk;
        payloads.push_back(std::move(junk));
    }
    for (auto const& p : payloads) {
        boost::asio::io_context ioc;
        boost::asio::ip::tcp::socket sock(ioc);
        sock.connect({boost::asio::ip::make_address("127.0.0.1"), f.port()});
        timeval tv{0, 200000};
        ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        boost::system::error_code ec;
        boost::asio::write(sock, boost::asio::buffer(p), ec);
        sock.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ec);
        char buf[512];
        sock.read_some(boost::asio::buffer(buf), ec);
    }
    raw_http c(f.port());
    BOOST_TEST(c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).status == 200);
    BOOST_TEST(run_command(f, sb, "echo alive").stdout_text == "alive\n");
}

BOOST_AUTO_TEST_SUITE_END()
