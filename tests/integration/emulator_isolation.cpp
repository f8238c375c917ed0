// prism-e2b-local isolation: what a command writes to /workspace is visible
// through /files of its own sandbox only; the sandbox reports the isolation in force.
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b::test;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_emulator_isolation)

BOOST_AUTO_TEST_CASE(workspace_writes_stay_in_their_sandbox)
{
    local_server_fixture f;
    auto a = create_sandbox(f);
    auto b = create_sandbox(f);
    raw_http c(f.port());
    auto ia = c.request("GET", "/sandboxes/" + a.id, {}, api_headers(f)).json().as_object();
    std::string const iso(ia["isolation"].as_string());
    BOOST_TEST(iso == f.server().isolation());
    BOOST_TEST((iso == "namespaces" || iso == "mount-namespace" || iso == "none"));
    bool const ns = iso == "namespaces" || iso == "mount-namespace";

    if (ns) {
        auto w = run_command(f, a, "echo from-a > /workspace/x && echo home > /home/user/h && echo t > /tmp/t && pwd");
        BOOST_REQUIRE(w.end);
        BOOST_TEST(w.stdout_text == "/home/user\n");
    } else {
        // Without a mount namespace the cwd is the sandbox's real directory.
        auto w = run_command(f, a, "echo from-a > x");
        BOOST_REQUIRE(w.end);
        BOOST_TEST(
            c.request("POST", "/filesystem.Filesystem/Move",
                      R"({"source":"/home/user/x","destination":"/workspace/x"})",
                      {{"E2b-Sandbox-Id", a.id}, {"X-Access-Token", a.token}, {"Content-Type", "application/json"}})
                .status == 200);
    }
    auto ra = c.request("GET", "/files?path=/workspace/x", {}, envd_headers(a));
    BOOST_TEST(ra.status == 200);
    BOOST_TEST(ra.body == "from-a\n");
    auto rb = c.request("GET", "/files?path=/workspace/x", {}, envd_headers(b));
    BOOST_TEST(rb.status == 404);

    if (ns) {
        auto cb = run_command(
            f, b, "test ! -e /workspace/x && test ! -e /tmp/t && test -z \"$(ls -A /home/user)\" && echo clean");
        BOOST_REQUIRE(cb.end);
        BOOST_TEST(cb.stdout_text == "clean\n");
        auto miss = run_command(f, b, "cat /workspace/x");
        BOOST_REQUIRE(miss.end);
        BOOST_TEST((*miss.end)["exitCode"].to_number<std::int64_t>() == 1);
        // And b's files go to b only.
        BOOST_REQUIRE(run_command(f, b, "echo from-b > /workspace/x").end);
        BOOST_TEST(c.request("GET", "/files?path=/workspace/x", {}, envd_headers(a)).body == "from-a\n");
        BOOST_TEST(c.request("GET", "/files?path=/workspace/x", {}, envd_headers(b)).body == "from-b\n");
        BOOST_TEST(c.request("GET", "/files?path=/home/user/h", {}, envd_headers(a)).body == "home\n");
    }
    // Files uploaded through /files are what the command sees.
    auto h = envd_headers(b);
    BOOST_TEST(
        c.request("POST", "/files?path=up.txt", "uploaded", {h[0], h[1], {"Content-Type", "application/octet-stream"}})
            .status == 200);
    BOOST_TEST(run_command(f, b, "cat up.txt").stdout_text == "uploaded");
}

BOOST_AUTO_TEST_CASE(no_isolation_mode_is_reported_honestly)
{
    local_server_fixture f([](prism_e2b::local::server_options& o) { o.isolate = false; });
    auto a = create_sandbox(f);
    raw_http c(f.port());
    auto ia = c.request("GET", "/sandboxes/" + a.id, {}, api_headers(f)).json().as_object();
    BOOST_TEST(std::string(ia["isolation"].as_string()) == "none");
    // cwd and HOME are the sandbox's real directories.
    auto r = run_command(f, a, "echo hi > here.txt; test \"$HOME\" = \"$PWD\" && echo same");
    BOOST_TEST(r.stdout_text == "same\n");
    BOOST_TEST(c.request("GET", "/files?path=/home/user/here.txt", {}, envd_headers(a)).body == "hi\n");
}

BOOST_AUTO_TEST_SUITE_END()
