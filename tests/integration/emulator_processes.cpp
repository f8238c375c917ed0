// prism-e2b-local process.Process: event order, exact exit codes and statuses,
// SIGKILL, Connect-Timeout-Ms, keepalives, Connect re-attach, List.
#include "eventually.hpp"
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b::test;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_emulator_processes)

BOOST_AUTO_TEST_CASE(exit_codes_and_statuses_are_exact)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto ok = run_command(f, sb, "echo out; echo err >&2");
    BOOST_REQUIRE(ok.end);
    BOOST_TEST(ok.stdout_text == "out\n");
    BOOST_TEST(ok.stderr_text == "err\n");
    BOOST_TEST(!ok.end->contains("exitCode"));
    BOOST_TEST((*ok.end)["exited"].as_bool());
    BOOST_TEST(std::string((*ok.end)["status"].as_string()) == "exit status 0");
    BOOST_TEST(!ok.end->contains("error"));

    auto three = run_command(f, sb, "exit 3");
    BOOST_REQUIRE(three.end);
    BOOST_TEST((*three.end)["exitCode"].as_int64() == 3);
    BOOST_TEST(std::string((*three.end)["status"].as_string()) == "exit status 3");

    auto killed = run_command(f, sb, "kill -9 $$");
    BOOST_REQUIRE(killed.end);
    BOOST_TEST((*killed.end)["exitCode"].as_int64() == -1);
    BOOST_TEST(!killed.end->contains("exited"));
    BOOST_TEST(std::string((*killed.end)["status"].as_string()) == "signal: killed");
}

BOOST_AUTO_TEST_CASE(send_signal_connect_and_list)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    event_stream s(f.port(), "/process.Process/Start", start_json("echo ready; sleep 100"), envd_headers(sb));
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto const pid = (*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>();
    raw_http c(f.port());
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/json");
    auto list = c.request("POST", "/process.Process/List", "{}", h).json().as_object();
    BOOST_REQUIRE_EQUAL(list["processes"].as_array().size(), 1u);
    auto& p = list["processes"].as_array()[0].as_object();
    BOOST_TEST(p["pid"].to_number<std::int64_t>() == pid);
    BOOST_TEST(std::string(p["config"].as_object()["cmd"].as_string()) == "/bin/bash");

    // A second watcher re-attaches and sees the same end.
    event_stream again(f.port(), "/process.Process/Connect", R"({"process":{"pid":)" + std::to_string(pid) + "}}",
                       envd_headers(sb));
    auto st2 = again.next_event();
    BOOST_REQUIRE(st2);
    BOOST_TEST((*st2)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>() == pid);

    BOOST_TEST(c.request("POST", "/process.Process/SendSignal",
                         R"({"process":{"pid":)" + std::to_string(pid) + R"(},"signal":9})", h)
                   .status == 200);
    for (auto* stream : {&s, &again}) {
        std::optional<json::object> end;
        while (auto ev = stream->next_event())
            if ((*ev)["event"].as_object().contains("end")) end = (*ev)["event"].as_object()["end"].as_object();
        BOOST_REQUIRE(end);
        BOOST_TEST(std::string((*end)["status"].as_string()) == "signal: killed");
        BOOST_REQUIRE(stream->end_message());
        BOOST_TEST(stream->end_message()->empty());
    }
    BOOST_TEST(c.request("POST", "/process.Process/List", "{}", h).json().as_object()["processes"].as_array().empty());
}

BOOST_AUTO_TEST_CASE(connect_timeout_kills_the_process_and_keepalives_flow)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto h = envd_headers(sb);
    h.emplace_back("Connect-Timeout-Ms", "700");
    h.emplace_back("Keepalive-Ping-Interval", "1");  // seconds
    event_stream s(f.port(), "/process.Process/Start", start_json("sleep 30"), h);
    auto st = s.next_event(false);
    BOOST_REQUIRE(st);
    // The deadline, not the 30 s sleep, ends it: the end message says so (no duration is asserted).
    while (s.next_event(false)) {
    }
    BOOST_REQUIRE(s.end_message());
    auto endm = *s.end_message();
    BOOST_TEST(std::string(endm["error"].as_object()["code"].as_string()) == "deadline_exceeded");
    raw_http c(f.port());
    auto lh = envd_headers(sb);
    lh.emplace_back("Content-Type", "application/json");
    auto const none_left = [&] {
        return c.request("POST", "/process.Process/List", "{}", lh).json().as_object()["processes"].as_array().empty();
    };
    BOOST_TEST(eventually(none_left));  // the kill and its reaping land after the end message

    auto kh = envd_headers(sb);
    kh.emplace_back("Keepalive-Ping-Interval", "1");
    // Counted up to 2, then the process is killed: how many fit into a fixed sleep would
    // depend on the machine's speed.
    event_stream k(f.port(), "/process.Process/Start", start_json("sleep 600"), kh);
    auto kst = k.next_event(false);
    BOOST_REQUIRE(kst);
    auto const kpid = (*kst)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>();
    int keepalives = 0;
    while (keepalives < 2) {
        auto ev = k.next_event(false);
        BOOST_REQUIRE(ev);
        if ((*ev)["event"].as_object().contains("keepalive")) ++keepalives;
    }
    BOOST_TEST(c.request("POST", "/process.Process/SendSignal",
                         R"({"process":{"pid":)" + std::to_string(kpid) + R"(},"signal":"SIGNAL_SIGKILL"})", lh)
                   .status == 200);
    while (k.next_event(false)) {
    }
}

