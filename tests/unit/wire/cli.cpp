// The prism-e2b binary against the in-test server: what each subcommand sends,
// what it prints, its exit codes, one-line errors, and no secret in its output.
// The binary is $PRISM_E2B_CLI_PATH, else the one this build made
// (prism_e2b_cli_binary), else <build>/prism-e2b.

#include "built_binaries.hpp"
#include "client_fixture.hpp"
#include "eventually.hpp"
#include "protocol/base64.hpp"

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace fs = std::filesystem;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_cli)

namespace {

std::string const canary_key = "e2b_CLI_CANARY_KEY_55aa";
std::string const canary_token = "CLI_CANARY_TOKEN_66bb";

fs::path cli_path()
{
    if (char const* p = std::getenv("PRISM_E2B_CLI_PATH"); p && *p) return p;
#ifdef PRISM_E2B_HAVE_CLI_BINARY
    return prism_e2b_cli_binary();
#else
    return fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "prism-e2b";
#endif
}

struct cli_result {
    int code = -1;
    std::string out, err;
};

std::string slurp(fs::path const& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Runs prism-e2b with `args`, E2B_* pointing at `url`; stdout/stderr captured.
cli_result run_cli(std::vector<std::string> args, std::string const& url, bool with_key = true,
                   std::function<bool()> sigint_when = {})
{
    auto const bin = cli_path();
    BOOST_TEST_REQUIRE(fs::exists(bin), "build the prism_e2b_cli target first (missing " << bin << ")");
    char tmpl[] = "/tmp/prism-e2b-cli-XXXXXX";
    fs::path dir = ::mkdtemp(tmpl);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
        std::string v = *e;
        if (v.rfind("E2B_", 0) != 0 && v.rfind("PRISM_E2B_CA_FILE", 0) != 0) env_s.push_back(v);
    }
    if (with_key) env_s.push_back("E2B_API_KEY=" + canary_key);
    env_s.push_back("E2B_API_URL=" + url);
    env_s.push_back("E2B_SANDBOX_URL=" + url);
    std::vector<char*> envp;
    for (auto& s : env_s) envp.push_back(s.data());
    envp.push_back(nullptr);
    args.insert(args.begin(), bin.string());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    auto out = (dir / "out").string(), err = (dir / "err").string();
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    BOOST_TEST_REQUIRE(rc == 0);
    if (sigint_when) {
        BOOST_TEST(eventually(sigint_when), "the state to interrupt the CLI in never came");
        ::kill(pid, SIGINT);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    cli_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove_all(dir);
    // Never a secret in what the CLI prints.
    BOOST_TEST(r.out.find(canary_key) == std::string::npos, r.out);
    BOOST_TEST(r.err.find(canary_key) == std::string::npos, r.err);
    BOOST_TEST(r.out.find(canary_token) == std::string::npos, r.out);
    BOOST_TEST(r.err.find(canary_token) == std::string::npos, r.err);
    return r;
}

std::string const detail_json =
    R"({"templateID":"base","sandboxID":"sbx1","clientID":"c","startedAt":"2025-01-01T00:00:00Z","endAt":"2025-01-01T00:20:00Z","cpuCount":2,"memoryMB":512,"diskSizeMB":1024,"state":"running","metadata":{"team":"a"},"envdVersion":"0.5.7","envdAccessToken":")" +
    canary_token + R"("})";

