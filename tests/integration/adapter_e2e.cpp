// The E2B adapter end to end: create_e2b_sandbox/connect_e2b_sandbox with the
// real client (make_client) against the in-process local server.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_recovery.hpp>
#include <prism_e2b/process_ref.hpp>
#include <prism_e2b/process_sessions.hpp>

#include "adapter_requests.hpp"
#include "coro_helpers.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <mutex>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

// Helpers are plain functions: g++ 12 double-destroys braced or lambda
// temporaries that appear inside a co_await expression.
e2b_connect_options connect_options(local_server_fixture& f, std::string id)
{
    e2b_connect_options o;
    o.api_key = f.api_key();
    o.client_options.api_url = f.api_url();
    o.client_options.sandbox_url = f.sandbox_url();
    o.sandbox_id = std::move(id);
    return o;
}

/// Runs `sh -c script` and returns trimmed stdout ("" on failure).
asio::awaitable<std::string> sh(std::shared_ptr<e2b_sandbox> sb, std::string script)
{
    auto r = co_await sb->async_exec(shell(std::move(script)));
    if (!r) co_return "<error: " + r.error().to_string() + ">";
    auto s = r->stdout_data;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    co_return s;
}

/// True once the process whose pid sits in `pidfile` is gone.
asio::awaitable<bool> process_gone(std::shared_ptr<e2b_sandbox> sb, std::string pidfile)
{
    auto const script = "p=$(cat " + pidfile + "); if kill -0 $p 2>/dev/null; then echo alive; else echo gone; fi";
    auto const gone = [&]() -> asio::awaitable<bool> { co_return co_await sh(sb, script) == "gone"; };
    co_return co_await async_eventually(gone, std::chrono::seconds(30));
}

// Named options: g++ 12 mis-destroys braced temporaries inside a co_await full-expression.
stop_options const default_stop{};
close_options const default_close{};
close_options const with_snapshot{.export_snapshot = true};

}  // namespace

BOOST_AUTO_TEST_SUITE(test_adapter_e2e)

BOOST_AUTO_TEST_CASE(create_exec_status_pause_resume_kill)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto o = server_options(f);
            o.labels = {{"app.owner", "alice"}};
            o.timeout = std::chrono::minutes(10);
            auto created = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(created.has_value(), (created ? "" : created.error().to_string()));
            auto sb = *created;

            // The workdir exists and is the default cwd.
            {
                auto v1_ = co_await sh(sb, "pwd");
                BOOST_TEST(v1_ == "/workspace");
            }
            {
                auto v2_ = co_await sh(sb, "touch f && ls");
                BOOST_TEST(v2_ == "f");
            }

            collector streamed;
            auto req = shell("echo out; echo err >&2; exit 3");
            req.on_data = streamed.cb();
            auto r = co_await sb->async_exec(std::move(req));
            BOOST_TEST_REQUIRE(r.has_value());
            BOOST_TEST(r->exit_code.value_or(-1) == 3);
            BOOST_TEST((r->outcome == exit_outcome::exited));
            BOOST_TEST(r->stdout_data == "out\n");
            BOOST_TEST(r->stderr_data == "err\n");
            BOOST_TEST(streamed.get().find("out") != std::string::npos);

            // argv, no shell: the metacharacters arrive verbatim.
            exec_file_request ef;
            ef.file = "/bin/echo";
            ef.args = {"a b", "$HOME", ";", "x"};
            ef.env = {{"GREETING", "hi"}};
            auto e = co_await sb->async_exec_file(std::move(ef));
            BOOST_TEST_REQUIRE(e.has_value());
            BOOST_TEST(e->stdout_data == "a b $HOME ; x\n");
            auto envr = shell("echo $GREETING");
            envr.env = {{"GREETING", "hi"}};
            auto env_out = co_await sb->async_exec(std::move(envr));
            BOOST_TEST(env_out->stdout_data == "hi\n");

            auto st = co_await sb->async_status();
            BOOST_TEST_REQUIRE(st.has_value());
            BOOST_TEST((st->state == sandbox_state::running));
            BOOST_TEST(st->template_name == "base");
            BOOST_TEST(st->command_count == 5u);

            auto p = co_await sb->async_pause(keep_memory);
            BOOST_TEST_REQUIRE(p.has_value(), (p ? "" : p.error().to_string()));
            BOOST_TEST((p->what == pause_outcome::kind::paused));
            auto paused = co_await sb->async_exec(shell("true"));
            BOOST_TEST((!paused && paused.error() == errc::paused));
            auto st2 = co_await sb->async_status();
            BOOST_TEST((st2->state == sandbox_state::paused));
            auto again = co_await sb->async_pause(keep_memory);
            BOOST_TEST((again.has_value() && again->what == pause_outcome::kind::already_paused));

            auto res = co_await sb->async_resume();
            BOOST_TEST_REQUIRE(res.has_value(), (res ? "" : res.error().to_string()));
            {
                auto v3_ = co_await sh(sb, "cat f; echo ok");
                BOOST_TEST(v3_ == "ok");
            }

            // Filesystem-only pause keeps files.
            auto pf = co_await sb->async_pause(filesystem_only);
            BOOST_TEST_REQUIRE(pf.has_value(), (pf ? "" : pf.error().to_string()));
            BOOST_TEST((pf->snapshot == snapshot_kind::filesystem));
            {
                // Required, with the reason: after a failed resume every exec below would only
                // report "the sandbox is paused", hiding why.
                auto v4_ = co_await sb->async_resume();
                BOOST_TEST_REQUIRE(v4_.has_value(), (v4_ ? "" : v4_.error().to_string()));
            }
            {
                auto v5_ = co_await sh(sb, "ls");
                BOOST_TEST(v5_ == "f");
            }

            auto stop = co_await sb->async_stop(default_stop);
            BOOST_TEST(stop.has_value());
            {
                auto v6_ = co_await sb->async_status();
                BOOST_TEST((v6_->state == sandbox_state::paused));
            }

            {
                auto v7_ = co_await sb->async_kill();
                BOOST_TEST(v7_.has_value());
            }
            {
                auto v8_ = co_await sb->async_kill();
                BOOST_TEST(v8_.has_value());
            }
            {
                auto v9_ = co_await sb->async_close(default_close);
                BOOST_TEST(v9_.has_value());
            }
            {
                auto v10_ = co_await sb->async_status();
                BOOST_TEST((v10_->state == sandbox_state::killed));
            }
        },
        long_test, 2);
}

