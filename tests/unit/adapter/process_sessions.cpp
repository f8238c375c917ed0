// process_sessions over an e2b_sandbox with the scripted client: paging, caps,
// owner checks, attach wiring, unknown outcomes; fail closed without processes.
#include <prism_e2b/process_sessions.hpp>

#include "adapter_test_util.hpp"

#include <boost/test/unit_test.hpp>

using namespace prism_e2b;
using namespace prism_e2b::test;

namespace {

/// A backend without processes (like a plain exec-only sandbox).
class exec_only_sandbox final : public disposable_sandbox {
public:
    std::string const& id() const noexcept override { return id_; }
    sandbox_capabilities capabilities() const noexcept override { return {}; }

protected:
    void do_exec(exec_request, completion_handler<exec_result> h) override { std::move(h)(exec_result{}); }
    void do_exec_file(exec_file_request, completion_handler<exec_result> h) override { std::move(h)(exec_result{}); }
    void do_status(completion_handler<sandbox_status> h) override { std::move(h)(sandbox_status{}); }
    void do_stop(stop_options, completion_handler<void> h) override { std::move(h)(result<void>()); }
    void do_kill(completion_handler<void> h) override { std::move(h)(result<void>()); }
    void do_close(close_options, completion_handler<void> h) override { std::move(h)(result<void>()); }

private:
    std::string id_ = "exec-only";
};

// Callers pass a named closure: no temporary lives across the co_await (g++ 12).

}  // namespace

BOOST_AUTO_TEST_SUITE(test_process_sessions)

BOOST_AUTO_TEST_CASE(a_sandbox_without_processes_is_unsupported)
{
    asio::io_context ioc;
    process_sessions_options o;
    o.sandbox = std::make_shared<exec_only_sandbox>();
    auto r = process_sessions::create(ioc.get_executor(), o);
    BOOST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::unsupported));
    process_sessions_options none;
    auto n = process_sessions::create(ioc.get_executor(), none);
    BOOST_TEST((!n && n.error() == errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(session_limits_are_validated)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    // Inside the io_context's run: the sandbox must not outlive it.
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        for (int i = 0; i < 4; ++i) {
            process_sessions_options o;
            o.sandbox = sb;
            if (i == 0) o.limits.max_sessions = 33;
            if (i == 1) o.limits.max_input_write = (1u << 20) + 1;
            if (i == 2) o.limits.max_output_chunk = 0;
            if (i == 3) o.limits.max_lifetime = std::chrono::hours(25);
            auto r = process_sessions::create(ex, o);
            BOOST_TEST((!r && r.error() == errc::invalid_argument));
        }
    });
}

BOOST_AUTO_TEST_CASE(start_output_paging_input_and_wait)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    process_script s = long_running(true);
    s.events = {stdout_event("hello "), stderr_event("world")};
    fake->script_next_process(s);
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        o.limits.max_output_chunk = 4;
        auto reg = process_sessions::create(ex, o);
        BOOST_TEST_REQUIRE(reg.has_value());
        auto& ps = **reg;
        auto id = co_await ps.async_start("alice", proc("/bin/cat"));
        BOOST_TEST_REQUIRE(id.has_value());
        {
            // Both events are in: the fake delivers them one poll apart.
            auto const ready = [&] {
                std::string seen;
                for (std::uint64_t c = 0;;) {
                    auto p = ps.output("alice", *id, c, 100);
                    if (!p || p->data.empty()) break;
                    seen += p->data;
                    c = p->cursor;
                }
                return seen == "hello world";
            };
            BOOST_TEST_REQUIRE(co_await async_eventually(ready));
        }
        auto p1 = ps.output("alice", *id, 0);
        BOOST_TEST_REQUIRE(p1.has_value());
        BOOST_TEST(p1->data == "hell");  // capped by max_output_chunk
        BOOST_TEST(p1->cursor == 4u);
        BOOST_TEST(!p1->eof);
        std::string all = p1->data;
        auto cur = p1->cursor;
        for (int i = 0; i < 10; ++i) {
            auto p = ps.output("alice", *id, cur, 3);
            all += p->data;
            cur = p->cursor;
        }
        BOOST_TEST(all == "hello world");
        auto in = co_await ps.async_input("alice", *id, "!");
        BOOST_TEST(in.has_value());
        {
            auto const ready = [&] { return ps.output("alice", *id, cur)->data == "!"; };
            BOOST_TEST(co_await async_eventually(ready));
        }
        auto info = ps.info("alice", *id);
        BOOST_TEST_REQUIRE(info.has_value());
        fake->end_process(info->pid, 0);
        auto w = co_await ps.async_wait("alice", *id, std::chrono::milliseconds(2000));
        BOOST_TEST_REQUIRE(w.has_value());
        BOOST_TEST(w->exit_code.value_or(-1) == 0);
        {
            auto const ready = [&] { return ps.output("alice", *id, cur + 1)->eof; };
            BOOST_TEST(co_await async_eventually(ready));
        }
        auto bad = ps.output("alice", *id, cur + 100);
        BOOST_TEST((!bad && bad.error() == errc::invalid_argument));
    });
}

