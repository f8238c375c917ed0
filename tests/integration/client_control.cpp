// e2b::client's control-plane additions against the local server: snapshots
// (create, list, start a sandbox from one, delete), fork, sandbox logs with their
// filters, the network update the local server cannot do (typed unsupported),
// and the list filters template, startedAfter and order.
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/redactor.hpp>

#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

asio::awaitable<e2b::sandbox_handle> new_sandbox(e2b::client& c, e2b::metadata_map metadata = {},
                                                 std::string template_id = "base")
{
    e2b::create_sandbox_params cp;
    cp.metadata = std::move(metadata);
    cp.template_id = std::move(template_id);
    auto h = co_await c.async_create_sandbox(cp);
    BOOST_REQUIRE_MESSAGE(h, h.error().to_string());
    co_return *h;
}

bool has_snapshot(e2b::snapshot_page const& p, std::string const& id)
{
    return std::any_of(p.snapshots.begin(), p.snapshots.end(),
                       [&](e2b::snapshot_info const& s) { return s.snapshot_id == id; });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(client_control)

BOOST_AUTO_TEST_CASE(snapshot_create_list_start_from_delete)
{
    local_server_fixture srv;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto c = client_for(srv, ex);
            auto h = co_await new_sandbox(*c);
            auto const target = e2b::envd_target::from(h);
            auto w = co_await c->async_write_file(target, "/home/user/kept.txt", std::string("from the snapshot"));
            BOOST_REQUIRE(w);

            e2b::create_snapshot_params sp;
            sp.name = "client-snap";
            auto snap = co_await c->async_create_snapshot(h.sandbox_id, sp);
            BOOST_REQUIRE_MESSAGE(snap, snap.error().to_string());
            BOOST_TEST(!snap->snapshot_id.empty());
            BOOST_TEST(!snap->names.empty());

            e2b::snapshot_list_params by_sandbox;
            by_sandbox.sandbox_id = h.sandbox_id;
            auto listed = co_await c->async_list_snapshots(by_sandbox);
            BOOST_REQUIRE_MESSAGE(listed, listed.error().to_string());
            BOOST_TEST(has_snapshot(*listed, snap->snapshot_id));
            e2b::snapshot_list_params other_sandbox;
            other_sandbox.sandbox_id = "no-such-sandbox";
            auto none = co_await c->async_list_snapshots(other_sandbox);
            BOOST_REQUIRE(none);
            BOOST_TEST(!has_snapshot(*none, snap->snapshot_id));

            // A snapshot is a template: a new sandbox starts with its files.
            e2b::metadata_map no_metadata;
            std::string const snapshot_template = snap->snapshot_id;
            auto from = co_await new_sandbox(*c, no_metadata, snapshot_template);
            auto kept = co_await c->async_read_file(e2b::envd_target::from(from), "/home/user/kept.txt");
            BOOST_TEST((kept && *kept == "from the snapshot"));

            auto deleted = co_await c->async_delete_snapshot(snap->snapshot_id);
            BOOST_TEST((deleted && *deleted));
            auto again = co_await c->async_delete_snapshot(snap->snapshot_id);
            BOOST_TEST((again && !*again));
            e2b::snapshot_list_params all;
            auto after = co_await c->async_list_snapshots(all);
            BOOST_REQUIRE(after);
            BOOST_TEST(!has_snapshot(*after, snap->snapshot_id));

            std::string const missing_id = "nosuchsandbox";
            e2b::create_snapshot_params unnamed;
            auto of_missing = co_await c->async_create_snapshot(missing_id, unnamed);
            BOOST_TEST((!of_missing && of_missing.error() == errc::not_found));
        },
        std::chrono::seconds(120));
}