BOOST_AUTO_TEST_CASE(deadline_kills_even_when_nobody_watches)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto h = envd_headers(sb);
    // Long enough that the List right after the client left still sees the process however
    // loaded the machine; short next to the 600 s sleep, which the deadline must cut.
    h.emplace_back("Connect-Timeout-Ms", "8000");
    {
        event_stream s(f.port(), "/process.Process/Start", start_json("sleep 600"), h);
        BOOST_REQUIRE(s.next_event());
    }  // the client goes away at once
    raw_http c(f.port());
    auto lh = envd_headers(sb);
    lh.emplace_back("Content-Type", "application/json");
    auto const count = [&] {
        return c.request("POST", "/process.Process/List", "{}", lh).json().as_object()["processes"].as_array().size();
    };
    BOOST_TEST(count() == 1u);  // the client leaving did not kill it
    // The deadline does, with nobody watching (the sleep would last 600 s).
    BOOST_TEST(eventually([&] { return count() == 0u; }, std::chrono::seconds(60)));
}

BOOST_AUTO_TEST_CASE(commands_run_as_the_selected_user)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto as = [&](std::string const& basic) {
        header_pairs extra;
        if (!basic.empty()) extra.emplace_back("Authorization", "Basic " + basic);
        return run_command(f, sb, "id -u; echo $HOME", extra);
    };
    BOOST_TEST(as("").stdout_text == "1000\n/home/user\n");
    BOOST_TEST(as("dXNlcjo=").stdout_text == "1000\n/home/user\n");  // "user:"
    BOOST_TEST(as("cm9vdDo=").stdout_text == "0\n/root\n");          // "root:"
    auto bad = as("bm9ib2R5Og==");                                   // "nobody:"
    BOOST_TEST(!bad.end);
    // The default user owns what it writes, and files uploaded for it.
    BOOST_REQUIRE(run_command(f, sb, "touch /workspace/mine").end);
    raw_http c(f.port());
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/json");
    auto st = c.request("POST", "/filesystem.Filesystem/Stat", R"({"path":"/workspace/mine"})", h).json().as_object();
    BOOST_TEST(std::string(st["entry"].as_object()["owner"].as_string()) == "user");
    BOOST_TEST(c.request("GET", "/files?path=/workspace/mine&username=nobody", {}, envd_headers(sb)).status == 401);
}

BOOST_AUTO_TEST_CASE(pty_sessions_take_input_and_resize)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    event_stream s(
        f.port(), "/process.Process/Start",
        R"({"process":{"cmd":"/bin/bash","args":["--norc","--noprofile"],"envs":{"PS1":"$ "}},"pty":{"size":{"cols":91,"rows":17}}})",
        envd_headers(sb));
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto const pid = std::to_string((*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>());
    raw_http c(f.port());
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/json");
    auto send = [&](std::string const& b64) {
        return c
            .request("POST", "/process.Process/SendInput",
                     R"({"process":{"pid":)" + pid + R"(},"input":{"pty":")" + b64 + R"("}})", h)
            .status;
    };
    BOOST_TEST(send("c3R0eSBzaXplCg==") == 200);  // "stty size\n"
    std::string out;
    while (out.find("17 91") == std::string::npos) {
        auto ev = s.next_event();
        BOOST_REQUIRE(ev);
        auto& d = (*ev)["event"].as_object()["data"].as_object();
        BOOST_REQUIRE(d.contains("pty"));
        out += decode_b64_for_tests(d["pty"].as_string());
    }
    BOOST_TEST(c.request("POST", "/process.Process/Update",
                         R"({"process":{"pid":)" + pid + R"(},"pty":{"size":{"cols":120,"rows":40}}})", h)
                   .status == 200);
    BOOST_TEST(c.request("POST", "/process.Process/Update",
                         R"({"process":{"pid":)" + pid + R"(},"pty":{"size":{"cols":0,"rows":40}}})", h)
                   .status == 400);
    BOOST_TEST(send("c3R0eSBzaXplOyBleGl0IDUK") == 200);  // "stty size; exit 5\n"
    std::optional<json::object> end;
    while (auto ev = s.next_event()) {
        auto& e = (*ev)["event"].as_object();
        if (e.contains("data")) out += decode_b64_for_tests(e["data"].as_object()["pty"].as_string());
        if (e.contains("end")) end = e["end"].as_object();
    }
    BOOST_TEST(out.find("40 120") != std::string::npos);
    BOOST_REQUIRE(end);
    BOOST_TEST((*end)["exitCode"].to_number<std::int64_t>() == 5);
}

BOOST_AUTO_TEST_CASE(large_output_arrives_complete_and_in_order)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    auto r = run_command(f, sb, "seq 1 200000");
    BOOST_REQUIRE(r.end);
    std::string expect;
    for (int i = 1; i <= 200000; ++i) expect += std::to_string(i) + "\n";
    BOOST_TEST(r.stdout_text.size() == expect.size());
    BOOST_TEST((r.stdout_text == expect));
}

BOOST_AUTO_TEST_CASE(server_timing_header_on_every_response)
{
    local_server_fixture f;
    raw_http c(f.port());
    auto r = c.request("GET", "/v2/sandboxes", {}, api_headers(f));
    BOOST_TEST(r.headers["server-timing"].rfind("app;dur=", 0) == 0u);
    r = c.request("GET", "/v2/sandboxes", {}, {});
    BOOST_TEST(r.status == 401);
    BOOST_TEST(r.headers["server-timing"].rfind("app;dur=", 0) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
