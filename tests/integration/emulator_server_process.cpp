// prism-e2b-local as a real subprocess: the API key stays out of its argv, and at
// the descriptor limit accept backs off instead of spinning, then recovers.
#ifdef PRISM_E2B_HAVE_LOCAL_BINARY  // built with the server binary

#include "built_binaries.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "raw_tcp.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace prism_e2b::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// A prism-e2b-local child on an ephemeral loopback port; SIGTERM and reaped on destruction.
class no_isolation_server {
public:
    no_isolation_server(std::vector<std::string> args, std::vector<std::string> env, rlim_t max_fds = 0)
    {
        std::vector<std::string> argv_s = {prism_e2b_local_binary(), "--listen",  "127.0.0.1:0",
                                           "--no-isolation",         "--threads", "2"};
        argv_s.insert(argv_s.end(), args.begin(), args.end());
        std::vector<char*> argv, envp;
        for (auto& a : argv_s) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        int out[2];
        if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        int const devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {  // only async-signal-safe calls until exec
            ::dup2(devnull, 0);
            ::dup2(out[1], 1);
            ::dup2(devnull, 2);
            ::syscall(SYS_close_range, 3u, ~0u, 0u);  // the test's sockets are not the server's
            if (max_fds != 0) {
                rlimit rl{max_fds, max_fds};
                ::setrlimit(RLIMIT_NOFILE, &rl);
            }
            ::execve(argv[0], argv.data(), envp.data());
            ::_exit(127);
        }
        ::close(out[1]);
        ::close(devnull);
        out_ = ::fdopen(out[0], "r");
        char line[512];
        while (port_ == 0 && std::fgets(line, sizeof line, out_)) {
            std::string l(line);
            if (l.rfind("E2B_API_URL=http://127.0.0.1:", 0) == 0)
                port_ = static_cast<std::uint16_t>(std::stoi(l.substr(29)));
        }
        if (port_ == 0) throw std::runtime_error("prism-e2b-local did not start");
    }
    ~no_isolation_server() { stop(); }

    /// SIGTERM, then reaps it; returns the CPU seconds it used over its whole life.
    double stop()
    {
        if (pid_ <= 0) return cpu_seconds_;
        ::kill(pid_, SIGTERM);
        int status = 0;
        rusage ru{};
        ::wait4(pid_, &status, 0, &ru);
        pid_ = -1;
        if (out_) std::fclose(out_);
        out_ = nullptr;
        cpu_seconds_ = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        return cpu_seconds_;
    }

    pid_t pid() const noexcept { return pid_; }
    std::uint16_t port() const noexcept { return port_; }

    /// user + system CPU seconds so far (/proc/<pid>/stat, fields 14 and 15).
    double cpu_seconds_now() const
    {
        std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
        std::string all((std::istreambuf_iterator<char>(in)), {});
        std::istringstream rest(all.substr(all.rfind(')') + 2));
        std::string field;
        unsigned long long utime = 0, stime = 0;
        for (int i = 3; i <= 15 && rest >> field; ++i) {
            if (i == 14) utime = std::stoull(field);
            if (i == 15) stime = std::stoull(field);
        }
        return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    }

    std::size_t open_fds() const
    {
        std::error_code ec;
        std::size_t n = 0;
        for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid_) + "/fd", ec);
             !ec && it != fs::directory_iterator(); it.increment(ec))
            ++n;
        return n;
    }

    std::string cmdline() const
    {
        std::ifstream in("/proc/" + std::to_string(pid_) + "/cmdline");
        return std::string((std::istreambuf_iterator<char>(in)), {});
    }

private:
    pid_t pid_ = -1;
    FILE* out_ = nullptr;
    std::uint16_t port_ = 0;
    double cpu_seconds_ = 0;
};

std::vector<std::string> base_env() { return {"PATH=/usr/bin:/bin"}; }

int status_of(std::uint16_t port, std::string const& target, header_pairs h = {})
{
    raw_http c(port, 5s);
    return c.request("GET", target, {}, std::move(h)).status;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_server_process)

BOOST_AUTO_TEST_CASE(api_key_on_the_command_line_is_wiped_from_argv)
{
    std::string const key = "e2b_" + random_token();
    std::string const admin = random_token();
    no_isolation_server srv({"--api-key", key, "--admin-token", admin}, base_env());
    auto const cmdline = srv.cmdline();
    BOOST_TEST(cmdline.find("--api-key") != std::string::npos);  // we read the right process
    BOOST_TEST(cmdline.find(key) == std::string::npos);
    BOOST_TEST(cmdline.find(admin) == std::string::npos);
    BOOST_TEST(status_of(srv.port(), "/v2/sandboxes", {{"X-API-KEY", key}}) == 200);  // and it still is the key
    BOOST_TEST(status_of(srv.port(), "/v2/sandboxes", {{"X-API-KEY", "e2b_other"}}) == 401);
}

