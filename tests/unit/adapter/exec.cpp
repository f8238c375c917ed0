// exec / exec_file against the scripted client: argv, output, exit codes,
// timeout, cancellation, overflow, cut streams and the governor's limits.
#include "adapter_test_util.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;

namespace {

process_script exits_with(int code, std::vector<e2b::process_event> events)
{
    process_script s;
    s.events = std::move(events);
    s.exit_code = code;
    return s;
}

process_script runs_until_signalled(std::vector<e2b::process_event> events = {})
{
    process_script s;
    s.events = std::move(events);
    s.after = process_script::then::wait_for_signal;
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_exec)

BOOST_AUTO_TEST_CASE(exec_runs_sh_c_in_the_workdir_and_captures_output)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(exits_with(0, {stdout_event("hi\n"), stderr_event("warn\n")}));
    std::string streamed;
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = shell("echo hi");
        req.env = {{"A", "1"}};
        req.on_data = [&](output_stream s, std::string_view d) {
            streamed += (s == output_stream::stderr_stream ? "E:" : "O:") + std::string(d);
        };
        co_return co_await sb->async_exec(std::move(req));
    });
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->exit_code.value_or(-99) == 0);
    BOOST_TEST((r->outcome == exit_outcome::exited));
    BOOST_TEST(r->stdout_data == "hi\n");
    BOOST_TEST(r->stderr_data == "warn\n");
    BOOST_TEST(streamed == "O:hi\nE:warn\n");
    auto p = fake->start_params().at(0);
    BOOST_TEST(p.process.cmd == "/bin/sh");
    BOOST_TEST(p.process.args == (std::vector<std::string>{"-c", "echo hi"}), boost::test_tools::per_element());
    BOOST_TEST(p.process.cwd.value_or("") == "/workspace");
    BOOST_TEST(p.process.envs.at("A") == "1");
    BOOST_TEST(p.stdin == false);
    // No caller timeout: the Connect deadline is the sandbox's wall time (20 min by default).
    BOOST_TEST(p.timeout.count() == sandbox_limits{}.wall_time.count());
}

BOOST_AUTO_TEST_CASE(exec_file_passes_argv_without_a_shell_and_reports_the_exit_code)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(exits_with(3, {}));
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = argv("/usr/bin/printf", "%s", "a b; rm -rf /");
        req.cwd = "/tmp";
        req.capture_output = false;
        co_return co_await sb->async_exec_file(std::move(req));
    });
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST(r->exit_code.value_or(-99) == 3);
    BOOST_TEST(r->status == "exit status 3");
    auto p = fake->start_params().at(0);
    BOOST_TEST(p.process.cmd == "/usr/bin/printf");
    BOOST_TEST(p.process.args == (std::vector<std::string>{"%s", "a b; rm -rf /"}), boost::test_tools::per_element());
    BOOST_TEST(p.process.cwd.value_or("") == "/tmp");
}

BOOST_AUTO_TEST_CASE(timeout_sends_sigkill_and_reports_timed_out_without_exit_code)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(runs_until_signalled({stdout_event("partial")}));
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = argv("/bin/sleep", "60");
        req.timeout = std::chrono::milliseconds(50);
        co_return co_await sb->async_exec_file(std::move(req));
    });
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST((r->outcome == exit_outcome::timed_out));
    BOOST_TEST(!r->exit_code.has_value());
    BOOST_TEST(r->stdout_data == "partial");
    auto sig = fake->calls_named("send_signal");
    BOOST_REQUIRE(sig.size() == 1u);
    BOOST_TEST(sig[0].detail == "pid=100 SIGKILL");
    // The Connect deadline is our timeout plus a margin, so ours fires first.
    BOOST_TEST(fake->start_params().at(0).timeout.count() == 50 + 30000);
}

BOOST_AUTO_TEST_CASE(cancellation_sends_sigkill_and_reports_cancelled)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(runs_until_signalled());
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        co_return co_await cancel_after(sb->async_exec_file(argv("/bin/sleep", "60")), std::chrono::milliseconds(40));
    });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::cancelled));
    auto sig = fake->calls_named("send_signal");
    BOOST_REQUIRE(sig.size() == 1u);
    BOOST_TEST(sig[0].detail == "pid=100 SIGKILL");
    BOOST_TEST((fake->process(100) == nullptr || fake->process(100)->ended));
}

