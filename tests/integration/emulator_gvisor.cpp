// prism-e2b-local's `gvisor` engine (runsc): every claim it makes, tried with
// real containers and processes: exec and files through the agent inside; the
// kernel surface is gVisor's; pids, mounts and the network are the sandbox's own;
// root in it cannot read a host file; pause with memory is a checkpoint on disk
// (a counter continues after restore), pause without memory reboots with the
// files; each sandbox has a writable system of its own (overlays the server
// mounts; no sudo: gVisor ignores set-user-ID bits); commands inherit no
// connection of the agent; kill leaves nothing; a memory-paused sandbox survives kill -9 of the
// server; a snapshot holds the memory, and the sandboxes made from it go on
// from it. Skipped, with the reason, where runsc cannot run.
#include "emulator/engines/gvisor/runsc.hpp"
#include "emulator/envd_proxy.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "sandbox_calls.hpp"
#include "server_process.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace prism_e2b::test;
namespace json = boost::json;
namespace fs = std::filesystem;
namespace utf = boost::unit_test;

namespace {

std::string host_file(fs::path const& p);

/// A fresh state dir the test can look into. A test that fails between a server killed on
/// purpose and its successor's stop leaves runsc containers running (they outlive a server):
/// they are ended with it (thawed first: a frozen task does not die), and its mounts go.
struct gvisor_state_dir {
    fs::path path = fs::temp_directory_path() / ("prism-e2b-gvisor-" + random_token(6));
    ~gvisor_state_dir()
    {
        std::string const root = "--root=" + (path / "runsc").string();
        std::error_code ec;
        for (auto const& e : fs::directory_iterator("/proc", ec)) {
            auto cmdline = host_file(e.path() / "cmdline");
            std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
            if (cmdline.find(root + " ") == std::string::npos) continue;
            std::istringstream groups(host_file(e.path() / "cgroup"));
            for (std::string line; std::getline(groups, line);)
                if (auto at = line.find(":freezer:"); at != std::string::npos)
                    std::ofstream("/sys/fs/cgroup/freezer" + line.substr(at + 9) + "/freezer.state") << "THAWED";
            ::kill(std::stoi(e.path().filename().string()), SIGKILL);
        }
        std::istringstream mounts(host_file("/proc/self/mountinfo"));
        std::vector<std::string> under;
        for (std::string line; std::getline(mounts, line);) {
            std::istringstream fields(line);
            std::string field, point;
            for (int i = 0; i < 5 && fields >> field; ++i) point = field;
            if (point.rfind(path.string() + "/", 0) == 0) under.push_back(point);
        }
        std::sort(under.rbegin(), under.rend());  // the deepest first
        for (auto const& m : under) ::umount2(m.c_str(), MNT_DETACH);
        fs::remove_all(path, ec);
    }
};

std::unique_ptr<local_server_fixture> gvisor_server(fs::path const& dir,
                                                    prism_e2b::local::memory_tier_policy tiers = {})
{
    return std::make_unique<local_server_fixture>([&](prism_e2b::local::server_options& o) {
        o.engine = "gvisor";
        o.state_dir = dir.string();
        o.sandbox_memory_mb = 512;
        o.memory_tiers = tiers;
    });
}

/// Policies of the tests: the image before the pause answers; at once behind it; never (a cap
/// no sandbox reaches), so the memory stays in RAM.
prism_e2b::local::memory_tier_policy image_before_answer()
{
    prism_e2b::local::memory_tier_policy p;
    p.sync = true;
    return p;
}
prism_e2b::local::memory_tier_policy image_at_once()
{
    prism_e2b::local::memory_tier_policy p;
    p.image_after = std::chrono::seconds(0);
    return p;
}
prism_e2b::local::memory_tier_policy memory_in_ram()
{
    prism_e2b::local::memory_tier_policy p;
    p.image_after.reset();
    p.frozen_memory_cap_mb = 1u << 20;
    return p;
}

/// Can runsc run here? Tried once with a real server (its start-up probe boots a container).
boost::test_tools::assertion_result gvisor_runs(utf::test_unit_id)
{
    static std::optional<std::string> const why_not = []() -> std::optional<std::string> {
        if (::geteuid() != 0) return "the gvisor engine needs root";
        gvisor_state_dir dir;
        try {
            gvisor_server(dir.path);
        } catch (std::exception const& e) {
            return std::string(e.what());
        }
        return std::nullopt;
    }();
    boost::test_tools::assertion_result r(!why_not.has_value());
    if (why_not) r.message() << "SKIPPED: " << *why_not;
    return r;
}

json::object gvisor_info(local_server_fixture& f, sandbox_ref const& sb)
{
    raw_http c(f.port());
    return c.request("GET", "/sandboxes/" + sb.id, {}, api_headers(f)).json().as_object();
}

/// A reply's status, printed with its body: a failed `BOOST_TEST(gvisor_post(...) == 204)` says why.
struct status_and_body {
    int status = 0;
    std::string body;
    bool operator==(int expected) const { return status == expected; }
    friend std::ostream& operator<<(std::ostream& os, status_and_body const& r)
    {
        return os << r.status << " " << r.body;
    }
};

status_and_body gvisor_post(std::uint16_t port, header_pairs const& api, std::string const& path, std::string body)
{
    raw_http c(port);
    auto r = c.request("POST", path, std::move(body), api);
    return {r.status, std::move(r.body)};
}

std::string host_file(fs::path const& p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

long number_in(std::string const& text)
{
    try {
        return std::stol(text);
    } catch (...) {
        return -1;
    }
}

/// A counter in the background of the sandbox: its pid and the count, every 50 ms, into /tmp.
constexpr char const* counter_script =
    "nohup bash -c 'echo $$ > /tmp/counter.pid; i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new; "
    "mv /tmp/count.new /tmp/count; sleep 0.05; done' > /dev/null 2>&1 &";

/// The counter as the host sees it in the sandbox's own /tmp (-1 while there is none).
long count_on_host(fs::path const& state, sandbox_ref const& sb)
{
    return number_in(host_file(state / "sandboxes" / sb.id / "root/tmp/count"));
}

/// Tests that take a checkpoint: ThreadSanitizer's shadow mappings in the agent (itself a TSan
/// build) are not something runsc checkpoint saves, so the ASan leg runs them.
boost::test_tools::assertion_result checkpoints_run(utf::test_unit_id)
{
#if defined(__SANITIZE_THREAD__)
    boost::test_tools::assertion_result r(false);
    r.message() << "SKIPPED under ThreadSanitizer: runsc cannot checkpoint a TSan-built agent";
    return r;
#else
    return true;
#endif
}

/// Starts counter_script in the sandbox and waits until it counted to 3; the counter's pid.
std::string start_counter(local_server_fixture& f, fs::path const& state, sandbox_ref const& sb)
{
    BOOST_REQUIRE(run_command(f, sb, counter_script).end.has_value());
    BOOST_REQUIRE(eventually([&] { return count_on_host(state, sb) >= 3; }));
    return run_command(f, sb, "cat /tmp/counter.pid").stdout_text;
}

/// Host processes in the sandbox's memory cgroup (the Sentry, its gofer and stubs).
std::size_t processes_in_cgroup(std::string const& id)
{
    std::size_t n = 0;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc", ec)) {
        auto const name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        auto const groups = host_file(e.path() / "cgroup");
        if (groups.find(":memory:") != std::string::npos && groups.find("/" + id + "\n") != std::string::npos) ++n;
    }
    return n;
}

/// The one snapshot directory in the state dir (its key is not in the API).
fs::path only_snapshot_dir(fs::path const& state)
{
    std::vector<fs::path> dirs;
    for (auto const& e : fs::directory_iterator(state / "snapshots"))
        if (e.is_directory() && e.path().filename().string()[0] != '.') dirs.push_back(e.path());
    BOOST_REQUIRE(dirs.size() == 1u);
    return dirs.front();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_gvisor, *utf::precondition(gvisor_runs))

BOOST_AUTO_TEST_CASE(exec_and_files_run_inside_gvisor)
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    BOOST_TEST(f->server().isolation() == "gvisor");
    auto sb = create_sandbox(*f);
    auto const i = gvisor_info(*f, sb);
    BOOST_TEST(std::string(i.at("isolation").as_string()) == "gvisor");
    BOOST_TEST(std::string(i.at("envd").as_string()) == "in-sandbox");
    BOOST_TEST(i.at("allowInternetAccess").as_bool() == false);
    BOOST_TEST(i.at("memoryMB").to_number<int>() == 512);  // the template's limit, from its cgroup

