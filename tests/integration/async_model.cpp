// The universal async model (issue 12) against the in-process local server:
// the same operations completed through use_future, deferred, a plain
// callback and parallel_group, per-operation cancellation bound straight to
// the token (no co_spawn wrapper), and requests built inline in the call.
#include <prism_e2b/e2b_sandbox.hpp>

#include "client_thread.hpp"
#include "eventually.hpp"
#include "local_server_fixture.hpp"
#include "run_coro.hpp"
#include "sandbox_options.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;

namespace {

constexpr auto test_deadline = std::chrono::seconds(60);

}  // namespace

BOOST_AUTO_TEST_SUITE(test_async_model)

BOOST_AUTO_TEST_CASE(use_future_from_a_plain_thread)
{
    local_server_fixture f;
    client_thread c;
    auto created = async_create_e2b_sandbox(c.ioc.get_executor(), server_options(f), asio::use_future);
    BOOST_TEST_REQUIRE((created.wait_for(test_deadline) == std::future_status::ready));
    auto sb = created.get();
    BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));

    auto ran = (*sb)->async_exec(exec_request::shell("echo future"), asio::use_future);
    BOOST_TEST_REQUIRE((ran.wait_for(test_deadline) == std::future_status::ready));
    auto r = ran.get();
    BOOST_TEST_REQUIRE(r.has_value(), (r ? "" : r.error().to_string()));
    BOOST_TEST(r->stdout_data == "future\n");
    BOOST_TEST((r->exit_code == 0));

    auto killed = (*sb)->async_kill(asio::use_future);
    BOOST_TEST_REQUIRE((killed.wait_for(test_deadline) == std::future_status::ready));
    BOOST_TEST(killed.get().has_value());
    // Errors are values: after kill, exec completes with errc::not_found, never an exception.
    auto after = (*sb)->async_exec(exec_request::shell("true"), asio::use_future);
    BOOST_TEST_REQUIRE((after.wait_for(test_deadline) == std::future_status::ready));
    auto a = after.get();
    BOOST_TEST((!a && a.error() == errc::not_found));
}

BOOST_AUTO_TEST_CASE(plain_callback_runs_on_the_sandbox_executor)
{
    local_server_fixture f;
    client_thread c;
    auto sb = async_create_e2b_sandbox(c.ioc.get_executor(), server_options(f), asio::use_future).get();
    BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));

    std::promise<result<exec_result>> done;
    std::atomic<bool> on_sandbox_executor{false};
    (*sb)->async_exec_file(exec_file_request::argv("/bin/echo", "callback"), [&](result<exec_result> r) {
        on_sandbox_executor = c.ioc.get_executor().running_in_this_thread();
        done.set_value(std::move(r));
    });
    auto fut = done.get_future();
    BOOST_TEST_REQUIRE((fut.wait_for(test_deadline) == std::future_status::ready));
    auto r = fut.get();
    BOOST_TEST_REQUIRE(r.has_value(), (r ? "" : r.error().to_string()));
    BOOST_TEST(r->stdout_data == "callback\n");
    // A handler with no associated executor completes on the sandbox's executor.
    BOOST_TEST(on_sandbox_executor.load());
    BOOST_TEST((*sb)->async_kill(asio::use_future).get().has_value());
}

BOOST_AUTO_TEST_CASE(deferred_owns_its_arguments)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto sb = co_await async_create_e2b_sandbox(ex, server_options(f));
            BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));
            // The request and its strings die before the operation is launched:
            // the deferred operation holds its own copies (ASan would see a dangling one).
            auto op = [&] {
                std::string word = "deferred";
                auto req = exec_file_request::argv("/bin/echo", word);
                return (*sb)->async_exec_file(std::move(req), asio::deferred);
            }();
            auto r = co_await std::move(op)(asio::use_awaitable);
            BOOST_TEST_REQUIRE(r.has_value(), (r ? "" : r.error().to_string()));
            BOOST_TEST(r->stdout_data == "deferred\n");
            auto k = co_await (*sb)->async_kill();
            BOOST_TEST(k.has_value());
        },
        test_deadline);
}

