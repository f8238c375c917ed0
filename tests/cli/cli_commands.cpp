// prism-e2b's commands, each exit code and output format, running the real
// binary against the local server (real processes in the sandboxes).
#include "cli_harness.hpp"
#include "eventually.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace prism_e2b::test;
namespace fs = std::filesystem;

namespace {

/// `prism-e2b create` with `labels`; the new sandbox's id.
std::string create(std::map<std::string, std::string> const& env, std::vector<std::string> labels = {})
{
    std::vector<std::string> args{"create"};
    for (auto& l : labels) args.insert(args.end(), {"--label", l});
    auto r = run_cli(args, env);
    BOOST_REQUIRE_MESSAGE(r.exit == 0, "create: " + r.err);
    BOOST_REQUIRE(!r.out.empty() && r.out.back() == '\n');
    return r.out.substr(0, r.out.size() - 1);
}

std::vector<std::string> ids_of(boost::json::value const& list)
{
    std::vector<std::string> out;
    for (auto const& s : list.as_array()) out.emplace_back(s.at("sandboxID").as_string());
    return out;
}

bool contains(std::vector<std::string> const& v, std::string const& x)
{
    return std::find(v.begin(), v.end(), x) != v.end();
}

/// The envd access token of a sandbox, as the control plane tells it.
std::string access_token(local_server_fixture& srv, std::string const& id)
{
    raw_http c(srv.port());
    auto r = c.request("GET", "/sandboxes/" + id, {}, api_headers(srv));
    return std::string(r.json().at("envdAccessToken").as_string());
}

std::string temp_path(std::string const& name)
{
    return (fs::temp_directory_path() / (name + random_token(6))).string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_commands)

BOOST_AUTO_TEST_CASE(version_and_help_exit_zero)
{
    std::map<std::string, std::string> const env{{"PATH", "/usr/bin:/bin"}};  // no server needed
    auto v = run_cli({"--version"}, env);
    BOOST_TEST(v.exit == 0);
    BOOST_TEST(v.out.rfind("prism-e2b ", 0) == 0u);
    auto h = run_cli({"--help"}, env);
    BOOST_TEST(h.exit == 0);
    for (auto const* cmd : {"create", "list", "info", "pause", "resume", "kill", "exec", "files", "connect", "bench"})
        BOOST_TEST(h.out.find(cmd) != std::string::npos, cmd);
    auto e = run_cli({"exec", "--help"}, env);
    BOOST_TEST(e.exit == 0);
    auto he = run_cli({"help", "exec"}, env);
    BOOST_TEST(he.exit == 0);
    // Every exit code is documented in exec's help, 75 (paused) and 69 (network) among them.
    for (auto const* code : {"64", "66", "69", "70", "74", "75", "78", "--background", "--user"}) {
        BOOST_TEST(e.out.find(code) != std::string::npos, code);
        BOOST_TEST(he.out.find(code) != std::string::npos, code);
    }
    BOOST_TEST(run_cli({"files", "get", "--help"}, env).exit == 0);
    BOOST_TEST(run_cli({"help"}, env).exit == 0);
    auto b = run_cli({"bench", "--help"}, env);
    BOOST_TEST(b.exit == 0);
    BOOST_TEST(b.out.find("--js-dir") != std::string::npos);
    BOOST_TEST(b.out.find("share/prism-e2b/bench/js") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(usage_errors_exit_64)
{
    std::map<std::string, std::string> const env{{"PATH", "/usr/bin:/bin"}};
    for (auto const& args : std::vector<std::vector<std::string>>{{},
                                                                  {"bogus"},
                                                                  {"help", "bogus"},
                                                                  {"list", "--state", "sleeping"},
                                                                  {"create", "--label", "novalue"},
                                                                  {"create", "--timeout", "0"},
                                                                  {"exec", "sb1"},
                                                                  {"exec", "sb1", "--env", "=x", "--", "true"},
                                                                  {"kill"},
                                                                  {"kill", "--label", "a=b"},
                                                                  {"kill", "sb1", "--all"},
                                                                  {"files"},
                                                                  {"files", "put", "sb1", "x"},
                                                                  {"info", "-f", "yaml", "sb1"}}) {
        auto r = run_cli(args, env);
        std::string what;
        for (auto const& a : args) what += a + " ";
        BOOST_TEST(r.exit == 64, what << "-> " << r.exit << " " << r.err);
        BOOST_TEST(!r.err.empty(), what);
    }
}

BOOST_AUTO_TEST_CASE(configuration_and_network_failures_are_distinct)
{
    local_server_fixture srv;
    auto env = cli_env(srv);
    env.erase("E2B_API_KEY");
    BOOST_TEST(run_cli({"list"}, env).exit == 78);
    // A loopback port nobody listens on: bound, never listening.
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::acceptor a(ioc);
    a.open(boost::asio::ip::tcp::v4());
    a.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
    env = cli_env(srv);
    env["E2B_API_URL"] = "http://127.0.0.1:" + std::to_string(a.local_endpoint().port());
    auto r = run_cli({"list"}, env);
    BOOST_TEST(r.exit == 69);
    BOOST_TEST(r.err.find(srv.api_key()) == std::string::npos);  // the API key never reaches an error
    env = cli_env(srv);
    env["E2B_API_KEY"] = "e2b_wrong_" + random_token(8);
    auto unauth = run_cli({"list"}, env);
    BOOST_TEST(unauth.exit == 69);
    BOOST_TEST(unauth.err.find(env["E2B_API_KEY"]) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(create_list_info_text_and_json)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    std::string const team = "t" + random_token(4);
    auto cj = run_cli({"create", "--label", "team=" + team, "--json"}, env);
    BOOST_REQUIRE_MESSAGE(cj.exit == 0, cj.err);
    std::string const a(cj.json().at("sandboxID").as_string());
    BOOST_TEST(cj.json().at("templateID").as_string() == "base");
    std::string const b = create(env, {"team=other"});

    auto text = run_cli({"list"}, env);
    BOOST_TEST(text.exit == 0);
    BOOST_TEST(text.out.rfind("SANDBOX ID", 0) == 0u);  // a header first
    BOOST_TEST(text.out.find(a) != std::string::npos);
    BOOST_TEST(text.out.find(b) != std::string::npos);

    auto mine = run_cli({"list", "--label", "team=" + team, "--json"}, env);
    BOOST_TEST(mine.exit == 0);
    BOOST_TEST(ids_of(mine.json()) == std::vector<std::string>{a});
    auto limited = run_cli({"list", "--limit", "1", "-f", "json"}, env);
    BOOST_TEST(ids_of(limited.json()).size() == 1u);

    BOOST_REQUIRE(run_cli({"pause", b}, env).exit == 0);
    auto paused = run_cli({"list", "--state", "paused", "--json"}, env);
    BOOST_TEST(ids_of(paused.json()) == std::vector<std::string>{b});
    auto both = run_cli({"list", "--state", "running,paused", "--json"}, env);
    BOOST_TEST(ids_of(both.json()).size() == 2u);

    auto info = run_cli({"info", a, "--json"}, env);
    BOOST_TEST(info.exit == 0);
    BOOST_TEST(info.json().at("state").as_string() == "running");
    BOOST_TEST(info.json().at("metadata").at("team").as_string() == team);
    auto info_text = run_cli({"info", b}, env);
    BOOST_TEST(info_text.out.find("state: paused") != std::string::npos);
    BOOST_TEST(run_cli({"info", "nosuchsandbox"}, env).exit == 66);

    // The envd access token is a secret: no output carries it.
    for (auto const& id : {a, b}) {
        auto const token = access_token(srv, id);
        BOOST_REQUIRE(!token.empty());
        for (auto const& out : {cj.out, text.out, mine.out, both.out, info.out, info_text.out})
            BOOST_TEST(out.find(token) == std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(exec_forwards_stdin_and_the_exit_code)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = create(env);
    auto hi = run_cli({"exec", id, "--", "cat"}, env, "hi\n");
    BOOST_TEST(hi.exit == 0);
    BOOST_TEST(hi.out == "hi\n");
    // Larger than one read and one SendInput: every byte, in order.
    std::string big;
    for (int i = 0; big.size() < 300 * 1024; ++i) big += std::to_string(i) + "\n";
    auto copy = run_cli({"exec", id, "--", "cat"}, env, big);
    BOOST_TEST(copy.exit == 0);
    BOOST_TEST((copy.out == big));
    auto wc = run_cli({"exec", id, "--", "wc", "-c"}, env);  // no input: stdin is closed, not left open
    BOOST_TEST(wc.exit == 0);
    BOOST_TEST(wc.out.find('0') != std::string::npos);

    BOOST_TEST(run_cli({"exec", id, "--", "sh", "-c", "exit 7"}, env).exit == 7);
    BOOST_TEST(run_cli({"exec", id, "--", "sh", "-c", "kill -9 $$"}, env).exit == 137);
    auto split = run_cli({"exec", id, "--", "sh", "-c", "echo out; echo err >&2; exit 3"}, env);
    BOOST_TEST(split.exit == 3);
    BOOST_TEST(split.out == "out\n");
    BOOST_TEST(split.err == "err\n");
    auto envcwd =
        run_cli({"exec", id, "--env", "A=1", "-e", "B=two", "--cwd", "/tmp", "--", "sh", "-c", "echo $A $B; pwd"}, env);
    BOOST_TEST(envcwd.exit == 0);
    BOOST_TEST(envcwd.out.rfind("1 two\n", 0) == 0u);
    BOOST_TEST(envcwd.out.find("tmp\n") != std::string::npos);

    // After "--" everything is the command's, even right after a repeatable option ("-c" is also --cwd).
    auto order = run_cli({"exec", id, "--cwd", "/tmp", "--env", "A=1", "--", "sh", "-c", "echo $A"}, env);
    BOOST_TEST(order.exit == 0, order.err);
    BOOST_TEST(order.out == "1\n");
    BOOST_TEST(run_cli({"exec", id, "sh"}, env).exit == 64);  // the command must follow "--"
    auto js = run_cli({"exec", id, "--json", "--", "sh", "-c", "echo o; echo e >&2; exit 5"}, env);
    BOOST_TEST(js.exit == 5);
    BOOST_TEST(js.json().at("exitCode").as_int64() == 5);
    BOOST_TEST(js.json().at("stdout").as_string() == "o\n");
    BOOST_TEST(js.json().at("stderr").as_string() == "e\n");
}

BOOST_AUTO_TEST_CASE(exec_user_reaches_envd)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = create(env);
    auto bogus = run_cli({"exec", id, "--user", "nosuchuser", "--", "true"}, env);
    BOOST_TEST(bogus.exit == 69);  // envd refuses the unknown user: the option was sent
    BOOST_TEST(bogus.err.find("user") != std::string::npos);
    BOOST_TEST(run_cli({"exec", id, "-u", "root", "--", "true"}, env).exit == 0);
}

BOOST_AUTO_TEST_CASE(exec_background_prints_the_pid_and_leaves_it_running)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = create(env);
    // The command outlives the CLI: it reads a file the test writes afterwards.
    auto bg = run_cli({"exec", id, "--background", "--cwd", "/tmp", "--", "sh", "-c",
                       "while [ ! -f go ]; do sleep 0.05; done; echo late > done.txt"},
                      env);
    BOOST_TEST(bg.exit == 0);
    BOOST_TEST(!bg.out.empty());
    BOOST_TEST(std::all_of(bg.out.begin(), bg.out.end() - 1, [](char c) { return c >= '0' && c <= '9'; }));
    BOOST_REQUIRE(run_cli({"exec", id, "--cwd", "/tmp", "--", "touch", "go"}, env).exit == 0);
    BOOST_TEST(eventually([&] { return run_cli({"exec", id, "--", "cat", "/tmp/done.txt"}, env).out == "late\n"; }));
    auto js = run_cli({"exec", id, "-b", "--json", "--", "sleep", "0.1"}, env);
    BOOST_TEST(js.exit == 0);
    BOOST_TEST(js.json().at("pid").as_int64() > 0);
}

BOOST_AUTO_TEST_CASE(a_paused_sandbox_exits_75_not_69)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = create(env);
    BOOST_REQUIRE(run_cli({"pause", id}, env).exit == 0);
    auto r = run_cli({"exec", id, "--", "true"}, env);
    BOOST_TEST(r.exit == 75);
    BOOST_TEST(r.err.find("resume") != std::string::npos);
    BOOST_TEST(run_cli({"files", "ls", id, "/tmp"}, env).exit == 75);
    BOOST_TEST(run_cli({"connect", id}, env).exit == 75);
    BOOST_TEST(run_cli({"resume", id}, env).exit == 0);
    BOOST_TEST(run_cli({"exec", id, "--", "true"}, env).exit == 0);
}

BOOST_AUTO_TEST_CASE(files_get_put_ls)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = create(env);
    std::string data;
    for (int i = 0; i < 256 * 1024; ++i) data.push_back(static_cast<char>((i * 131) & 0xff));
    auto const local = temp_path("prism-e2b-cli-up-");
    auto const back = temp_path("prism-e2b-cli-down-");
    std::ofstream(local, std::ios::binary) << data;
    BOOST_TEST(run_cli({"files", "put", id, local, "/tmp/data.bin"}, env).exit == 0);
    BOOST_TEST(run_cli({"files", "get", id, "/tmp/data.bin", back}, env).exit == 0);
    std::ifstream in(back, std::ios::binary);
    std::stringstream got;
    got << in.rdbuf();
    BOOST_TEST((got.str() == data));
    // stdin to a file, a file to stdout
    BOOST_TEST(run_cli({"files", "put", id, "-", "/tmp/note.txt"}, env, "a note\n").exit == 0);
    auto note = run_cli({"files", "get", id, "/tmp/note.txt"}, env);
    BOOST_TEST(note.exit == 0);
    BOOST_TEST(note.out == "a note\n");
    BOOST_TEST(run_cli({"exec", id, "--", "cat", "/tmp/note.txt"}, env).out == "a note\n");

    auto ls = run_cli({"files", "ls", id, "/tmp", "--json"}, env);
    BOOST_TEST(ls.exit == 0);
    std::map<std::string, std::int64_t> sizes;
    auto const entries = ls.json();
    for (auto const& e : entries.as_array()) sizes[std::string(e.at("name").as_string())] = e.at("size").as_int64();
    BOOST_TEST(sizes["data.bin"] == static_cast<std::int64_t>(data.size()));
    BOOST_TEST(sizes["note.txt"] == 7);
    auto ls_text = run_cli({"files", "ls", id, "/tmp"}, env);
    BOOST_TEST(ls_text.out.find("/tmp/note.txt") != std::string::npos);

    BOOST_TEST(run_cli({"files", "get", id, "/tmp/nosuchfile"}, env).exit == 66);
    BOOST_TEST(run_cli({"files", "put", id, local + ".missing", "/tmp/x"}, env).exit == 74);
    fs::remove(local);
    fs::remove(back);
}

BOOST_AUTO_TEST_CASE(kill_ids_and_kill_all_with_a_filter)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    std::string const doomed = "d" + random_token(4);
    auto const a = create(env, {"batch=" + doomed});
    auto const b = create(env, {"batch=" + doomed});
    auto const keep = create(env, {"batch=keep"});
    auto const single = create(env);
    BOOST_REQUIRE(run_cli({"pause", b}, env).exit == 0);  // --all covers paused ones too
    auto r = run_cli({"kill", "--all", "--label", "batch=" + doomed}, env);
    BOOST_TEST(r.exit == 0);
    BOOST_TEST(r.out.find(a) != std::string::npos);
    BOOST_TEST(r.out.find(b) != std::string::npos);
    auto left = ids_of(run_cli({"list", "--json"}, env).json());
    BOOST_TEST(!contains(left, a));
    BOOST_TEST(!contains(left, b));
    BOOST_TEST(contains(left, keep));
    BOOST_TEST(contains(left, single));
    BOOST_TEST(run_cli({"kill", single}, env).exit == 0);
    BOOST_TEST(run_cli({"kill", single}, env).exit == 66);  // gone already
    BOOST_TEST(run_cli({"kill", "--all"}, env).exit == 0);
    BOOST_TEST(ids_of(run_cli({"list", "--json"}, env).json()).empty());
}

BOOST_AUTO_TEST_CASE(metrics_of_a_sandbox)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = create(env);
    // The local server samples the sandbox's cgroups: a header and at least one row.
    auto text = run_cli({"metrics", id}, env);
    BOOST_TEST(text.exit == 0, text.err);
    BOOST_TEST(text.out.rfind("TIMESTAMP", 0) == 0u, text.out);
    BOOST_TEST(std::count(text.out.begin(), text.out.end(), '\n') >= 2);
    auto js = run_cli({"metrics", id, "--json", "--start", "0"}, env);
    BOOST_TEST(js.exit == 0);
    auto const series = js.json().as_array();
    BOOST_REQUIRE(!series.empty());
    auto const& sample = series.front().as_object();
    BOOST_TEST(sample.at("memTotal").to_number<std::int64_t>() > 0);
    BOOST_TEST(sample.at("cpuCount").to_number<std::int64_t>() > 0);
    BOOST_TEST(run_cli({"metrics", "nosuchsandbox"}, env).exit == 66);
    BOOST_TEST(run_cli({"metrics", id, "--start", "-1"}, env).exit == 64);
}

BOOST_AUTO_TEST_SUITE_END()