    auto r = run_command(*f, sb, "echo out; echo err >&2; id -un; pwd; exit 3");
    BOOST_TEST(r.stdout_text == "out\nuser\n/home/user\n");
    BOOST_TEST(r.stderr_text == "err\n");
    BOOST_REQUIRE(r.end.has_value());
    BOOST_TEST(r.end->at("exitCode").to_number<int>() == 3);

    // Files through envd, seen by commands and on the host (the sandbox's own directories).
    raw_http c(f->port());
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/octet-stream");
    BOOST_TEST(c.request("POST", "/files?path=/workspace/a.txt", "hello gvisor", h).status == 200);
    BOOST_TEST(run_command(*f, sb, "cat /workspace/a.txt").stdout_text == "hello gvisor");
    BOOST_TEST(host_file(dir.path / "sandboxes" / sb.id / "root/workspace/a.txt") == "hello gvisor");
    BOOST_TEST(run_command(*f, sb, "echo made > /home/user/b.txt").end.has_value());
    auto got = c.request("GET", "/files?path=/home/user/b.txt", {}, envd_headers(sb));
    BOOST_TEST(got.status == 200);
    BOOST_TEST(got.body == "made\n");
}

BOOST_AUTO_TEST_CASE(each_isolation_claim_holds)
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto const caps = f->server().capabilities(true);
    BOOST_TEST(caps.filesystem_isolated);
    BOOST_TEST(caps.process_isolated);
    BOOST_TEST(caps.privilege_isolated);
    BOOST_TEST(caps.network_isolated);  // even when internet access is asked for
    auto a = create_sandbox(*f, R"({"templateID":"base","timeout":300,"allow_internet_access":true})");
    auto b = create_sandbox(*f);

    // Its own kernel surface: gVisor's Sentry answers, not the host kernel.
    auto k = run_command(*f, a, "uname -r; dmesg | head -1", as_root());
    auto const release = k.stdout_text.substr(0, k.stdout_text.find('\n') + 1);
    BOOST_TEST(release != host_file("/proc/sys/kernel/osrelease"));
    BOOST_TEST(k.stdout_text.find("Starting gVisor") != std::string::npos);

    // Pids: only the sandbox's own processes (its agent is pid 1); b's sleep is not there.
    BOOST_REQUIRE(run_command(*f, b, "nohup sleep 300 > /dev/null 2>&1 &").end.has_value());
    auto ps = run_command(*f, a, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done", as_root());
    BOOST_TEST(ps.stdout_text.find("prism-e2b-envd") != std::string::npos);
    BOOST_TEST(ps.stdout_text.find("sleep 300") == std::string::npos);
    BOOST_TEST(ps.stdout_text.find("prism_e2b_integration_tests") == std::string::npos);
    BOOST_TEST(run_command(*f, a, "tr '\\0' ' ' < /proc/1/cmdline").stdout_text.find("prism-e2b-envd init") !=
               std::string::npos);

    // Files and privilege: root in the sandbox reads no host file made for this test, no shadow
    // file, and what it writes into the system directories is its own (the host's stay as they are).
    fs::path const secret = fs::temp_directory_path() / ("prism-e2b-gvisor-secret-" + random_token(4));
    {
        std::ofstream(secret) << "host secret";
    }
    std::string const written = "/usr/gv-" + random_token(3);
    auto peek = run_command(*f, a, "cat " + secret.string() + "; cat /etc/shadow; touch " + written + " && echo WROTE",
                            as_root());
    BOOST_TEST(peek.stdout_text.find("host secret") == std::string::npos);
    BOOST_TEST(peek.stdout_text.find(host_file("/etc/shadow")) == std::string::npos);
    BOOST_TEST(peek.stdout_text.find("root:*:") == 0u, peek.stdout_text);  // its own: no password, no host account
    BOOST_TEST(peek.stdout_text.find("WROTE") != std::string::npos);
    BOOST_TEST(!fs::exists(written));
    BOOST_TEST(exit_code(run_command(*f, b, "test -e " + written, as_root())) != 0);
    fs::remove(secret);
    // b's files are not in a's tree.
    BOOST_REQUIRE(run_command(*f, b, "echo mine > /workspace/b-only").end.has_value());
    BOOST_TEST(
        run_command(*f, a, "find /workspace /home /tmp /root -name b-only 2>/dev/null", as_root()).stdout_text.empty());

    // Network: a connect to a listener on the host's loopback fails, and it never sees one.
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::acceptor listener(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
    auto const port = std::to_string(listener.local_endpoint().port());
    auto net = run_command(*f, a,
                           "timeout 5 bash -c 'echo hi > /dev/tcp/127.0.0.1/" + port +
                               "' && echo CONNECTED; ip -o link 2>/dev/null | wc -l");
    BOOST_TEST(net.stdout_text.find("CONNECTED") == std::string::npos);
    listener.non_blocking(true);
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket s(ioc);
    listener.accept(s, ec);
    BOOST_TEST(ec == boost::asio::error::would_block);
}

// A checkpoint waits until the Sentry holds no host connection to the agent (runsc cannot save
// one): what it waits on must see them, or the wait is no wait at all.
BOOST_AUTO_TEST_CASE(the_agent_connections_the_sentry_holds_are_seen)
{
    namespace detail = prism_e2b::local::detail;
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto sb = create_sandbox(*f);
    detail::runsc_config const rc{detail::find_runsc(), dir.path / "runsc"};
    pid_t const sentry = detail::gvisor_sentry_pid(rc, sb.id);
    BOOST_TEST_REQUIRE(sentry > 0);
    auto const before = detail::sentry_agent_connections(sentry);
    // What a refused checkpoint names: the processes with sockets (the agent's listener among them).
    BOOST_TEST(detail::gvisor_socket_holders(rc, sb.id).find("prism-e2b-envd init fd ") != std::string::npos,
               detail::gvisor_socket_holders(rc, sb.id));

    // A connection of the test's own, open until closed here.
    auto const conn = detail::connect_unix(detail::gvisor_agent_socket(dir.path / "sandboxes" / sb.id));
    BOOST_TEST_REQUIRE(conn.get() >= 0);
    int const fd = conn.get();
    BOOST_TEST(eventually([&] { return detail::sentry_agent_connections(sentry) > before; }));
    // The agent answers and closes its end (Connection: close): the Sentry lets go of it.
    std::string const req = "GET /health HTTP/1.1\r\nHost: envd\r\nConnection: close\r\n\r\n";
    BOOST_TEST_REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
    std::string answer;
    char buf[512];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
    BOOST_TEST(answer.rfind("HTTP/1.1 204", 0) == 0u);
    BOOST_TEST(eventually([&] { return detail::sentry_agent_connections(sentry) <= before; }));
}

// A command must not inherit the agent's connections: it could read another client's envd
// traffic, and a connection a command keeps is one runsc cannot checkpoint (CI 2026-12-06: a
// background counter held one, and the memory pause was refused). gVisor's close_range refuses
// a last descriptor above INT_MAX (EINVAL, nothing closed), so the agent's children once kept
// every descriptor above their own pipes'.
BOOST_AUTO_TEST_CASE(a_command_inherits_no_connection_of_the_agent)
{
    namespace detail = prism_e2b::local::detail;
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto sb = create_sandbox(*f);
    auto const socket = detail::gvisor_agent_socket(dir.path / "sandboxes" / sb.id);
    // Connections the agent holds, above holes its answered-and-closed ones leave: the next
    // command's pipes take the holes, so some of the agent's sockets are above them.
    auto ask = [](int fd, bool close) {
        std::string const req =
            std::string("GET /health HTTP/1.1\r\nHost: envd\r\n") + (close ? "Connection: close\r\n" : "") + "\r\n";
        BOOST_REQUIRE(::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
        std::string answer;
        char buf[512];
        ssize_t n = 0;
        while ((close || answer.find("\r\n\r\n") == std::string::npos) && (n = ::recv(fd, buf, sizeof buf, 0)) > 0)
            answer.append(buf, static_cast<std::size_t>(n));
        BOOST_REQUIRE(answer.rfind("HTTP/1.1 204", 0) == 0u);
    };
    constexpr int closed = 16, kept = 8;
    std::vector<detail::unique_fd> conns;
    for (int i = 0; i < closed + kept; ++i) {
        conns.push_back(detail::connect_unix(socket));
        BOOST_REQUIRE(conns.back().get() >= 0);
        ask(conns.back().get(), false);  // accepted, in this order
    }
    for (int i = 0; i < closed; ++i) ask(conns[static_cast<std::size_t>(i)].get(), true);
    auto const fds = run_command(*f, sb, "for d in /proc/self/fd/*; do readlink $d; done", as_root()).stdout_text;
    BOOST_TEST(fds.find("socket:") == std::string::npos, fds);
}

namespace {

/// A gvisor server with one sandbox counting (counter_script): the memory tiers' tests.
struct counting_on_gvisor {
    gvisor_state_dir dir;
    std::unique_ptr<local_server_fixture> f;
    header_pairs api;
    sandbox_ref sb;
    std::string pid;  ///< the counter's
    fs::path image;   ///< the sandbox's memory image, while on disk
    explicit counting_on_gvisor(prism_e2b::local::memory_tier_policy tiers)
        : f(gvisor_server(dir.path, tiers)),
          api(api_headers(*f)),
          sb(create_sandbox(*f)),
          pid(start_counter(*f, dir.path, sb)),
          image(dir.path / "sandboxes" / sb.id / "memory" / "checkpoint.img")
    {
    }
    /// POST /sandboxes/{id}/<action> (pause, resume, snapshots).
    status_and_body post(std::string const& action, std::string body) const
    {
        return gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/" + action, std::move(body));
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(memory_pause_with_the_image_before_the_answer_is_a_checkpoint_and_the_counter_continues,
                     *utf::precondition(checkpoints_run))
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path, image_before_answer());
    auto const api = api_headers(*f);
    auto sb = create_sandbox(*f);
    auto const boot = run_command(*f, sb, "cat /proc/sys/kernel/random/boot_id").stdout_text;
    BOOST_TEST(boot.size() == 37u);
    auto const pid = start_counter(*f, dir.path, sb);
    // The overlays of its writable system are unmounted with the container and mounted again for the restore.
    BOOST_REQUIRE(exit_code(run_command(*f, sb, "echo before > /usr/local/m", as_root())) == 0);

    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/pause", R"({"memory":true})") == 204);
    auto const at_pause = count_on_host(dir.path, sb);
    auto const i = gvisor_info(*f, sb);
    BOOST_TEST(std::string(i.at("state").as_string()) == "paused");
    BOOST_TEST(std::string(i.at("pauseKind").as_string()) == "checkpoint");
    // The memory is on disk, not in RAM: an image file, and no process of the sandbox left on the host.
    auto const image = dir.path / "sandboxes" / sb.id / "memory" / "checkpoint.img";
    BOOST_TEST(fs::is_regular_file(image));
    BOOST_TEST(i.at("memorySnapshotBytes").to_number<std::uint64_t>() >= fs::file_size(image));
    BOOST_TEST(processes_in_cgroup(sb.id) == 0u);
    BOOST_TEST(count_on_host(dir.path, sb) == at_pause);  // nothing runs
    BOOST_TEST(host_file("/proc/self/mountinfo").find((dir.path / "sandboxes" / sb.id / "system").string()) ==
               std::string::npos);

    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/resume", R"({"timeout":300})") == 201);
    // The same process counts on from where it stopped (not from 1: no reboot).
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, sb) > at_pause; }));
    BOOST_TEST(count_on_host(dir.path, sb) >= at_pause);
    BOOST_TEST(run_command(*f, sb, "cat /tmp/counter.pid").stdout_text == pid);
    BOOST_TEST(run_command(*f, sb, "cat /proc/sys/kernel/random/boot_id").stdout_text == boot);
    BOOST_TEST(run_command(*f, sb, "cat /usr/local/m").stdout_text == "before\n");
    BOOST_TEST(!fs::exists(image));  // consumed by the restore
    BOOST_TEST(std::string(gvisor_info(*f, sb).at("state").as_string()) == "running");
}

