// The envd proxy and its pool of agent connections under concurrency (run under
// TSan in CI): many execs, output streams and file transfers at once through the
// agents of two namespaces sandboxes, on the server's multi-threaded io_context;
// every answer is the right one, whole, and none crosses to the other sandbox.
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <unistd.h>

using namespace prism_e2b::test;

BOOST_AUTO_TEST_SUITE(test_emulator_agent_concurrency)

BOOST_AUTO_TEST_CASE(many_execs_streams_and_files_at_once_through_the_agents)
{
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("skipped: the namespaces engine needs root");
        return;
    }
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.engine = "namespaces"; });
    sandbox_ref const sandboxes[2] = {create_sandbox(f), create_sandbox(f)};
    // Each sandbox knows its own name, so an answer relayed from the wrong agent shows.
    for (auto const& sb : sandboxes) BOOST_REQUIRE(run_command(f, sb, "echo -n " + sb.id + " > /workspace/name").end);

    constexpr int workers = 6, rounds = 8;
    std::atomic<int> wrong{0}, done{0};
    std::vector<std::string> failures(workers);
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w)
        threads.emplace_back([&, w] {
            auto const& sb = sandboxes[w % 2];
            for (int i = 0; i < rounds; ++i) {
                std::string const tag = std::to_string(w) + "-" + std::to_string(i);
                // A short exec, a stream of many chunks, an upload and its download.
                auto const quick = run_command(f, sb, "cat /workspace/name; echo " + tag);
                if (quick.stdout_text != sb.id + tag + "\n") {
                    ++wrong;
                    failures[w] = "exec: " + quick.stdout_text;
                }
                auto const lines = run_command(f, sb, "seq 1 2000");
                if (lines.stdout_text.size() != 8893u ||
                    lines.stdout_text.substr(lines.stdout_text.size() - 5) != "2000\n") {
                    ++wrong;
                    failures[w] = "stream of " + std::to_string(lines.stdout_text.size()) + " bytes";
                }
                std::string const path = "/files?path=/tmp/" + tag + "&username=user";
                std::string const body(64 * 1024 + w * 97 + i, static_cast<char>('a' + w));
                auto upload = envd_headers(sb);
                upload.emplace_back("Content-Type", "application/octet-stream");
                raw_http c(f.port());  // one keep-alive connection for both
                auto put = c.request("POST", path, body, upload);
                auto got = c.request("GET", path, {}, envd_headers(sb));
                if (put.status != 200 || got.status != 200 || got.body != body) {
                    ++wrong;
                    failures[w] = "files: " + std::to_string(put.status) + " " + std::to_string(got.status);
                }
            }
            ++done;
        });
    for (auto& t : threads) t.join();
    BOOST_TEST(done.load() == workers);
    BOOST_TEST(wrong.load() == 0);
    for (auto const& why : failures)
        if (!why.empty()) BOOST_TEST_MESSAGE(why);
    // The pools are still usable: both agents answer after the storm.
    for (auto const& sb : sandboxes) BOOST_TEST(run_command(f, sb, "cat /workspace/name").stdout_text == sb.id);
}

BOOST_AUTO_TEST_SUITE_END()