BOOST_AUTO_TEST_CASE(pause_503_leaves_running_and_close_export_destroys_nothing)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto sb_r = co_await async_create_e2b_sandbox(ex, server_options(f));
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;
            f.server().faults().fail_next_pauses(1);
            auto p = co_await sb->async_pause(keep_memory);
            BOOST_TEST_REQUIRE(p.has_value(), (p ? "" : p.error().to_string()));
            BOOST_TEST((p->what == pause_outcome::kind::refused_busy));
            BOOST_TEST(p->http_status == 503);
            {
                auto v11_ = co_await sb->async_status();
                BOOST_TEST((v11_->state == sandbox_state::running));
            }
            {
                auto v12_ = co_await sh(sb, "echo alive");
                BOOST_TEST(v12_ == "alive");
            }

            auto c = co_await sb->async_close(with_snapshot);
            BOOST_TEST((!c && c.error() == errc::unsupported));
            {
                auto v13_ = co_await sh(sb, "echo still");
                BOOST_TEST(v13_ == "still");
            }
            {
                auto v14_ = co_await sb->async_kill();
                BOOST_TEST(v14_.has_value());
            }
        },
        long_test, 2);
}

BOOST_AUTO_TEST_CASE(connect_fails_closed_and_never_resumes_by_itself)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto o = server_options(f);
            o.labels = {{"app.owner", "alice"}};
            auto sb_r = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;
            co_await sb->async_pause(filesystem_only);

            auto wrong = connect_options(f, sb->id());
            wrong.expected_labels = {{"app.owner", "mallory"}};
            wrong.resume = true;
            auto w = co_await async_connect_e2b_sandbox(ex, wrong);
            BOOST_TEST((!w && w.error() == errc::wrong_owner));

            auto good = connect_options(f, sb->id());
            good.expected_labels = {{"app.owner", "alice"}};
            good.timeout = std::chrono::minutes(7);
            auto c = co_await async_connect_e2b_sandbox(ex, good);
            BOOST_TEST_REQUIRE(c.has_value(), (c ? "" : c.error().to_string()));
            auto again = *c;
            {
                auto v15_ = co_await again->async_status();
                BOOST_TEST((v15_->state == sandbox_state::paused));  // still paused
            }
            auto e = co_await again->async_exec(shell("true"));
            BOOST_TEST((!e && e.error() == errc::paused));
            {
                auto v16_ = co_await again->async_status();
                BOOST_TEST((v16_->state == sandbox_state::paused));
            }
            {
                auto v17_ = co_await again->async_resume();
                BOOST_TEST(v17_.has_value());
            }
            {
                auto v18_ = co_await sh(again, "pwd");
                BOOST_TEST(v18_ == "/workspace");
            }
            {
                auto v19_ = co_await again->async_kill();
                BOOST_TEST(v19_.has_value());
            }
        },
        long_test, 2);
}

