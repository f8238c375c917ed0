// prism-e2b-local survives its own crash: the real server runs as a
// subprocess, is killed with SIGKILL and started again on the same state dir;
// the ledger brings every sandbox back (running ones boot again with their
// files, paused ones stay paused and resume, deadlines keep counting), and
// SIGTERM then stops cleanly.
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

#ifdef PRISM_E2B_LOCAL_PATH

using namespace prism_e2b::test;
namespace json = boost::json;

namespace {

/// prism-e2b-local as a child process; its port comes from its first stdout line.
class server_process {
public:
    server_process(std::string const& state_dir, std::string const& api_key)
    {
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error("pipe");
        std::string const env_key = "E2B_API_KEY=" + api_key;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(out[1], 1);
            ::close(out[0]);
            ::close(out[1]);
            char const* argv[] = {PRISM_E2B_LOCAL_PATH, "--listen",        "127.0.0.1:0",
                                  "--state-dir",        state_dir.c_str(), nullptr};
            char const* envp[] = {env_key.c_str(), "PATH=/usr/bin:/bin", nullptr};
            ::execve(argv[0], const_cast<char* const*>(argv), const_cast<char* const*>(envp));
            ::_exit(127);
        }
        ::close(out[1]);
        out_ = out[0];
        std::string line;
        char c;
        while (::read(out_, &c, 1) == 1 && c != '\n') line.push_back(c);
        auto const colon = line.rfind(':');
        if (line.rfind("E2B_API_URL=", 0) != 0 || colon == std::string::npos)
            throw std::runtime_error("prism-e2b-local did not start: " + line);
        port_ = static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
    }
    ~server_process()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(out_);
    }
    std::uint16_t port() const { return port_; }
    /// Sends `sig` and returns the wait status.
    int signal_and_wait(int sig)
    {
        ::kill(pid_, sig);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        return st;
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::uint16_t port_ = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_emulator_crash)

BOOST_AUTO_TEST_CASE(kill_9_and_restart_keep_running_and_paused_sandboxes)
{
    namespace fs = std::filesystem;
    fs::path const dir = fs::temp_directory_path() / ("prism-e2b-crash-" + random_token(6));
    std::string const key = "e2b_" + random_token();
    header_pairs const api = {{"X-API-KEY", key}};
    auto create = [&](std::uint16_t port) {
        raw_http c(port);
        auto r = c.request("POST", "/sandboxes", R"({"templateID":"base","timeout":600,"metadata":{"k":"v"}})", api);
        BOOST_REQUIRE(r.status == 201);
        auto o = r.json().as_object();
        return sandbox_ref{std::string(o["sandboxID"].as_string()), std::string(o["envdAccessToken"].as_string())};
    };
    auto info = [&](std::uint16_t port, sandbox_ref const& sb) {
        raw_http c(port);
        auto r = c.request("GET", "/sandboxes/" + sb.id, {}, api);
        return r.status == 200 ? r.json().as_object() : json::object{};
    };

    sandbox_ref running, paused;
    std::string running_end, running_boot;
    {
        server_process first(dir.string(), key);
        running = create(first.port());
        paused = create(first.port());
        BOOST_REQUIRE(run_command(first.port(), running, "echo kept > /workspace/f").end);
        BOOST_REQUIRE(run_command(first.port(), paused, "echo kept-too > /workspace/g").end);
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
    // The running one booted again with its files; the paused one resumes.
    auto r = run_command(second.port(), running, "cat /workspace/f; cat /proc/sys/kernel/random/boot_id");
    BOOST_TEST(r.stdout_text.substr(0, 5) == "kept\n");
    if (std::string(ir["isolation"].as_string()) == "namespaces") BOOST_TEST(r.stdout_text.substr(5) != running_boot);
    {
        raw_http c(second.port());
        BOOST_TEST(c.request("POST", "/sandboxes/" + paused.id + "/resume", R"({"timeout":300})", api).status == 201);
    }
    BOOST_TEST(run_command(second.port(), paused, "cat /workspace/g").stdout_text == "kept-too\n");
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

BOOST_AUTO_TEST_SUITE_END()

#endif
