// prism-e2b-local lifecycle: memory pause freezes and resume continues the
// stream; filesystem pause kills and resume reboots; expiry; paused sandboxes
// never expire; connect 200/201 and timeout extension.
#include "emulator/server_state.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "temp_dir.hpp"

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

using namespace prism_e2b::test;
namespace json = boost::json;

namespace {

json::object info(local_server_fixture& f, sandbox_ref const& sb, int* status = nullptr)
{
    raw_http c(f.port());
    auto r = c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f));
    if (status) *status = r.status;
    return r.status == 200 ? r.json().as_object() : json::object{};
}

int post(local_server_fixture& f, std::string const& path, std::string body)
{
    raw_http c(f.port());
    return c.request("POST", path, std::move(body), api_headers(f)).status;
}

/// Reads stdout lines of a counter stream until `n` numbers arrived; returns the last one.
long read_counter(event_stream& s, int n, std::string& carry, long& last)
{
    int got = 0;
    while (got < n) {
        auto ev = s.next_event();
        BOOST_REQUIRE(ev);
        auto& e = (*ev)["event"].as_object();
        if (!e.contains("data")) continue;
        carry += decode_b64_for_tests(e["data"].as_object()["stdout"].as_string());
        std::size_t nl;
        while ((nl = carry.find('\n')) != std::string::npos) {
            long const v = std::stol(carry.substr(0, nl));
            BOOST_TEST(v == last + 1);  // no gap, no restart
            last = v;
            carry.erase(0, nl + 1);
            ++got;
        }
    }
    return last;
}