std::size_t lines_of(std::string const& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

BOOST_AUTO_TEST_CASE(help_and_usage_errors)
{
    test_http_server server([](recorded_request const&) { return scripted_response::empty(500); });
    auto h = run_cli({"--help"}, server.url());
    BOOST_TEST(h.code == 0);
    for (auto const* word : {"create", "exec", "pause", "resume", "info", "list", "kill", "64", "66", "69", "70"})
        BOOST_TEST(h.out.find(word) != std::string::npos, word);
    auto bogus = run_cli({"bogus"}, server.url());
    BOOST_TEST(bogus.code == 64);
    BOOST_TEST(lines_of(bogus.err) == 1u);
    BOOST_TEST(run_cli({"exec", "sbx1", "ls"}, server.url()).code == 64);  // no "--"
    BOOST_TEST(run_cli({"create", "--timeout", "abc"}, server.url()).code == 64);
    BOOST_TEST(run_cli({"pause"}, server.url()).code == 64);
    auto nokey = run_cli({"list"}, server.url(), false);
    BOOST_TEST(nokey.code == 78);
    BOOST_TEST(nokey.err.find("E2B_API_KEY") != std::string::npos);
    BOOST_TEST(server.request_count() == 0u);  // usage errors never reach E2B
}

BOOST_AUTO_TEST_CASE(create_pause_resume_kill_list_info)
{
    test_http_server server([](recorded_request const& r) {
        if (r.method == "POST" && r.target == "/v2/sandboxes")
            return scripted_response::json(
                201,
                R"({"templateID":"t","sandboxID":"sbx1","clientID":"c","envdVersion":"0.5.7","envdAccessToken":")" +
                    canary_token + R"("})");
        if (r.path() == "/sandboxes/sbx1/pause")
            return r.body == R"({"memory":false})"
                       ? scripted_response::empty(204)
                       : scripted_response::json(409, R"({"code":409,"message":"already paused"})");
        if (r.path() == "/v2/sandboxes/sbx1/connect")
            return scripted_response::json(
                201, R"({"templateID":"t","sandboxID":"sbx1","clientID":"c","envdVersion":"0.5.7"})");
        if (r.method == "DELETE")
            return r.path() == "/sandboxes/sbx1"
                       ? scripted_response::empty(204)
                       : scripted_response::json(404, R"({"code":404,"message":"not found"})");
        if (r.path() == "/v2/sandboxes")
            return scripted_response::json(
                200,
                R"([{"templateID":"t","sandboxID":"sbx1","clientID":"c","startedAt":"s","endAt":"e","cpuCount":1,"memoryMB":1,"diskSizeMB":1,"state":"paused","envdVersion":"0.5.7","metadata":{"team":"a"}}])");
        if (r.path() == "/sandboxes/sbx1") return scripted_response::json(200, detail_json);
        return scripted_response::json(
            401, R"({"code":401,"message":"Invalid API key )" + r.header("X-API-KEY").value_or("") + R"("})");
    });
    auto c = run_cli({"create", "--template", "t", "--timeout", "60", "--label", "team=a"}, server.url());
    BOOST_TEST(c.code == 0, c.err);
    BOOST_TEST(c.out == "sbx1\n");
    auto p = run_cli({"pause", "sbx1", "--no-memory"}, server.url());
    BOOST_TEST(p.code == 0, p.err);
    BOOST_TEST(p.out.find("paused") == 0u);
    auto p2 = run_cli({"pause", "sbx1"}, server.url());
    BOOST_TEST(p2.code == 0);
    BOOST_TEST(p2.out == "already paused\n");
    auto rs = run_cli({"resume", "sbx1", "--timeout", "900"}, server.url());
    BOOST_TEST(rs.code == 0, rs.err);
    BOOST_TEST(rs.out == "resumed\n");
    auto l = run_cli({"list", "--label", "team=a"}, server.url());
    BOOST_TEST(l.code == 0, l.err);
    BOOST_TEST(l.out.rfind("SANDBOX ID ", 0) == 0u, l.out);  // a header, then one aligned row per sandbox
    BOOST_TEST(l.out.find("\nsbx1 ") != std::string::npos, l.out);
    BOOST_TEST(l.out.find(" paused ") != std::string::npos, l.out);
    auto i = run_cli({"info", "sbx1"}, server.url());
    BOOST_TEST(i.code == 0, i.err);
    BOOST_TEST(i.out.find("state: running") != std::string::npos, i.out);
    BOOST_TEST(i.out.find("labels: team=a") != std::string::npos, i.out);
    auto k = run_cli({"kill", "sbx1"}, server.url());
    BOOST_TEST(k.code == 0);
    BOOST_TEST(k.out == "killed sbx1\n");
    auto gone = run_cli({"kill", "sbx2"}, server.url());
    BOOST_TEST(gone.code == 66);
    BOOST_TEST(lines_of(gone.err) == 1u);
    auto denied = run_cli({"info", "other"}, server.url());
    BOOST_TEST(denied.code == 69);
    BOOST_TEST(lines_of(denied.err) == 1u);
    BOOST_TEST(denied.err.find("[REDACTED]") != std::string::npos, denied.err);  // the echoed key was redacted

    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() == 9u);
    BOOST_TEST(json::parse(reqs[0].body) ==
               json::parse(R"({"templateID":"t","metadata":{"team":"a"},"timeout":60,"allow_internet_access":true})"));
    BOOST_TEST(reqs[1].body == R"({"memory":false})");
    BOOST_TEST(reqs[2].body == R"({"memory":true})");
    BOOST_TEST(reqs[3].body == R"({"timeout":900})");
    BOOST_TEST(reqs[4].target == "/v2/sandboxes?metadata=team%3Da");
    BOOST_TEST(reqs[0].header("X-API-KEY").value_or("") == canary_key);
}

