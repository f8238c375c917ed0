// prism-e2b-local filesystem.Filesystem/WatchDir: start, events (recursive),
// errors for a missing directory and for traversal.
#include "local_server_fixture.hpp"

#include <boost/test/unit_test.hpp>

#include <set>

using namespace prism_e2b::test;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_emulator_watch)

BOOST_AUTO_TEST_CASE(watch_reports_events_recursively)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    BOOST_REQUIRE(run_command(f, sb, "mkdir -p /workspace/sub").end);
    auto h = envd_headers(sb);
    h.emplace_back("Connect-Timeout-Ms", "3000");
    event_stream w(f.port(), "/filesystem.Filesystem/WatchDir", R"({"path":"/workspace","recursive":true})", h);
    auto first = w.next();
    BOOST_REQUIRE(first);
    BOOST_TEST(first->payload == R"({"start":{}})");
    BOOST_REQUIRE(run_command(f, sb, "echo x > /workspace/a && echo y > /workspace/sub/b && rm /workspace/a").end);
    std::set<std::string> seen;
    for (;;) {  // the 3 s deadline bounds the wait
        auto e = w.next();
        BOOST_REQUIRE(e);
        BOOST_REQUIRE(!e->end_stream());
        auto o = json::parse(e->payload).as_object();
        auto& fe = o["filesystem"].as_object();
        seen.insert(std::string(fe["type"].as_string()) + ":" + std::string(fe["name"].as_string()));
        if (seen.count("EVENT_TYPE_CREATE:a") && seen.count("EVENT_TYPE_CREATE:sub/b") &&
            seen.count("EVENT_TYPE_REMOVE:a"))
            break;
    }
    BOOST_TEST(seen.count("EVENT_TYPE_CREATE:a") == 1u);
    BOOST_TEST(seen.count("EVENT_TYPE_CREATE:sub/b") == 1u);
    BOOST_TEST(seen.count("EVENT_TYPE_REMOVE:a") == 1u);
    // The deadline ends the stream with deadline_exceeded.
    while (w.next_event()) {
    }
    BOOST_REQUIRE(w.end_message());
    auto end = *w.end_message();
    BOOST_TEST(std::string(end["error"].as_object()["code"].as_string()) == "deadline_exceeded");
}

BOOST_AUTO_TEST_CASE(watch_errors)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    for (auto const& [body, code] : std::vector<std::pair<std::string, std::string>>{
             {R"({"path":"/workspace/missing"})", "not_found"},
             {R"({"path":"/../.."})", "invalid_argument"},
         }) {
        event_stream w(f.port(), "/filesystem.Filesystem/WatchDir", body, envd_headers(sb));
        BOOST_TEST(!w.next_event());
        BOOST_REQUIRE(w.end_message());
        auto end = *w.end_message();
        BOOST_TEST(std::string(end["error"].as_object()["code"].as_string()) == code);
    }
}

BOOST_AUTO_TEST_SUITE_END()