/// Whether the kernel holds `pid` frozen the way the server says it paused it:
/// its cgroup v1 freezer reports FROZEN, or (SIGSTOP fallback) it is stopped.
bool kernel_holds_frozen(std::int64_t pid, std::string const& pause_kind)
{
    auto const proc = "/proc/" + std::to_string(pid);
    if (pause_kind == "sigstop") {
        std::ifstream in(proc + "/stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto const close = text.rfind(')');
        return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'T';
    }
    if (pause_kind != "cgroup-freezer") return false;
    std::ifstream groups(proc + "/cgroup");
    for (std::string line; std::getline(groups, line);) {
        auto const at = line.find(":freezer:");
        if (at == std::string::npos) continue;
        std::ifstream state("/sys/fs/cgroup/freezer" + line.substr(at + 9) + "/freezer.state");
        std::string word;
        state >> word;
        return word == "FROZEN";
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_lifecycle)

BOOST_AUTO_TEST_CASE(memory_pause_freezes_and_resume_continues_the_stream)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    event_stream s(f.port(), "/process.Process/Start",
                   start_json("i=0; while true; do echo $i; i=$((i+1)); sleep 0.05; done"), envd_headers(sb));
    BOOST_REQUIRE_EQUAL(s.status(), 200);
    auto start = s.next_event();
    BOOST_REQUIRE(start);
    BOOST_REQUIRE((*start)["event"].as_object().contains("start"));
    auto const api_pid = (*start)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>();
    // The API reports the pid the sandbox sees; the kernel check needs the host's.
    auto const pid = f.server().isolation() == "namespaces"
                         ? static_cast<std::int64_t>(host_pid_of(sb.id, static_cast<std::uint32_t>(api_pid)))
                         : api_pid;
    BOOST_REQUIRE(pid != 0);
    std::string carry;
    long last = -1;
    read_counter(s, 3, carry, last);
    long const before = last;

    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/pause", R"({"memory":true})") == 204);
    BOOST_TEST(std::string(info(f, sb)["state"].as_string()) == "paused");
    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/pause", R"({"memory":true})") == 409);

    // envd answers as E2B's proxy does for a sandbox that is not running.
    raw_http c(f.port());
    BOOST_TEST(c.request("GET", "/health", {}, envd_headers(sb)).status == 502);

    // Frozen: the kernel holds the process (it cannot emit anything), and the
    // stream stays open: the counter continues without a gap after the resume.
    auto frozen_info = info(f, sb);
    BOOST_TEST(std::string(frozen_info["state"].as_string()) == "paused");
    auto const kind = std::string(frozen_info["pauseKind"].as_string());
    auto const frozen = [&] { return kernel_holds_frozen(pid, kind); };  // a SIGSTOP lands asynchronously
    BOOST_TEST(eventually(frozen), "pid " << pid << " is not frozen (" << kind << ")");

    raw_http c2(f.port());
    auto r = c2.request("POST", "/sandboxes/" + sb.id + "/connect", R"({"timeout":60})", api_headers(f));
    BOOST_TEST(r.status == 201);
    BOOST_TEST(c2.request("GET", "/health", {}, envd_headers(sb)).status == 204);
    read_counter(s, 3, carry, last);
    BOOST_TEST(last == before + 3);  // continued where it stopped; read_counter checks every step

    // Connect on a running sandbox answers 200.
    BOOST_TEST(c2.request("POST", "/sandboxes/" + sb.id + "/connect", R"({"timeout":60})", api_headers(f)).status ==
               200);
}

BOOST_AUTO_TEST_CASE(memory_pause_really_stops_the_process)
{
    // The state dir is the test's: the tick file is read from the host while the sandbox is
    // paused (envd is unreachable then), at state_dir/sandboxes/<id>/root/workspace/tick.
    temp_dir state("prism-e2b-lifecycle-");
    local_server_fixture f([&](prism_e2b::local::server_options& o) { o.state_dir = state.path.string(); });
    auto sb = create_sandbox(f);
    // The process writes a tick file; while paused the file must not change.
    event_stream s(f.port(), "/process.Process/Start",
                   start_json("i=0; while true; do i=$((i+1)); echo $i > /workspace/tick.new && mv /workspace/tick.new "
                              "/workspace/tick; sleep 0.02; done"),
                   envd_headers(sb));
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto const api_pid = (*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>();
    // The API reports the pid the sandbox sees; the kernel check needs the host's.
    auto const pid = f.server().isolation() == "namespaces"
                         ? static_cast<std::int64_t>(host_pid_of(sb.id, static_cast<std::uint32_t>(api_pid)))
                         : api_pid;
    BOOST_REQUIRE(pid != 0);
    auto const tick_file = state.path / "sandboxes" / sb.id / "root" / "workspace" / "tick";
    auto const tick = [&]() -> long long {
        std::ifstream in(tick_file);
        long long v = -1;
        in >> v;
        return in ? v : -1;  // -1: not written yet
    };
    BOOST_TEST(eventually([&] { return tick() >= 3; }));  // it runs and ticks

    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/pause", R"({"memory":true})") == 204);
    auto const t0 = f.server().peak_concurrent_execs(sb.id);
    BOOST_TEST(t0 == 1u);
    auto const kind = std::string(info(f, sb)["pauseKind"].as_string());
    // Compared only once the kernel holds it (a SIGSTOP lands asynchronously).
    BOOST_TEST(eventually([&] { return kernel_holds_frozen(pid, kind); }), "pid " << pid << " is not frozen");
    auto const ta = tick();
    // An observation window (~15 ticks were it running), not a synchronisation: however long
    // it lasts, a frozen process writes nothing.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto const tb = tick();
    BOOST_TEST(ta >= 3);
    BOOST_TEST(tb == ta);

    // Resumed, it ticks on from where it stopped, and the API reads the same file.
    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/connect", R"({"timeout":60})") == 201);
    BOOST_TEST(eventually([&] { return tick() > tb; }));
    raw_http c(f.port());
    auto a = c.request("GET", "/files?path=/workspace/tick", {}, envd_headers(sb));
    BOOST_TEST(a.status == 200);
    BOOST_TEST(std::stoll(a.body) > tb);
}

BOOST_AUTO_TEST_CASE(sigstop_fallback_freezes_and_continues)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.cgroup_freezer = false; });
    auto sb = create_sandbox(f);
    event_stream s(f.port(), "/process.Process/Start",
                   start_json("i=0; while true; do echo $i; i=$((i+1)); sleep 0.05; done"), envd_headers(sb));
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto const api_pid = (*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>();
    // The API reports the pid the sandbox sees; with the namespaces engine the host's differs.
    auto const pid = f.server().isolation() == "namespaces" ? host_pid_of(sb.id, static_cast<std::uint32_t>(api_pid))
                                                            : static_cast<std::uint32_t>(api_pid);
    BOOST_REQUIRE(pid != 0);
    std::string carry;
    long last = -1;
    read_counter(s, 2, carry, last);
    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/pause", R"({"memory":true})") == 204);
    BOOST_TEST(std::string(info(f, sb)["pauseKind"].as_string()) == "sigstop");
    auto proc_state = [pid] {
        std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto const close = text.rfind(')');
        return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
    };
    // Stopped (the stop lands asynchronously).
    BOOST_TEST(eventually([&] { return proc_state() == 'T'; }), "state " << proc_state());
    // An observation window while stopped, not a synchronisation: the counter must continue
    // without a gap whatever its length.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/connect", R"({"timeout":60})") == 201);
    long const before = last;
    read_counter(s, 3, carry, last);  // checks there is no gap and no restart
    BOOST_TEST(last == before + 3);
}

