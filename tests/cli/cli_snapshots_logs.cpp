// The prism-e2b binary's logs, snapshot create|list|delete, fork, volumes, list filters and
// streamed files get|put (bounded memory, a progress line) against the local server.
#include "cli_harness.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace fs = std::filesystem;

namespace {

std::string created(std::map<std::string, std::string> const& env, std::vector<std::string> extra = {})
{
    std::vector<std::string> args{"create"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_cli(args, env);
    BOOST_REQUIRE_MESSAGE(r.exit == 0, r.err);
    auto id = r.out;
    while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
    return id;
}

std::string temp_file(std::string const& stem)
{
    return (fs::temp_directory_path() / (stem + std::to_string(::getpid()) + "-" + random_token(4))).string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_snapshots_logs)

BOOST_AUTO_TEST_CASE(logs_text_and_json)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = created(env);
    auto text = run_cli({"logs", id}, env);
    BOOST_TEST(text.exit == 0, text.err);
    BOOST_TEST(text.out.find("started from template base") != std::string::npos);
    auto js = run_cli({"logs", id, "--json"}, env);
    BOOST_TEST(js.exit == 0);
    BOOST_TEST(js.json().as_array().size() == 1u);
    auto warn = run_cli({"logs", id, "--level", "warn", "--json"}, env);
    BOOST_TEST((warn.exit == 0 && warn.json().as_array().empty()));
    BOOST_TEST(run_cli({"logs", "nosuchsandbox"}, env).exit == 66);
    BOOST_TEST(run_cli({"logs", id, "--level", "loud"}, env).exit == 64);
    BOOST_TEST(run_cli({"logs", "--help"}, env).exit == 0);
}

BOOST_AUTO_TEST_CASE(snapshot_create_list_delete)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = created(env);
    BOOST_REQUIRE(run_cli({"exec", id, "--", "sh", "-c", "echo kept > /home/user/k.txt"}, env).exit == 0);
    auto made = run_cli({"snapshot", "create", id, "--name", "cli-snap", "--json"}, env);
    BOOST_REQUIRE_MESSAGE(made.exit == 0, made.err);
    std::string const snap(made.json().at("snapshotID").as_string());
    BOOST_TEST(!snap.empty());

    auto listed = run_cli({"snapshot", "list", "--sandbox", id}, env);
    BOOST_TEST(listed.exit == 0);
    BOOST_TEST(listed.out.rfind("SNAPSHOT ID", 0) == 0u);
    BOOST_TEST(listed.out.find(snap) != std::string::npos);

    auto from = created(env, {"--template", snap});
    BOOST_TEST(run_cli({"exec", from, "--", "cat", "/home/user/k.txt"}, env).out == "kept\n");

    BOOST_TEST(run_cli({"snapshot", "delete", snap}, env).exit == 0);
    BOOST_TEST(run_cli({"snapshot", "delete", snap}, env).exit == 66);
    auto after = run_cli({"snapshot", "list", "--json"}, env);
    BOOST_TEST(after.exit == 0);
    BOOST_TEST(after.out.find(snap) == std::string::npos);
    BOOST_TEST(run_cli({"snapshot"}, env).exit == 64);
    BOOST_TEST(run_cli({"snapshot", "create", "nosuchsandbox"}, env).exit == 66);
}