BOOST_AUTO_TEST_CASE(fan_out_200_execs_never_exceed_max_concurrent_execs)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto o = server_options(f);
            o.limits.max_concurrent_execs = 8;
            o.limits.max_commands = 256;
            auto sb_r = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;
            std::atomic<int> ok{0}, done{0};
            for (int i = 0; i < 200; ++i) {
                asio::co_spawn(ex, sb->async_exec(shell("sleep 0.02; echo " + std::to_string(i))),
                               [&, i](std::exception_ptr, result<exec_result> r) {
                                   if (r && r->exit_code == 0 && r->stdout_data == std::to_string(i) + "\n") ++ok;
                                   ++done;
                               });
            }
            auto const all_done = [&] { return done.load() == 200; };
            BOOST_TEST(co_await async_eventually(all_done, std::chrono::seconds(120)));
            BOOST_TEST(ok.load() == 200);
            auto const peak = f.server().peak_concurrent_execs(sb->id());
            BOOST_TEST(peak <= 8u);
            BOOST_TEST(peak >= 2u);  // it did run in parallel
            {
                auto v20_ = co_await sb->async_status();
                BOOST_TEST(v20_->command_count == 200u);
            }
            co_await sb->async_kill();
        },
        std::chrono::seconds(300), 2);
}

BOOST_AUTO_TEST_CASE(output_overflow_timeout_and_cancellation_stop_the_remote_process)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto o = server_options(f);
            o.limits.max_output_bytes = 4096;
            o.limits.max_concurrent_execs = 2;
            auto sb_r = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;

            auto over = co_await sb->async_exec(shell("echo $$ > /workspace/over.pid; exec yes"));
            BOOST_TEST_REQUIRE(!over);
            BOOST_TEST((over.error() == errc::limit_exceeded));
            {
                auto v21_ = co_await process_gone(sb, "/workspace/over.pid");
                BOOST_TEST(v21_);
            }

            auto treq = shell("echo $$ > /workspace/t.pid; exec sleep 60");
            treq.timeout = std::chrono::milliseconds(500);
            auto t = co_await sb->async_exec(std::move(treq));
            BOOST_TEST_REQUIRE(t.has_value(), (t ? "" : t.error().to_string()));
            BOOST_TEST((t->outcome == exit_outcome::timed_out));
            BOOST_TEST(!t->exit_code.has_value());
            {
                auto v22_ = co_await process_gone(sb, "/workspace/t.pid");
                BOOST_TEST(v22_);
            }

            auto c = co_await cancel_after(sb->async_exec(shell("echo $$ > /workspace/c.pid; exec sleep 60")),
                                           std::chrono::milliseconds(500));
            BOOST_TEST_REQUIRE(!c);
            BOOST_TEST((c.error() == errc::cancelled));
            {
                auto v23_ = co_await process_gone(sb, "/workspace/c.pid");
                BOOST_TEST(v23_);
            }

            // A cut stream is an unknown outcome, never an exit code.
            f.server().faults().cut_next_streams(3, 1);
            auto cut = co_await sb->async_exec(shell("echo hello; sleep 0.2; echo more"));
            BOOST_TEST_REQUIRE(cut.has_value(), (cut ? "" : cut.error().to_string()));
            BOOST_TEST((cut->outcome == exit_outcome::unknown));
            BOOST_TEST(!cut->exit_code.has_value());
            co_await sb->async_kill();
        },
        long_test, 2);
}

