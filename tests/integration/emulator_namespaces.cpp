// prism-e2b-local's `namespaces` engine: every isolation claim it makes, tried
// with real processes: sandboxes cannot see, read, signal or reach each other;
// root in a sandbox is not host root; `ps` shows only the sandbox; its own boot
// id, hostname, cgroup limits; no network without internet access.
#include "emulator/engines/namespaces/sandbox_init.hpp"
#include "emulator/sandbox_network.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "sandbox_calls.hpp"

#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <barrier>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <optional>
#include <set>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace prism_e2b::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

/// The socket inodes ("socket:[N]") process `pid` holds open.
std::set<std::string> socket_inodes(std::string const& pid)
{
    std::set<std::string> out;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc/" + pid + "/fd", ec)) {
        std::error_code lec;
        auto const target = fs::read_symlink(e.path(), lec).string();
        if (target.rfind("socket:", 0) == 0) out.insert(target);
    }
    return out;
}

/// Pids of the running slirp4netns processes.
std::vector<std::string> slirp4netns_pids()
{
    std::vector<std::string> out;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc", ec)) {
        auto const name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream comm(e.path() / "comm");
        std::string c;
        if (std::getline(comm, c) && c == "slirp4netns") out.push_back(name);
    }
    return out;
}

/// A server on the namespaces engine with small, checkable limits.
std::unique_ptr<local_server_fixture> ns_server()
{
    return std::make_unique<local_server_fixture>([](prism_e2b::local::server_options& o) {
        o.engine = "namespaces";
        o.sandbox_cpu_count = 1;
        o.sandbox_memory_mb = 256;
        o.sandbox_max_pids = 64;
    });
}

bool have_root()
{
    if (::geteuid() == 0) return true;
    BOOST_TEST_MESSAGE("skipped: the namespaces engine needs root");
    return false;
}

std::string read_host_file(std::string const& path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// The "Uid:" real id of a host process.
long host_uid_of(std::uint32_t pid)
{
    std::istringstream in(read_host_file("/proc/" + std::to_string(pid) + "/status"));
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("Uid:", 0) == 0) return std::stol(line.substr(4));
    return -1;
}

/// A process kept running in a sandbox (its Start stream stays open).
struct background {
    std::unique_ptr<event_stream> stream;
    std::uint32_t pid = 0;       ///< as the sandbox (and the API) sees it
    std::uint32_t host_pid = 0;  ///< as the host sees it
};

background start_background(local_server_fixture& f, sandbox_ref const& sb, std::string const& script,
                            header_pairs extra = {})
{
    auto h = envd_headers(sb);
    h.insert(h.end(), extra.begin(), extra.end());
    background b;
    b.stream = std::make_unique<event_stream>(f.port(), "/process.Process/Start", start_json(script), h);
    auto ev = b.stream->next_event();
    BOOST_REQUIRE(ev);
    auto& e = (*ev)["event"].as_object();
    BOOST_REQUIRE(e.contains("start"));
    b.pid = static_cast<std::uint32_t>(e["start"].as_object()["pid"].to_number<std::int64_t>());
    b.host_pid = host_pid_of(sb.id, b.pid);
    BOOST_REQUIRE(b.host_pid != 0);
    return b;
}

/// A loopback listener on the host (accepts nothing; the kernel completes the handshake).
struct host_listener {
    int fd = -1;
    std::uint16_t port = 0;
    explicit host_listener(in_addr_t address = htonl(INADDR_LOOPBACK))
    {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = address;
        socklen_t len = sizeof a;
        if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            throw std::runtime_error("cannot listen");
        port = ntohs(a.sin_port);
    }
    ~host_listener() { ::close(fd); }
};

/// An IPv4 address of this machine that is not loopback (what "outside" looks like from a
/// sandbox behind NAT, without leaving the machine); nullopt when it has none.
std::optional<in_addr> host_outside_address()
{
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return std::nullopt;
    std::optional<in_addr> found;
    for (auto* i = list; i && !found; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK))
            found = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
    ::freeifaddrs(list);
    return found;
}

std::string tcp_connect(std::string const& host, std::uint16_t port)
{
    return "timeout 5 bash -c 'exec 3<>/dev/tcp/" + host + "/" + std::to_string(port) + "' && echo connected";
}

