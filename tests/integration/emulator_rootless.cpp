// prism-e2b-local run by a user that is not root: the default engine is rootless
// `namespaces` (one mapped id, no cgroups), and its isolation claims hold: sandboxes
// cannot see, read or signal each other, host files and the server stay out of
// reach, and what it cannot enforce is reported false. The test runs as root and
// starts the server as `nobody`.
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "sandbox_calls.hpp"
#include "server_process.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef PRISM_E2B_HAVE_LOCAL_BINARY

using namespace prism_e2b::test;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

/// The host pid of the process whose command line is exactly `cmdline` (NULs as spaces); 0 if none.
pid_t host_pid_with_cmdline(std::string const& cmdline)
{
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc", ec)) {
        auto const name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(e.path() / "cmdline");
        std::string c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (auto& ch : c)
            if (ch == '\0') ch = ' ';
        if (!c.empty() && c.back() == ' ') c.pop_back();
        if (c == cmdline) return static_cast<pid_t>(std::stoi(name));
    }
    return 0;
}

/// A directory of `owner`'s that is removed with everything in it.
struct owned_dir {
    fs::path path;
    owned_dir(uid_t uid, gid_t gid) : path(fs::temp_directory_path() / ("prism-e2b-rootless-" + random_token(6)))
    {
        fs::create_directory(path);
        ::chmod(path.c_str(), 0700);
        if (::chown(path.c_str(), uid, gid) != 0) throw std::runtime_error("chown");
    }
    ~owned_dir()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_rootless)

