// Wire fidelity of envd: Connect unary and server-streaming calls, /files and
// /health. Headers, bodies (envelopes decoded), and the results derived from
// every answer, including end-of-stream errors, keepalives, absent exitCode,
// SIGKILL ends, streams without an end event and cut streams.
#include <prism_e2b/e2b/client.hpp>

#include "client_fixture.hpp"
#include "protocol/base64.hpp"
#include "protocol/envelope.hpp"
#include "run_coro.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_envd)

namespace {

template <class F>
void with_client(test_http_server& server, F body, unsigned max_retries = 3)
{
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url());
        o.max_retries = max_retries;
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        co_await body(**c);
    });
}

void check_envd_headers(recorded_request const& r)
{
    BOOST_TEST(r.header("E2b-Sandbox-Id").value_or("") == "sbx1");
    BOOST_TEST(r.header("E2b-Sandbox-Port").value_or("") == "49983");
    BOOST_TEST(r.header("X-Access-Token").value_or("") == "envd-token-abcdef");
    BOOST_TEST(r.header("User-Agent").value_or("") == "prism-e2b/0.1.0");
    BOOST_TEST(!r.header("X-API-KEY"));
}

void check_unary(recorded_request const& r, std::string const& path)
{
    BOOST_TEST(r.method == "POST");
    BOOST_TEST(r.target == path);
    check_envd_headers(r);
    BOOST_TEST(r.header("Connect-Protocol-Version").value_or("") == "1");
    BOOST_TEST(r.header("Content-Type").value_or("") == "application/json");
}

/// The JSON inside a request's single envelope.
std::string envelope_payload(std::string const& body)
{
    wire::envelope_decoder d;
    std::vector<wire::envelope> out;
    BOOST_TEST_REQUIRE(d.feed(body, out).has_value());
    BOOST_TEST_REQUIRE(out.size() == 1u);
    BOOST_TEST(out[0].flags == 0);
    return out[0].payload;
}

std::string b64(std::string const& s) { return detail::base64_encode(s); }

struct drained {
    std::vector<e2b::process_event> events;
    std::optional<error> failure;
    std::string stdout_text, stderr_text;
    std::optional<e2b::end_event> end;
};

asio::awaitable<drained> drain(e2b::process_event_stream& s)
{
    drained d;
    for (int guard = 0; guard < 10000; ++guard) {
        auto ev = co_await s.async_next();
        if (!ev) {
            d.failure = ev.error();
            co_return d;
        }
        if (!*ev) co_return d;
        if (auto const* data = std::get_if<e2b::data_event>(&**ev)) {
            (data->stream == e2b::data_event::stream_kind::stderr_data ? d.stderr_text : d.stdout_text) += data->bytes;
        }
        if (auto const* end = std::get_if<e2b::end_event>(&**ev)) d.end = *end;
        d.events.push_back(**ev);
    }
    co_return d;
}

}  // namespace