/// Runs `body(k)` for k in [0, per_thread) on each of `threads` threads at once and returns how
/// many calls failed (returned false or threw). A hang is reported now, naming `what`, not
/// when ctest's timeout ends the whole binary.
template <class Body>
int failures_on_threads(int threads, int per_thread, char const* what, Body body)
{
    std::atomic<int> done{0}, failed{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
        pool.emplace_back([&] {
            for (int k = 0; k < per_thread; ++k) {
                try {
                    if (!body(k)) ++failed;
                } catch (std::exception const& e) {
                    BOOST_TEST_MESSAGE(e.what());
                    ++failed;
                }
                ++done;
            }
        });
    if (!eventually([&] { return done.load() == threads * per_thread; }, std::chrono::minutes(4))) {
        std::fprintf(stderr, "%s hung: %d of %d calls returned\n", what, done.load(), threads * per_thread);
        std::abort();
    }
    for (auto& t : pool) t.join();
    return failed.load();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_namespaces)

BOOST_AUTO_TEST_CASE(engine_ids_and_limits_are_the_sandboxs_own)
{
    if (!have_root()) return;
    auto f = ns_server();
    BOOST_TEST(f->server().isolation() == "namespaces");
    // What the adapter is told; each claim is one of the tests of this suite.
    auto const caps = f->server().capabilities(true);
    BOOST_TEST((caps.workspace_coherent && caps.filesystem_isolated && caps.process_isolated &&
                caps.privilege_isolated && !caps.network_isolated && !caps.egress_restricted));
    BOOST_TEST(f->server().capabilities(false).network_isolated);
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    auto ia = sandbox_info(*f, a);
    BOOST_TEST(std::string(ia["isolation"].as_string()) == "namespaces");
    BOOST_TEST(std::string(ia["envd"].as_string()) == "in-sandbox");
    BOOST_TEST(ia["cpuCount"].to_number<std::int64_t>() == 1);
    BOOST_TEST(ia["memoryMB"].to_number<std::int64_t>() == 256);

    // Root and user inside are unprivileged host ids of a range of the sandbox's own.
    auto ra = start_background(*f, a, "sleep 300", as_root());
    auto ua = start_background(*f, a, "sleep 300");
    auto rb = start_background(*f, b, "sleep 300", as_root());
    long const root_a = host_uid_of(ra.host_pid), user_a = host_uid_of(ua.host_pid), root_b = host_uid_of(rb.host_pid);
    BOOST_TEST(root_a >= 100000);
    BOOST_TEST(user_a == root_a + 1000);
    BOOST_TEST(root_b >= 100000);
    BOOST_TEST(root_a != root_b);
    auto ids = run_command(*f, a, "id -u; id -un; awk '{print $1, $2, $3}' /proc/self/uid_map", as_root());
    BOOST_TEST(ids.stdout_text == "0\nroot\n0 " + std::to_string(root_a) + " 65536\n");
    BOOST_TEST(run_command(*f, a, "id -un; echo $HOME").stdout_text == "user\n/home/user\n");

    // The kernel enforces the limits the info reports: the cgroups of a sandbox process.
    std::istringstream groups(read_host_file("/proc/" + std::to_string(ra.host_pid) + "/cgroup"));
    std::string line, memory_dir, pids_dir;
    while (std::getline(groups, line)) {
        auto const path = line.substr(line.rfind(':') + 1);
        if (line.find(":memory:") != std::string::npos) memory_dir = "/sys/fs/cgroup/memory" + path;
        if (line.find(":pids:") != std::string::npos) pids_dir = "/sys/fs/cgroup/pids" + path;
    }
    BOOST_TEST(memory_dir.find(a.id) != std::string::npos);
    BOOST_TEST(std::stoll(read_host_file(memory_dir + "/memory.limit_in_bytes")) == 256ll << 20);
    BOOST_TEST(std::stoll(read_host_file(pids_dir + "/pids.max")) == 64);
    // Hostname (uts) and SysV IPC are the sandbox's own.
    auto host = run_command(*f, a, "hostname");
    BOOST_TEST_INFO("hostname: " << host.stdout_text << host.stderr_text);
    char hn[256] = {};
    ::gethostname(hn, sizeof hn - 1);
    BOOST_TEST(host.stdout_text != std::string(hn) + "\n");
    BOOST_TEST(host.stdout_text.rfind("e2b-", 0) == 0);
    auto ipc = run_command(*f, b, "ipcmk -M 4096 && ipcs -m | grep -c 0x", as_root());
    BOOST_TEST_INFO("ipcmk: " << ipc.stdout_text << ipc.stderr_text);
    BOOST_REQUIRE(exit_code(ipc) == 0);
    BOOST_TEST(run_command(*f, a, "ipcs -m | grep -c 0x || true", as_root()).stdout_text == "0\n");
    // A fork bomb stops at the pids limit (and in this sandbox only).
    auto bomb = run_command(*f, a,
                            "/usr/bin/python3 -c '\n"
                            "import os, time\n"
                            "n = 0\n"
                            "try:\n"
                            "    while n < 200:\n"
                            "        if os.fork() == 0:\n"
                            "            time.sleep(60)\n"
                            "            os._exit(0)\n"
                            "        n += 1\n"
                            "except OSError:\n"
                            "    pass\n"
                            "print(n)'");
    BOOST_TEST_INFO("forks: " << bomb.stdout_text << bomb.stderr_text);
    long const forks = std::stol(bomb.stdout_text.empty() ? "0" : bomb.stdout_text);
    BOOST_TEST(forks < 64);
    BOOST_TEST(forks >= 10);
    BOOST_TEST(exit_code(run_command(*f, b, "true")) == 0);  // b is not affected
}

BOOST_AUTO_TEST_CASE(a_fork_bomb_or_an_oom_stalls_only_its_own_sandbox)
{
    if (!have_root()) return;
    auto f = ns_server();
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    auto health = [&](sandbox_ref const* sb) {
        raw_http c(f->port());
        return c.request("GET", "/health", {}, sb ? envd_headers(*sb) : header_pairs{}).status;
    };
    // Every pid of a's cgroup taken, and held: a's envd (its agent, whose threads exist
    // already) still answers, and so do the server and b.
    auto bomb = start_background(*f, a,
                                 "/usr/bin/python3 -c '\n"
                                 "import os, time\n"
                                 "try:\n"
                                 "    while True:\n"
                                 "        if os.fork() == 0:\n"
                                 "            time.sleep(300)\n"
                                 "            os._exit(0)\n"
                                 "except OSError:\n"
                                 "    print(\"full\", flush=True)\n"
                                 "time.sleep(300)'");
    bool full = false;
    while (!full)
        if (auto ev = bomb.stream->next_event()) {
            auto& e = (*ev)["event"].as_object();
            full = e.contains("data") && e["data"].as_object().contains("stdout");
        } else {
            break;
        }
    BOOST_REQUIRE(full);
    auto no_room = run_command(*f, a, "true");
    BOOST_TEST_INFO("exec in the full sandbox: " << (no_room.end ? json::serialize(*no_room.end) : "no end"));
    BOOST_TEST(exit_code(no_room) != 0);
    BOOST_TEST(health(&a) == 204);
    BOOST_TEST(health(nullptr) == 200);
    BOOST_TEST(run_command(*f, b, "echo b-ok").stdout_text == "b-ok\n");
    raw_http c(f->port());
    BOOST_TEST(c.request("DELETE", "/sandboxes/" + a.id, {}, api_headers(*f)).status == 204);

    // Past b's memory limit the kernel kills the hog, not b's envd: b answers on.
    auto hog = run_command(*f, b, "/usr/bin/python3 -c 'b = bytearray(1 << 30); print(\"survived\")'");
    BOOST_TEST_INFO("hog: " << hog.stdout_text << hog.stderr_text);
    BOOST_TEST(hog.stdout_text.find("survived") == std::string::npos);
    BOOST_TEST(exit_code(hog) != 0);
    BOOST_TEST(health(&b) == 204);
    BOOST_TEST(run_command(*f, b, "echo still-ok").stdout_text == "still-ok\n");
    BOOST_TEST(health(nullptr) == 200);
}

namespace {

/// Two sandboxes of `f`'s cannot see, read or signal each other, even as root.
void expect_sandboxes_apart(std::unique_ptr<local_server_fixture> const& f)
{
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f, R"({"templateID":"base","timeout":300,"envVars":{"B_SECRET":"s3cr3t-of-b"}})");
    auto victim = start_background(*f, b, "echo secret > /workspace/b-marker-7319; exec sleep 4242");
    std::string const pid = std::to_string(victim.host_pid);  // what a's root could learn of b
    // Wait until b's file exists (the stream started; the echo runs before exec).
    BOOST_REQUIRE(exit_code(run_command(*f, b,
                                        "for i in $(seq 200); do test -e /workspace/b-marker-7319 && exit 0; "
                                        "sleep 0.05; done; exit 1")) == 0);

    // ps in a: its own processes only, pid 1 its init (prism-e2b-envd, which serves envd
    // as its first child); no server, no other sandbox.
    auto ps = run_command(*f, a, "ps -eo pid=,args=", as_root());
    BOOST_TEST_INFO("ps in a: " << ps.stdout_text);
    BOOST_TEST(ps.stdout_text.find("4242") == std::string::npos);
    BOOST_TEST(ps.stdout_text.find("   1 prism-e2b-envd init") != std::string::npos);
    BOOST_TEST(ps.stdout_text.find("prism-e2b-local") == std::string::npos);
    auto const self_name = read_host_file("/proc/self/comm");
    BOOST_TEST(ps.stdout_text.find(self_name.substr(0, self_name.size() - 1)) == std::string::npos);
    std::istringstream lines(ps.stdout_text);
    std::string l;
    int count = 0;
    while (std::getline(lines, l)) ++count;
    BOOST_TEST(count <= 5);  // init, agent, bash, ps (and nothing else)

    // b's environment, files and process are out of a's reach, even as root.
    auto env = run_command(*f, a, "cat /proc/" + pid + "/environ; grep -l s3cr3t-of-b /proc/[0-9]*/environ", as_root());
    BOOST_TEST(env.stdout_text.find("s3cr3t") == std::string::npos);
    BOOST_TEST(exit_code(env) != 0);
    auto files = run_command(*f, a, "find / -name 'b-marker-7319' -not -path '/proc/*' 2>/dev/null | wc -l", as_root());
    BOOST_TEST(files.stdout_text == "0\n");
    auto kill = run_command(*f, a, "kill -9 " + pid, as_root());
    BOOST_TEST(exit_code(kill) != 0);
    // ... and it still runs.
    BOOST_TEST(::kill(static_cast<pid_t>(victim.host_pid), 0) == 0);
    auto still = run_command(*f, b, "ps -eo args= | grep -c '^sleep 4242'");
    BOOST_TEST(still.stdout_text == "1\n");
}

}  // namespace

