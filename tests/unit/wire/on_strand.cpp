// protocol::on_strand: the work runs on the strand, the caller resumes on its
// own executor with the work's value, a cancellation of the caller reaches the
// work, and a cancellation that arrives after the work finished (queued on the
// strand behind its completion) touches nothing that is gone. The last is the
// Asio 1.81 co_spawn bug (chriskohlhoff/asio#1332) on_strand exists to avoid;
// ASan (asan leg) and TSan (tsan leg) check the memory and the threads.
#include "protocol/on_strand.hpp"

#include "eventually.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using prism_e2b::protocol::on_strand;
using strand_type = asio::strand<asio::io_context::executor_type>;

namespace {
// Runs what is ready on `ctx` now; a context that ran out of work once is
// stopped until restarted.
void step(asio::io_context& ctx)
{
    ctx.restart();
    ctx.poll();
}

// Drives both contexts in turn, each hop one queued step, until `flag` holds.
bool step_both_until(asio::io_context& caller, asio::io_context& server, bool const& flag)
{
    return prism_e2b::test::eventually(
        [&] {
            step(caller);
            step(server);
            return flag;
        },
        std::chrono::seconds(30));
}
}  // namespace

BOOST_AUTO_TEST_SUITE(test_on_strand)

BOOST_AUTO_TEST_CASE(work_runs_on_the_strand_and_the_caller_resumes_off_it_with_the_value)
{
    // The server first: the caller's frames hold its strand, so they go first.
    asio::io_context server;
    asio::io_context caller;
    strand_type strand = asio::make_strand(server);
    bool work_on_strand = false;
    bool caller_off_strand = false;
    int value = 0;
    bool done = false;
    auto work = [&]() -> asio::awaitable<int> {
        work_on_strand = strand.running_in_this_thread();
        co_return 7;
    };
    auto parent = [&]() -> asio::awaitable<void> {
        value = co_await on_strand(strand, work);
        caller_off_strand = !strand.running_in_this_thread();
        co_await on_strand(strand, [&]() -> asio::awaitable<void> { co_return; });  // void work
        done = true;
    };
    asio::co_spawn(caller, parent(), asio::detached);
    BOOST_REQUIRE(step_both_until(caller, server, done));
    BOOST_TEST(work_on_strand);
    BOOST_TEST(caller_off_strand);
    BOOST_TEST(value == 7);
}

BOOST_AUTO_TEST_CASE(a_cancellation_of_the_caller_reaches_the_work_on_the_strand)
{
    asio::io_context server;
    asio::io_context caller;
    strand_type strand = asio::make_strand(server);
    asio::steady_timer never(strand, std::chrono::steady_clock::time_point::max());
    asio::cancellation_signal cancel;
    bool started = false;
    bool aborted_on_strand = false;
    bool finished = false;
    auto work = [&]() -> asio::awaitable<void> {
        started = true;
        auto [ec] = co_await never.async_wait(asio::as_tuple(asio::use_awaitable));
        aborted_on_strand = ec == asio::error::operation_aborted && strand.running_in_this_thread();
    };
    auto parent = [&]() -> asio::awaitable<void> {
        co_await on_strand(strand, work);
        finished = true;
    };
    asio::co_spawn(caller, parent(), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
    step(caller);
    step(server);
    BOOST_REQUIRE(started);
    BOOST_REQUIRE(!finished);
    cancel.emit(asio::cancellation_type::terminal);
    BOOST_REQUIRE(step_both_until(caller, server, finished));
    BOOST_TEST(aborted_on_strand);
}

BOOST_AUTO_TEST_CASE(a_cancellation_queued_behind_the_completion_finds_the_work_finished)
{
    // The order that freed memory under co_spawn: the work completes on the
    // strand, the caller's cancellation is forwarded to the strand (queued),
    // the caller resumes and finishes, and only then the forward runs. With
    // `co_await co_spawn(strand, work, use_awaitable)` in place of on_strand,
    // ASan stops this test with a heap-use-after-free in
    // cancellation_signal::emit (checked on Boost 1.81).
    asio::io_context server;
    asio::io_context caller;
    strand_type strand = asio::make_strand(server);
    asio::steady_timer gate(strand, std::chrono::steady_clock::time_point::max());
    asio::cancellation_signal cancel;
    int value = 0;
    bool finished = false;
    auto work = [&]() -> asio::awaitable<int> {
        co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
        co_return 7;
    };
    auto parent = [&]() -> asio::awaitable<void> {
        co_await asio::this_coro::throw_if_cancelled(false);
        value = co_await on_strand(strand, work);
        finished = true;
    };
    asio::co_spawn(caller, parent(), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
    step(caller);
    step(server);  // the work waits on the gate
    asio::post(caller, [&] { cancel.emit(asio::cancellation_type::terminal); });
    gate.cancel();
    step(server);  // the work completes; its completion is queued behind the emit
    BOOST_REQUIRE(!finished);
    step(caller);  // the emit forwards to the strand, then the caller resumes
    BOOST_REQUIRE(finished);
    BOOST_TEST(value == 7);
    step(server);  // the forward: the work is gone, nothing is emitted into it
    BOOST_TEST(server.stopped());
}

namespace {

struct race_counts {
    std::atomic<int> completed{0};  // the work's timer fired first
    std::atomic<int> cut_off{0};    // the cancellation reached the work first
    std::atomic<int> settled{0};    // the caller finished
};

asio::awaitable<int> fire_now(strand_type strand)
{
    asio::steady_timer now(strand, std::chrono::steady_clock::now());
    auto [ec] = co_await now.async_wait(asio::as_tuple(asio::use_awaitable));
    co_return ec ? 0 : 1;
}

asio::awaitable<void> race_caller(strand_type work_strand, race_counts& counts)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    // Not inside the if: g++ 12 miscompiles a co_await in a condition.
    int const fired = co_await on_strand(work_strand, fire_now(work_strand));
    if (fired == 1)
        ++counts.completed;
    else
        ++counts.cut_off;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cancellations_racing_completions_on_two_threads)
{
    // The race behind the use-after-free, many times over: a caller on its own
    // strand is cancelled while its work completes on another strand, the two
    // strands' handlers on two threads.
    constexpr int rounds = 2000;
    asio::io_context ioc(2);
    auto guard = asio::make_work_guard(ioc);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) threads.emplace_back([&] { ioc.run(); });
    race_counts counts;
    for (int i = 0; i < rounds; ++i) {
        auto caller = asio::make_strand(ioc);
        auto cancel = std::make_shared<asio::cancellation_signal>();
        asio::co_spawn(
            caller, race_caller(asio::make_strand(ioc), counts),
            asio::bind_cancellation_slot(cancel->slot(), [&counts, cancel](std::exception_ptr) { ++counts.settled; }));
        // Emitted on the caller's strand, as Asio requires: serialised with the
        // caller, racing the work on the other thread.
        asio::post(caller, [cancel] { cancel->emit(asio::cancellation_type::terminal); });
    }
    bool const all =
        prism_e2b::test::eventually([&] { return counts.settled.load() == rounds; }, std::chrono::seconds(120));
    guard.reset();
    if (!all) ioc.stop();
    for (auto& t : threads) t.join();
    BOOST_REQUIRE(all);
    // Every round is one or the other: no work lost, none counted twice.
    BOOST_TEST(counts.completed.load() + counts.cut_off.load() == rounds);
}

BOOST_AUTO_TEST_SUITE_END()