BOOST_AUTO_TEST_CASE(processes_io_attach_after_memory_and_filesystem_pause)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto sb_r = co_await async_create_e2b_sandbox(ex, server_options(f));
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;

            collector out;
            auto req = proc("/bin/cat");
            req.on_data = out.cb();
            auto cat = co_await sb->async_start_process(std::move(req));
            BOOST_TEST_REQUIRE(cat.has_value(), (cat ? "" : cat.error().to_string()));
            BOOST_TEST((*cat)->ref().rfind("prism-e2b-proc:", 0) == 0u);
            {
                auto v24_ = co_await (*cat)->async_write("ping\n");
                BOOST_TEST(v24_.has_value());
            }
            auto const echoed = [&] { return out.get() == "ping\n"; };
            BOOST_TEST(co_await async_eventually(echoed, std::chrono::seconds(10)), out.get());
            {
                auto v25_ = co_await (*cat)->async_close_stdin();
                BOOST_TEST(v25_.has_value());
            }
            auto end = co_await (*cat)->async_wait(std::chrono::milliseconds(5000));
            BOOST_TEST_REQUIRE(end.has_value(), (end ? "" : end.error().to_string()));
            BOOST_TEST(end->exit_code.value_or(-1) == 0);

            // Memory pause: the process survives, attach by ref works after resume.
            auto sleeper = co_await sb->async_start_process(proc("/bin/sleep", "600"));
            BOOST_TEST_REQUIRE(sleeper.has_value());
            auto ref = (*sleeper)->ref();
            auto waited = co_await (*sleeper)->async_wait(std::chrono::milliseconds(100));
            BOOST_TEST((!waited && waited.error() == errc::timed_out));
            {
                auto v26_ = co_await (*sleeper)->async_release();
                BOOST_TEST(v26_.has_value());
            }
            {
                auto v27_ = co_await sb->async_pause(keep_memory);
                BOOST_TEST(v27_->is_paused());
            }
            {
                auto v28_ = co_await sb->async_resume();
                BOOST_TEST(v28_.has_value());
            }
            auto attached = co_await sb->async_attach_process(ref, nullptr);
            BOOST_TEST_REQUIRE(attached.has_value(), (attached ? "" : attached.error().to_string()));
            BOOST_TEST_REQUIRE(attached->get() != nullptr);
            BOOST_TEST((*attached)->pid() == (*sleeper)->pid());
            {
                auto v29_ = co_await (*attached)->async_signal(process_signal::sigterm);
                BOOST_TEST(v29_.has_value());
            }
            auto term = co_await (*attached)->async_wait(std::chrono::milliseconds(5000));
            BOOST_TEST_REQUIRE(term.has_value());
            BOOST_TEST(!term->exit_code.has_value());
            BOOST_TEST((term->outcome == exit_outcome::killed));
            auto gone = co_await sb->async_attach_process(ref, nullptr);
            BOOST_TEST((gone.has_value() && gone->get() == nullptr));

            // Filesystem-only pause: the process is gone; attach is null; nothing restarts.
            auto second = co_await sb->async_start_process(proc("/bin/sleep", "600"));
            BOOST_TEST_REQUIRE(second.has_value());
            auto ref2 = (*second)->ref();
            {
                auto v30_ = co_await sb->async_pause(filesystem_only);
                BOOST_TEST(v30_->is_paused());
            }
            auto null_paused = co_await sb->async_attach_process(ref2, nullptr);
            BOOST_TEST((null_paused.has_value() && null_paused->get() == nullptr));
            {
                auto v31_ = co_await sb->async_resume();
                BOOST_TEST(v31_.has_value());
            }
            auto null_after = co_await sb->async_attach_process(ref2, nullptr);
            BOOST_TEST((null_after.has_value() && null_after->get() == nullptr));
            auto e = co_await (*second)->async_wait(std::chrono::milliseconds(5000));
            BOOST_TEST_REQUIRE(e.has_value());
            BOOST_TEST(!e->exit_code.has_value());

            // Kill of a live process.
            auto third = co_await sb->async_start_process(proc("/bin/sleep", "600"));
            {
                auto v32_ = co_await (*third)->async_kill();
                BOOST_TEST(v32_.has_value());
            }
            auto k = co_await (*third)->async_wait(std::chrono::milliseconds(5000));
            BOOST_TEST_REQUIRE(k.has_value());
            BOOST_TEST((k->outcome == exit_outcome::killed));
            BOOST_TEST(!k->exit_code.has_value());
            co_await sb->async_kill();
        },
        long_test, 2);
}