BOOST_AUTO_TEST_CASE(start_streams_events_and_sends_what_the_sdk_sends)
{
    test_http_server server([](recorded_request const&) {
        auto r = connect_stream(
            {R"({"event":{"start":{"pid":42}}})", R"({"event":{"data":{"stdout":")" + b64("hi\n") + R"("}}})",
             R"({"event":{"keepalive":{}}})", R"({"event":{"data":{"stderr":")" + b64("oops") + R"("}}})",
             R"({"event":{"end":{"exited":true,"status":"exit status 0"}}})"});
        r.chunk_delay = std::chrono::milliseconds(2);
        return r;
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "/bin/bash";
        p.process.args = {"-l", "-c", "echo hi"};
        p.process.envs = {{"A", "1"}};
        p.process.cwd = "/workspace";
        p.user = "root";
        auto target = target_for();
        auto s = co_await c.async_start_process(target, p);
        BOOST_TEST_REQUIRE(s.has_value());
        auto d = co_await drain(**s);
        BOOST_TEST(!d.failure);
        BOOST_TEST_REQUIRE(d.events.size() == 5u);
        BOOST_TEST(std::get<e2b::start_event>(d.events[0]).pid == 42u);
        BOOST_TEST(std::holds_alternative<e2b::keepalive_event>(d.events[2]));
        BOOST_TEST(d.stdout_text == "hi\n");
        BOOST_TEST(d.stderr_text == "oops");
        BOOST_TEST_REQUIRE(d.end.has_value());
        BOOST_TEST(d.end->exit_code == 0);  // absent exitCode in a present end event
        BOOST_TEST(d.end->exited);
        // After the end the stream stays finished.
        auto again = co_await (*s)->async_next();
        BOOST_TEST((again.has_value() && !*again));
    });
    auto r = server.requests().at(0);
    BOOST_TEST(r.method == "POST");
    BOOST_TEST(r.target == "/process.Process/Start");
    check_envd_headers(r);
    BOOST_TEST(r.header("Content-Type").value_or("") == "application/connect+json");
    BOOST_TEST(r.header("Connect-Protocol-Version").value_or("") == "1");
    BOOST_TEST(r.header("Connect-Timeout-Ms").value_or("") == "60000");
    BOOST_TEST(r.header("Keepalive-Ping-Interval").value_or("") == "50");
    BOOST_TEST(r.header("Authorization").value_or("") == "Basic " + b64("root:"));
    BOOST_TEST(
        envelope_payload(r.body) ==
        R"({"process":{"cmd":"/bin/bash","args":["-l","-c","echo hi"],"envs":{"A":"1"},"cwd":"/workspace"},"stdin":false})");
}

BOOST_AUTO_TEST_CASE(zero_timeout_sends_no_deadline_and_no_user_no_authorization)
{
    test_http_server server([](recorded_request const&) {
        return connect_stream({R"({"event":{"start":{"pid":1}}})",
                               R"({"event":{"end":{"exitCode":3,"exited":true,"status":"exit status 3"}}})"});
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "sleep";
        p.timeout = std::chrono::milliseconds(0);
        auto target = target_for();
        auto s = co_await c.async_start_process(target, p);
        auto d = co_await drain(**s);
        BOOST_TEST(!d.failure);
        BOOST_TEST(d.end->exit_code == 3);
    });
    auto r = server.requests().at(0);
    BOOST_TEST(!r.header("Connect-Timeout-Ms"));
    BOOST_TEST(!r.header("Authorization"));
}

BOOST_AUTO_TEST_CASE(sigkill_end_is_reported_as_sent)
{
    test_http_server server([](recorded_request const&) {
        return connect_stream({R"({"event":{"start":{"pid":9}}})",
                               R"({"event":{"end":{"exitCode":-1,"exited":false,"status":"signal: killed"}}})"});
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "sleep";
        auto target = target_for();
        auto d = co_await drain(**(co_await c.async_start_process(target, p)));
        BOOST_TEST(!d.failure);
        BOOST_TEST(d.end->exit_code == -1);
        BOOST_TEST(!d.end->exited);
        BOOST_TEST(d.end->status == "signal: killed");
    });
}

BOOST_AUTO_TEST_CASE(stream_without_end_event_is_unknown_outcome)
{
    test_http_server server([](recorded_request const&) {
        return connect_stream({R"({"event":{"start":{"pid":9}}})", R"({"event":{"data":{"stdout":"aGkK"}}})"});
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "x";
        auto target = target_for();
        auto d = co_await drain(**(co_await c.async_start_process(target, p)));
        BOOST_TEST_REQUIRE(d.failure.has_value());
        BOOST_TEST((*d.failure == errc::unknown_outcome));
        BOOST_TEST(d.stdout_text == "hi\n");
        BOOST_TEST(!d.end);
    });
}

BOOST_AUTO_TEST_CASE(cut_stream_is_unknown_outcome)
{
    test_http_server server([](recorded_request const&) {
        scripted_response r;
        r.headers = {{"Content-Type", "application/connect+json"}};
        r.chunks = {envelope_bytes(R"({"event":{"start":{"pid":9}}})"),
                    envelope_bytes(R"({"event":{"data":{"stdout":"aGkK"}}})").substr(0, 9)};
        r.cut = true;
        return r;
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "x";
        auto target = target_for();
        auto d = co_await drain(**(co_await c.async_start_process(target, p)));
        BOOST_TEST_REQUIRE(d.failure.has_value());
        BOOST_TEST((*d.failure == errc::unknown_outcome));
        BOOST_TEST(d.events.size() == 1u);
    });
}