BOOST_AUTO_TEST_CASE(cancellation_with_a_timeout_still_reports_cancelled)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(runs_until_signalled());
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        auto req = argv("/bin/sleep", "60");
        req.timeout = std::chrono::milliseconds(5000);
        co_return co_await cancel_after(sb->async_exec_file(std::move(req)), std::chrono::milliseconds(40));
    });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::cancelled));
    BOOST_TEST(fake->count("send_signal") == 1u);
}

BOOST_AUTO_TEST_CASE(output_overflow_sends_sigkill_and_fails_with_limit_exceeded)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(runs_until_signalled({stdout_event("12345"), stdout_event("6789012345")}));
    std::string streamed;
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        e2b_sandbox_options o;
        o.limits.max_output_bytes = 10;
        auto sb = co_await make_sandbox(ex, fake, o);
        auto req = shell("yes");
        req.on_data = [&](output_stream, std::string_view d) { streamed += d; };
        co_return co_await sb->async_exec(std::move(req));
    });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::limit_exceeded));
    BOOST_TEST(r.error().message().find("max_output_bytes") != std::string::npos);
    BOOST_TEST(streamed == "12345");  // nothing beyond the budget is delivered
    auto sig = fake->calls_named("send_signal");
    BOOST_REQUIRE(sig.size() == 1u);
    BOOST_TEST(sig[0].detail == "pid=100 SIGKILL");
}

BOOST_AUTO_TEST_CASE(a_cut_stream_is_an_unknown_outcome_never_an_exit_code)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    process_script s;
    s.events = {stdout_event("x")};
    s.after = process_script::then::cut;
    fake->script_next_process(s);
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        co_return co_await sb->async_exec(shell("echo x"));
    });
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST((r->outcome == exit_outcome::unknown));
    BOOST_TEST(!r->exit_code.has_value());
    BOOST_TEST(r->stdout_data == "x");
    // Nobody follows it any more: it is stopped rather than left running unowned.
    BOOST_TEST(fake->calls_named("send_signal").at(0).detail == "pid=100 SIGKILL");
}

BOOST_AUTO_TEST_CASE(a_killed_process_has_no_exit_code)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    process_script s;
    s.events = {e2b::end_event{-1, false, "signal: killed", {}}};
    s.after = process_script::then::wait_for_signal;
    fake->script_next_process(s);
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        co_return co_await sb->async_exec(shell("kill -9 $$"));
    });
    BOOST_REQUIRE(r.has_value());
    BOOST_TEST((r->outcome == exit_outcome::killed));
    BOOST_TEST(!r->exit_code.has_value());
    BOOST_TEST(r->status == "signal: killed");
}

BOOST_AUTO_TEST_CASE(max_commands_fails_the_next_command_without_a_vendor_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.limits.max_commands = 2;
        auto sb = co_await make_sandbox(ex, fake, o);
        auto a = co_await sb->async_exec(shell("true"));
        auto b = co_await sb->async_exec(shell("true"));
        BOOST_TEST((a.has_value() && b.has_value()));
        auto c = co_await sb->async_exec(shell("true"));
        BOOST_TEST_REQUIRE(!c);
        BOOST_TEST((c.error() == errc::limit_exceeded));
        BOOST_TEST(fake->count("start_process") == 2u);
    });
}

