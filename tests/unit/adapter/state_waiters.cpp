// state_waiters: a waiter sees every change made before or after it started
// waiting, honours its deadline and per-operation cancellation.
#include "adapter/state_waiters.hpp"

#include "coro_helpers.hpp"
#include "eventually.hpp"
#include "run_coro.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <optional>

namespace asio = boost::asio;
using namespace prism_e2b;
using prism_e2b::detail::state_waiters;
using prism_e2b::test::run_coro;

namespace {

// Waits on `w`'s strand until `flag` is set or `deadline` passes.
using prism_e2b::detail::wait_outcome;

asio::awaitable<wait_outcome> wait_for_flag(state_waiters const& w, std::atomic<bool> const& flag,
                                            std::optional<state_waiters::clock::time_point> deadline)
{
    co_await asio::this_coro::throw_if_cancelled(false);  // cancellation is an answer, not an exception
    auto op = [&w, &flag, deadline]() -> asio::awaitable<wait_outcome> {
        auto const set = [&flag] { return flag.load(); };
        co_return co_await w.wait_until(set, deadline);
    };
    co_return co_await asio::co_spawn(w.strand(), std::move(op), asio::use_awaitable);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_state_waiters)

BOOST_AUTO_TEST_CASE(a_change_from_another_thread_wakes_the_waiter)
{
    auto r = run_coro(
        [](auto ex) -> asio::awaitable<wait_outcome> {
            state_waiters w(asio::make_strand(ex));
            std::atomic<bool> flag{false};
            // The change is made and notified from another handler, maybe on another thread.
            asio::post(ex, [&] {
                flag = true;
                w.notify_all();
            });
            co_return co_await wait_for_flag(w, flag, std::nullopt);
        },
        std::chrono::seconds(30), 4);
    BOOST_TEST((r == wait_outcome::satisfied));
}

BOOST_AUTO_TEST_CASE(a_state_that_already_holds_needs_no_notification)
{
    auto r = run_coro([](auto ex) -> asio::awaitable<wait_outcome> {
        state_waiters w(asio::make_strand(ex));
        std::atomic<bool> flag{true};
        co_return co_await wait_for_flag(w, flag, std::nullopt);
    });
    BOOST_TEST((r == wait_outcome::satisfied));
}

BOOST_AUTO_TEST_CASE(the_deadline_ends_the_wait_with_false)
{
    auto r = run_coro([](auto ex) -> asio::awaitable<wait_outcome> {
        state_waiters w(asio::make_strand(ex));
        std::atomic<bool> flag{false};
        w.notify_all();  // a notification without a change does not end it
        co_return co_await wait_for_flag(w, flag, state_waiters::clock::now() + std::chrono::milliseconds(20));
    });
    BOOST_TEST((r == wait_outcome::deadline_passed));
}

BOOST_AUTO_TEST_CASE(per_operation_cancellation_ends_the_wait)
{
    auto r = run_coro([](auto ex) -> asio::awaitable<wait_outcome> {
        state_waiters w(asio::make_strand(ex));
        std::atomic<bool> flag{false};
        asio::cancellation_signal sig;
        std::optional<wait_outcome> got;
        asio::co_spawn(ex, wait_for_flag(w, flag, std::nullopt),
                       asio::bind_cancellation_slot(sig.slot(), [&](std::exception_ptr e, wait_outcome v) {
                           BOOST_TEST(!e);
                           got = v;
                       }));
        // Cancel once the waiter is parked (the strand ran it), then wait for its answer.
        asio::post(w.strand(), [&] { asio::post(ex, [&] { sig.emit(asio::cancellation_type::terminal); }); });
        auto const answered = [&] { return got.has_value(); };
        BOOST_TEST_REQUIRE(co_await prism_e2b::test::async_eventually(answered));
        co_return *got;
    });
    BOOST_TEST((r == wait_outcome::cancelled));
}

BOOST_AUTO_TEST_SUITE_END()