BOOST_AUTO_TEST_CASE(silent_stream_past_idle_timeout_is_unknown_outcome)
{
    // The server sends start, then nothing (no keepalive) for 10 minutes; with a
    // 300 ms idle bound the reader gives up instead of hanging (no clock read: only
    // the idle deadline can end the read with "deadline passed" before the keepalive).
    test_http_server server([](recorded_request const&) {
        scripted_response r;
        r.headers = {{"Content-Type", "application/connect+json"}};
        r.chunks = {envelope_bytes(R"({"event":{"start":{"pid":9}}})"),
                    envelope_bytes(R"({"event":{"keepalive":{}}})")};
        r.chunk_delay = std::chrono::minutes(10);
        return r;
    });
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url());
        o.stream_idle_timeout = std::chrono::milliseconds(300);
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        e2b::start_process_params p;
        p.process.cmd = "x";
        auto target = target_for();
        auto d = co_await drain(**(co_await (*c)->async_start_process(target, p)));
        BOOST_TEST_REQUIRE(d.failure.has_value());
        BOOST_TEST((*d.failure == errc::unknown_outcome), d.failure->to_string());
        BOOST_TEST(d.failure->message().find("deadline passed") != std::string::npos, d.failure->to_string());
        BOOST_TEST(!d.end);
    });
}

BOOST_AUTO_TEST_CASE(end_of_stream_errors_are_mapped)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        if (n++ == 0)
            return connect_stream({R"({"event":{"start":{"pid":9}}})"},
                                  R"({"error":{"code":"deadline_exceeded","message":"deadline passed"}})");
        return connect_stream({}, R"({"error":{"code":"not_found","message":"process with pid 77 not found"}})");
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "x";
        auto target = target_for();
        auto d = co_await drain(**(co_await c.async_start_process(target, p)));
        BOOST_TEST_REQUIRE(d.failure.has_value());
        BOOST_TEST((*d.failure == errc::timed_out));
        BOOST_TEST(d.failure->vendor_code() == "deadline_exceeded");
        e2b::process_selector sel;
        sel.pid = 77;
        auto s = co_await c.async_connect_process(target, sel, std::chrono::milliseconds(0));
        BOOST_TEST_REQUIRE(s.has_value());
        auto d2 = co_await drain(**s);
        BOOST_TEST_REQUIRE(d2.failure.has_value());
        BOOST_TEST((*d2.failure == errc::not_found));
        BOOST_TEST(d2.failure->message() == "process with pid 77 not found");
    });
    auto reqs = server.requests();
    BOOST_TEST(reqs[1].target == "/process.Process/Connect");
    BOOST_TEST(envelope_payload(reqs[1].body) == R"({"process":{"pid":77}})");
    BOOST_TEST(!reqs[1].header("Connect-Timeout-Ms"));
    BOOST_TEST(reqs[1].header("Keepalive-Ping-Interval").value_or("") == "50");
}

BOOST_AUTO_TEST_CASE(protocol_violations_are_protocol_errors)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        switch (n++) {
            case 0:
                return connect_stream({R"({"event":{"data":{"stdout":"aGkK"}}})"});  // no start first
            case 1:
                return connect_stream({R"({"event":{"start":{"pid":1}}})", R"({"event":{"data":{"stdout":"%%%"}}})"});
            case 2:
                return connect_stream({R"({"event":{"start":{"pid":1}}})", "{not json"});
            case 3: {
                auto r = connect_stream({R"({"event":{"start":{"pid":1}}})"});
                r.chunks.insert(r.chunks.begin() + 1, wire::encode_envelope("{}", 0x01));  // compressed
                return r;
            }
            default:
                return scripted_response::json(200, "{}");  // wrong content type
        }
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "x";
        auto target = target_for();
        for (int i = 0; i < 4; ++i) {
            auto s = co_await c.async_start_process(target, p);
            BOOST_TEST_REQUIRE(s.has_value());
            auto d = co_await drain(**s);
            BOOST_TEST_REQUIRE(d.failure.has_value());
            BOOST_TEST((*d.failure == errc::protocol_error), "case " << i << ": " << d.failure->to_string());
        }
        auto s = co_await c.async_start_process(target, p);
        BOOST_TEST_REQUIRE(s.has_error());
        BOOST_TEST((s.error() == errc::protocol_error));
    });
}

