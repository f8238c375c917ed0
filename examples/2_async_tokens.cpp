// The async model: one operation, every completion token.
// Each async_x takes any Asio completion token and completes with result<T>:
// co_await (the default), a callback, deferred + parallel_group, and
// per-operation cancellation bound straight to the token.
#include <prism_e2b/e2b_sandbox.hpp>

#include "common/example_main.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdio>

namespace asio = boost::asio;
using namespace prism_e2b;

asio::awaitable<int> co_main(example::environment env)
{
    auto ex = co_await asio::this_coro::executor;
    auto created = co_await async_create_e2b_sandbox(ex, env.sandbox_options());
    if (!created) co_return example::fail("create: " + created.error().to_string());
    auto sandbox = *created;

    // 1. co_await: the default token. Errors are values, never exceptions.
    auto hello = co_await sandbox->async_exec(exec_request::shell("echo hello"));
    if (!hello || hello->stdout_data != "hello\n") co_return example::fail("exec");
    std::printf("co_await: %s", hello->stdout_data.c_str());

    // 2. A plain callback: runs on its associated executor, else the sandbox's.
    asio::steady_timer callback_done(ex, asio::steady_timer::time_point::max());
    std::string from_callback;
    sandbox->async_exec_file(exec_file_request::argv("/bin/echo", "callback"), [&](result<exec_result> r) {
        from_callback = r ? r->stdout_data : r.error().to_string();
        callback_done.cancel();
    });
    co_await callback_done.async_wait(asio::as_tuple(asio::use_awaitable));
    if (from_callback != "callback\n") co_return example::fail("callback: " + from_callback);
    std::printf("callback: %s", from_callback.c_str());

    // 3. deferred: describe two operations, run them together with parallel_group.
    auto [order, left, right] = co_await asio::experimental::make_parallel_group(
                                    sandbox->async_exec(exec_request::shell("echo left"), asio::deferred),
                                    sandbox->async_exec(exec_request::shell("echo right"), asio::deferred))
                                    .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
    if (!left || !right) co_return example::fail("parallel_group");
    std::printf("parallel_group: %s and %s", left->stdout_data.c_str(), right->stdout_data.c_str());

    // 4. Per-operation cancellation: bind a slot to the token. The command is
    // SIGKILLed and the completion is errc::cancelled.
    asio::cancellation_signal stop;
    asio::steady_timer give_up(ex, std::chrono::milliseconds(200));
    give_up.async_wait([&](boost::system::error_code ec) {
        if (!ec) stop.emit(asio::cancellation_type::terminal);
    });
    auto slow = co_await sandbox->async_exec(exec_request::shell("sleep 60"),
                                             asio::bind_cancellation_slot(stop.slot(), asio::use_awaitable));
    if (slow || slow.error() != errc::cancelled) co_return example::fail("cancellation did not report errc::cancelled");
    std::printf("cancelled: %s\n", slow.error().to_string().c_str());

    if (auto k = co_await sandbox->async_kill(); !k) co_return example::fail("kill: " + k.error().to_string());
    co_return 0;
}

int main() { return example::main(co_main); }