BOOST_AUTO_TEST_CASE(fork_starts_sandboxes_from_the_source_which_runs_on)
{
    local_server_fixture srv;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto c = client_for(srv, ex);
            auto h = co_await new_sandbox(*c);
            auto w = co_await c->async_write_file(e2b::envd_target::from(h), "/home/user/f.txt", std::string("src"));
            BOOST_REQUIRE(w);
            e2b::fork_params fp;
            fp.count = 2;
            fp.timeout = std::chrono::seconds(120);
            auto forks = co_await c->async_fork_sandbox(h.sandbox_id, fp);
            BOOST_REQUIRE_MESSAGE(forks, forks.error().to_string());
            BOOST_REQUIRE_EQUAL(forks->size(), 2u);
            for (auto const& f : *forks) {
                BOOST_REQUIRE_MESSAGE(f, f.error().to_string());
                BOOST_TEST(f->sandbox_id != h.sandbox_id);
                BOOST_TEST(secret_redactor::global().is_secret(f->envd_access_token.value_or("")));
                auto got = co_await c->async_read_file(e2b::envd_target::from(*f), "/home/user/f.txt");
                BOOST_TEST((got && *got == "src"));
            }
            BOOST_TEST((*forks)[0]->sandbox_id != (*forks)[1]->sandbox_id);
            auto info = co_await c->async_get_sandbox_info(h.sandbox_id);
            BOOST_TEST((info && info->state == e2b::sandbox_state::running));

            e2b::fork_params defaults;
            std::string const missing = "nosuchsandbox";
            auto none = co_await c->async_fork_sandbox(missing, defaults);
            BOOST_TEST((!none && none.error() == errc::not_found));
            auto paused = co_await c->async_pause_sandbox(h.sandbox_id, true);
            BOOST_REQUIRE(paused);
            auto refused = co_await c->async_fork_sandbox(h.sandbox_id, defaults);
            BOOST_TEST((!refused && refused.error() == errc::conflict));
        },
        std::chrono::seconds(120));
}