BOOST_AUTO_TEST_CASE(http_errors_before_the_stream)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const&) {
        if (n++ == 0)
            return scripted_response::json(401, R"({"code":"unauthenticated","message":"invalid access token"})");
        return scripted_response::json(502, R"({"message":"sandbox not found"})");
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        e2b::start_process_params p;
        p.process.cmd = "x";
        auto target = target_for();
        auto a = co_await c.async_start_process(target, p);
        BOOST_TEST((a.error() == errc::unauthenticated));
        auto b = co_await c.async_start_process(target, p);
        BOOST_TEST((b.error() == errc::service_busy));
    });
}

BOOST_AUTO_TEST_CASE(unary_process_calls)
{
    std::atomic<int> n{0};
    test_http_server server([&](recorded_request const& r) {
        ++n;
        if (r.target == "/process.Process/List")
            return scripted_response::json(
                200, R"({"processes":[{"config":{"cmd":"sleep","args":["60"]},"pid":7,"tag":"bg"}]})");
        if (r.target == "/process.Process/SendSignal" && r.body.find("\"pid\":8") != std::string::npos)
            return scripted_response::json(404, R"({"code":"not_found","message":"process with pid 8 not found"})");
        return scripted_response::json(200, "{}");
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto target = target_for();
        auto l = co_await c.async_list_processes(target);
        BOOST_TEST_REQUIRE(l.has_value());
        BOOST_TEST_REQUIRE(l->size() == 1u);
        BOOST_TEST((*l)[0].pid == 7u);
        BOOST_TEST(*(*l)[0].tag == "bg");
        e2b::process_selector seven;
        seven.pid = 7;
        BOOST_TEST((co_await c.async_send_stdin(target, seven, "hello\n")).has_value());
        BOOST_TEST((co_await c.async_close_stdin(target, seven)).has_value());
        BOOST_TEST((co_await c.async_send_signal(target, seven, process_signal::sigkill)).has_value());
        e2b::process_selector eight;
        eight.pid = 8;
        auto gone = co_await c.async_send_signal(target, eight, process_signal::sigterm);
        BOOST_TEST_REQUIRE(gone.has_error());
        BOOST_TEST((gone.error() == errc::not_found));
        BOOST_TEST(gone.error().http_status() == 404);
        auto old = target_for("0.5.1");
        auto unsupported = co_await c.async_close_stdin(old, seven);
        BOOST_TEST((unsupported.error() == errc::unsupported));
    });
    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 5u);  // close_stdin on envd 0.5.1 sends nothing
    check_unary(reqs[0], "/process.Process/List");
    BOOST_TEST(reqs[0].body == "{}");
    check_unary(reqs[1], "/process.Process/SendInput");
    BOOST_TEST(reqs[1].body == R"({"process":{"pid":7},"input":{"stdin":")" + b64("hello\n") + R"("}})");
    check_unary(reqs[2], "/process.Process/CloseStdin");
    BOOST_TEST(reqs[2].body == R"({"process":{"pid":7}})");
    check_unary(reqs[3], "/process.Process/SendSignal");
    BOOST_TEST(reqs[3].body == R"({"process":{"pid":7},"signal":"SIGNAL_SIGKILL"})");
    BOOST_TEST(reqs[4].body == R"({"process":{"pid":8},"signal":"SIGNAL_SIGTERM"})");
}

