// start_process / attach_process and the handle: refs, I/O, kill, release,
// wait, and attach across memory and filesystem pauses.
#include <prism_e2b/process_ref.hpp>

#include "adapter_test_util.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;

namespace {

std::vector<std::string> const& no_args()
{
    static std::vector<std::string> const v;
    return v;
}

// A template (the closure is trivially destructible): a std::function temporary
// built inside co_await would hit the g++ 12 double-destruction bug. Callers
// still pass a named closure so no temporary lives across the co_await.

}  // namespace

BOOST_AUTO_TEST_SUITE(test_processes)

BOOST_AUTO_TEST_CASE(start_process_gives_a_non_secret_ref_and_streams_output)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running(true));
    collector out;
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = proc("/bin/cat");
        req.env = {{"SECRET_ENV", "do-not-put-in-ref"}};
        req.on_data = out.cb();
        auto h = co_await sb->async_start_process(std::move(req));
        BOOST_TEST_REQUIRE(h.has_value());
        BOOST_TEST((*h)->pid() == 100u);
        auto const& ref = (*h)->ref();
        BOOST_TEST(ref.rfind("prism-e2b-proc:", 0) == 0u);
        BOOST_TEST(ref.find("do-not-put-in-ref") == std::string::npos);
        auto rec = decode_process_ref(ref);
        BOOST_TEST_REQUIRE(rec.has_value());
        BOOST_TEST(rec->sandbox_id == sb->id());
        BOOST_TEST(rec->pid == 100u);
        BOOST_TEST(rec->workspace == "/workspace");
        BOOST_TEST(rec->command_fingerprint == command_fingerprint("/bin/cat", no_args()));

        auto w = co_await (*h)->async_write("hello");
        BOOST_TEST(w.has_value());
        {
            auto const ready = [&] { return out.get() == "hello"; };
            BOOST_TEST(co_await async_eventually(ready));
        }
        auto c = co_await (*h)->async_close_stdin();
        BOOST_TEST(c.has_value());
        fake->end_process(100, 7);
        auto e = co_await (*h)->async_wait(std::chrono::milliseconds(2000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST(e->exit_code.value_or(-99) == 7);
        BOOST_TEST((e->outcome == exit_outcome::exited));
    });
    auto p = fake->start_params().at(0);
    BOOST_TEST(p.timeout.count() == 0);  // a long-running process gets no Connect deadline
    BOOST_TEST(p.stdin == true);
    BOOST_TEST(fake->process(100)->stdin_data == "hello");
    BOOST_TEST(fake->process(100)->stdin_closed);
}

BOOST_AUTO_TEST_CASE(wait_with_a_timeout_is_timed_out_and_kill_reports_killed_without_code)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        BOOST_TEST_REQUIRE(h.has_value());
        auto w = co_await (*h)->async_wait(std::chrono::milliseconds(30));
        BOOST_TEST_REQUIRE(!w);
        BOOST_TEST((w.error() == errc::timed_out));
        auto k = co_await (*h)->async_kill();
        BOOST_TEST(k.has_value());
        auto e = co_await (*h)->async_wait(std::chrono::milliseconds(1000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST((e->outcome == exit_outcome::killed));
        BOOST_TEST(!e->exit_code.has_value());
        auto k2 = co_await (*h)->async_kill();  // already ended: not an error, no second signal
        BOOST_TEST(k2.has_value());
    });
    BOOST_TEST(fake->calls_named("send_signal").size() == 1u);
    BOOST_TEST(fake->calls_named("send_signal").at(0).detail == "pid=100 SIGKILL");
}

BOOST_AUTO_TEST_CASE(wait_honours_cancellation_and_the_process_keeps_running)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        BOOST_TEST_REQUIRE(h.has_value());
        auto w = co_await cancel_after((*h)->async_wait(std::nullopt), std::chrono::milliseconds(30));
        BOOST_TEST_REQUIRE(!w);
        BOOST_TEST((w.error() == errc::cancelled));
        BOOST_TEST(!fake->process(100)->ended);
        BOOST_TEST(fake->count("send_signal") == 0u);
    });
}

BOOST_AUTO_TEST_CASE(signal_sends_the_named_signal)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        auto s = co_await (*h)->async_signal(process_signal::sigterm);
        BOOST_TEST(s.has_value());
        auto e = co_await (*h)->async_wait(std::chrono::milliseconds(1000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST(!e->exit_code.has_value());
        BOOST_TEST((e->outcome == exit_outcome::killed));
    });
    BOOST_TEST(fake->calls_named("send_signal").at(0).detail == "pid=100 SIGTERM");
}

