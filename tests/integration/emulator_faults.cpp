// prism-e2b-local fault injection: pause 503, create 429 + Retry-After,
// latency, cut streams, kill during exec, peak concurrent execs; both the
// in-process switches and the admin HTTP routes.
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <string>
#include <utility>

using namespace prism_e2b::test;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_emulator_faults)

BOOST_AUTO_TEST_CASE(pause_busy_leaves_the_sandbox_running)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/admin/faults/pause-busy", R"({"count":2})", admin_headers(f)).status == 204);
    for (int i = 0; i < 2; ++i) {
        auto r = c.request("POST", "/sandboxes/" + sb.id + "/pause", R"({"memory":true})", api_headers(f));
        BOOST_TEST(r.status == 503);
        BOOST_TEST(r.json().as_object()["code"].as_int64() == 503);
    }
    auto info = c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f));
    BOOST_TEST(std::string(info.json().as_object()["state"].as_string()) == "running");
    BOOST_TEST(run_command(f, sb, "echo alive").stdout_text == "alive\n");
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb.id + "/pause", R"({"memory":true})", api_headers(f)).status == 204);

    // The same switch in-process.
    auto sb2 = create_sandbox(f);
    f.server().faults().fail_next_pauses(1);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb2.id + "/pause", {}, api_headers(f)).status == 503);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb2.id + "/pause", {}, api_headers(f)).status == 204);
}

BOOST_AUTO_TEST_CASE(create_throttle_answers_429_with_retry_after)
{
    local_server_fixture f;
    raw_http c(f.port());
    BOOST_TEST(
        c.request("POST", "/admin/faults/create-throttle", R"({"count":1,"retryAfter":3})", admin_headers(f)).status ==
        204);
    auto r = c.request("POST", "/sandboxes", R"({"templateID":"base"})", api_headers(f));
    BOOST_TEST(r.status == 429);
    BOOST_TEST(r.headers["retry-after"] == "3");
    BOOST_TEST(c.request("POST", "/sandboxes", R"({"templateID":"base"})", api_headers(f)).status == 201);
}

BOOST_AUTO_TEST_CASE(latency_delays_only_its_route)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    // Far longer than any request takes, even under a sanitizer on a loaded machine: the
    // checks below are orderings (the other route answers while this one still waits), not
    // durations, and the latency only has to outlast one GET.
    auto const latency = std::chrono::seconds(10);
    f.server().faults().add_latency("/v2/sandboxes", latency);
    auto slow = std::async(std::launch::async, [&] {
        raw_http c(f.port(), std::chrono::seconds(120));
        auto const t0 = std::chrono::steady_clock::now();
        auto const status = c.request("GET", "/v2/sandboxes", {}, api_headers(f)).status;
        return std::make_pair(status, std::chrono::steady_clock::now() - t0);
    });
    raw_http c(f.port());
    BOOST_TEST(c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).status == 200);
    // The server does not serialize: the other route was answered while the slow one waits.
    BOOST_TEST((slow.wait_for(std::chrono::seconds(0)) == std::future_status::timeout));
    auto const [status, took] = slow.get();
    BOOST_TEST(status == 200);
    BOOST_TEST((took >= latency));  // a lower bound: the latency was applied
    BOOST_TEST(c.request("POST", "/admin/faults/reset", {}, admin_headers(f)).status == 204);
}

BOOST_AUTO_TEST_CASE(cut_stream_never_reports_an_exit)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    BOOST_TEST(
        c.request("POST", "/admin/faults/cut-stream", R"({"afterBytes":5,"count":1})", admin_headers(f)).status == 204);
    auto r = run_command(f, sb, "echo 0123456789; sleep 0.2; echo more");
    BOOST_TEST(!r.end);
    BOOST_TEST(r.stdout_text.size() <= 5u);
    // The next stream is whole again.
    auto ok = run_command(f, sb, "echo whole");
    BOOST_REQUIRE(ok.end);
    BOOST_TEST(ok.stdout_text == "whole\n");
}

BOOST_AUTO_TEST_CASE(kill_during_exec_removes_the_sandbox)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    event_stream s(f.port(), "/process.Process/Start", start_json("sleep 30; echo never"), envd_headers(sb));
    BOOST_REQUIRE_EQUAL(s.status(), 200);
    // Armed only once the command runs (its start event arrived), with afterMs 0: the kill comes
    // at once and can only cut the running command, never refuse its start, however slow the machine.
    BOOST_REQUIRE(s.next_event());
    BOOST_TEST(c.request("POST", "/admin/faults/kill-during-exec", R"({"sandboxID":")" + sb.id + R"(","afterMs":0})",
                         admin_headers(f))
                   .status == 204);
    // Killed at once, not when the kill was armed for the next process.
    BOOST_TEST(c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).status == 404);
    bool ended = false;
    std::string out;
    while (auto ev = s.next_event()) {
        auto& e = (*ev)["event"].as_object();
        if (e.contains("end")) ended = true;
        if (e.contains("data") && e["data"].as_object().contains("stdout"))
            out += decode_b64_for_tests(e["data"].as_object()["stdout"].as_string());
    }
    BOOST_TEST(!ended);  // cut, as a dying VM would
    BOOST_TEST(out.empty());
    BOOST_TEST(c.request("GET", "/health", {}, envd_headers(sb)).status == 502);
}

BOOST_AUTO_TEST_CASE(peak_concurrent_execs_is_counted)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    {
        // Each runs until all three have started (then a file, uploaded without a process,
        // lets them go): a fixed sleep would end the first before a slow machine starts the third.
        std::vector<std::unique_ptr<event_stream>> streams;
        for (int i = 0; i < 3; ++i) {
            streams.push_back(std::make_unique<event_stream>(
                f.port(), "/process.Process/Start", start_json("while [ ! -e /workspace/go ]; do sleep 0.02; done"),
                envd_headers(sb)));
            BOOST_REQUIRE(streams.back()->next_event());
        }
        auto h = envd_headers(sb);
        h.emplace_back("Content-Type", "application/octet-stream");
        BOOST_TEST(raw_http(f.port()).request("POST", "/files?path=/workspace/go", "go", h).status == 200);
        for (auto& s : streams)
            while (s->next_event()) {
            }
    }
    run_command(f, sb, "true");
    BOOST_TEST(f.server().peak_concurrent_execs(sb.id) == 3u);
    raw_http c(f.port());
    auto r = c.request("GET", "/admin/sandboxes/" + sb.id + "/peak-execs", {}, admin_headers(f));
    BOOST_TEST(r.status == 200);
    BOOST_TEST(r.json().as_object()["peak"].as_int64() == 3);
    BOOST_TEST(r.json().as_object()["running"].as_int64() == 0);
}

BOOST_AUTO_TEST_CASE(admin_routes_need_the_admin_token)
{
    local_server_fixture f;
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/admin/faults/reset", {}, {{"X-Admin-Token", "wrong"}}).status == 401);
    BOOST_TEST(c.request("POST", "/admin/faults/reset", {}, {}).status == 401);
    BOOST_TEST(c.request("POST", "/admin/faults/reset", {}, {{"X-API-KEY", f.api_key()}}).status == 401);
    BOOST_TEST(c.request("POST", "/admin/faults/reset", {}, admin_headers(f)).status == 204);

    local_server_fixture no_admin([](prism_e2b::local::server_options& o) { o.admin_token.clear(); });
    raw_http c2(no_admin.port());
    BOOST_TEST(c2.request("POST", "/admin/faults/reset", {}, {{"X-Admin-Token", ""}}).status == 404);
}

BOOST_AUTO_TEST_SUITE_END()