/// The freezer cgroup's state of the sandbox's Sentry ("FROZEN", "THAWED"; empty: no process).
std::string freezer_state_of(std::string const& id)
{
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc", ec)) {
        auto const groups = host_file(e.path() / "cgroup");
        if (groups.find(":memory:") == std::string::npos || groups.find("/" + id + "\n") == std::string::npos) continue;
        std::istringstream lines(groups);
        for (std::string line; std::getline(lines, line);)
            if (auto at = line.find(":freezer:"); at != std::string::npos) {
                auto state = host_file("/sys/fs/cgroup/freezer" + line.substr(at + 9) + "/freezer.state");
                return state.substr(0, state.find('\n'));
            }
    }
    return {};
}

/// The info's pauseKind: "cgroup-freezer" (memory in RAM), "checkpoint" (on disk), "filesystem"; empty: running.
std::string pause_kind_at(std::uint16_t port, header_pairs const& api, sandbox_ref const& sb)
{
    raw_http c(port);
    auto i = c.request("GET", "/sandboxes/" + sb.id, {}, api).json().as_object();
    auto const* k = i.if_contains("pauseKind");
    return k && k->is_string() ? std::string(k->as_string()) : std::string();
}

std::string pause_kind(local_server_fixture& f, sandbox_ref const& sb)
{
    return pause_kind_at(f.port(), api_headers(f), sb);
}