BOOST_AUTO_TEST_CASE(volume_commands_and_a_sandbox_that_mounts_one)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto made = run_cli({"volume", "create", "cli-vol"}, env);
    BOOST_REQUIRE_MESSAGE(made.exit == 0, made.err);
    std::string vol = made.out;
    while (!vol.empty() && vol.back() == '\n') vol.pop_back();
    BOOST_TEST(run_cli({"volume", "create", "cli-vol"}, env).exit == 69);   // 409: the name is taken
    BOOST_TEST(run_cli({"volume", "create", "bad name"}, env).exit == 69);  // 400
    auto info = run_cli({"volume", "info", vol, "--json"}, env);
    BOOST_TEST(info.json().at("name").as_string() == "cli-vol");
    BOOST_TEST(info.out.find("token") == std::string::npos);  // a secret: never printed
    BOOST_TEST(run_cli({"volume", "list"}, env).out.find(vol + "\tcli-vol") != std::string::npos);

    BOOST_REQUIRE(run_cli({"volume", "mkdir", vol, "/d/e", "-p"}, env).exit == 0);
    auto w = run_cli({"volume", "write", vol, "/d/e/f.txt", "--mode", "640", "--json"}, env, "from stdin\n");
    BOOST_REQUIRE_MESSAGE(w.exit == 0, w.err);
    BOOST_TEST(w.json().at("mode").as_int64() == 0640);
    BOOST_TEST(run_cli({"volume", "read", vol, "/d/e/f.txt"}, env).out == "from stdin\n");
    auto ls = run_cli({"volume", "ls", vol, "/", "--depth", "3", "--json"}, env);
    BOOST_TEST(ls.json().as_array().size() == 3u);
    BOOST_TEST(
        run_cli({"volume", "chown", vol, "/d/e/f.txt", "--uid", "0", "--json"}, env).json().at("uid").as_int64() == 0);
    BOOST_TEST(run_cli({"volume", "stat", vol, "/missing"}, env).exit == 66);
    BOOST_TEST(run_cli({"volume", "mkdir", vol, "/x", "--mode", "9"}, env).exit == 64);

    auto const id = created(env, {"--volume", "cli-vol:/mnt/v"});
    BOOST_TEST(run_cli({"exec", id, "--", "cat", "/mnt/v/d/e/f.txt"}, env).out == "from stdin\n");
    BOOST_TEST(run_cli({"info", id}, env).out.find("volume: cli-vol at /mnt/v") != std::string::npos);
    BOOST_TEST(run_cli({"create", "--volume", "cli-vol"}, env).exit == 64);  // no path
    BOOST_TEST(run_cli({"volume", "delete", vol}, env).exit == 69);          // 409: mounted
    BOOST_REQUIRE(run_cli({"kill", id}, env).exit == 0);
    BOOST_TEST(run_cli({"volume", "rm", vol, "/d"}, env).exit == 0);
    BOOST_TEST(run_cli({"volume", "delete", vol}, env).exit == 0);
    BOOST_TEST(run_cli({"volume", "delete", vol}, env).exit == 66);
}

BOOST_AUTO_TEST_CASE(fork_prints_the_forks_which_start_from_the_source_s_files)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const id = created(env);
    BOOST_REQUIRE(run_cli({"exec", id, "--", "sh", "-c", "echo forked > /home/user/f.txt"}, env).exit == 0);
    auto text = run_cli({"fork", id, "--count", "2", "--timeout", "120"}, env);
    BOOST_REQUIRE_MESSAGE(text.exit == 0, text.err);
    std::vector<std::string> ids;
    for (std::size_t i = 0, j; (j = text.out.find('\n', i)) != std::string::npos; i = j + 1)
        ids.push_back(text.out.substr(i, j - i));
    BOOST_REQUIRE_EQUAL(ids.size(), 2u);
    BOOST_TEST(ids[0] != ids[1]);
    for (auto const& f : ids) {
        BOOST_TEST(f != id);
        BOOST_TEST(run_cli({"exec", f, "--", "cat", "/home/user/f.txt"}, env).out == "forked\n");
    }
    auto js = run_cli({"fork", id, "--json"}, env);
    BOOST_REQUIRE_MESSAGE(js.exit == 0, js.err);
    BOOST_REQUIRE_EQUAL(js.json().as_array().size(), 1u);  // the server's default count
    BOOST_TEST(!js.json().as_array()[0].at("sandboxID").as_string().empty());
    BOOST_TEST(js.out.find("envdAccessToken") == std::string::npos);
    BOOST_TEST(run_cli({"fork", "nosuchsandbox"}, env).exit == 66);
    BOOST_TEST(run_cli({"fork", id, "--count", "0"}, env).exit == 64);
    BOOST_TEST(run_cli({"pause", id}, env).exit == 0);
    BOOST_TEST(run_cli({"fork", id}, env).exit == 69);  // 409: a paused source
}

BOOST_AUTO_TEST_CASE(list_filters)
{
    local_server_fixture srv;
    auto const env = cli_env(srv);
    auto const a = created(env, {"--label", "suite=cli-filters"});
    auto const b = created(env, {"--label", "suite=cli-filters"});
    auto asc = run_cli({"list", "--label", "suite=cli-filters", "--order", "asc", "--json"}, env);
    BOOST_REQUIRE_MESSAGE(asc.exit == 0, asc.err);
    auto const doc = asc.json();
    auto const& arr = doc.as_array();
    BOOST_REQUIRE_EQUAL(arr.size(), 2u);
    BOOST_TEST(arr[0].at("sandboxID").as_string() == a);
    BOOST_TEST(arr[1].at("sandboxID").as_string() == b);
    auto none = run_cli({"list", "--label", "suite=cli-filters", "--template", "other", "--json"}, env);
    BOOST_TEST((none.exit == 0 && none.json().as_array().empty()));
    auto future = run_cli({"list", "--started-after", "2200-01-01T00:00:00Z", "--json"}, env);
    BOOST_TEST((future.exit == 0 && future.json().as_array().empty()));
    BOOST_TEST(run_cli({"list", "--order", "sideways"}, env).exit == 64);
}