BOOST_AUTO_TEST_CASE(sandboxes_cannot_see_read_or_signal_each_other)
{
    if (!have_root()) return;
    expect_sandboxes_apart(ns_server());
}

namespace {
/// What start() answers for a server with `tweak`'s options (and an API key), on a throw-away io_context.
template <class Tweak>
prism_e2b::result<void> start_with(Tweak tweak)
{
    prism_e2b::local::server_options o;
    o.api_key = "k";
    tweak(o);
    boost::asio::io_context ioc;
    prism_e2b::local::server s(ioc.get_executor(), o);
    return s.start();
}

/// umask 077 for as long as it lives (the whole process's: the tests run one at a time).
struct private_umask {
    mode_t old = ::umask(077);
    ~private_umask() { ::umask(old); }
};
}  // namespace

BOOST_AUTO_TEST_CASE(a_private_state_dir_under_umask_077_still_gets_the_namespaces_engine)
{
    if (!have_root()) return;
    // What `mktemp -d`, a service with UMask=0077 or /var/lib/private give: a 0700 parent.
    fs::path const parent = fs::temp_directory_path() / ("prism-e2b-private-" + random_token(6));
    fs::create_directory(parent);
    ::chmod(parent.c_str(), 0700);
    struct cleanup {
        fs::path p;
        ~cleanup()
        {
            std::error_code ec;
            fs::remove_all(p, ec);
        }
    } rm{parent};
    private_umask mask;
    auto const state = parent / "state";
    // No engine named: the default, which may not be a weaker one.
    auto f = std::make_unique<local_server_fixture>(
        [&](prism_e2b::local::server_options& o) { o.state_dir = state.string(); });
    BOOST_TEST(f->server().isolation() == "namespaces");
    auto a = create_sandbox(*f);
    BOOST_TEST(std::string(sandbox_info(*f, a)["isolation"].as_string()) == "namespaces");
    // Every account and directory works as in a shared state dir.
    auto who = run_command(*f, a,
                           "id -un; grep -c '^user:' /etc/passwd; echo w > /workspace/w && cat /workspace/w; "
                           "echo t > /tmp/t && cat /tmp/t; echo h > ~/h && cat ~/h");
    BOOST_TEST_INFO("as user: " << who.stdout_text << who.stderr_text);
    BOOST_TEST(who.stdout_text == "user\n1\nw\nt\nh\n");
    auto root = run_command(*f, a, "id -un; echo r > /root/r && cat /root/r", as_root());
    BOOST_TEST(root.stdout_text == "root\nr\n");
    expect_sandboxes_apart(f);
    // Nothing of it was opened to other host users on the way.
    for (auto const& d : {parent, state, state / "sandboxes"}) {
        struct stat st {};
        BOOST_REQUIRE(::stat(d.c_str(), &st) == 0);
        BOOST_TEST_INFO(d);
        BOOST_TEST((st.st_mode & 077) == 0u);
    }
}