BOOST_AUTO_TEST_CASE(filesystem_calls)
{
    test_http_server server([](recorded_request const& r) {
        std::string const entry =
            R"({"name":"d","type":"FILE_TYPE_DIRECTORY","path":"/w/d","size":"4096","mode":493,"permissions":"drwxr-xr-x","owner":"user","group":"user","modifiedTime":"2025-01-01T00:00:00Z"})";
        if (r.target == "/filesystem.Filesystem/MakeDir")
            return r.body.find("exists") != std::string::npos
                       ? scripted_response::json(409, R"({"code":"already_exists","message":"exists"})")
                       : scripted_response::json(200, R"({"entry":)" + entry + "}");
        if (r.target == "/filesystem.Filesystem/Stat")
            return r.body.find("missing") != std::string::npos
                       ? scripted_response::json(404, R"({"code":"not_found","message":"no such file"})")
                       : scripted_response::json(200, R"({"entry":)" + entry + "}");
        if (r.target == "/filesystem.Filesystem/ListDir")
            return scripted_response::json(
                200, R"({"entries":[)" + entry + R"(,{"name":"weird","type":"FILE_TYPE_UNSPECIFIED"}]})");
        if (r.target == "/filesystem.Filesystem/Move")
            return scripted_response::json(200, R"({"entry":)" + entry + "}");
        return scripted_response::json(200, "{}");
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto t = target_for();
        BOOST_TEST(*(co_await c.async_make_dir(t, "/w/d")) == true);
        BOOST_TEST(*(co_await c.async_make_dir(t, "/w/exists")) == false);
        auto st = co_await c.async_stat(t, "/w/d");
        BOOST_TEST_REQUIRE(st.has_value());
        BOOST_TEST((st->type == e2b::file_type::directory));
        BOOST_TEST(st->size == 4096);
        BOOST_TEST(st->owner == "user");
        BOOST_TEST(((co_await c.async_stat(t, "/w/missing")).error() == errc::not_found));
        auto ls = co_await c.async_list_dir(t, "/w", 2);
        BOOST_TEST_REQUIRE(ls.has_value());
        BOOST_TEST(ls->size() == 1u);  // the entry of unknown type is skipped, as the SDK does
        BOOST_TEST((co_await c.async_move(t, "/w/a", "/w/b"))->path == "/w/d");
        BOOST_TEST((co_await c.async_remove(t, "/w/b")).has_value());
    });
    auto reqs = server.requests();
    check_unary(reqs[0], "/filesystem.Filesystem/MakeDir");
    BOOST_TEST(reqs[0].body == R"({"path":"/w/d"})");
    check_unary(reqs[4], "/filesystem.Filesystem/ListDir");
    BOOST_TEST(reqs[4].body == R"({"path":"/w","depth":2})");
    BOOST_TEST(reqs[5].body == R"({"source":"/w/a","destination":"/w/b"})");
    check_unary(reqs[6], "/filesystem.Filesystem/Remove");
    BOOST_TEST(reqs[6].body == R"({"path":"/w/b"})");
}