BOOST_AUTO_TEST_CASE(recovery_backend_refuses_each_mismatch)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto o = server_options(f);
            o.labels = {{"app.owner", "alice"}};
            auto sb_r = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;
            auto other_r = co_await async_create_e2b_sandbox(ex, o);
            BOOST_TEST_REQUIRE(other_r.has_value());
            auto other = *other_r;
            auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
            BOOST_TEST_REQUIRE(h.has_value());
            auto ref = (*h)->ref();
            co_await (*h)->async_release();

            auto attempt = [&](std::shared_ptr<e2b_sandbox> s, std::string id, std::string ws, label_map labels,
                               std::string r) -> asio::awaitable<bool> {
                e2b_process_recovery_expectations e;
                e.expected_sandbox_id = std::move(id);
                e.expected_workspace = std::move(ws);
                e.expected_labels = std::move(labels);
                auto backend = create_e2b_process_recovery_backend(std::move(s), std::move(e));
                auto got = co_await backend->async_attach(std::move(r), nullptr);
                co_return got.has_value() && *got != nullptr;
            };
            label_map good = {{"app.owner", "alice"}}, bad = {{"app.owner", "bob"}}, missing = {{"x", "y"}};
            std::string const id = sb->id(), oid = other->id(), ws = "/workspace", elsewhere = "/tmp";
            std::string const garbage = "prism-e2b-proc:AAAA";
            {
                auto v33_ = co_await attempt(sb, oid, ws, good, ref);
                BOOST_TEST(!v33_);
            }
            {
                auto v34_ = co_await attempt(other, oid, ws, good, ref);
                BOOST_TEST(!v34_);  // a ref of another sandbox
            }
            {
                auto v35_ = co_await attempt(sb, id, elsewhere, good, ref);
                BOOST_TEST(!v35_);
            }
            {
                auto v36_ = co_await attempt(sb, id, ws, bad, ref);
                BOOST_TEST(!v36_);
            }
            {
                auto v37_ = co_await attempt(sb, id, ws, missing, ref);
                BOOST_TEST(!v37_);
            }
            {
                auto v38_ = co_await attempt(sb, id, ws, good, garbage);
                BOOST_TEST(!v38_);
            }
            {
                auto v39_ = co_await attempt(sb, id, ws, good, ref);
                BOOST_TEST(v39_);
            }
            co_await sb->async_kill();
            co_await other->async_kill();
        },
        long_test, 2);
}

BOOST_AUTO_TEST_CASE(process_sessions_over_the_real_sandbox)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto sb_r = co_await async_create_e2b_sandbox(ex, server_options(f));
            BOOST_TEST_REQUIRE(sb_r.has_value());
            auto sb = *sb_r;
            process_sessions_options so;
            so.sandbox = sb;
            so.limits.max_output_chunk = 5;
            auto ps = *process_sessions::create(ex, so);
            auto id = co_await ps->async_start("alice", proc("/bin/sh", "-c", "read x; echo got:$x; exit 4"));
            BOOST_TEST_REQUIRE(id.has_value(), (id ? "" : id.error().to_string()));
            {
                auto v40_ = co_await ps->async_input("alice", *id, "hello\n");
                BOOST_TEST(v40_.has_value());
            }
            auto w = co_await ps->async_wait("alice", *id, std::chrono::milliseconds(5000));
            BOOST_TEST_REQUIRE(w.has_value());
            BOOST_TEST(w->exit_code.value_or(-1) == 4);
            std::string all;
            std::uint64_t cursor = 0;
            for (int i = 0; i < 20; ++i) {
                auto page = ps->output("alice", *id, cursor);
                BOOST_TEST_REQUIRE(page.has_value());
                BOOST_TEST(page->data.size() <= 5u);
                all += page->data;
                cursor = page->cursor;
                if (page->eof) break;
            }
            BOOST_TEST(all == "got:hello\n");
            auto stranger = co_await ps->async_kill("mallory", *id);
            BOOST_TEST((!stranger && stranger.error() == errc::wrong_owner));
            co_await sb->async_kill();
        },
        long_test, 2);
}

BOOST_AUTO_TEST_SUITE_END()
