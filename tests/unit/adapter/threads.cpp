// The adapter on a multi-threaded io_context: concurrent execs, processes,
// status, pause/resume and kill from several threads at once.
#include <prism_e2b/process_sessions.hpp>

#include "adapter_test_util.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>

using namespace prism_e2b;
using namespace prism_e2b::test;

BOOST_AUTO_TEST_SUITE(test_threads)

BOOST_AUTO_TEST_CASE(concurrent_operations_on_four_threads)
{
    asio::io_context test_ioc;
    auto fake = std::make_shared<fake_e2b_client>(test_ioc.get_executor());
    for (int i = 0; i < 40; ++i) {
        process_script s;
        s.events = {stdout_event("x")};
        fake->script_next_process(s);
    }
    run_coro(
        test_ioc,
        [&](auto ex) -> asio::awaitable<void> {
            e2b_sandbox_options o;
            o.limits.max_concurrent_execs = 4;
            auto sb = co_await make_sandbox(ex, fake, o);
            std::atomic<int> ok{0}, done{0};
            for (int i = 0; i < 40; ++i) {
                asio::co_spawn(ex, sb->async_exec(shell("echo x")), [&](std::exception_ptr, result<exec_result> r) {
                    if (r && r->stdout_data == "x" && r->exit_code == 0) ++ok;
                    ++done;
                });
                asio::co_spawn(ex, sb->async_status(), [&](std::exception_ptr, result<sandbox_status>) {});
            }
            auto const all_done = [&] { return done.load() == 40; };
            BOOST_TEST_REQUIRE(co_await async_eventually(all_done));
            BOOST_TEST(ok.load() == 40);
            auto st = co_await sb->async_status();
            BOOST_TEST(st->command_count == 40u);

            // Processes and sessions with readers on several threads, then a kill
            // racing with their I/O.
            process_sessions_options so;
            so.sandbox = sb;
            auto ps = *process_sessions::create(ex, so);
            std::vector<std::string> ids;
            for (int i = 0; i < 4; ++i) {
                process_script s;
                s.after = process_script::then::wait_for_signal;
                s.echo_stdin = true;
                fake->script_next_process(s);
                auto id = co_await ps->async_start("alice", proc("/bin/cat"));
                BOOST_TEST_REQUIRE(id.has_value());
                ids.push_back(*id);
            }
            std::atomic<int> writes{0};
            for (auto const& id : ids)
                for (int j = 0; j < 10; ++j)
                    asio::co_spawn(ex, ps->async_input("alice", id, "y"),
                                   [&](std::exception_ptr, result<void>) { ++writes; });
            auto const all_written = [&] { return writes.load() == 40; };
            BOOST_TEST_REQUIRE(co_await async_eventually(all_written));
            auto k1 = sb->async_kill();
            auto k2 = sb->async_kill();
            std::atomic<bool> k1_ok{false}, k1_done{false};
            asio::co_spawn(ex, std::move(k1), [&](std::exception_ptr, result<void> r) {
                k1_ok = r.has_value();
                k1_done = true;
            });
            auto r2 = co_await std::move(k2);
            BOOST_TEST(r2.has_value());
            for (auto const& id : ids) {
                auto w = co_await ps->async_wait("alice", id, std::chrono::milliseconds(3000));
                BOOST_TEST_REQUIRE(w.has_value());
                BOOST_TEST(!w->exit_code.has_value());  // gone with the sandbox: unknown
            }
            auto const first_kill_done = [&] { return k1_done.load(); };
            BOOST_TEST_REQUIRE(co_await async_eventually(first_kill_done));
            BOOST_TEST(k1_ok.load());
            BOOST_TEST(fake->count("kill_sandbox") == 1u);  // two kills, one vendor call
        },
        std::chrono::seconds(60), 4);
}

BOOST_AUTO_TEST_SUITE_END()