// No checkpoint: it runs under ThreadSanitizer too (the writer's thread looks at the RAM held).
BOOST_AUTO_TEST_CASE(memory_pause_freezes_in_ram_and_resumes_from_ram)
{
    counting_on_gvisor c(memory_in_ram());

    // RAM: frozen whole (the Sentry and its stubs in the frozen cgroup), no image.
    BOOST_TEST_REQUIRE(c.post("pause", R"({"memory":true})") == 204);
    auto const at_pause = count_on_host(c.dir.path, c.sb);
    BOOST_TEST(pause_kind(*c.f, c.sb) == "cgroup-freezer");
    BOOST_TEST(freezer_state_of(c.sb.id) == "FROZEN");
    BOOST_TEST(processes_in_cgroup(c.sb.id) > 0u);
    BOOST_TEST(!fs::exists(c.image));
    raw_http admin(c.f->port());
    auto const tiers = admin.request("GET", "/admin/memory-tiers", {}, admin_headers(*c.f)).json().as_object();
    BOOST_TEST(tiers.at("frozenSandboxes").to_number<int>() == 1);
    BOOST_TEST(tiers.at("frozenMemoryBytes").to_number<std::uint64_t>() > 0u);
    BOOST_TEST(tiers.at("policy").at("imageWritten").as_string() == "under memory pressure");
    BOOST_TEST(count_on_host(c.dir.path, c.sb) == at_pause);

    // Resumed from RAM: thawed, the same process counting on.
    BOOST_TEST_REQUIRE(c.post("resume", R"({"timeout":300})") == 201);
    BOOST_TEST(freezer_state_of(c.sb.id) == "THAWED");
    BOOST_TEST(eventually([&] { return count_on_host(c.dir.path, c.sb) > at_pause; }));
    BOOST_TEST(run_command(*c.f, c.sb, "cat /tmp/counter.pid").stdout_text == c.pid);
}