BOOST_AUTO_TEST_CASE(invalid_commands_and_env_caps_fail_before_any_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.limits.max_env_names = 2;
        o.limits.max_env_bytes = 16;
        auto sb = co_await make_sandbox(ex, fake, o);
        fake->clear_calls();
        auto r1 = shell("true");
        r1.env = {{"1BAD", "x"}};
        auto e1 = co_await sb->async_exec(std::move(r1));
        BOOST_TEST((!e1 && e1.error() == errc::invalid_argument));
        auto r2 = shell("true");
        r2.env = {{"A", "1"}, {"B", "2"}, {"C", "3"}};
        auto e2 = co_await sb->async_exec(std::move(r2));
        BOOST_TEST((!e2 && e2.error() == errc::limit_exceeded));
        auto r3 = shell("true");
        r3.env = {{"A", std::string(40, 'x')}};
        auto e3 = co_await sb->async_exec(std::move(r3));
        BOOST_TEST((!e3 && e3.error() == errc::limit_exceeded));
        auto r4 = argv("/bin/echo", std::string("a\0b", 3));
        auto e4 = co_await sb->async_exec_file(std::move(r4));
        BOOST_TEST((!e4 && e4.error() == errc::invalid_argument));
        BOOST_TEST(fake->calls().empty());
        auto s = co_await sb->async_status();
        BOOST_TEST(s->command_count == 0u);  // rejected commands are not counted
    });
}

BOOST_AUTO_TEST_CASE(concurrent_execs_are_capped_by_the_governor)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    for (int i = 0; i < 6; ++i) fake->script_next_process(runs_until_signalled());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        e2b_sandbox_options o;
        o.limits.max_concurrent_execs = 2;
        auto sb = co_await make_sandbox(ex, fake, o);
        int done = 0;
        for (int i = 0; i < 6; ++i)
            asio::co_spawn(ex, sb->async_exec_file(argv("/bin/sleep", "60")),
                           [&](std::exception_ptr, auto) { ++done; });
        // All six admitted, two started: the other four wait for a slot, which
        // only an ending process frees.
        auto const all_admitted = [&]() { return admitted_at_least(*sb, 6); };
        BOOST_TEST_REQUIRE(co_await async_eventually(all_admitted));
        BOOST_TEST(fake->count("start_process") == 2u);
        for (std::uint32_t pid = 100; pid < 106; ++pid) {
            fake->end_process(pid, 0);
            // Each end frees one slot for the next queued exec (pids follow start order).
            auto const started = std::min<std::size_t>(6, pid - 100 + 3);
            auto const next_started = [&] { return fake->count("start_process") == started; };
            BOOST_TEST_REQUIRE(co_await async_eventually(next_started));
        }
        auto const all_done = [&] { return done == 6; };
        BOOST_TEST(co_await async_eventually(all_done));
        BOOST_TEST(fake->count("start_process") == 6u);
    });
}

BOOST_AUTO_TEST_CASE(a_pause_while_queued_for_a_slot_fails_the_exec_without_a_call)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(runs_until_signalled());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);  // max_concurrent_execs 1
        std::optional<result<exec_result>> first, queued;
        asio::co_spawn(ex, sb->async_exec_file(argv("/bin/sleep", "60")),
                       [&](std::exception_ptr, result<exec_result> r) { first = std::move(r); });
        auto const first_started = [&] { return fake->count("start_process") == 1u; };
        BOOST_TEST_REQUIRE(co_await async_eventually(first_started));
        asio::co_spawn(ex, sb->async_exec(shell("true")),
                       [&](std::exception_ptr, result<exec_result> r) { queued = std::move(r); });
        auto const second_queued = [&]() { return admitted_at_least(*sb, 2); };
        BOOST_TEST_REQUIRE(co_await async_eventually(second_queued));
        auto p = co_await sb->async_pause(keep_memory);
        BOOST_TEST(p.has_value());
        fake->end_process(100, 0);  // frees the slot (as if it finished before the pause)
        auto const answered = [&] { return queued.has_value(); };
        BOOST_TEST_REQUIRE(co_await async_eventually(answered));
        BOOST_TEST((!*queued && queued->error() == errc::paused));
        BOOST_TEST(fake->count("start_process") == 1u);
    });
}

BOOST_AUTO_TEST_CASE(start_failure_is_reported_as_the_vendor_error)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    auto r = run_coro(test_ioc, [&](auto ex) -> asio::awaitable<result<exec_result>> {
        auto sb = co_await make_sandbox(ex, fake);
        fake->fail_next("start_process", error(errc::unauthenticated, "bad token", {"process.Start", 401}));
        co_return co_await sb->async_exec(shell("true"));
    });
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::unauthenticated));
}

BOOST_AUTO_TEST_SUITE_END()