BOOST_AUTO_TEST_CASE(a_failed_namespaces_probe_stops_start_up_unless_a_weaker_engine_is_named)
{
    if (!have_root()) return;
    // An envd that cannot answer in a sandbox: the probe fails for real.
    struct fake_envd {
        char const* old = std::getenv("PRISM_E2B_ENVD");
        std::string saved = old ? old : "";
        fake_envd() { ::setenv("PRISM_E2B_ENVD", "/bin/false", 1); }
        ~fake_envd() { old ? ::setenv("PRISM_E2B_ENVD", saved.c_str(), 1) : ::unsetenv("PRISM_E2B_ENVD"); }
    } envd;
    for (std::string engine : {"", "namespaces"}) {
        auto r = start_with([&](prism_e2b::local::server_options& o) { o.engine = engine; });
        BOOST_TEST_INFO("engine \"" << engine << "\"");
        BOOST_REQUIRE(!r);
        BOOST_TEST((r.error() == prism_e2b::errc::unsupported));
        auto const why = r.error().message();
        BOOST_TEST(why.find("does not answer in a sandbox") != std::string::npos, why);
        // The default names the flag that accepts less; asking for namespaces gets no such advice.
        BOOST_TEST((why.find("--engine mount-namespace") != std::string::npos) == engine.empty(), why);
    }
    // Named, a weaker engine starts: the operator chose it.
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.engine = "mount-namespace"; });
    BOOST_TEST(f.server().isolation() == "mount-namespace");
    auto a = create_sandbox(f);
    BOOST_TEST(std::string(sandbox_info(f, a)["isolation"].as_string()) == "mount-namespace");
    // It has no mount namespace of the sandbox's own to put a volume in: refused, not ignored.
    raw_http c(f.port());
    BOOST_TEST(c.request("POST", "/volumes", R"({"name":"v"})", api_headers(f)).status == 201);
    auto mount = raw_http(f.port()).request(
        "POST", "/sandboxes", R"({"templateID":"base","volumeMounts":[{"name":"v","path":"/mnt/v"}]})", api_headers(f));
    BOOST_TEST(mount.status == 400);
    BOOST_TEST(mount.body.find("mount-namespace engine cannot mount volumes") != std::string::npos, mount.body);
}