BOOST_AUTO_TEST_CASE(a_snapshot_of_a_sandbox_frozen_in_ram_writes_its_image_and_it_resumes_from_disk,
                     *utf::precondition(checkpoints_run))
{
    counting_on_gvisor c(memory_in_ram());
    raw_http admin(c.f->port());

    // Frozen, then a snapshot: it needs the image, which is written now; the sandbox stays
    // paused, its memory on disk (its RAM released), and resumes from there.
    BOOST_TEST_REQUIRE(c.post("pause", R"({"memory":true})") == 204);
    BOOST_TEST(pause_kind(*c.f, c.sb) == "cgroup-freezer");
    BOOST_TEST_REQUIRE(c.post("snapshots", R"({"name":"ram"})") == 201);
    BOOST_TEST(fs::is_regular_file(only_snapshot_dir(c.dir.path) / "memory/checkpoint.img"));
    BOOST_TEST(pause_kind(*c.f, c.sb) == "checkpoint");
    BOOST_TEST(fs::is_regular_file(c.image));
    BOOST_TEST(processes_in_cgroup(c.sb.id) == 0u);
    auto const on_disk = count_on_host(c.dir.path, c.sb);
    auto const tiers = admin.request("GET", "/admin/memory-tiers", {}, admin_headers(*c.f)).json().as_object();
    BOOST_TEST(tiers.at("frozenSandboxes").to_number<int>() == 0);
    BOOST_TEST_REQUIRE(c.post("resume", R"({"timeout":300})") == 201);
    BOOST_TEST(eventually([&] { return count_on_host(c.dir.path, c.sb) > on_disk; }));
    BOOST_TEST(run_command(*c.f, c.sb, "cat /tmp/counter.pid").stdout_text == c.pid);
    BOOST_TEST(!fs::exists(c.image));  // consumed by the restore
}

BOOST_AUTO_TEST_CASE(the_image_is_written_behind_the_answer_and_a_resume_racing_it_loses_nothing,
                     *utf::precondition(checkpoints_run))
{
    counting_on_gvisor c(image_at_once());
    auto const resumes = [&] {
        auto const before = count_on_host(c.dir.path, c.sb);
        BOOST_TEST_REQUIRE(c.post("resume", R"({"timeout":300})") == 201);
        BOOST_TEST(std::string(gvisor_info(*c.f, c.sb).at("state").as_string()) == "running");
        BOOST_TEST(eventually([&] { return count_on_host(c.dir.path, c.sb) > before; }));
        BOOST_TEST(run_command(*c.f, c.sb, "cat /tmp/counter.pid").stdout_text == c.pid);
        // One copy of the memory: the running container's; no image, whole or partial, is left.
        BOOST_TEST(!fs::exists(c.image));
        BOOST_TEST(!fs::exists(c.dir.path / "sandboxes" / c.sb.id / "memory.partial"));
    };

    // A resume right behind the pause: it meets the write before it, during it or after it.
    BOOST_TEST_REQUIRE(c.post("pause", R"({"memory":true})") == 204);
    resumes();

    // Left alone, the image is written and the RAM released.
    BOOST_TEST_REQUIRE(c.post("pause", R"({"memory":true})") == 204);
    BOOST_TEST(eventually([&] { return pause_kind(*c.f, c.sb) == "checkpoint"; }));
    BOOST_TEST(fs::is_regular_file(c.image));
    BOOST_TEST(processes_in_cgroup(c.sb.id) == 0u);
    raw_http admin(c.f->port());
    auto const tiers = admin.request("GET", "/admin/memory-tiers", {}, admin_headers(*c.f)).json().as_object();
    BOOST_TEST(tiers.at("imagesWritten").to_number<int>() >= 1);
    BOOST_TEST(tiers.at("policy").at("imageAfterSeconds").to_number<int>() == 0);
    resumes();
}

BOOST_AUTO_TEST_CASE(a_snapshot_holds_the_memory_and_sandboxes_made_from_it_go_on_from_there,
                     *utf::precondition(checkpoints_run))
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path, image_before_answer());
    auto const api = api_headers(*f);
    auto src = create_sandbox(*f);
    auto const pid = start_counter(*f, dir.path, src);

    // Of a running sandbox: checkpointed, copied, and it runs on.
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + src.id + "/snapshots", R"({"name":"counting"})") ==
                       201);
    auto const snap = only_snapshot_dir(dir.path);
    BOOST_TEST(fs::is_regular_file(snap / "memory/checkpoint.img"));
    auto const at_snapshot = number_in(host_file(snap / "root/tmp/count"));
    BOOST_TEST(at_snapshot >= 3);
    BOOST_TEST(std::string(gvisor_info(*f, src).at("state").as_string()) == "running");
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, src) > at_snapshot; }));
    BOOST_TEST(run_command(*f, src, "cat /tmp/counter.pid").stdout_text == pid);

    // A sandbox made from it: the snapshot's process counts on from the snapshot's count (a cold
    // boot would have no counter at all), while new commands see the new sandbox's id and env.
    auto made = create_sandbox(*f, R"({"templateID":"counting","timeout":300,"envVars":{"ORIGIN":"snapshot"}})");
    BOOST_TEST(made.id != src.id);
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, made) > at_snapshot; }));
    BOOST_TEST(run_command(*f, made, "cat /tmp/counter.pid").stdout_text == pid);
    BOOST_TEST(run_command(*f, made, "echo $E2B_SANDBOX_ID $ORIGIN").stdout_text == made.id + " snapshot\n");
    BOOST_TEST(!fs::exists(dir.path / "sandboxes" / made.id / "memory"));  // consumed by the restore
    BOOST_TEST(!fs::exists(dir.path / "sandboxes" / made.id / "chan/reconfigure.json"));
    // The two are separate: one's files are not the other's, and killing the source leaves it be.
    BOOST_REQUIRE(run_command(*f, made, "echo mine > /workspace/only-here").end.has_value());
    BOOST_TEST(!fs::exists(dir.path / "sandboxes" / src.id / "root/workspace/only-here"));
    raw_http c(f->port());
    BOOST_REQUIRE(c.request("DELETE", "/sandboxes/" + src.id, {}, api).status == 204);
    auto const after_kill = count_on_host(dir.path, made);
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, made) > after_kill; }));

    // Of a sandbox paused with memory: its image is copied, it stays paused, and one made from it goes on.
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + made.id + "/pause", R"({"memory":true})") == 204);
    auto const at_pause = count_on_host(dir.path, made);
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + made.id + "/snapshots", R"({"name":"counting"})") ==
                       201);
    BOOST_TEST(std::string(gvisor_info(*f, made).at("state").as_string()) == "paused");
    BOOST_TEST(fs::is_regular_file(dir.path / "sandboxes" / made.id / "memory/checkpoint.img"));
    auto again = create_sandbox(*f, R"({"templateID":"counting:default","timeout":300})");
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, again) > at_pause; }));
    BOOST_TEST(count_on_host(dir.path, made) == at_pause);  // the paused one stays still
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + made.id + "/resume", R"({"timeout":300})") == 201);
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, made) > at_pause; }));
}