BOOST_AUTO_TEST_CASE(release_detaches_and_attach_reconnects_by_ref)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    collector out;
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        auto ref = (*h)->ref();
        auto r = co_await (*h)->async_release();
        BOOST_TEST(r.has_value());
        BOOST_TEST(!fake->process(100)->ended);  // release never stops the process
        auto w = co_await (*h)->async_wait(std::chrono::milliseconds(10));
        BOOST_TEST(!w);

        auto a = co_await sb->async_attach_process(ref, out.cb());
        BOOST_TEST_REQUIRE(a.has_value());
        BOOST_TEST_REQUIRE(a->get() != nullptr);
        BOOST_TEST((*a)->pid() == 100u);
        BOOST_TEST((*a)->ref() == ref);
        fake->push_event(100, stdout_event("after attach"));
        {
            auto const ready = [&] { return out.get() == "after attach"; };
            BOOST_TEST(co_await async_eventually(ready));
        }
        fake->end_process(100, 0);
        auto e = co_await (*a)->async_wait(std::chrono::milliseconds(1000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST(e->exit_code.value_or(-1) == 0);
    });
    BOOST_TEST(fake->count("connect_process") == 1u);
    BOOST_TEST(fake->calls_named("connect_process").at(0).detail == "pid=100 timeout=0");
}

BOOST_AUTO_TEST_CASE(attach_returns_null_for_bad_refs_and_gone_processes)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        auto rec = *decode_process_ref((*h)->ref());
        fake->clear_calls();

        auto malformed = co_await sb->async_attach_process("prism-e2b-proc:!!!", nullptr);
        BOOST_TEST_REQUIRE(malformed.has_value());
        BOOST_TEST(malformed->get() == nullptr);
        auto other_rec = rec;
        other_rec.sandbox_id = "sbx-other";
        auto other = co_await sb->async_attach_process(encode_process_ref(other_rec), nullptr);
        BOOST_TEST((other.has_value() && other->get() == nullptr));
        auto ws_rec = rec;
        ws_rec.workspace = "/elsewhere";
        auto ws = co_await sb->async_attach_process(encode_process_ref(ws_rec), nullptr);
        BOOST_TEST((ws.has_value() && ws->get() == nullptr));
        BOOST_TEST(fake->calls().empty());  // refused before any vendor call

        auto fp_rec = rec;
        fp_rec.command_fingerprint = command_fingerprint("/bin/sh", N({"-c", "evil"}));
        auto fp = co_await sb->async_attach_process(encode_process_ref(fp_rec), nullptr);
        BOOST_TEST((fp.has_value() && fp->get() == nullptr));  // pid runs another command
        BOOST_TEST(fake->count("connect_process") == 0u);

        auto k = co_await (*h)->async_kill();
        BOOST_TEST(k.has_value());
        auto gone = co_await sb->async_attach_process((*h)->ref(), nullptr);
        BOOST_TEST_REQUIRE(gone.has_value());
        BOOST_TEST(gone->get() == nullptr);
    });
}

BOOST_AUTO_TEST_CASE(attach_after_memory_pause_and_resume_works)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        auto ref = (*h)->ref();
        co_await (*h)->async_release();
        auto p = co_await sb->async_pause(keep_memory);
        BOOST_TEST_REQUIRE(p.has_value());
        fake->clear_calls();
        auto while_paused = co_await sb->async_attach_process(ref, nullptr);
        BOOST_TEST_REQUIRE(!while_paused);  // activity never resumes
        BOOST_TEST((while_paused.error() == errc::paused));
        BOOST_TEST(fake->calls().empty());
        auto r = co_await sb->async_resume();
        BOOST_TEST(r.has_value());
        auto a = co_await sb->async_attach_process(ref, nullptr);
        BOOST_TEST_REQUIRE(a.has_value());
        BOOST_TEST(a->get() != nullptr);
    });
}

BOOST_AUTO_TEST_CASE(attach_after_filesystem_pause_returns_null_and_processes_are_not_restarted)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        auto ref = (*h)->ref();
        auto p = co_await sb->async_pause(filesystem_only);
        BOOST_TEST_REQUIRE(p.has_value());
        BOOST_TEST((p->snapshot == snapshot_kind::filesystem));
        // The live handle learns its process is gone: unknown, never an exit code.
        auto e = co_await (*h)->async_wait(std::chrono::milliseconds(1000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST((e->outcome == exit_outcome::unknown));
        BOOST_TEST(!e->exit_code.has_value());
        fake->clear_calls();
        auto while_paused = co_await sb->async_attach_process(ref, nullptr);
        BOOST_TEST_REQUIRE(while_paused.has_value());
        BOOST_TEST(while_paused->get() == nullptr);
        BOOST_TEST(fake->calls().empty());
        auto r = co_await sb->async_resume();
        BOOST_TEST(r.has_value());
        auto after = co_await sb->async_attach_process(ref, nullptr);
        BOOST_TEST_REQUIRE(after.has_value());
        BOOST_TEST(after->get() == nullptr);
        BOOST_TEST(fake->count("start_process") == 0u);  // nothing restarted
        BOOST_TEST(fake->count("connect_process") == 0u);
    });
}