BOOST_AUTO_TEST_CASE(parallel_group_waits_for_both)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto sb = co_await async_create_e2b_sandbox(ex, server_options(f));
            BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));
            auto [order, a, b] = co_await asio::experimental::make_parallel_group(
                                     (*sb)->async_exec(exec_request::shell("echo left"), asio::deferred),
                                     (*sb)->async_exec(exec_request::shell("echo right"), asio::deferred))
                                     .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
            BOOST_TEST(order.size() == 2u);
            BOOST_TEST_REQUIRE(a.has_value(), (a ? "" : a.error().to_string()));
            BOOST_TEST_REQUIRE(b.has_value(), (b ? "" : b.error().to_string()));
            BOOST_TEST(a->stdout_data == "left\n");
            BOOST_TEST(b->stdout_data == "right\n");
            auto k = co_await (*sb)->async_kill();
            BOOST_TEST(k.has_value());
        },
        test_deadline);
}

// bind_cancellation_slot on the token reaches the operation directly: the
// running command is stopped and the completion is errc::cancelled.
BOOST_AUTO_TEST_CASE(per_operation_cancellation_without_co_spawn)
{
    local_server_fixture f;
    client_thread c;
    auto sb = async_create_e2b_sandbox(c.ioc.get_executor(), server_options(f), asio::use_future).get();
    BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));

    std::atomic<bool> started{false};
    auto req = exec_request::shell("echo started; exec sleep 29917");
    req.on_data = [&](output_stream, std::string_view d) {
        if (d.find("started") != std::string_view::npos) started = true;
    };
    asio::cancellation_signal sig;
    std::promise<result<exec_result>> done;
    (*sb)->async_exec(std::move(req),
                      asio::bind_cancellation_slot(sig.slot(), [&](result<exec_result> r) { done.set_value(r); }));
    BOOST_TEST_REQUIRE(eventually([&] { return started.load(); }));
    // Emit on the executor the operation's slot is used from.
    asio::post(c.ioc, [&] { sig.emit(asio::cancellation_type::terminal); });
    auto fut = done.get_future();
    BOOST_TEST_REQUIRE((fut.wait_for(test_deadline) == std::future_status::ready));
    auto r = fut.get();
    BOOST_TEST((!r && r.error() == errc::cancelled));

    // The sandbox is still usable, and the cancelled command is gone (SIGKILLed).
    // ("slee[p]": the pattern does not match the shell that runs pgrep.)
    BOOST_TEST(eventually([&] {
        auto left = (*sb)->async_exec(exec_request::shell("pgrep -f 'slee[p] 29917' || echo none"), asio::use_future);
        auto l = left.get();
        return l && l->stdout_data == "none\n";
    }));
    BOOST_TEST((*sb)->async_kill(asio::use_future).get().has_value());
}

// What the README used to forbid: requests built inside the co_await
// expression. Factories (a function's result) are safe everywhere. Braced and
// designated aggregates are safe with clang; g++ 12 miscompiles an aggregate
// temporary inside any co_await full-expression in the caller's own frame
// (it copies the aggregate bitwise and destroys both copies) before any
// library code runs, so no library signature can make them safe there.
BOOST_AUTO_TEST_CASE(requests_built_inline)
{
    local_server_fixture f;
    run_coro(
        [&](auto ex) -> asio::awaitable<void> {
            auto sb = co_await async_create_e2b_sandbox(ex, server_options(f));
            BOOST_TEST_REQUIRE(sb.has_value(), (sb ? "" : sb.error().to_string()));
            auto a = co_await (*sb)->async_exec(exec_request::shell("echo a-long-enough-string-to-leave-sso"));
            BOOST_TEST_REQUIRE(a.has_value(), (a ? "" : a.error().to_string()));
            BOOST_TEST(a->stdout_data == "a-long-enough-string-to-leave-sso\n");
            auto b = co_await (*sb)->async_exec_file(exec_file_request::argv("/bin/echo", "ok", std::string("two")));
            BOOST_TEST_REQUIRE(b.has_value(), (b ? "" : b.error().to_string()));
            BOOST_TEST(b->stdout_data == "ok two\n");
#if defined(__clang__)
            auto c = co_await (*sb)->async_exec({.command = "echo x"});
            BOOST_TEST_REQUIRE(c.has_value(), (c ? "" : c.error().to_string()));
            BOOST_TEST(c->stdout_data == "x\n");
            auto d = co_await (*sb)->async_exec_file(exec_file_request{.file = "/bin/echo", .args = {"ok"}});
            BOOST_TEST_REQUIRE(d.has_value(), (d ? "" : d.error().to_string()));
            BOOST_TEST(d->stdout_data == "ok\n");
#endif
            auto k = co_await (*sb)->async_kill();
            BOOST_TEST(k.has_value());
        },
        test_deadline);
}

BOOST_AUTO_TEST_SUITE_END()