BOOST_AUTO_TEST_CASE(api_key_from_a_file_or_the_environment)
{
    std::string const key = "e2b_" + random_token();
    auto const file = fs::temp_directory_path() / ("prism-e2b-key-" + random_token(6));
    {
        std::ofstream(file) << key << "\n";
    }
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    {
        no_isolation_server srv({"--api-key-file", file.string()}, base_env());
        BOOST_TEST(srv.cmdline().find(key) == std::string::npos);
        BOOST_TEST(status_of(srv.port(), "/v2/sandboxes", {{"X-API-KEY", key}}) == 200);
    }
    fs::remove(file);
    auto env = base_env();
    env.push_back("E2B_API_KEY=" + key);
    no_isolation_server srv({}, env);
    BOOST_TEST(status_of(srv.port(), "/v2/sandboxes", {{"X-API-KEY", key}}) == 200);
}

BOOST_AUTO_TEST_CASE(accept_backs_off_at_the_descriptor_limit_and_recovers)
{
#if defined(PRISM_E2B_UBSAN_BUILD)
    // UBSan's vptr check probes memory through a pipe; a server at EMFILE cannot make one, so the
    // check reports "invalid vptr" on a sound object and halts the server. The TSan leg runs this.
    BOOST_TEST_MESSAGE("SKIPPED under UndefinedBehaviorSanitizer: its vptr check needs free descriptors");
    return;
#endif
    constexpr rlim_t limit = 64;
    auto env = base_env();
    env.push_back("E2B_API_KEY=e2b_" + random_token());
    no_isolation_server srv({}, env, limit);
    BOOST_TEST_REQUIRE(status_of(srv.port(), "/health") == 200);
    // More connections than the server has descriptors: it accepts until EMFILE,
    // the rest wait in the backlog. Each has begun a request (a head under way is
    // never shed, unlike an idle connection), so the server stays saturated.
    std::vector<raw_tcp> clients;
    for (int i = 0; i < 2 * static_cast<int>(limit); ++i) {
        clients.emplace_back(srv.port());
        clients.back().send("GET /health HTTP/1.1\r\n");
    }
    BOOST_TEST_REQUIRE(eventually([&] { return srv.open_fds() >= limit; }));
    // Saturated: a spinning accept loop burns a core (the issue measured 1.2); backing off costs next to nothing.
    auto const wall0 = std::chrono::steady_clock::now();
    double const cpu0 = srv.cpu_seconds_now();
    std::this_thread::sleep_for(2s);  // the measuring window, not a synchronisation
    double const cpu = srv.cpu_seconds_now() - cpu0;
    double const wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    BOOST_TEST_MESSAGE("CPU while saturated: " << cpu << " s in " << wall << " s of wall time");
    BOOST_TEST(cpu < 0.25 * wall);
    BOOST_TEST(srv.open_fds() >= limit);  // still saturated through the window
    // Descriptors free up: the server serves again.
    clients.clear();
    BOOST_TEST(eventually(
        [&] {
            try {
                return status_of(srv.port(), "/health") == 200;
            } catch (std::exception const&) {
                return false;
            }
        },
        30s));
    double const total = srv.stop();
    BOOST_TEST_MESSAGE("server CPU over its life (wait4): " << total << " s");
}

BOOST_AUTO_TEST_CASE(idle_connections_cannot_lock_out_the_others_at_the_descriptor_limit)
{
#if defined(PRISM_E2B_UBSAN_BUILD)
    BOOST_TEST_MESSAGE("SKIPPED under UndefinedBehaviorSanitizer: its vptr check needs free descriptors");
    return;
#endif
    // What an operator measured: at `ulimit -n 256`, 400 connections that send nothing took
    // every descriptor and no other client got an answer while they were held.
    constexpr rlim_t limit = 256;
    auto env = base_env();
    std::string const key = "e2b_" + random_token();
    env.push_back("E2B_API_KEY=" + key);
    // Timeouts of an hour: only shedding can free a descriptor within the test.
    no_isolation_server srv({"--header-timeout", "3600", "--idle-timeout", "3600"}, env, limit);
    std::vector<raw_tcp> idle;
    for (int i = 0; i < 400; ++i) idle.emplace_back(srv.port());
    BOOST_TEST_REQUIRE(eventually([&] { return srv.open_fds() >= limit - 8; }));
    // Held, all of them: the server answers others by shedding the longest idle ones.
    auto answered = [&](std::string const& target, header_pairs h) {
        return eventually(
            [&] {
                try {
                    return status_of(srv.port(), target, h) == 200;
                } catch (std::exception const&) {
                    return false;
                }
            },
            60s);
    };
    BOOST_TEST(answered("/health", {}));
    BOOST_TEST(answered("/v2/sandboxes", {{"X-API-KEY", key}}));
    // The first one in has waited longest: it went first.
    BOOST_TEST(idle.front().closed_by_peer(30s));
}

BOOST_AUTO_TEST_SUITE_END()

#endif