BOOST_AUTO_TEST_CASE(volumes_hold_files_that_sandboxes_mount)
{
    local_server_fixture srv;
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto c = client_for(srv, ex);
            std::string const name = "client-vol";
            auto v = co_await c->async_create_volume(name);
            BOOST_REQUIRE_MESSAGE(v, v.error().to_string());
            BOOST_TEST(v->name == name);
            BOOST_TEST(secret_redactor::global().is_secret(v->token));
            auto dup = co_await c->async_create_volume(name);
            BOOST_TEST((!dup && dup.error() == errc::conflict));
            auto listed = co_await c->async_list_volumes();
            BOOST_REQUIRE(listed);
            BOOST_TEST((listed->size() == 1 && (*listed)[0].volume_id == v->volume_id && (*listed)[0].token.empty()));
            auto got = co_await c->async_get_volume(v->volume_id);
            BOOST_TEST((got && got->token == v->token));

            e2b::volume_ref const ref{v->volume_id, v->token};
            e2b::volume_write_options parents;
            parents.force = true;
            auto dir = co_await c->async_volume_make_dir(ref, "/a/b", parents);
            BOOST_REQUIRE_MESSAGE(dir, dir.error().to_string());
            BOOST_TEST((dir->type == e2b::volume_entry_type::directory && dir->uid == 1000u));
            e2b::volume_write_options owned;
            owned.metadata.mode = 0600;
            auto w = co_await c->async_volume_write_file(ref, "/a/b/f.txt", std::string("payload\0bytes", 13), owned);
            BOOST_REQUIRE_MESSAGE(w, w.error().to_string());
            BOOST_TEST((w->size == 13 && w->mode == 0600u && w->path == "/a/b/f.txt"));
            auto r = co_await c->async_volume_read_file(ref, "/a/b/f.txt");
            BOOST_TEST((r && *r == std::string("payload\0bytes", 13)));
            e2b::volume_metadata root_owned;
            root_owned.uid = 0;
            auto md = co_await c->async_volume_update_metadata(ref, "/a/b/f.txt", root_owned);
            BOOST_TEST((md && md->uid == 0u && md->gid == 1000u));
            auto ls = co_await c->async_volume_list(ref, "/", 3);
            BOOST_REQUIRE(ls);
            BOOST_TEST(ls->size() == 3u);  // /a, /a/b, /a/b/f.txt
            auto missing = co_await c->async_volume_stat(ref, "/nope");
            BOOST_TEST((!missing && missing.error() == errc::not_found));
            e2b::volume_ref const wrong{v->volume_id, std::string(64, '0')};
            auto refused = co_await c->async_volume_stat(wrong, "/a");
            BOOST_TEST((!refused && refused.error() == errc::unauthenticated));

            // Mounted by a sandbox: what it holds is there, and the volume stays while the sandbox does.
            e2b::create_sandbox_params p;
            p.timeout = std::chrono::seconds(120);
            p.volume_mounts.push_back({name, "/mnt/vol"});
            auto h = co_await c->async_create_sandbox(p);
            BOOST_REQUIRE_MESSAGE(h, h.error().to_string());
            auto inside = co_await c->async_read_file(e2b::envd_target::from(*h), "/mnt/vol/a/b/f.txt");
            BOOST_TEST((inside && *inside == std::string("payload\0bytes", 13)));
            auto info = co_await c->async_get_sandbox_info(h->sandbox_id);
            BOOST_REQUIRE(info);
            BOOST_TEST((info->volume_mounts.size() == 1 && info->volume_mounts[0].path == "/mnt/vol"));
            auto busy = co_await c->async_delete_volume(v->volume_id);
            BOOST_TEST((!busy && busy.error() == errc::conflict));
            auto killed = co_await c->async_kill_sandbox(h->sandbox_id);
            BOOST_REQUIRE(killed);
            auto rm = co_await c->async_volume_remove(ref, "/a");
            BOOST_TEST(rm.has_value());
            auto deleted = co_await c->async_delete_volume(v->volume_id);
            BOOST_TEST((deleted && *deleted));
            BOOST_TEST(!secret_redactor::global().is_secret(v->token));
            auto again = co_await c->async_delete_volume(v->volume_id);
            BOOST_TEST((again && !*again));
        },
        std::chrono::seconds(120));
}

BOOST_AUTO_TEST_CASE(logs_with_filters)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto c = client_for(srv, ex);
        auto h = co_await new_sandbox(*c);
        e2b::logs_params defaults;
        auto logs = co_await c->async_get_sandbox_logs(h.sandbox_id, defaults);
        BOOST_REQUIRE_MESSAGE(logs, logs.error().to_string());
        BOOST_REQUIRE_EQUAL(logs->size(), 1u);
        BOOST_TEST((*logs)[0].level == "info");
        BOOST_TEST((*logs)[0].message.find("base") != std::string::npos);
        BOOST_TEST((*logs)[0].fields.at("sandboxID") == h.sandbox_id);
        BOOST_TEST(!(*logs)[0].timestamp.empty());

        auto paused = co_await c->async_pause_sandbox(h.sandbox_id, false);
        BOOST_REQUIRE(paused);
        logs = co_await c->async_get_sandbox_logs(h.sandbox_id, defaults);
        BOOST_REQUIRE(logs);
        BOOST_REQUIRE_EQUAL(logs->size(), 2u);
        BOOST_TEST((*logs)[1].message.find("paused") != std::string::npos);

        e2b::logs_params p;
        p.backward = true;
        p.limit = 1;
        logs = co_await c->async_get_sandbox_logs(h.sandbox_id, p);
        BOOST_REQUIRE(logs);
        BOOST_REQUIRE_EQUAL(logs->size(), 1u);
        BOOST_TEST((*logs)[0].message.find("paused") != std::string::npos);

        e2b::logs_params warn;
        warn.level = "warn";
        logs = co_await c->async_get_sandbox_logs(h.sandbox_id, warn);
        BOOST_TEST((logs && logs->empty()));
        e2b::logs_params search;
        search.search = "started";
        logs = co_await c->async_get_sandbox_logs(h.sandbox_id, search);
        BOOST_TEST((logs && logs->size() == 1u));

        std::string const missing_id = "nosuchsandbox";
        auto missing = co_await c->async_get_sandbox_logs(missing_id, defaults);
        BOOST_TEST((!missing && missing.error() == errc::not_found));
    });
}