BOOST_AUTO_TEST_CASE(filesystem_pause_kills_and_resume_reboots)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    auto h = envd_headers(sb);
    BOOST_TEST(c.request("POST", "/files?path=/workspace/keep.txt", "kept",
                         {h[0], h[1], {"Content-Type", "application/octet-stream"}})
                   .status == 200);
    event_stream s(f.port(), "/process.Process/Start", start_json("sleep 1000"), h);
    auto st = s.next_event();
    BOOST_REQUIRE(st);
    auto const api_pid = (*st)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>();
    // The API reports the pid the sandbox sees; with the namespaces engine the host's differs.
    auto const pid = f.server().isolation() == "namespaces" ? host_pid_of(sb.id, static_cast<std::uint32_t>(api_pid))
                                                            : static_cast<std::uint32_t>(api_pid);
    BOOST_REQUIRE(pid != 0);

    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/pause", R"({"memory":false})") == 204);
    // The stream of a killed VM is cut, it never reports an exit.
    BOOST_TEST(!s.next_event());
    BOOST_TEST(!s.end_message());

    BOOST_TEST(post(f, "/sandboxes/" + sb.id + "/connect", R"({"timeout":60})") == 201);
    auto list = c.request("POST", "/process.Process/List", "{}", {h[0], h[1], {"Content-Type", "application/json"}});
    BOOST_TEST(list.status == 200);
    BOOST_TEST(list.json().as_object()["processes"].as_array().empty());
    auto sig = c.request("POST", "/process.Process/SendSignal",
                         R"({"process":{"pid":)" + std::to_string(pid) + R"(},"signal":"SIGNAL_SIGKILL"})",
                         {h[0], h[1], {"Content-Type", "application/json"}});
    BOOST_TEST(sig.status == 404);
    BOOST_TEST(std::string(sig.json().as_object()["code"].as_string()) == "not_found");
    auto file = c.request("GET", "/files?path=/workspace/keep.txt", {}, h);
    BOOST_TEST(file.status == 200);
    BOOST_TEST(file.body == "kept");
}

BOOST_AUTO_TEST_CASE(expiry_kills_and_paused_sandboxes_never_expire)
{
    local_server_fixture f;
    // `held` must still run when it is paused: created with a long life, paused, and only
    // then given a 1 s deadline, which passes while it is paused.
    auto held = create_sandbox(f);
    BOOST_TEST(post(f, "/sandboxes/" + held.id + "/pause", R"({"memory":true})") == 204);
    BOOST_TEST(post(f, "/sandboxes/" + held.id + "/timeout", R"({"timeout":1})") == 204);
    // Deadlines set after held's: once the reaper has killed `doomed`, the same pass saw
    // held's deadline passed too (each pass judges every sandbox at one moment).
    auto doomed = create_sandbox(f, R"({"templateID":"base","timeout":1})");
    auto pausing = create_sandbox(f, R"({"templateID":"base","timeout":1,"autoPause":true,"autoPauseMemory":false})");

    int status = 0;
    BOOST_TEST(eventually(
        [&] {
            info(f, doomed, &status);
            return status == 404;
        },
        std::chrono::seconds(60)));
    auto const auto_paused = [&] {
        auto p = info(f, pausing, &status);
        return status == 200 && std::string(p["state"].as_string()) == "paused";
    };
    BOOST_TEST(eventually(auto_paused, std::chrono::seconds(60)));
    auto p = info(f, pausing, &status);
    BOOST_TEST(status == 200);
    BOOST_TEST(std::string(p["lifecycle"].as_object()["onTimeout"].as_string()) == "pause");
    auto h = info(f, held, &status);
    BOOST_TEST(status == 200);
    BOOST_TEST(std::string(h["state"].as_string()) == "paused");
    auto const expired_end = prism_e2b::local::detail::parse_rfc3339(std::string(h["endAt"].as_string()));
    BOOST_REQUIRE(expired_end);

    // Resuming gives it a fresh life; connect extends it (judged by the deadline the server
    // keeps, endAt, not by waiting: the reaper acts on exactly that).
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/sandboxes/" + held.id + "/connect", R"({"timeout":60})", api_headers(f)).status ==
               201);
    h = info(f, held, &status);
    BOOST_TEST(status == 200);
    BOOST_TEST(std::string(h["state"].as_string()) == "running");
    auto const fresh_end = prism_e2b::local::detail::parse_rfc3339(std::string(h["endAt"].as_string()));
    BOOST_REQUIRE(fresh_end);
    BOOST_TEST((*fresh_end >= *expired_end + std::chrono::seconds(59)));
    BOOST_TEST(c.request("POST", "/sandboxes/" + held.id + "/connect", R"({"timeout":600})", api_headers(f)).status ==
               200);
    h = info(f, held, &status);
    BOOST_TEST(status == 200);
    auto const extended_end = prism_e2b::local::detail::parse_rfc3339(std::string(h["endAt"].as_string()));
    BOOST_REQUIRE(extended_end);
    BOOST_TEST((*extended_end >= *fresh_end + std::chrono::seconds(530)));
    // Only ever extended: a shorter connect leaves the deadline as it was.
    BOOST_TEST(c.request("POST", "/sandboxes/" + held.id + "/connect", R"({"timeout":1})", api_headers(f)).status ==
               200);
    h = info(f, held, &status);
    BOOST_TEST(status == 200);
    auto const kept_end = prism_e2b::local::detail::parse_rfc3339(std::string(h["endAt"].as_string()));
    BOOST_REQUIRE(kept_end);
    BOOST_TEST((*kept_end == *extended_end));
}