BOOST_AUTO_TEST_CASE(root_in_a_sandbox_is_not_host_root)
{
    if (!have_root()) return;
    auto f = ns_server();
    auto a = create_sandbox(*f);
    // A root-only host file at a path the sandbox sees: its /etc is the host's through its own
    // writable layer, which hides what the host's "other" cannot read (system_layer.hpp).
    std::string const name = "prism-e2b-test-" + random_token(6);
    std::string const host_file = "/etc/" + name;
    {
        std::ofstream out(host_file);
        out << "host-secret\n";
    }
    ::chmod(host_file.c_str(), 0600);
    struct cleanup {
        std::string p;
        ~cleanup() { ::unlink(p.c_str()); }
    } rm{host_file};
    auto id = run_command(*f, a, "id -u", as_root());
    BOOST_REQUIRE(id.stdout_text == "0\n");
    auto seen = run_command(*f, a, "test -e " + host_file + " || echo hidden", as_root());
    BOOST_TEST(seen.stdout_text == "hidden\n");
    auto read = run_command(*f, a, "cat " + host_file, as_root());
    BOOST_TEST(read.stdout_text.find("host-secret") == std::string::npos);
    BOOST_TEST(exit_code(read) != 0);
    BOOST_TEST(exit_code(run_command(*f, a, "chmod 0644 " + host_file, as_root())) != 0);
    // Its /etc/shadow is its own, without the host's accounts.
    auto const shadow = run_command(*f, a, "cat /etc/shadow", as_root()).stdout_text;
    BOOST_TEST(shadow.find("root:*:") == 0u, shadow);
    BOOST_TEST(shadow != read_host_file("/etc/shadow"));
    // What it writes into the system directories is its own: the host's stay as they are.
    std::string const written = name + "-written";
    for (std::string dir : {"/etc", "/usr", "/usr/bin", "/opt"}) {
        if (!fs::is_directory(dir)) continue;
        auto w = run_command(*f, a, "touch " + dir + "/" + written, as_root());
        BOOST_TEST_INFO("writing into " << dir);
        BOOST_TEST(exit_code(w) == 0);
        struct stat hst {};
        BOOST_TEST(::stat((dir + "/" + written).c_str(), &hst) != 0);
    }
    BOOST_TEST(exit_code(run_command(*f, a, "touch /" + written, as_root())) != 0);  // its root dir is read-only
    // Its /root is its own, not the host's.
    BOOST_TEST(exit_code(run_command(*f, a, "echo mine > /root/" + name, as_root())) == 0);
    struct stat st {};
    BOOST_TEST(::stat(("/root/" + name).c_str(), &st) != 0);
    BOOST_TEST(::stat(("/usr/" + name).c_str(), &st) != 0);
    // The file it wrote came back through /files as the sandbox's root's.
    raw_http c(f->port());
    BOOST_TEST(c.request("GET", "/files?path=/root/" + name, {}, envd_headers(a)).body == "mine\n");
}