BOOST_AUTO_TEST_CASE(a_snapshot_whose_memory_image_is_damaged_gives_sandboxes_that_boot_from_its_files,
                     *utf::precondition(checkpoints_run))
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto src = create_sandbox(*f);
    BOOST_REQUIRE(run_command(*f, src, std::string("echo kept > /workspace/k; ") + counter_script).end.has_value());
    BOOST_REQUIRE(eventually([&] { return count_on_host(dir.path, src) >= 1; }));
    BOOST_TEST_REQUIRE(
        gvisor_post(f->port(), api_headers(*f), "/sandboxes/" + src.id + "/snapshots", R"({"name":"damaged"})") == 201);
    auto const image = only_snapshot_dir(dir.path) / "memory/checkpoint.img";
    BOOST_REQUIRE(fs::is_regular_file(image));
    {
        std::ofstream garbage(image, std::ios::trunc);  // the only link left: the source's was consumed
        garbage << "not a checkpoint";
    }
    auto made = create_sandbox(*f, R"({"templateID":"damaged","timeout":300})");
    auto const r =
        run_command(*f, made, "cat /workspace/k; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done");
    BOOST_TEST(r.stdout_text.substr(0, 5) == "kept\n");                 // the files
    BOOST_TEST(r.stdout_text.find("while true") == std::string::npos);  // a cold boot: no counter
    BOOST_TEST(!fs::exists(dir.path / "sandboxes" / made.id / "chan/reconfigure.json"));
}

BOOST_AUTO_TEST_CASE(filesystem_pause_reboots_with_the_files_kept)
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto const api = api_headers(*f);
    auto sb = create_sandbox(*f);
    auto const boot = run_command(*f, sb, "cat /proc/sys/kernel/random/boot_id").stdout_text;
    BOOST_REQUIRE(run_command(*f, sb, std::string("echo kept > /workspace/k; ") + counter_script).end.has_value());
    BOOST_REQUIRE(eventually([&] { return count_on_host(dir.path, sb) >= 1; }));

    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/pause", R"({"memory":false})") == 204);
    BOOST_TEST(std::string(gvisor_info(*f, sb).at("pauseKind").as_string()) == "filesystem");
    BOOST_TEST(processes_in_cgroup(sb.id) == 0u);
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/resume", R"({"timeout":300})") == 201);
    auto r = run_command(*f, sb,
                         "cat /workspace/k; cat /proc/sys/kernel/random/boot_id; "
                         "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done");
    BOOST_TEST(r.stdout_text.substr(0, 5) == "kept\n");
    BOOST_TEST(r.stdout_text.substr(5, 37) != boot);                    // a cold boot: a new boot id
    BOOST_TEST(r.stdout_text.find("while true") == std::string::npos);  // the counter did not survive
}

BOOST_AUTO_TEST_CASE(a_unix_socket_runsc_cannot_save_refuses_the_memory_pause_and_loses_nothing)
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto const api = api_headers(*f);
    auto sb = create_sandbox(*f);
    // A listener bound in the sandbox's own /tmp is a socket on the host: runsc cannot checkpoint it.
    BOOST_REQUIRE(run_command(*f, sb,
                              "nohup python3 -c 'import socket,time\ns = socket.socket(socket.AF_UNIX)\n"
                              "s.bind(\"/tmp/app.sock\"); s.listen(1); open(\"/tmp/ready\", \"w\").close()\n"
                              "time.sleep(600)' > /dev/null 2>&1 &")
                      .end.has_value());
    BOOST_REQUIRE(eventually([&] { return fs::exists(dir.path / "sandboxes" / sb.id / "root/tmp/ready"); }));
    raw_http c(f->port());
    auto refused = c.request("POST", "/sandboxes/" + sb.id + "/pause", R"({"memory":true})", api);
    BOOST_TEST(refused.status == 409);
    BOOST_TEST(refused.body.find("/tmp/app.sock") != std::string::npos);
    // Still running, its envd answering; a pause without memory works.
    BOOST_TEST(std::string(gvisor_info(*f, sb).at("state").as_string()) == "running");
    BOOST_TEST(run_command(*f, sb, "echo alive").stdout_text == "alive\n");
    // A snapshot of it holds the files only, and it runs on.
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/snapshots", "{}") == 201);
    auto const snap = only_snapshot_dir(dir.path);
    BOOST_TEST(fs::exists(snap / "root/tmp/ready"));
    BOOST_TEST(!fs::exists(snap / "memory"));
    BOOST_TEST(run_command(*f, sb, "echo alive").stdout_text == "alive\n");
    BOOST_TEST(gvisor_post(f->port(), api, "/sandboxes/" + sb.id + "/pause", R"({"memory":false})") == 204);
}