BOOST_AUTO_TEST_CASE(owner_checks_refuse_another_owner)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        auto ps = *process_sessions::create(ex, o);
        auto id = *co_await ps->async_start("alice", proc("/bin/sleep", "600"));
        fake->clear_calls();
        auto out = ps->output("mallory", id, 0);
        BOOST_TEST((!out && out.error() == errc::wrong_owner));
        auto in = co_await ps->async_input("mallory", id, "x");
        BOOST_TEST((!in && in.error() == errc::wrong_owner));
        auto w = co_await ps->async_wait("mallory", id, std::chrono::milliseconds(1));
        BOOST_TEST((!w && w.error() == errc::wrong_owner));
        auto s = co_await ps->async_signal("mallory", id, process_signal::sigterm);
        BOOST_TEST((!s && s.error() == errc::wrong_owner));
        auto k = co_await ps->async_kill("mallory", id);
        BOOST_TEST((!k && k.error() == errc::wrong_owner));
        auto r = co_await ps->async_release("mallory", id);
        BOOST_TEST((!r && r.error() == errc::wrong_owner));
        auto i = ps->info("mallory", id);
        BOOST_TEST((!i && i.error() == errc::wrong_owner));
        BOOST_TEST(fake->calls().empty());  // refused before any vendor call
        auto unknown = ps->output("alice", "ps-999", 0);
        BOOST_TEST((!unknown && unknown.error() == errc::not_found));
        auto k2 = co_await ps->async_kill("alice", id);
        BOOST_TEST(k2.has_value());
        BOOST_TEST(fake->count("send_signal") == 1u);
    });
}

BOOST_AUTO_TEST_CASE(caps_on_sessions_and_input)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    for (int i = 0; i < 3; ++i) fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        o.limits.max_sessions = 2;
        o.limits.max_input_write = 4;
        auto ps = *process_sessions::create(ex, o);
        auto a = co_await ps->async_start("alice", proc("/bin/cat"));
        auto b = co_await ps->async_start("bob", proc("/bin/cat"));
        BOOST_TEST_REQUIRE((a.has_value() && b.has_value()));
        auto c = co_await ps->async_start("carol", proc("/bin/cat"));
        BOOST_TEST_REQUIRE(!c);
        BOOST_TEST((c.error() == errc::limit_exceeded));
        BOOST_TEST(fake->count("start_process") == 2u);
        auto big = co_await ps->async_input("alice", *a, "12345");
        BOOST_TEST((!big && big.error() == errc::limit_exceeded));
        BOOST_TEST(fake->count("send_stdin") == 0u);
        // Releasing frees a slot; the process keeps running.
        auto rel = co_await ps->async_release("bob", *b);
        BOOST_TEST(rel.has_value());
        BOOST_TEST(ps->size() == 1u);
        BOOST_TEST(!fake->process(101)->ended);
        auto c2 = co_await ps->async_start("carol", proc("/bin/cat"));
        BOOST_TEST(c2.has_value());
        co_await ps->async_kill("alice", *a);
        co_await ps->async_kill("carol", *c2);
    });
}