BOOST_AUTO_TEST_CASE(a_server_that_is_not_root_isolates_its_sandboxes_rootless)
{
    passwd const* nobody = ::getpwnam("nobody");
    if (::geteuid() != 0 || !nobody) {
        BOOST_TEST_MESSAGE("skipped: the test becomes nobody, which needs root");
        return;
    }
    owned_dir dir(nobody->pw_uid, nobody->pw_gid);
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    server_process srv((dir.path / "state").string(), key, {}, run_as{nobody->pw_uid, nobody->pw_gid});
    // SIGTERM: the server stops and takes its sandboxes with it (SIGKILL would leave them running).
    struct stop_cleanly {
        server_process& s;
        ~stop_cleanly() { s.signal_and_wait(SIGTERM); }
    } stop{srv};

    auto create = [&](std::string const& body) {
        raw_http c(srv.port());
        auto r = c.request("POST", "/sandboxes", body, api);
        BOOST_REQUIRE_MESSAGE(r.status == 201, r.body);
        auto o = r.json().as_object();
        return sandbox_ref{std::string(o["sandboxID"].as_string()), std::string(o["envdAccessToken"].as_string())};
    };
    auto a = create(R"({"templateID":"base","timeout":300})");
    auto b = create(R"({"templateID":"base","timeout":300,"envVars":{"B_SECRET":"s3cr3t-of-b"}})");

    // The default engine, rootless: what it cannot enforce says so.
    raw_http c(srv.port());
    auto info = c.request("GET", "/sandboxes/" + a.id, {}, api).json().as_object();
    BOOST_TEST(std::string(info["isolation"].as_string()) == "namespaces");
    auto& enforced = info["isolationEnforced"].as_object();
    BOOST_TEST(enforced["rootless"].as_bool());
    BOOST_TEST(!enforced["distinctUsers"].as_bool());
    BOOST_TEST(!enforced["memoryLimit"].as_bool());
    BOOST_TEST(!enforced["diskQuota"].as_bool());
    BOOST_TEST(enforced["pidsLimit"].as_bool());
    // Volumes are kept and served, never mounted: an idmapped mount needs a server run as root.
    BOOST_TEST(raw_http(srv.port()).request("POST", "/volumes", R"({"name":"rootless"})", api).status == 201);
    auto mount = raw_http(srv.port())
                     .request("POST", "/sandboxes",
                              R"({"templateID":"base","volumeMounts":[{"name":"rootless","path":"/mnt/v"}]})", api);
    BOOST_TEST(mount.status == 400);
    BOOST_TEST(mount.body.find("cannot mount volumes") != std::string::npos, mount.body);
    // One identity: "user" (the server's host user), whoever asks.
    BOOST_TEST(run_command(srv.port(), a, "id -un").stdout_text == "user\n");
    BOOST_TEST(run_command(srv.port(), a, "id -un", as_root()).stdout_text == "user\n");
    BOOST_TEST(run_command(srv.port(), a, "ulimit -u").stdout_text == "1024\n");  // the pids limit, an rlimit

    // b holds a secret in its environment, a file and a process.
    event_stream victim(srv.port(), "/process.Process/Start",
                        start_json("echo secret > /workspace/b-marker-4243; exec sleep 4243"), envd_headers(b));
    BOOST_REQUIRE(victim.next_event());
    pid_t victim_pid = 0;
    BOOST_REQUIRE(
        eventually([&] { return (victim_pid = host_pid_with_cmdline("sleep 4243")) != 0; }, std::chrono::seconds(30)));
    std::string const pid = std::to_string(victim_pid);

    // a sees only itself: no server, no other sandbox.
    auto ps = run_command(srv.port(), a, "ps -eo pid=,args=");
    BOOST_TEST_INFO("ps in a: " << ps.stdout_text);
    BOOST_TEST(ps.stdout_text.find("4243") == std::string::npos);
    BOOST_TEST(ps.stdout_text.find("prism-e2b-local") == std::string::npos);
    BOOST_TEST(ps.stdout_text.find("   1 prism-e2b-envd init") != std::string::npos);
    auto env = run_command(srv.port(), a, "cat /proc/" + pid + "/environ; grep -l s3cr3t-of-b /proc/[0-9]*/environ");
    BOOST_TEST(env.stdout_text.find("s3cr3t") == std::string::npos);
    auto files = run_command(srv.port(), a, "find / -name 'b-marker-4243' -not -path '/proc/*' 2>/dev/null | wc -l");
    BOOST_TEST(files.stdout_text == "0\n");
    BOOST_TEST(exit_code(run_command(srv.port(), a, "kill -9 " + pid)) != 0);
    BOOST_TEST(::kill(victim_pid, 0) == 0);

    // The server's user's files (its state dir, a secret of its in the host's /tmp) and the
    // server's API key are out of reach; host directories are read-only.
    std::string const name = "prism-e2b-host-" + random_token(6);
    fs::path const host_file = fs::temp_directory_path() / name;
    {
        std::ofstream out(host_file);
        out << "host-secret\n";
    }
    struct rm_file {
        fs::path p;
        ~rm_file() { ::unlink(p.c_str()); }
    } rm{host_file};
    BOOST_REQUIRE(::chown(host_file.c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
    ::chmod(host_file.c_str(), 0600);
    // The key is searched for through a pattern file (written from its reverse): on a command
    // line it would find itself.
    std::string const reversed(key.rbegin(), key.rend());
    auto host = run_command(srv.port(), a,
                            "cat " + host_file.string() + "; ls " + dir.path.string() + "; find / -name '" + name +
                                "' -not -path '/proc/*' 2>/dev/null; echo " + reversed +
                                " | rev > /dev/shm/k; grep -rlF -f /dev/shm/k /proc/[0-9]*/environ "
                                "/proc/[0-9]*/cmdline /workspace /tmp /home /root 2>/dev/null",
                            as_root());
    // The probe finds what is there: b's secret in b's own processes' environments.
    auto control =
        run_command(srv.port(), b, "echo b-fo-t3rc3s | rev > /dev/shm/k; grep -rlF -f /dev/shm/k /proc/[0-9]*/environ");
    BOOST_TEST(control.stdout_text.find("/environ") != std::string::npos);
    BOOST_TEST_INFO("host probe: " << host.stdout_text << host.stderr_text);
    BOOST_TEST(host.stdout_text.find("host-secret") == std::string::npos);
    BOOST_TEST(host.stdout_text.find("ledger") == std::string::npos);
    BOOST_TEST(host.stdout_text.find(name) == std::string::npos);
    BOOST_TEST(host.stdout_text.find("/proc/") == std::string::npos);
    for (std::string d : {"/etc", "/usr", "/"}) {
        BOOST_TEST_INFO("writing into " << d);
        BOOST_TEST(exit_code(run_command(srv.port(), a, "touch " + d + "/" + name)) != 0);
    }
}

BOOST_AUTO_TEST_SUITE_END()

#endif  // PRISM_E2B_HAVE_LOCAL_BINARY