BOOST_AUTO_TEST_CASE(each_sandbox_has_a_writable_system_of_its_own_and_sudo)
{
    if (!have_root()) return;
    BOOST_TEST_REQUIRE(::access("/usr/bin/sudo", X_OK) == 0,
                       "sudo is not installed (scripts/bootstrap.sh installs it)");
    auto f = ns_server();
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    std::string const name = "prism-e2b-sys-" + random_token(6);
    std::string const tool = "/usr/local/bin/" + name, conf = "/etc/" + name;
    // "user" becomes the sandbox's root with sudo, without a password, and installs a tool.
    auto w = run_command(*f, a,
                         "sudo -n id -u && sudo -n sh -c 'printf \"#!/bin/sh\\necho tool\\n\" > " + tool +
                             " && chmod 755 " + tool + " && echo conf > " + conf + "' && echo done");
    BOOST_TEST_INFO(w.stdout_text << w.stderr_text);
    BOOST_TEST(w.stdout_text == "0\ndone\n");
    BOOST_TEST(run_command(*f, a, name + "; cat " + conf + "; stat -c %u " + tool).stdout_text == "tool\nconf\n0\n");
    // A host file changed inside is changed for this sandbox only.
    auto const debian_version = read_host_file("/etc/debian_version");
    BOOST_TEST(exit_code(run_command(*f, a, "echo mine > /etc/debian_version", as_root())) == 0);
    BOOST_TEST(run_command(*f, a, "cat /etc/debian_version").stdout_text == "mine\n");
    BOOST_TEST(run_command(*f, b, "cat /etc/debian_version").stdout_text == debian_version);
    // Nothing of it on the host, nor in the other sandbox.
    BOOST_TEST(read_host_file("/etc/debian_version") == debian_version);
    struct stat st {};
    BOOST_TEST(::stat(tool.c_str(), &st) != 0);
    BOOST_TEST(::stat(conf.c_str(), &st) != 0);
    BOOST_TEST(exit_code(run_command(*f, b, "cat " + tool + " " + conf, as_root())) != 0);
    // What the host's "other" cannot read is not there, for the sandbox's root either.
    for (std::string const hidden : {"/etc/gshadow", "/etc/shadow-", "/etc/ssl/private"}) {
        if (!fs::exists(hidden)) continue;
        BOOST_TEST_INFO(hidden);
        BOOST_TEST(run_command(*f, a, "sudo -n test -e " + hidden + " || echo hidden").stdout_text == "hidden\n");
    }
    // Its /etc/shadow is its own: accounts without a password, none of the host's.
    BOOST_TEST(run_command(*f, a, "sudo -n cat /etc/shadow").stdout_text ==
               "root:*:19000:0:99999:7:::\nuser:*:19000:0:99999:7:::\n");
    // Kept with its files: through a pause that reboots it, and into a fork.
    BOOST_TEST(api_post(*f, "/sandboxes/" + a.id + "/pause", R"({"memory":false})") == 204);
    BOOST_TEST(api_post(*f, "/sandboxes/" + a.id + "/connect", R"({"timeout":120})") == 201);
    BOOST_TEST(run_command(*f, a, name + "; cat " + conf).stdout_text == "tool\nconf\n");
    raw_http c(f->port());
    auto forked = c.request("POST", "/sandboxes/" + a.id + "/fork", R"({"count":1})", api_headers(*f));
    BOOST_TEST_REQUIRE(forked.status == 201, forked.body);
    auto const made = forked.json().as_array().at(0).as_object().at("sandbox").as_object();
    sandbox_ref const child{std::string(made.at("sandboxID").as_string()),
                            std::string(made.at("envdAccessToken").as_string())};
    auto const in_child = run_command(
        *f, child,
        name + "; cat " + conf + " /etc/debian_version; sudo -n id -u; " + "test -e /etc/gshadow || echo hidden");
    BOOST_TEST_INFO(in_child.stderr_text);
    BOOST_TEST(in_child.stdout_text == "tool\nconf\nmine\n0\nhidden\n");
}

BOOST_AUTO_TEST_CASE(idmap_helpers_cloned_at_once_all_exit)
{
    if (!have_root()) return;
    namespace d = prism_e2b::local::detail;
    auto range = d::uid_range::reserve();
    BOOST_TEST_REQUIRE(range.has_value());
    // Each call clones a helper that waits for its pipe to close; helpers cloned by other
    // threads meanwhile must not keep it open (two of them once held each other's for ever).
    BOOST_TEST(failures_on_threads(4, 150, "idmap helpers", [&](int) {
                   return d::idmapped_tree("/usr", range->base(), MOUNT_ATTR_RDONLY, "/usr").has_value();
               }) == 0);
}

BOOST_AUTO_TEST_CASE(concurrent_creates_of_writable_systems_all_finish)
{
    if (!have_root()) return;
    auto f = ns_server();
    // Both server threads boot at once, each through its idmap helpers and its init: a child
    // cloned by one must not hold what another child waits on (it did: two helpers each held
    // the other's pipe, and the server hung). Rounds of creates released together.
    constexpr int clients = 4, rounds = 3;
    std::barrier round(clients);
    BOOST_TEST(failures_on_threads(clients, rounds, "concurrent creates", [&](int k) {
                   round.arrive_and_wait();
                   auto const sb = create_sandbox(*f);
                   bool ok = k != rounds - 1 || run_command(*f, sb, "sudo -n id -u").stdout_text == "0\n";
                   raw_http c(f->port());
                   return c.request("DELETE", "/sandboxes/" + sb.id, "", api_headers(*f)).status == 204 && ok;
               }) == 0);
}