BOOST_AUTO_TEST_CASE(files_and_health)
{
    std::string binary("\x00\x01\xff payload", 11);
    test_http_server server([&](recorded_request const& r) {
        if (r.path() == "/files" && r.method == "GET") {
            if (r.query() == "path=%2Fmissing")
                return scripted_response::json(404, R"({"code":404,"message":"path '/missing' does not exist"})");
            scripted_response a;
            a.headers = {{"Content-Type", "application/octet-stream"}};
            a.body = binary;
            return a;
        }
        if (r.path() == "/files")
            return scripted_response::json(200, R"([{"path":"/w/a b.txt","name":"a b.txt","type":"file"}])");
        if (r.path() == "/filesystem.Filesystem/Stat")  // after each write: the file's real entry
            return scripted_response::json(
                200, R"({"entry":{"name":"a b.txt","type":"FILE_TYPE_FILE","path":"/w/a b.txt","size":"11"}})");
        static std::atomic<int> health{0};
        return scripted_response::empty(health++ == 0 ? 204 : 502);
    });
    with_client(server, [&](e2b::client& c) -> asio::awaitable<void> {
        auto t = target_for("0.5.7");
        auto data = co_await c.async_read_file(t, "/w/a b.txt");
        BOOST_TEST_REQUIRE(data.has_value());
        BOOST_TEST(*data == binary);
        BOOST_TEST(((co_await c.async_read_file(t, "/missing")).error() == errc::not_found));
        auto w = co_await c.async_write_file(t, "/w/a b.txt", binary);
        BOOST_TEST_REQUIRE(w.has_value());
        BOOST_TEST(w->path == "/w/a b.txt");
        BOOST_TEST((w->type == e2b::file_type::file));
        BOOST_TEST(w->size == 11);  // from the Stat that follows the upload
        auto old = target_for("0.5.6");
        BOOST_TEST((co_await c.async_write_file(old, "/w/a b.txt", binary)).has_value());
        BOOST_TEST(*(co_await c.async_health(t)) == true);
        BOOST_TEST(*(co_await c.async_health(t)) == false);  // 502: not running, not retried
    });
    auto reqs = server.requests();
    auto const stats =
        std::erase_if(reqs, [](recorded_request const& r) { return r.path() == "/filesystem.Filesystem/Stat"; });
    BOOST_TEST(stats == 2u);
    BOOST_TEST_REQUIRE(reqs.size() == 6u);
    BOOST_TEST(reqs[0].method == "GET");
    BOOST_TEST(reqs[0].target == "/files?path=%2Fw%2Fa%20b.txt");
    check_envd_headers(reqs[0]);
    BOOST_TEST(reqs[0].header("Accept-Encoding").value_or("") == "gzip");  // decoded as it arrives
    BOOST_TEST(!reqs[0].header("Connect-Protocol-Version"));
    BOOST_TEST(reqs[2].method == "POST");
    BOOST_TEST(reqs[2].header("Content-Type").value_or("") == "application/octet-stream");
    BOOST_TEST(reqs[2].body == binary);
    auto ct = reqs[3].header("Content-Type").value_or("");
    BOOST_TEST(ct.rfind("multipart/form-data; boundary=", 0) == 0u);
    auto boundary = ct.substr(ct.find('=') + 1);
    BOOST_TEST(reqs[3].body.find("--" + boundary +
                                 "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/w/a b.txt\"") == 0u);
    BOOST_TEST(reqs[3].body.find(binary) != std::string::npos);
    BOOST_TEST(reqs[3].body.substr(reqs[3].body.size() - boundary.size() - 6) == "--" + boundary + "--\r\n");
    BOOST_TEST(reqs[4].target == "/health");
    BOOST_TEST(reqs[4].method == "GET");
}

BOOST_AUTO_TEST_CASE(sandboxes_sharing_an_origin_share_connections)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(200, "{}"); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto a = target_for();
        auto b = target_for();
        b.sandbox_id = "sbx2";
        b.access_token = "envd-token-second";
        e2b::process_selector s;
        s.pid = 1;
        for (int i = 0; i < 10; ++i) {
            BOOST_TEST((co_await c.async_send_signal(a, s, process_signal::sigterm)).has_value());
            BOOST_TEST((co_await c.async_send_signal(b, s, process_signal::sigterm)).has_value());
        }
    });
    BOOST_TEST(server.accepted_connections() == 1u);
    auto reqs = server.requests();
    BOOST_TEST(reqs.at(0).header("E2b-Sandbox-Id").value_or("") == "sbx1");
    BOOST_TEST(reqs.at(1).header("E2b-Sandbox-Id").value_or("") == "sbx2");
    BOOST_TEST(reqs.at(1).header("X-Access-Token").value_or("") == "envd-token-second");
}

BOOST_AUTO_TEST_CASE(injection_attempts_are_rejected_before_sending)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(200, "{}"); });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto bad_id = target_for();
        bad_id.sandbox_id = "sbx1.evil.example/x";
        BOOST_TEST(((co_await c.async_list_processes(bad_id)).error() == errc::invalid_argument));
        auto bad_token = target_for();
        bad_token.access_token = "tok\r\nX-Evil: 1";
        BOOST_TEST(((co_await c.async_list_processes(bad_token)).error() == errc::invalid_argument));
        e2b::start_process_params p;
        p.process.cmd = "x";
        p.user = "root\r\nX-Evil: 1";  // base64-encoded into Authorization: harmless
        auto s = co_await c.async_start_process(bad_token, p);
        BOOST_TEST((s.error() == errc::invalid_argument));
    });
    BOOST_TEST(server.request_count() == 0u);
}