BOOST_AUTO_TEST_CASE(large_files_stream_with_bounded_memory_and_progress)
{
    local_server_fixture srv([](local::server_options& o) { o.max_file_bytes = 80u << 20; });
    auto env = cli_env(srv);
    // In a sanitizer build, AddressSanitizer's quarantine (256 MiB by default) keeps freed
    // chunks resident, which would count as the CLI's memory; keep it small (ignored otherwise).
    env["ASAN_OPTIONS"] = "quarantine_size_mb=1:thread_local_quarantine_size_kb=64:detect_leaks=0";
    auto const id = created(env);
    auto const small = temp_file("prism-e2b-cli-small-");
    auto const big = temp_file("prism-e2b-cli-big-");
    auto const back = temp_file("prism-e2b-cli-back-");
    std::ofstream(small, std::ios::binary) << "small";
    std::size_t const size = 64u << 20;
    {
        std::ofstream f(big, std::ios::binary);
        std::string block(1u << 20, '\0');
        for (std::size_t i = 0; i < size; i += block.size()) {
            for (std::size_t j = 0; j < block.size(); ++j) block[j] = static_cast<char>(((i + j) * 2654435761u) >> 13);
            f.write(block.data(), static_cast<std::streamsize>(block.size()));
        }
    }
    auto baseline = run_cli({"files", "put", id, small, "/home/user/small.txt"}, env);
    BOOST_REQUIRE(baseline.exit == 0);
    auto up =
        run_cli({"files", "put", "--progress", id, big, "/home/user/big.bin"}, env, {}, std::chrono::seconds(300));
    BOOST_REQUIRE_MESSAGE(up.exit == 0, up.err);
    BOOST_TEST(up.err.find("100%") != std::string::npos);  // --progress without a terminal
    BOOST_TEST(up.err.find("64.0 MiB") != std::string::npos);
    // The whole file in memory would add 64 MiB at least; streamed, the peak barely moves.
    BOOST_TEST_MESSAGE("files put RSS: small " << baseline.peak_rss_kib << " KiB, 64 MiB file " << up.peak_rss_kib
                                               << " KiB");
    BOOST_TEST(up.peak_rss_kib - baseline.peak_rss_kib < 16 * 1024);

    auto small_get = run_cli({"files", "get", id, "/home/user/small.txt", back}, env);
    BOOST_REQUIRE(small_get.exit == 0);
    auto down = run_cli({"files", "get", id, "/home/user/big.bin", back}, env, {}, std::chrono::seconds(300));
    BOOST_REQUIRE_MESSAGE(down.exit == 0, down.err);
    BOOST_TEST(down.err.empty());  // no terminal and no --progress: quiet
    BOOST_TEST_MESSAGE("files get RSS: small " << small_get.peak_rss_kib << " KiB, 64 MiB file " << down.peak_rss_kib
                                               << " KiB");
    BOOST_TEST(down.peak_rss_kib - small_get.peak_rss_kib < 16 * 1024);
    BOOST_TEST(fs::file_size(back) == size);
    {
        std::ifstream x(big, std::ios::binary), y(back, std::ios::binary);
        std::string bx(1u << 20, '\0'), by(1u << 20, '\0');
        bool same = true;
        while (x && y && same) {
            x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
            y.read(by.data(), static_cast<std::streamsize>(by.size()));
            same = x.gcount() == y.gcount() && bx == by;
        }
        BOOST_TEST(same);
    }
    // stdin redirected from a file streams too; a pipe still works (read whole).
    BOOST_TEST(run_cli({"files", "put", id, "-", "/home/user/piped.txt"}, env, "piped\n").exit == 0);
    BOOST_TEST(run_cli({"files", "get", id, "/home/user/piped.txt"}, env).out == "piped\n");
    BOOST_TEST(run_cli({"files", "get", id, "/home/user/big.bin", "/nonexistent-dir/x"}, env).exit == 74);
    for (auto const& p : {small, big, back}) fs::remove(p);
}

BOOST_AUTO_TEST_SUITE_END()