BOOST_AUTO_TEST_CASE(total_output_is_capped_dropping_the_oldest_bytes)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    process_script s;
    s.events = {stdout_event(std::string(100, 'a')), stdout_event(std::string(100, 'b'))};
    fake->script_next_process(s);  // then exits 0
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        o.limits.max_total_output = 120;
        auto ps = *process_sessions::create(ex, o);
        auto id = *co_await ps->async_start("alice", proc("/bin/gen"));
        auto w = co_await ps->async_wait("alice", id, std::chrono::milliseconds(2000));
        BOOST_TEST(w.has_value());
        auto page = ps->output("alice", id, 0, 1000);
        BOOST_TEST_REQUIRE(page.has_value());
        BOOST_TEST(page->data.size() <= 120u);
        BOOST_TEST(page->cursor == 200u);  // the cursor keeps counting absolute bytes
        BOOST_TEST(page->data.back() == 'b');
        BOOST_TEST(page->eof);
        BOOST_TEST(ps->info("alice", id)->dropped_bytes == 200u - page->data.size());
    });
}

BOOST_AUTO_TEST_CASE(unknown_outcome_never_fabricates_an_exit_code)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    process_script s;
    s.events = {stdout_event("x")};
    s.after = process_script::then::cut;
    fake->script_next_process(s);
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        auto ps = *process_sessions::create(ex, o);
        auto id = *co_await ps->async_start("alice", proc("/bin/x"));
        auto w = co_await ps->async_wait("alice", id, std::chrono::milliseconds(2000));
        BOOST_TEST_REQUIRE(w.has_value());
        BOOST_TEST((w->outcome == exit_outcome::unknown));
        BOOST_TEST(!w->exit_code.has_value());
    });
}

BOOST_AUTO_TEST_CASE(attach_is_wired_to_the_sandbox_automatically)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        auto ps = *process_sessions::create(ex, o);
        auto id = *co_await ps->async_start("alice", proc("/bin/sleep", "600"));
        auto ref = ps->info("alice", id)->ref;
        co_await ps->async_release("alice", id);
        auto again = co_await ps->async_attach("bob", ref);
        BOOST_TEST_REQUIRE(again.has_value());
        BOOST_TEST(ps->info("bob", *again)->pid == 100u);
        BOOST_TEST(fake->count("connect_process") == 1u);
        auto bogus = co_await ps->async_attach("bob", "prism-e2b-proc:xyz");
        BOOST_TEST_REQUIRE(!bogus);
        BOOST_TEST((bogus.error() == errc::not_found));
        co_await ps->async_kill("bob", *again);
    });
}

BOOST_AUTO_TEST_CASE(lifetime_cap_kills_the_process)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    fake->script_next_process(long_running());
    run_coro(test_ioc, [&](auto ex) -> asio::awaitable<void> {
        auto sb = co_await make_sandbox(ex, fake);
        process_sessions_options o;
        o.sandbox = sb;
        o.limits.max_lifetime = std::chrono::milliseconds(50);
        auto ps = *process_sessions::create(ex, o);
        auto id = *co_await ps->async_start("alice", proc("/bin/sleep", "600"));
        auto w = co_await ps->async_wait("alice", id, std::chrono::milliseconds(3000));
        BOOST_TEST_REQUIRE(w.has_value());
        BOOST_TEST((w->outcome == exit_outcome::killed));
        BOOST_TEST(!w->exit_code.has_value());
        BOOST_TEST(fake->calls_named("send_signal").at(0).detail == "pid=100 SIGKILL");
    });
}

BOOST_AUTO_TEST_SUITE_END()
