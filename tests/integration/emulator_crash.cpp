// prism-e2b-local survives its own crash: the real server runs as a
// subprocess, is killed with SIGKILL and started again on the same state dir;
// the ledger brings every sandbox back (namespaces engine: the sandboxes, their
// envd agents and processes never stopped, a counting process is re-attached
// with Connect, a frozen one counts on after resume; other engines: running ones
// boot again with their files), paused ones stay paused and resume, deadlines
// keep counting, a sandbox's writable system is kept with its files, and SIGTERM
// then stops cleanly.
#include "emulator/sandbox_disk.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "sandbox_calls.hpp"
#include "server_process.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <filesystem>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef PRISM_E2B_HAVE_LOCAL_BINARY

using namespace prism_e2b::test;
namespace json = boost::json;

namespace {

/// POST /sandboxes on the server at `port`.
sandbox_ref create_on(std::uint16_t port, header_pairs const& api, std::string body)
{
    raw_http c(port);
    auto r = c.request("POST", "/sandboxes", std::move(body), api);
    BOOST_REQUIRE(r.status == 201);
    auto o = r.json().as_object();
    return sandbox_ref{std::string(o["sandboxID"].as_string()), std::string(o["envdAccessToken"].as_string())};
}

/// GET /sandboxes/<id> on the server at `port`; {} when it is not 200.
json::object info_on(std::uint16_t port, header_pairs const& api, sandbox_ref const& sb)
{
    raw_http c(port);
    auto r = c.request("GET", "/sandboxes/" + sb.id, {}, api);
    return r.status == 200 ? r.json().as_object() : json::object{};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_crash)

BOOST_AUTO_TEST_CASE(kill_9_and_restart_keep_running_and_paused_sandboxes)
{
    namespace fs = std::filesystem;
    fs::path const dir = fs::temp_directory_path() / ("prism-e2b-crash-" + random_token(6));
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    auto create = [&](std::uint16_t port) {
        return create_on(port, api, R"({"templateID":"base","timeout":600,"metadata":{"k":"v"}})");
    };
    auto info = [&](std::uint16_t port, sandbox_ref const& sb) { return info_on(port, api, sb); };

    sandbox_ref running, paused;
    std::string running_end, running_boot;
    {
        server_process first(dir.string(), key);
        running = create(first.port());
        paused = create(first.port());
        BOOST_REQUIRE(run_command(first.port(), running, "echo kept > /workspace/f").end);
        BOOST_REQUIRE(run_command(first.port(), paused, "echo kept-too > /workspace/g").end);
        // The writable system (a root server's namespaces sandboxes) is kept as their files are.
        for (auto const* sb : {&running, &paused})
            BOOST_REQUIRE(run_command(first.port(), *sb, "echo sys > /usr/local/kept || true", as_root()).end);
        running_boot = run_command(first.port(), running, "cat /proc/sys/kernel/random/boot_id").stdout_text;
        raw_http c(first.port());
        BOOST_REQUIRE(c.request("POST", "/sandboxes/" + paused.id + "/pause", R"({"memory":false})", api).status ==
                      204);
        running_end = std::string(info(first.port(), running)["endAt"].as_string());
        int const st = first.signal_and_wait(SIGKILL);
        BOOST_TEST(WIFSIGNALED(st));
    }

    server_process second(dir.string(), key);
    auto ir = info(second.port(), running);
    auto ip = info(second.port(), paused);
    BOOST_REQUIRE(!ir.empty());
    BOOST_REQUIRE(!ip.empty());
    BOOST_TEST(std::string(ir["state"].as_string()) == "running");
    BOOST_TEST(std::string(ip["state"].as_string()) == "paused");
    BOOST_TEST(std::string(ir["endAt"].as_string()) == running_end);  // the deadline kept counting
    BOOST_TEST(std::string(ir["metadata"].as_object()["k"].as_string()) == "v");
    BOOST_TEST(std::string(ir["envdAccessToken"].as_string()) == running.token);
    {
        raw_http c(second.port());
        auto list = c.request("GET", "/v2/sandboxes?state=running,paused", {}, api).json().as_array();
        BOOST_TEST(list.size() == 2u);
    }
    // The running one kept its files (namespaces: it never stopped, the same boot; the other
    // engines boot it again); the paused one resumes.
    auto r = run_command(second.port(), running, "cat /workspace/f; cat /proc/sys/kernel/random/boot_id");
    BOOST_TEST(r.stdout_text.substr(0, 5) == "kept\n");
    if (std::string(ir["isolation"].as_string()) == "namespaces") BOOST_TEST(r.stdout_text.substr(5) == running_boot);
    {
        raw_http c(second.port());
        BOOST_TEST(c.request("POST", "/sandboxes/" + paused.id + "/resume", R"({"timeout":300})", api).status == 201);
    }
    BOOST_TEST(run_command(second.port(), paused, "cat /workspace/g").stdout_text == "kept-too\n");
    if (::geteuid() == 0 && std::string(ir["isolation"].as_string()) == "namespaces")
        for (auto const* sb : {&running, &paused})
            BOOST_TEST(run_command(second.port(), *sb, "cat /usr/local/kept").stdout_text == "sys\n");
    {
        raw_http c(second.port());
        BOOST_TEST(c.request("DELETE", "/sandboxes/" + paused.id, {}, api).status == 204);
    }

    // SIGTERM stops cleanly: exit 0, the sandboxes' files and ledger records gone.
    int const st = second.signal_and_wait(SIGTERM);
    BOOST_TEST((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    BOOST_TEST(!fs::exists(dir / "sandboxes" / running.id));
    BOOST_TEST(fs::is_empty(dir / "ledger"));
    fs::remove_all(dir);
}

namespace {

/// The last whole number a counter printed in `text` ("0\n1\n2\n"), -1 when none.
long last_count(std::string const& text)
{
    auto const end = text.find_last_of("0123456789");
    if (end == std::string::npos) return -1;
    auto const begin = text.find_last_not_of("0123456789", end);
    return std::stol(text.substr(begin == std::string::npos ? 0 : begin + 1,
                                 end - (begin == std::string::npos ? 0 : begin + 1) + 1));
}

/// Stdout of the next data events of `s` until one holds a number; -1 when the stream ends first.
long next_count(event_stream& s)
{
    while (auto ev = s.next_event()) {
        auto& e = (*ev)["event"].as_object();
        if (!e.contains("data") || !e["data"].as_object().contains("stdout")) continue;
        auto const n = last_count(decode_b64_for_tests(e["data"].as_object()["stdout"].as_string()));
        if (n >= 0) return n;
    }
    return -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(kill_9_keeps_processes_alive_and_reattachable)
{
    namespace fs = std::filesystem;
    fs::path const dir = fs::temp_directory_path() / ("prism-e2b-crash-" + random_token(6));
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    auto create = [&](std::uint16_t port) { return create_on(port, api, R"({"templateID":"base","timeout":600})"); };
    auto isolation = [&](std::uint16_t port, sandbox_ref const& sb) {
        auto const i = info_on(port, api, sb);
        return i.contains("isolation") ? std::string(i.at("isolation").as_string()) : std::string();
    };
    auto counter_in_file = [&](std::uint16_t port, sandbox_ref const& sb) {
        return last_count(run_command(port, sb, "cat /workspace/n").stdout_text);
    };
    std::string const count_script =
        "i=0; while true; do echo $i; echo $i > /workspace/n; i=$((i+1)); sleep 0.05; done";

    sandbox_ref live, frozen;
    std::uint32_t pid = 0;
    long seen = -1, frozen_at = -1;
    std::string boot;
    {
        server_process first(dir.string(), key);
        live = create(first.port());
        if (isolation(first.port(), live) != "namespaces") {
            BOOST_TEST_MESSAGE("processes outlive the server only with the namespaces engine (envd in the sandbox)");
            fs::remove_all(dir);
            return;
        }
        boot = run_command(first.port(), live, "cat /proc/sys/kernel/random/boot_id").stdout_text;
        event_stream counting(first.port(), "/process.Process/Start", start_json(count_script), envd_headers(live));
        BOOST_REQUIRE(counting.status() == 200);
        auto started = counting.next_event();
        BOOST_REQUIRE(started.has_value());
        pid = static_cast<std::uint32_t>(
            (*started)["event"].as_object()["start"].as_object()["pid"].to_number<std::int64_t>());
        seen = next_count(counting);
        BOOST_REQUIRE(seen >= 0);

        // A second sandbox, paused with its memory while its counter runs.
        frozen = create(first.port());
        event_stream frozen_counting(first.port(), "/process.Process/Start", start_json(count_script),
                                     envd_headers(frozen));
        BOOST_REQUIRE(frozen_counting.status() == 200);
        BOOST_REQUIRE(eventually([&] { return counter_in_file(first.port(), frozen) >= 2; }));
        raw_http c(first.port());
        BOOST_REQUIRE(c.request("POST", "/sandboxes/" + frozen.id + "/pause", "{}", api).status == 204);
        int const st = first.signal_and_wait(SIGKILL);
        BOOST_TEST(WIFSIGNALED(st));
    }

    server_process second(dir.string(), key);
    // Re-attached by pid: the counter never stopped, and counts on past what was seen.
    event_stream again(second.port(), "/process.Process/Connect", R"({"process":{"pid":)" + std::to_string(pid) + "}}",
                       envd_headers(live));
    BOOST_REQUIRE(again.status() == 200);
    long const now = next_count(again);
    BOOST_TEST(now > seen);
    BOOST_TEST(next_count(again) > now);
    BOOST_TEST(run_command(second.port(), live, "cat /proc/sys/kernel/random/boot_id").stdout_text == boot);

    // The frozen one is still paused, its counter frozen; resumed, it counts on from there.
    {
        raw_http c(second.port());
        auto info = c.request("GET", "/sandboxes/" + frozen.id, {}, api).json().as_object();
        BOOST_TEST(std::string(info["state"].as_string()) == "paused");
        BOOST_TEST(c.request("POST", "/sandboxes/" + frozen.id + "/resume", R"({"timeout":300})", api).status == 201);
    }
    frozen_at = counter_in_file(second.port(), frozen);
    BOOST_TEST(frozen_at >= 2);
    BOOST_TEST(eventually([&] { return counter_in_file(second.port(), frozen) > frozen_at; }));

    int const st = second.signal_and_wait(SIGTERM);
    BOOST_TEST((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    BOOST_TEST(fs::is_empty(dir / "ledger"));
    fs::remove_all(dir);
}

// The disk quota outlives the server: a running sandbox's disk stays mounted through kill -9,
// a paused one's is mounted again by the next server (here after its mount went, as after a
// reboot of the host), and a clean stop leaves no mount or loop device.
BOOST_AUTO_TEST_CASE(kill_9_and_restart_keep_the_sandboxes_disks)
{
    namespace fs = std::filesystem;
    namespace disk = prism_e2b::local::detail;
    if (auto const why = disk::sandbox_disk_unavailable(); !why.empty()) {
        BOOST_TEST_MESSAGE("skipped: no disk quota on this machine (" + why + ")");
        return;
    }
    fs::path const dir = fs::temp_directory_path() / ("prism-e2b-crash-" + random_token(6));
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    std::string const df = "df -B1M --output=size /workspace | tail -1";
    sandbox_ref running, paused;
    long quota = 0;
    {
        server_process first(dir.string(), key);
        running = create_on(first.port(), api, R"({"templateID":"base","timeout":600})");
        paused = create_on(first.port(), api, R"({"templateID":"base","timeout":600})");
        quota = info_on(first.port(), api, running)["diskSizeMB"].to_number<long>();
        BOOST_REQUIRE(run_command(first.port(), running, "echo kept > /workspace/f").end);
        BOOST_REQUIRE(run_command(first.port(), paused, "echo kept-too > /workspace/g").end);
        // Their writable systems are on their disks too (a root server's namespaces sandboxes).
        for (auto const* sb : {&running, &paused})
            BOOST_REQUIRE(run_command(first.port(), *sb, "echo sys > /usr/local/kept || true", as_root()).end);
        raw_http c(first.port());
        BOOST_REQUIRE(c.request("POST", "/sandboxes/" + paused.id + "/pause", R"({"memory":false})", api).status ==
                      204);
        BOOST_TEST(WIFSIGNALED(first.signal_and_wait(SIGKILL)));
    }
    auto const paused_root = dir / "sandboxes" / paused.id / "root";
    BOOST_REQUIRE(disk::is_mount_point(paused_root));
    BOOST_REQUIRE(::umount2(paused_root.c_str(), MNT_DETACH) == 0);
    BOOST_REQUIRE(!fs::exists(paused_root / "workspace" / "g"));  // the files are in the image only

    server_process second(dir.string(), key);
    BOOST_TEST(disk::is_mount_point(paused_root));
    auto r = run_command(second.port(), running, "cat /workspace/f; " + df);
    BOOST_TEST(r.stdout_text.substr(0, 5) == "kept\n");
    BOOST_TEST(std::stol(r.stdout_text.substr(5)) <= quota);
    {
        raw_http c(second.port());
        BOOST_TEST(c.request("POST", "/sandboxes/" + paused.id + "/resume", R"({"timeout":300})", api).status == 201);
    }
    auto p = run_command(second.port(), paused, "cat /workspace/g; " + df);
    BOOST_TEST(p.stdout_text.substr(0, 9) == "kept-too\n");
    BOOST_TEST(std::stol(p.stdout_text.substr(9)) <= quota);
    if (::geteuid() == 0 && info_on(second.port(), api, paused)["isolation"] == "namespaces")
        for (auto const* sb : {&running, &paused})
            BOOST_TEST(run_command(second.port(), *sb, "cat /usr/local/kept").stdout_text == "sys\n");

    BOOST_TEST(WIFEXITED(second.signal_and_wait(SIGTERM)));
    for (auto const& sb : {running, paused}) {
        auto const sdir = dir / "sandboxes" / sb.id;
        BOOST_TEST(!fs::exists(sdir));
        BOOST_TEST(eventually([&] { return disk::loop_devices_of(sdir / "disk.ext4").empty(); }));
    }
    fs::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

#endif