// As the namespaces engine's, but without sudo: gVisor does not honour set-user-ID bits (google/gvisor#5299;
// every task has no_new_privs), so root in the sandbox is envd's user "root", as E2B's SDKs can ask.
BOOST_AUTO_TEST_CASE(each_sandbox_has_a_writable_system_of_its_own)
{
    // A root-only host file under /etc, made before the sandboxes boot: not in their /etc.
    std::string const name = "prism-e2b-gvsys-" + random_token(6);
    std::string const host_only = "/etc/" + name + "-host";
    {
        std::ofstream(host_only) << "host-secret\n";
    }
    ::chmod(host_only.c_str(), 0600);
    struct cleanup {
        std::string p;
        ~cleanup() { ::unlink(p.c_str()); }
    } rm{host_only};
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto const api = api_headers(*f);
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    std::string const tool = "/usr/local/bin/" + name, conf = "/etc/" + name;
    // Its root installs a tool and changes a host file; "user" runs the tool.
    auto w = run_command(*f, a,
                         "printf '#!/bin/sh\\necho tool\\n' > " + tool + " && chmod 755 " + tool + " && echo conf > " +
                             conf + " && echo mine > /etc/debian_version && echo done",
                         as_root());
    BOOST_TEST_INFO(w.stdout_text << w.stderr_text);
    BOOST_TEST(w.stdout_text == "done\n");
    auto const debian_version = host_file("/etc/debian_version");
    auto const mine = name + "; cat " + conf + " /etc/debian_version";
    BOOST_TEST(run_command(*f, a, mine).stdout_text == "tool\nconf\nmine\n");
    // Nothing of it on the host, nor in the other sandbox.
    BOOST_TEST(host_file("/etc/debian_version") != "mine\n");
    BOOST_TEST(!fs::exists(tool));
    BOOST_TEST(!fs::exists(conf));
    BOOST_TEST(exit_code(run_command(*f, b, "cat " + tool + " " + conf, as_root())) != 0);
    BOOST_TEST(run_command(*f, b, "cat /etc/debian_version").stdout_text == debian_version);
    // What the host's "other" cannot read is not there, for the sandbox's root either.
    for (std::string const& hidden : {host_only, std::string("/etc/gshadow"), std::string("/etc/ssl/private")}) {
        if (!fs::exists(hidden)) continue;
        BOOST_TEST_INFO(hidden);
        BOOST_TEST(run_command(*f, a, "test -e " + hidden + " || echo hidden", as_root()).stdout_text == "hidden\n");
    }
    // No sudo: a set-user-ID program does not raise "user"'s privileges here (the README says so).
    BOOST_TEST(run_command(*f, a, "sudo -n id -u 2>/dev/null; echo $?").stdout_text != "0\n0\n");
    // Kept with its files through a pause that reboots it, and into a fork.
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + a.id + "/pause", R"({"memory":false})") == 204);
    BOOST_TEST_REQUIRE(gvisor_post(f->port(), api, "/sandboxes/" + a.id + "/resume", R"({"timeout":300})") == 201);
    BOOST_TEST(run_command(*f, a, mine).stdout_text == "tool\nconf\nmine\n");
    raw_http c(f->port());
    std::vector<std::string> ids = {a.id, b.id};
    if (checkpoints_run(utf::test_unit_id{})) {  // a fork here is a checkpoint of the source
        auto forked = c.request("POST", "/sandboxes/" + a.id + "/fork", R"({"count":1})", api);
        BOOST_TEST_REQUIRE(forked.status == 201, forked.body);
        auto const made = forked.json().as_array().at(0).as_object().at("sandbox").as_object();
        sandbox_ref const child{std::string(made.at("sandboxID").as_string()),
                                std::string(made.at("envdAccessToken").as_string())};
        BOOST_TEST(run_command(*f, child, mine).stdout_text == "tool\nconf\nmine\n");
        ids.push_back(child.id);
    }
    // The overlays go with the sandboxes: no mount of theirs is left on the host.
    for (auto const& id : ids) BOOST_TEST(c.request("DELETE", "/sandboxes/" + id, {}, api).status == 204);
    BOOST_TEST(host_file("/proc/self/mountinfo").find(dir.path.string()) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(kill_leaves_nothing_behind)
{
    gvisor_state_dir dir;
    auto f = gvisor_server(dir.path);
    auto sb = create_sandbox(*f);
    BOOST_REQUIRE(run_command(*f, sb, counter_script).end.has_value());
    BOOST_REQUIRE(processes_in_cgroup(sb.id) > 0u);
    raw_http c(f->port());
    BOOST_REQUIRE(c.request("DELETE", "/sandboxes/" + sb.id, {}, api_headers(*f)).status == 204);
    BOOST_TEST(eventually([&] { return processes_in_cgroup(sb.id) == 0u; }));
    BOOST_TEST(eventually([&] { return !fs::exists(dir.path / "sandboxes" / sb.id); }));
    // runsc keeps no record of the container.
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(dir.path / "runsc", ec))
        BOOST_TEST(e.path().filename().string().find(sb.id) == std::string::npos);
}

#ifdef PRISM_E2B_HAVE_LOCAL_BINARY
namespace {

/// A sandbox of a server run as its own process (server_process): created, counting.
sandbox_ref counting_sandbox(std::uint16_t port, header_pairs const& api, fs::path const& state)
{
    raw_http c(port);
    auto r = c.request("POST", "/sandboxes", R"({"templateID":"base","timeout":600})", api);
    BOOST_REQUIRE(r.status == 201);
    auto o = r.json().as_object();
    sandbox_ref sb{std::string(o["sandboxID"].as_string()), std::string(o["envdAccessToken"].as_string())};
    BOOST_REQUIRE(run_command(port, sb, counter_script).end.has_value());
    BOOST_REQUIRE(eventually([&] { return count_on_host(state, sb) >= 3; }));
    return sb;
}

}  // namespace