BOOST_AUTO_TEST_CASE(exec_streams_output_and_exits_with_the_command_code)
{
    std::atomic<int> start_calls{0};
    test_http_server server([&](recorded_request const& r) {
        if (r.path() == "/sandboxes/sbx1") return scripted_response::json(200, detail_json);
        if (r.path() == "/process.Process/Start") {
            auto n = start_calls++;
            if (n == 0)
                return connect_stream({R"({"event":{"start":{"pid":5}}})",
                                       R"({"event":{"data":{"stdout":")" + detail::base64_encode("hello\n") + R"("}}})",
                                       R"({"event":{"data":{"stderr":")" + detail::base64_encode("warn\n") + R"("}}})",
                                       R"({"event":{"end":{"exitCode":3,"exited":true,"status":"exit status 3"}}})"});
            if (n == 1) {
                auto cut =
                    connect_stream({R"({"event":{"start":{"pid":6}}})",
                                    R"({"event":{"data":{"stdout":")" + detail::base64_encode("part") + R"("}}})"});
                cut.chunks.pop_back();  // no end-of-stream envelope
                cut.cut = true;         // and no terminating chunk
                return cut;
            }
            return connect_stream({R"({"event":{"start":{"pid":7}}})",
                                   R"({"event":{"end":{"exitCode":-1,"exited":false,"status":"signal: killed"}}})"});
        }
        return scripted_response::json(404, R"({"code":404,"message":"sandbox not found"})");
    });
    auto e = run_cli({"exec", "sbx1", "--cwd", "/w", "--env", "A=1", "--", "sh", "-c", "echo hello"}, server.url());
    BOOST_TEST(e.code == 3, e.err);
    BOOST_TEST(e.out == "hello\n");
    BOOST_TEST(e.err == "warn\n");
    auto cut = run_cli({"exec", "sbx1", "--", "sleep", "9"}, server.url());
    BOOST_TEST(cut.code == 70, cut.err);
    BOOST_TEST(cut.out == "part");
    BOOST_TEST(lines_of(cut.err) == 1u);
    BOOST_TEST(cut.err.find("unknown outcome") != std::string::npos, cut.err);
    auto killed = run_cli({"exec", "sbx1", "--", "sleep", "9"}, server.url());
    BOOST_TEST(killed.code == 137);
    auto missing = run_cli({"exec", "nope", "--", "true"}, server.url());
    BOOST_TEST(missing.code == 66);

    auto reqs = server.requests();
    BOOST_TEST_REQUIRE(reqs.size() >= 2u);
    BOOST_TEST(reqs[0].target == "/sandboxes/sbx1");
    auto const& start = reqs[1];
    BOOST_TEST(start.target == "/process.Process/Start");
    BOOST_TEST(start.header("X-Access-Token").value_or("") == canary_token);  // from get_sandbox_info
    BOOST_TEST(!start.header("Connect-Timeout-Ms"));                          // exec has no deadline
    BOOST_TEST(start.body.substr(5) ==
               R"({"process":{"cmd":"sh","args":["-c","echo hello"],"envs":{"A":"1"},"cwd":"/w"},"stdin":false})");
}

BOOST_AUTO_TEST_CASE(exec_forwards_ctrl_c_as_sigterm)
{
    test_http_server::options so;
    so.threads = 2;  // the stream holds one connection while SendSignal arrives on another
    test_http_server server(
        [](recorded_request const& r) {
            if (r.path() == "/sandboxes/sbx1") return scripted_response::json(200, detail_json);
            if (r.path() == "/process.Process/Start") {
                auto s = connect_stream(
                    {R"({"event":{"start":{"pid":31}}})", "", "",
                     R"({"event":{"end":{"exitCode":-1,"exited":false,"status":"signal: terminated"}}})"});
                s.chunks.erase(s.chunks.begin() + 1, s.chunks.begin() + 3);
                s.chunks.insert(s.chunks.begin() + 1, {"", "", ""});
                s.chunk_delay = std::chrono::milliseconds(400);
                return s;
            }
            return scripted_response::json(200, "{}");
        },
        so);
    // Interrupted while the command runs: once its stream is open (the CLI catches
    // signals from its start, before its first request).
    auto const started = [&] {
        for (auto const& r : server.requests())
            if (r.target == "/process.Process/Start") return true;
        return false;
    };
    auto e = run_cli({"exec", "sbx1", "--", "sleep", "60"}, server.url(), true, started);
    BOOST_TEST(e.code == 143, e.err);
    bool forwarded = false;
    for (auto const& r : server.requests())
        forwarded |= r.target == "/process.Process/SendSignal" &&
                     r.body == R"({"process":{"pid":31},"signal":"SIGNAL_SIGTERM"})";
    BOOST_TEST(forwarded);
}

// Today's failure: an endless x-next-token stopped silently after 10,000 pages
// with exit 0. The page cap is an error.
BOOST_AUTO_TEST_CASE(endless_paging_is_an_error_not_a_silent_stop)
{
    std::atomic<int> pages{0};
    test_http_server server([&](recorded_request const&) {
        auto r = scripted_response::json(200, "[]");
        r.headers.emplace_back("x-next-token", "t" + std::to_string(++pages));
        return r;
    });
    auto l = run_cli({"list"}, server.url());
    BOOST_TEST(l.code != 0);
    BOOST_TEST(l.err.find("more than 10000 pages") != std::string::npos, l.err);
    BOOST_TEST(pages.load() == 10000);
}

BOOST_AUTO_TEST_SUITE_END()