BOOST_AUTO_TEST_CASE(timeout_route_and_legacy_resume)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    raw_http c(f.port());
    // Resume of a running sandbox first, while its life is long: after the 1 s timeout below
    // it may already be gone.
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb.id + "/resume", R"({"timeout":30})", api_headers(f)).status == 409);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb.id + "/timeout", R"({"timeout":1})", api_headers(f)).status == 204);
    BOOST_TEST(eventually([&] { return c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).status == 404; },
                          std::chrono::seconds(60)));
    BOOST_TEST(c.request("DELETE", "/sandboxes/" + sb.id, {}, api_headers(f)).status == 404);

    auto sb2 = create_sandbox(f);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb2.id + "/pause", {}, api_headers(f)).status == 204);
    BOOST_TEST(c.request("POST", "/sandboxes/" + sb2.id + "/resume", R"({"timeout":30})", api_headers(f)).status ==
               201);
    BOOST_TEST(c.request("DELETE", "/sandboxes/" + sb2.id, {}, api_headers(f)).status == 204);
}

BOOST_AUTO_TEST_CASE(list_filters_and_paging)
{
    local_server_fixture f;
    for (int i = 0; i < 5; ++i)
        create_sandbox(f, R"({"templateID":"base","metadata":{"team":"a b","n":")" + std::to_string(i) + R"("}})");
    auto other = create_sandbox(f, R"({"templateID":"base","metadata":{"team":"z"}})");
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/sandboxes/" + other.id + "/pause", {}, api_headers(f)).status == 204);

    // metadata=team%253Da%252520b: "team=a%20b" with the key and value encoded once more, as the SDK sends it.
    std::vector<std::string> ids;
    std::string token;
    int pages = 0;
    do {
        std::string target = "/v2/sandboxes?metadata=team%3Da%2520b&state=running,paused&limit=2";
        if (!token.empty()) target += "&nextToken=" + token;
        auto r = c.request("GET", target, {}, api_headers(f));
        BOOST_REQUIRE_EQUAL(r.status, 200);
        auto const page = r.json();
        for (auto const& s : page.as_array()) ids.emplace_back(s.as_object().at("sandboxID").as_string());
        token = r.headers.count("x-next-token") ? r.headers["x-next-token"] : "";
        ++pages;
    } while (!token.empty() && pages < 10);
    BOOST_TEST(ids.size() == 5u);
    BOOST_TEST(pages == 3);
    auto paused = c.request("GET", "/v2/sandboxes?state=paused", {}, api_headers(f));
    BOOST_REQUIRE_EQUAL(paused.json().as_array().size(), 1u);
    BOOST_TEST(std::string(paused.json().as_array()[0].as_object().at("sandboxID").as_string()) == other.id);
    BOOST_TEST(c.request("GET", "/v2/sandboxes?state=sleeping", {}, api_headers(f)).status == 400);
    BOOST_TEST(c.request("GET", "/v2/sandboxes?limit=0", {}, api_headers(f)).status == 400);
}

BOOST_AUTO_TEST_SUITE_END()