// Killed with the memory frozen in RAM, before its image: the restarted server takes the frozen
// container back (a runsc container outlives the server), resumes it from RAM, and the running
// one's container never stopped.
BOOST_AUTO_TEST_CASE(a_memory_paused_sandbox_survives_kill_9_of_the_server, *utf::precondition(checkpoints_run))
{
    gvisor_state_dir dir;
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    std::vector<std::string> const engine = {"--engine", "gvisor", "--memory-image", "pressure"};
    sandbox_ref paused, running;
    long at_pause = -1;
    {
        server_process first(dir.path.string(), key, engine);
        paused = counting_sandbox(first.port(), api, dir.path);
        running = counting_sandbox(first.port(), api, dir.path);
        // Its writable system too: overlays the server mounted, which its restart must not lose.
        for (auto const* sb : {&paused, &running})
            BOOST_REQUIRE(exit_code(run_command(first.port(), *sb, "echo kept > /usr/local/kept", as_root())) == 0);
        BOOST_TEST_REQUIRE(gvisor_post(first.port(), api, "/sandboxes/" + paused.id + "/pause", "{}") == 204);
        BOOST_TEST(pause_kind_at(first.port(), api, paused) == "cgroup-freezer");
        at_pause = count_on_host(dir.path, paused);
        int const st = first.signal_and_wait(SIGKILL);
        BOOST_TEST(WIFSIGNALED(st));
    }
    // The running one's container never stopped: its counter goes on without a server.
    auto const without_server = count_on_host(dir.path, running);
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, running) > without_server; }));
    BOOST_TEST(freezer_state_of(paused.id) == "FROZEN");

    server_process second(dir.path.string(), key, engine);
    raw_http c(second.port());
    auto ip = c.request("GET", "/sandboxes/" + paused.id, {}, api).json().as_object();
    BOOST_TEST(std::string(ip["state"].as_string()) == "paused");
    BOOST_TEST(pause_kind_at(second.port(), api, paused) == "cgroup-freezer");
    BOOST_TEST(count_on_host(dir.path, paused) == at_pause);
    auto ir = c.request("GET", "/sandboxes/" + running.id, {}, api).json().as_object();
    BOOST_TEST(std::string(ir["state"].as_string()) == "running");
    BOOST_TEST_REQUIRE(gvisor_post(second.port(), api, "/sandboxes/" + paused.id + "/resume", R"({"timeout":300})") ==
                       201);
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, paused) > at_pause; }));
    BOOST_TEST(run_command(second.port(), running, "echo alive").stdout_text == "alive\n");
    for (auto const* sb : {&paused, &running})
        BOOST_TEST(run_command(second.port(), *sb, "cat /usr/local/kept").stdout_text == "kept\n");

    int const st = second.signal_and_wait(SIGTERM);
    BOOST_TEST((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    BOOST_TEST(processes_in_cgroup(paused.id) == 0u);
    BOOST_TEST(processes_in_cgroup(running.id) == 0u);
}

// Killed while the image is being written: the write goes on without the server or stops half
// way; the restarted server waits for it, takes a whole image or the frozen container, and
// writes the image again if needed. The sandbox resumes with its memory, from the one copy left.
BOOST_AUTO_TEST_CASE(a_server_killed_while_writing_the_image_loses_nothing, *utf::precondition(checkpoints_run))
{
    gvisor_state_dir dir;
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    std::vector<std::string> const engine = {"--engine", "gvisor", "--memory-image", "0"};
    auto const sandbox_dir = [&](sandbox_ref const& sb) { return dir.path / "sandboxes" / sb.id; };
    sandbox_ref sb;
    std::string pid;
    long at_pause = -1;
    {
        server_process first(dir.path.string(), key, engine);
        sb = counting_sandbox(first.port(), api, dir.path);
        pid = run_command(first.port(), sb, "cat /tmp/counter.pid").stdout_text;
        BOOST_TEST_REQUIRE(gvisor_post(first.port(), api, "/sandboxes/" + sb.id + "/pause", "{}") == 204);
        at_pause = count_on_host(dir.path, sb);
        // runsc has begun the image (its file is made before the gVisor kernel is asked for it).
        BOOST_TEST_REQUIRE(eventually([&] { return fs::exists(sandbox_dir(sb) / "memory.partial/checkpoint.img"); },
                                      std::chrono::seconds(60)));
        int const st = first.signal_and_wait(SIGKILL);
        BOOST_TEST(WIFSIGNALED(st));
    }
    server_process second(dir.path.string(), key, engine);
    BOOST_TEST(
        eventually([&] { return pause_kind_at(second.port(), api, sb) == "checkpoint"; }, std::chrono::seconds(120)));
    BOOST_TEST(fs::is_regular_file(sandbox_dir(sb) / "memory/checkpoint.img"));
    BOOST_TEST(!fs::exists(sandbox_dir(sb) / "memory.partial"));
    BOOST_TEST(processes_in_cgroup(sb.id) == 0u);  // one copy: the image
    BOOST_TEST_REQUIRE(gvisor_post(second.port(), api, "/sandboxes/" + sb.id + "/resume", R"({"timeout":300})") == 201);
    BOOST_TEST(eventually([&] { return count_on_host(dir.path, sb) > at_pause; }));
    BOOST_TEST(run_command(second.port(), sb, "cat /tmp/counter.pid").stdout_text == pid);
    int const st = second.signal_and_wait(SIGTERM);
    BOOST_TEST((WIFEXITED(st) && WEXITSTATUS(st) == 0));
}
#endif

BOOST_AUTO_TEST_SUITE_END()
