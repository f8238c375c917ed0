// prism-e2b-local filesystem.Filesystem/WatchDir: start, events (recursive),
// errors for a missing directory and for traversal, entry info on request; the
// polling watchers (CreateWatcher, GetWatcherEvents, RemoveWatcher); file metadata
// (X-Metadata-* on upload, EntryInfo.metadata), on each engine this machine has.
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "temp_dir.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace prism_e2b::test;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_emulator_watch)

BOOST_AUTO_TEST_CASE(watch_reports_events_recursively)
{
    local_server_fixture f;
    auto sb = create_sandbox(f);
    BOOST_REQUIRE(run_command(f, sb, "mkdir -p /workspace/sub").end);
    auto h = envd_headers(sb);
    // The deadline must outlast the command below on a loaded machine (it bounds the wait
    // for the events, then ends the stream): generous, as the stream's end waits for it.
    h.emplace_back("Connect-Timeout-Ms", "10000");
    event_stream w(f.port(), "/filesystem.Filesystem/WatchDir", R"({"path":"/workspace","recursive":true})", h);
    auto first = w.next();
    BOOST_REQUIRE(first);
    BOOST_TEST(first->payload == R"({"start":{}})");
    BOOST_REQUIRE(run_command(f, sb, "echo x > /workspace/a && echo y > /workspace/sub/b && rm /workspace/a").end);
    std::set<std::string> seen;
    for (;;) {  // the 10 s deadline bounds the wait
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

namespace {

/// A filesystem.Filesystem unary call; the reply's status and JSON body.
std::pair<int, json::object> fs_call(local_server_fixture& f, sandbox_ref const& sb, std::string const& method,
                                     json::object const& request)
{
    raw_http c(f.port());
    auto r = c.request("POST", "/filesystem.Filesystem/" + method, json::serialize(request), envd_headers(sb));
    return {r.status, r.body.empty() ? json::object{} : r.json().as_object()};
}

/// The envd of each kind: in the sandbox (namespaces) and in the server (mount-namespace; none without root).
std::vector<std::string> engines_here()
{
    if (::geteuid() == 0) return {"namespaces", "mount-namespace"};
    return {"none"};
}

/// POST /files (octet-stream) with extra headers; the status.
int upload(local_server_fixture& f, sandbox_ref const& sb, std::string const& path, std::string body,
           header_pairs extra = {})
{
    auto h = envd_headers(sb);
    h.emplace_back("Content-Type", "application/octet-stream");
    h.insert(h.end(), extra.begin(), extra.end());
    raw_http c(f.port());
    return c.request("POST", "/files?path=" + path, std::move(body), h).status;
}

}  // namespace

BOOST_AUTO_TEST_CASE(watch_dir_with_include_entry_carries_the_entry)
{
    for (auto const& engine : engines_here()) {
        BOOST_TEST_CONTEXT("engine " << engine)
        {
            local_server_fixture f([&](prism_e2b::local::server_options& o) { o.engine = engine; });
            auto sb = create_sandbox(f);
            auto h = envd_headers(sb);
            h.emplace_back("Connect-Timeout-Ms", "15000");  // only bounds the wait: the events end the loop
            event_stream w(f.port(), "/filesystem.Filesystem/WatchDir", R"({"path":"/workspace","includeEntry":true})",
                           h);
            BOOST_REQUIRE(w.next());
            BOOST_REQUIRE(upload(f, sb, "/workspace/e", "12345") == 200);
            BOOST_REQUIRE(fs_call(f, sb, "Remove", {{"path", "/workspace/e"}}).first == 200);
            bool created = false, removed = false;
            while (!(created && removed)) {
                auto e = w.next();
                BOOST_REQUIRE(e);
                BOOST_REQUIRE(!e->end_stream());
                auto o = json::parse(e->payload).as_object();
                auto& fe = o["filesystem"].as_object();
                std::string const type(fe["type"].as_string());
                if (type == "EVENT_TYPE_CREATE") {
                    created = true;
                    // Stat-ed when the event is read: there, or already removed by the rm.
                    if (auto const* entry = fe.if_contains("entry")) {
                        BOOST_TEST(std::string(entry->as_object().at("path").as_string()) == "/workspace/e");
                        BOOST_TEST(std::string(entry->as_object().at("type").as_string()) == "FILE_TYPE_FILE");
                    }
                } else if (type == "EVENT_TYPE_REMOVE") {
                    removed = true;
                    BOOST_TEST(!fe.contains("entry"));  // nothing left to stat
                }
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(polling_watchers_queue_events_until_asked)
{
    for (auto const& engine : engines_here()) {
        BOOST_TEST_CONTEXT("engine " << engine)
        {
            local_server_fixture f([&](prism_e2b::local::server_options& o) { o.engine = engine; });
            auto sb = create_sandbox(f);
            BOOST_REQUIRE(fs_call(f, sb, "MakeDir", {{"path", "/workspace/p/sub"}}).first == 200);
            auto [st, created] = fs_call(f, sb, "CreateWatcher",
                                         {{"path", "/workspace/p"}, {"recursive", true}, {"includeEntry", true}});
            BOOST_REQUIRE(st == 200);
            std::string const id(created["watcherId"].as_string());
            BOOST_TEST(!id.empty());
            BOOST_REQUIRE(upload(f, sb, "/workspace/p/sub/f", "hi\n") == 200);
            // The events wait in the watcher's queue; a poll takes what has arrived.
            std::set<std::string> seen;
            json::object entry;
            BOOST_TEST(eventually([&] {
                auto [s, got] = fs_call(f, sb, "GetWatcherEvents", {{"watcherId", id}});
                if (s != 200) return false;
                for (auto const& e : got["events"].as_array()) {
                    auto const& fe = e.as_object();
                    std::string const key =
                        std::string(fe.at("type").as_string()) + ":" + std::string(fe.at("name").as_string());
                    seen.insert(key);
                    if (key == "EVENT_TYPE_CREATE:sub/f" && fe.contains("entry")) entry = fe.at("entry").as_object();
                }
                return seen.count("EVENT_TYPE_CREATE:sub/f") == 1u;
            }));
            BOOST_TEST(std::string(entry["path"].as_string()) == "/workspace/p/sub/f");
            // Taken events are not given again.
            auto [again_status, again] = fs_call(f, sb, "GetWatcherEvents", {{"watcherId", id}});
            BOOST_TEST(again_status == 200);
            for (auto const& e : again["events"].as_array())
                BOOST_TEST(std::string(e.as_object().at("name").as_string()) != "sub/f");
            // Removed, it is gone; unknown and removed ids are not_found.
            BOOST_TEST(fs_call(f, sb, "RemoveWatcher", {{"watcherId", id}}).first == 200);
            auto [gone_status, gone] = fs_call(f, sb, "GetWatcherEvents", {{"watcherId", id}});
            BOOST_TEST(gone_status == 404);
            BOOST_TEST(std::string(gone["code"].as_string()) == "not_found");
            BOOST_TEST(fs_call(f, sb, "RemoveWatcher", {{"watcherId", "nope"}}).first == 404);
            BOOST_TEST(fs_call(f, sb, "CreateWatcher", {{"path", "/workspace/missing"}}).first == 404);
            // Another sandbox cannot poll this one's watchers.
            auto [st2, other] = fs_call(f, sb, "CreateWatcher", {{"path", "/workspace"}});
            BOOST_REQUIRE(st2 == 200);
            auto sb2 = create_sandbox(f);
            BOOST_TEST(fs_call(f, sb2, "GetWatcherEvents", {{"watcherId", other["watcherId"]}}).first == 404);
        }
    }
}

BOOST_AUTO_TEST_CASE(file_metadata_is_kept_in_xattrs_and_reported)
{
    for (auto const& engine : engines_here()) {
        BOOST_TEST_CONTEXT("engine " << engine)
        {
            local_server_fixture f([&](prism_e2b::local::server_options& o) { o.engine = engine; });
            auto sb = create_sandbox(f);
            auto h = envd_headers(sb);
            h.emplace_back("Content-Type", "application/octet-stream");
            h.emplace_back("X-Metadata-Owner", "alice");
            h.emplace_back("X-Metadata-build", "7");
            raw_http c(f.port());
            auto put = c.request("POST", "/files?path=/workspace/m.txt", "data", h);
            BOOST_REQUIRE(put.status == 200);
            auto answer = put.json().as_array().at(0).as_object();
            BOOST_TEST(json::serialize(answer["metadata"]) == R"({"build":"7","owner":"alice"})");
            auto [st, stat] = fs_call(f, sb, "Stat", {{"path", "/workspace/m.txt"}});
            BOOST_REQUIRE(st == 200);
            BOOST_TEST(json::serialize(stat["entry"].as_object()["metadata"]) == R"({"build":"7","owner":"alice"})");
            auto [ls, listed] = fs_call(f, sb, "ListDir", {{"path", "/workspace"}});
            BOOST_REQUIRE(ls == 200);
            bool found = false;
            for (auto const& e : listed["entries"].as_array())
                if (e.as_object().at("name") == "m.txt") {
                    found = true;
                    BOOST_TEST(json::serialize(e.as_object().at("metadata")) == R"({"build":"7","owner":"alice"})");
                }
            BOOST_TEST(found);
            // In the file's xattrs, as tools in the sandbox see them.
            if (engine != "none")  // whose commands see the host's /workspace
                BOOST_TEST(run_command(f, sb,
                                       "/usr/bin/python3 -c \"import os; print(os.getxattr('/workspace/m.txt', "
                                       "'user.e2b.owner').decode())\"")
                               .stdout_text == "alice\n");
            // A write without metadata keeps it; one with metadata replaces it.
            auto plain = envd_headers(sb);
            plain.emplace_back("Content-Type", "application/octet-stream");
            BOOST_REQUIRE(c.request("POST", "/files?path=/workspace/m.txt", "more", plain).status == 200);
            BOOST_TEST(
                json::serialize(
                    fs_call(f, sb, "Stat", {{"path", "/workspace/m.txt"}}).second["entry"].as_object()["metadata"]) ==
                R"({"build":"7","owner":"alice"})");
            auto other = plain;
            other.emplace_back("X-Metadata-owner", "bob");
            BOOST_REQUIRE(c.request("POST", "/files?path=/workspace/m.txt", "new", other).status == 200);
            BOOST_TEST(
                json::serialize(
                    fs_call(f, sb, "Stat", {{"path", "/workspace/m.txt"}}).second["entry"].as_object()["metadata"]) ==
                R"({"owner":"bob"})");
            // Bad metadata is refused before anything is written.
            auto bad = plain;
            bad.emplace_back("X-Metadata-k", std::string("caf\xc3\xa9"));
            BOOST_TEST(c.request("POST", "/files?path=/workspace/bad.txt", "x", bad).status == 400);
            BOOST_TEST(fs_call(f, sb, "Stat", {{"path", "/workspace/bad.txt"}}).first == 404);
            // A file without metadata reports none.
            BOOST_REQUIRE(c.request("POST", "/files?path=/workspace/none.txt", "x", plain).status == 200);
            BOOST_TEST(!fs_call(f, sb, "Stat", {{"path", "/workspace/none.txt"}})
                            .second["entry"]
                            .as_object()
                            .contains("metadata"));
        }
    }
}

// envd 0.6.4: a directory on a network file system (here FUSE, bindfs mounted from the host into
// the sandbox's /workspace; the server's own envd sees it) is watched only when allowed.
BOOST_AUTO_TEST_CASE(a_network_file_system_is_watched_only_when_allowed)
{
    if (::geteuid() != 0) {
        BOOST_TEST_MESSAGE("skipped: mounting FUSE needs root");
        return;
    }
    BOOST_REQUIRE_MESSAGE(std::system("command -v bindfs >/dev/null") == 0, "bindfs is missing (scripts/bootstrap.sh)");
    temp_dir state("prism-e2b-watch-net-");
    local_server_fixture f([&](prism_e2b::local::server_options& o) {
        o.engine = "mount-namespace";
        o.state_dir = state.path;
    });
    auto sb = create_sandbox(f);
    auto const src = state.path / "fuse-src";
    auto const mnt = state.path / "sandboxes" / sb.id / "root" / "workspace" / "net";
    std::filesystem::create_directories(src);
    std::filesystem::create_directories(mnt);
    BOOST_REQUIRE(std::system(("bindfs " + src.string() + " " + mnt.string()).c_str()) == 0);
    struct unmount {
        std::string path;
        ~unmount() { (void)std::system(("umount " + path).c_str()); }
    } cleanup{mnt.string()};

    event_stream refused(f.port(), "/filesystem.Filesystem/WatchDir", R"({"path":"/workspace/net"})", envd_headers(sb));
    BOOST_TEST(!refused.next_event());
    BOOST_REQUIRE(refused.end_message());
    auto err = refused.end_message()->at("error").as_object();
    BOOST_TEST(std::string(err.at("code").as_string()) == "failed_precondition");
    BOOST_TEST(std::string(err.at("message").as_string()).find("network file system (fuse)") != std::string::npos);
    auto [status, body] =
        fs_call(f, sb, "CreateWatcher", json::object{{"path", "/workspace/net"}, {"allowNetworkMounts", false}});
    BOOST_TEST(status != 200);

    event_stream allowed(f.port(), "/filesystem.Filesystem/WatchDir",
                         R"({"path":"/workspace/net","allowNetworkMounts":true})", envd_headers(sb));
    auto start = allowed.next_event();
    BOOST_REQUIRE(start);
    BOOST_TEST(start->contains("start"));
    // A local directory needs no permission.
    event_stream local(f.port(), "/filesystem.Filesystem/WatchDir", R"({"path":"/workspace"})", envd_headers(sb));
    BOOST_TEST(local.next_event().has_value());
}

BOOST_AUTO_TEST_SUITE_END()