BOOST_AUTO_TEST_CASE(boot_id_is_per_sandbox_and_new_on_every_cold_boot)
{
    if (!have_root()) return;
    auto f = ns_server();
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    std::string const cmd = "cat /proc/sys/kernel/random/boot_id";
    auto const host_id = read_host_file("/proc/sys/kernel/random/boot_id");
    auto const id_a = run_command(*f, a, cmd).stdout_text;
    auto const id_b = run_command(*f, b, cmd).stdout_text;
    BOOST_TEST(id_a.size() == 37u);
    BOOST_TEST(id_a != host_id);
    BOOST_TEST(id_a != id_b);
    BOOST_REQUIRE(exit_code(run_command(*f, a, "echo kept > /workspace/k")) == 0);

    // A memory pause is not a reboot.
    BOOST_REQUIRE(api_post(*f, "/sandboxes/" + a.id + "/pause", R"({"memory":true})") == 204);
    BOOST_REQUIRE(api_post(*f, "/sandboxes/" + a.id + "/resume", R"({"timeout":300})") == 201);
    BOOST_TEST(run_command(*f, a, cmd).stdout_text == id_a);

    // A filesystem pause is: a new boot id, the files kept.
    BOOST_REQUIRE(api_post(*f, "/sandboxes/" + a.id + "/pause", R"({"memory":false})") == 204);
    BOOST_REQUIRE(api_post(*f, "/sandboxes/" + a.id + "/resume", R"({"timeout":300})") == 201);
    auto const rebooted = run_command(*f, a, cmd + "; cat /workspace/k; ps -o args= -p 1");
    BOOST_TEST(rebooted.stdout_text.substr(0, 37) != id_a);
    BOOST_TEST(rebooted.stdout_text.substr(37) == "kept\nprism-e2b-envd init\n");
}

BOOST_AUTO_TEST_CASE(network_is_isolated_only_without_internet_access)
{
    if (!have_root()) return;
    // The engine's NAT for sandboxes with internet; scripts/bootstrap.sh installs it.
    BOOST_TEST_REQUIRE(!prism_e2b::local::detail::find_slirp4netns().empty());
    auto const outside = host_outside_address();
    BOOST_TEST_REQUIRE(outside.has_value(), "this machine has no non-loopback IPv4 address to stand for outside");
    auto f = ns_server();
    host_listener loopback;
    host_listener out(outside->s_addr);
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &*outside, text, sizeof text);
    auto open = create_sandbox(*f);
    auto closed = create_sandbox(*f, R"({"templateID":"base","timeout":300,"allow_internet_access":false})");
    BOOST_TEST(sandbox_info(*f, open)["allowInternetAccess"].as_bool() == true);
    BOOST_TEST(sandbox_info(*f, closed)["allowInternetAccess"].as_bool() == false);
    // With internet access the sandbox reaches out (which shows the refusals below can fail)...
    BOOST_TEST(run_command(*f, open, tcp_connect(text, out.port)).stdout_text == "connected\n");
    // The NAT helper holds none of the server's sockets (listener, clients): it runs beside
    // sandboxed code and outlives the server, so an inherited descriptor would leak them.
    auto const ours = socket_inodes("self");
    BOOST_TEST_REQUIRE(!ours.empty());
    auto const helpers = slirp4netns_pids();
    BOOST_TEST(!helpers.empty());
    for (auto const& pid : helpers)
        for (auto const& inode : socket_inodes(pid))
            BOOST_TEST(!ours.contains(inode), "slirp4netns " << pid << " holds " << inode);
    // ...but not the host's loopback services, neither as 127.0.0.1 (its own loopback) nor
    // through the NAT's gateway; and its loopback is its own (the host's port is free in it).
    for (auto const* host : {"127.0.0.1", "10.0.2.2"}) {
        auto r = run_command(*f, open, tcp_connect(host, loopback.port), as_root());
        BOOST_TEST(r.stdout_text.empty(), host);
        BOOST_TEST(exit_code(r) != 0, host);
    }
    BOOST_TEST(run_command(*f, open,
                           "/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\"," +
                               std::to_string(loopback.port) + ")); print(\"own\")'")
                   .stdout_text == "own\n");
    // Without internet access nothing is reachable, outside or host.
    for (auto const& [host, port] :
         {std::pair<std::string, std::uint16_t>{text, out.port}, {"127.0.0.1", loopback.port}}) {
        auto refused = run_command(*f, closed, tcp_connect(host, port), as_root());
        BOOST_TEST(refused.stdout_text.empty(), host);
        BOOST_TEST(exit_code(refused) != 0, host);
    }
    // Its own loopback works; it has no other interface.
    auto lo = run_command(*f, closed, "ls /sys/class/net 2>/dev/null; cat /proc/net/dev | tail -n +3 | cut -d: -f1");
    BOOST_TEST(lo.stdout_text.find("eth") == std::string::npos);
    BOOST_TEST(lo.stdout_text.find("tap") == std::string::npos);
    BOOST_TEST(run_command(*f, closed,
                           "/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); "
                           "s.listen(); c=socket.create_connection(s.getsockname()); print(\"ok\")'")
                   .stdout_text == "ok\n");
}

BOOST_AUTO_TEST_CASE(none_engine_reports_none)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.engine = "none"; });
    BOOST_TEST(f.server().isolation() == "none");
    auto const caps = f.server().capabilities(false);
    BOOST_TEST((!caps.filesystem_isolated && !caps.process_isolated && !caps.privilege_isolated &&
                !caps.network_isolated && !caps.egress_restricted));
    auto a = create_sandbox(f);
    BOOST_TEST(std::string(sandbox_info(f, a)["isolation"].as_string()) == "none");
    BOOST_TEST(std::string(sandbox_info(f, a)["envd"].as_string()) == "in-server");
}