BOOST_AUTO_TEST_CASE(envd_origin_per_sandbox_without_sandbox_url)
{
    // Without E2B_SANDBOX_URL envd is https://49983-<id>.<domain>; resolution
    // of that name must fail here, proving the name was built and used.
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        e2b::client_options o;
        o.api_key = "e2b_test_key_0123456789";
        o.domain = "invalid";
        o.max_retries = 0;
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        auto t = target_for();
        auto h = co_await (*c)->async_health(t);
        BOOST_TEST_REQUIRE(h.has_error());
        BOOST_TEST(h.error().message().find("https://49983-sbx1.invalid:443") != std::string::npos,
                   h.error().to_string());
    });
}

BOOST_AUTO_TEST_CASE(envd_origin_shared_for_e2b_domains)
{
    // For E2B's own domains envd is one origin, https://sandbox.<domain>, as in
    // the official SDK. The name must not resolve here; the error names it.
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        e2b::client_options o;
        o.api_key = "e2b_test_key_0123456789";
        o.domain = "e2b.app";
        o.max_retries = 0;
        o.connect_timeout = std::chrono::milliseconds(2000);
        auto c = e2b::make_client(ex, o);
        BOOST_TEST_REQUIRE(c.has_value());
        auto t = target_for();
        auto h = co_await (*c)->async_health(t);
        BOOST_TEST_REQUIRE(h.has_error());
        BOOST_TEST(h.error().message().find("https://sandbox.e2b.app:443") != std::string::npos, h.error().to_string());
        BOOST_TEST(h.error().message().find("49983-") == std::string::npos, h.error().to_string());
    });
}

BOOST_AUTO_TEST_CASE(cancellation_and_deadlines)
{
    test_http_server server([](recorded_request const& r) {
        scripted_response s;
        s.headers = {
            {"Content-Type", r.path() == "/process.Process/Start" ? "application/connect+json" : "application/json"}};
        s.chunks = {r.path() == "/process.Process/Start" ? envelope_bytes(R"({"event":{"start":{"pid":1}}})") : "{", "",
                    "}"};
        s.chunk_delay = std::chrono::minutes(10);  // only a cancellation or a deadline ends a call
        return s;
    });
    with_client(server, [](e2b::client& c) -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto t = target_for();
        // A unary call cancelled after 100 ms.
        asio::cancellation_signal sig;
        asio::steady_timer timer(ex, std::chrono::milliseconds(100));
        timer.async_wait([&](boost::system::error_code) { sig.emit(asio::cancellation_type::terminal); });
        auto r = co_await asio::co_spawn(ex, c.async_list_processes(t),
                                         asio::bind_cancellation_slot(sig.slot(), asio::use_awaitable));
        BOOST_TEST_REQUIRE(r.has_error());
        BOOST_TEST((r.error() == errc::cancelled), r.error().to_string());
        // A stream's async_next() cancelled (a slot bound to its token) while waiting for data.
        e2b::start_process_params p;
        p.process.cmd = "sleep";
        auto s = co_await c.async_start_process(t, p);
        BOOST_TEST_REQUIRE(s.has_value());
        // Nothing arrives for ten minutes: the read below waits for its first event.
        asio::cancellation_signal sig2;
        timer.expires_after(std::chrono::milliseconds(100));
        timer.async_wait([&](boost::system::error_code) { sig2.emit(asio::cancellation_type::terminal); });
        auto n = co_await (*s)->async_next(asio::bind_cancellation_slot(sig2.slot(), asio::use_awaitable));
        BOOST_TEST_REQUIRE(n.has_error());
        BOOST_TEST((n.error() == errc::cancelled), n.error().to_string());
    });
    // A deadline: request_timeout shorter than the answer.
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto o = options_for(server.url());
        o.request_timeout = std::chrono::milliseconds(200);
        o.max_retries = 0;
        auto c = e2b::make_client(ex, o);
        auto t = target_for();
        auto r = co_await (*c)->async_list_processes(t);
        BOOST_TEST_REQUIRE(r.has_error());
        BOOST_TEST((r.error() == errc::timed_out), r.error().to_string());
    });
}

BOOST_AUTO_TEST_SUITE_END()