BOOST_AUTO_TEST_CASE(network_update_is_typed_unsupported)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto c = client_for(srv, ex);
        auto h = co_await new_sandbox(*c);
        e2b::network_update u;
        u.deny_out = {"0.0.0.0/0"};
        auto r = co_await c->async_update_network(h.sandbox_id, u);
        BOOST_REQUIRE(!r);
        BOOST_TEST((r.error() == errc::unsupported));
        BOOST_TEST(r.error().http_status() == 501);
        std::string const missing_id = "nosuchsandbox";
        auto missing = co_await c->async_update_network(missing_id, u);
        BOOST_TEST((!missing && missing.error() == errc::not_found));
    });
}

BOOST_AUTO_TEST_CASE(list_filters_template_started_after_order)
{
    local_server_fixture srv;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto c = client_for(srv, ex);
        e2b::metadata_map scope{{"suite", "list-filters"}};
        auto a = co_await new_sandbox(*c, scope);
        auto b = co_await new_sandbox(*c, scope);
        auto ids = [](e2b::sandbox_page const& p) {
            std::vector<std::string> out;
            for (auto const& s : p.sandboxes) out.push_back(s.sandbox_id);
            return out;
        };
        e2b::list_params p;
        p.metadata = scope;
        p.ascending = true;
        auto asc = co_await c->async_list_sandboxes(p);
        BOOST_REQUIRE_MESSAGE(asc, asc.error().to_string());
        BOOST_TEST((ids(*asc) == std::vector<std::string>{a.sandbox_id, b.sandbox_id}));
        p.ascending = false;
        auto desc = co_await c->async_list_sandboxes(p);
        BOOST_REQUIRE(desc);
        BOOST_TEST((ids(*desc) == std::vector<std::string>{b.sandbox_id, a.sandbox_id}));

        p.ascending.reset();
        p.template_id = "base";
        auto base = co_await c->async_list_sandboxes(p);
        BOOST_TEST((base && base->sandboxes.size() == 2u));
        p.template_id = "no-such-template";
        auto other = co_await c->async_list_sandboxes(p);
        BOOST_TEST((other && other->sandboxes.empty()));

        p.template_id.reset();
        p.started_after = "2000-01-01T00:00:00Z";
        auto since_2000 = co_await c->async_list_sandboxes(p);
        BOOST_TEST((since_2000 && since_2000->sandboxes.size() == 2u));
        p.started_after = "2200-01-01T00:00:00Z";
        auto future = co_await c->async_list_sandboxes(p);
        BOOST_TEST((future && future->sandboxes.empty()));
        // Past what the server's clock holds (2262): after every start, not a wrapped date.
        p.started_after = "9999-12-31T23:59:59.999Z";
        auto far = co_await c->async_list_sandboxes(p);
        BOOST_TEST((far && far->sandboxes.empty()));
        // Before it (Go's zero time): before every start.
        p.started_after = "0001-01-01T00:00:00Z";
        auto zero = co_await c->async_list_sandboxes(p);
        BOOST_TEST((zero && zero->sandboxes.size() == 2u));
        p.started_after = "2000-01-01T02:00:00+02:00";
        auto offset = co_await c->async_list_sandboxes(p);
        BOOST_TEST((offset && offset->sandboxes.size() == 2u));
        p.started_after = "yesterday";
        auto bad = co_await c->async_list_sandboxes(p);
        BOOST_TEST((!bad && bad.error() == errc::invalid_argument));
    });
}

BOOST_AUTO_TEST_SUITE_END()