BOOST_AUTO_TEST_CASE(a_stream_cut_by_a_memory_pause_is_reattached_on_resume)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    fake->cut_streams_on_pause(true);
    collector out;
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = proc("/bin/sleep", "600");
        req.on_data = out.cb();
        auto h = co_await sb->async_start_process(std::move(req));
        BOOST_TEST_REQUIRE(h.has_value());
        co_await sb->async_pause(keep_memory);
        // The cut is not an outcome: the process lives on in the snapshot.
        auto w = co_await (*h)->async_wait(std::chrono::milliseconds(60));
        BOOST_TEST_REQUIRE(!w);
        BOOST_TEST((w.error() == errc::timed_out));
        BOOST_TEST(fake->count("connect_process") == 0u);  // nothing while paused
        co_await sb->async_resume();
        {
            auto const ready = [&] { return fake->count("connect_process") == 1u; };
            BOOST_TEST(co_await async_eventually(ready));
        }
        fake->push_event(100, stdout_event("still here"));
        {
            auto const ready = [&] { return out.get() == "still here"; };
            BOOST_TEST(co_await async_eventually(ready));
        }
        fake->end_process(100, 5);
        auto e = co_await (*h)->async_wait(std::chrono::milliseconds(2000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST(e->exit_code.value_or(-1) == 5);
    });
}

BOOST_AUTO_TEST_CASE(cancelled_start_stops_the_process_it_may_have_started)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        fake->fail_next("start_process", error(errc::unauthenticated, "no", {"process.Start", 401}));
        auto r = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        BOOST_TEST((!r && r.error() == errc::unauthenticated));
        BOOST_TEST(fake->count("send_signal") == 0u);  // nothing started: nothing to stop
        auto tag = fake->start_params().at(0).tag;
        BOOST_TEST_REQUIRE(tag.has_value());
        BOOST_TEST(tag->rfind("prism-proc-", 0) == 0u);
    });
}

BOOST_AUTO_TEST_CASE(kill_of_the_sandbox_ends_live_handles_as_unknown)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        auto k = co_await sb->async_kill();
        BOOST_TEST(k.has_value());
        auto e = co_await (*h)->async_wait(std::chrono::milliseconds(1000));
        BOOST_TEST_REQUIRE(e.has_value());
        BOOST_TEST((e->outcome == exit_outcome::unknown));
        BOOST_TEST(!e->exit_code.has_value());
    });
}

BOOST_AUTO_TEST_CASE(process_io_on_a_paused_sandbox_is_paused_without_calls)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        auto h = co_await sb->async_start_process(proc("/bin/cat"));
        co_await sb->async_pause(keep_memory);
        fake->clear_calls();
        auto w = co_await (*h)->async_write("x");
        BOOST_TEST((!w && w.error() == errc::paused));
        auto s = co_await (*h)->async_signal(process_signal::sigterm);
        BOOST_TEST((!s && s.error() == errc::paused));
        BOOST_TEST(fake->calls().empty());
        co_await sb->async_resume();
        auto w2 = co_await (*h)->async_write("x");
        BOOST_TEST(w2.has_value());
        co_await (*h)->async_kill();
    });
}

BOOST_AUTO_TEST_CASE(start_process_counts_against_max_commands)
{
    // contract.md: a long-running process is a command like an exec.
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(process_script{});
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.limits.max_commands = 2;
        auto sb = co_await make_sandbox(ex, fake, o);
        auto e = co_await sb->async_exec(shell("true"));
        BOOST_TEST(e.has_value());
        auto h = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        BOOST_TEST_REQUIRE(h.has_value());
        auto over = co_await sb->async_start_process(proc("/bin/sleep", "600"));
        BOOST_TEST_REQUIRE(!over);
        BOOST_TEST((over.error() == errc::limit_exceeded));
        auto over_exec = co_await sb->async_exec(shell("true"));
        BOOST_TEST_REQUIRE(!over_exec);
        BOOST_TEST((over_exec.error() == errc::limit_exceeded));
        auto st = co_await sb->async_status();
        BOOST_TEST_REQUIRE(st.has_value());
        BOOST_TEST(st->command_count == 2u);
        BOOST_TEST(fake->count("start_process") == 2u);  // the refused ones made no call
        co_await (*h)->async_kill();
    });
}

BOOST_AUTO_TEST_SUITE_END()