BOOST_AUTO_TEST_CASE(kill_and_stop_leave_no_process_cgroup_or_file)
{
    if (!have_root()) return;
    std::filesystem::path const dir = std::filesystem::temp_directory_path() / ("prism-e2b-ns-" + random_token(6));
    auto f = std::make_unique<local_server_fixture>([&](prism_e2b::local::server_options& o) {
        o.engine = "namespaces";
        o.state_dir = dir.string();
    });
    auto a = create_sandbox(*f);
    auto b = create_sandbox(*f);
    auto pa = start_background(*f, a, "sleep 300 & exec sleep 301");
    auto pb = start_background(*f, b, "sleep 300 & exec sleep 301");
    auto memory_cgroup = [](std::uint32_t pid) {
        std::istringstream groups(read_host_file("/proc/" + std::to_string(pid) + "/cgroup"));
        std::string line;
        while (std::getline(groups, line))
            if (line.find(":memory:") != std::string::npos)
                return "/sys/fs/cgroup/memory" + line.substr(line.rfind(':') + 1);
        return std::string();
    };
    auto const cg_a = memory_cgroup(pa.host_pid), cg_b = memory_cgroup(pb.host_pid);
    BOOST_REQUIRE(!cg_a.empty());
    BOOST_REQUIRE(!cg_b.empty());
    auto gone = [](std::uint32_t pid) {
        // Gone, or a zombie about to be reaped by its watcher.
        auto const stat = read_host_file("/proc/" + std::to_string(pid) + "/stat");
        return stat.empty() || stat.find(") Z ") != std::string::npos;
    };
    auto exists = [](std::filesystem::path const& p) { return std::filesystem::exists(p); };

    raw_http c(f->port());
    BOOST_TEST(c.request("DELETE", "/sandboxes/" + a.id, {}, api_headers(*f)).status == 204);
    BOOST_TEST(eventually([&] { return gone(pa.host_pid) && !exists(cg_a) && !exists(dir / "sandboxes" / a.id); }));
    BOOST_TEST(!gone(pb.host_pid));

    f.reset();  // stop
    BOOST_TEST(gone(pb.host_pid));
    BOOST_TEST(!exists(cg_b));
    BOOST_TEST(!exists(dir / "sandboxes" / b.id));
    BOOST_TEST(!exists(std::filesystem::path(cg_b).parent_path()));  // the server's own cgroup root
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(a_crashed_servers_cgroup_root_is_swept_even_when_its_pid_is_reused)
{
    if (!have_root() || !fs::exists("/sys/fs/cgroup/pids/cgroup.procs")) return;
    // Roots named after this (live) process: one recorded with another start time, as a
    // crashed server's root looks once its pid went to a new process, and one recorded with
    // ours, a server that still runs.
    auto const pid = std::to_string(::getpid());
    fs::path const reused = "/sys/fs/cgroup/pids/prism-e2b-ns-" + pid + "-" + random_token(6);
    fs::path const running = "/sys/fs/cgroup/pids/prism-e2b-ns-" + pid + "-" + random_token(6);
    fs::path const owners = "/run/prism-e2b/cgroup-owners";
    auto const ours = prism_e2b::local::detail::process_start_ticks(::getpid());
    BOOST_REQUIRE(ours != 0);
    fs::create_directories(owners);
    BOOST_REQUIRE(fs::create_directory(reused));
    BOOST_REQUIRE(fs::create_directory(reused / "a-sandbox"));
    BOOST_REQUIRE(fs::create_directory(running));
    std::ofstream(owners / reused.filename()) << "\n" << ours - 1 << "\n";
    std::ofstream(owners / running.filename()) << "\n" << ours << "\n";

    {
        local_server_fixture f([](prism_e2b::local::server_options& o) { o.engine = "namespaces"; });
        BOOST_TEST(!fs::exists(reused));
        BOOST_TEST(!fs::exists(owners / reused.filename()));
        BOOST_TEST(fs::exists(running));
    }
    BOOST_TEST(fs::exists(running));  // a server's stop removes only its own roots
    prism_e2b::local::detail::remove_cgroup_tree(running);
    BOOST_TEST(!fs::exists(owners / running.filename()));
}

BOOST_AUTO_TEST_CASE(one_server_per_state_dir)
{
    std::string dir = std::filesystem::temp_directory_path() / ("prism-e2b-lock-" + random_token(6));
    auto with_dir = [&](prism_e2b::local::server_options& o) { o.state_dir = dir; };
    {
        local_server_fixture first(with_dir);
        auto r = start_with(with_dir);
        BOOST_REQUIRE(!r);
        BOOST_TEST((r.error() == prism_e2b::errc::conflict));
    }
    // Once the first stopped, the directory is free again.
    {
        local_server_fixture again(with_dir);
    }
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(unknown_engine_is_refused)
{
    auto r = start_with([](prism_e2b::local::server_options& o) { o.engine = "firecracker"; });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == prism_e2b::errc::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()
