#include <prism_e2b/exec_governor.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace prism_e2b;
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

sandbox_limits make_limits(std::uint32_t max_commands, std::uint32_t max_concurrent)
{
    sandbox_limits l;
    l.max_commands = max_commands;
    l.max_concurrent_execs = max_concurrent;
    BOOST_REQUIRE(l.validate().has_value());
    return l;
}

// Runs `ioc` on `n` threads until it runs out of work or `limit` passes.
void run_threads(asio::io_context& ioc, int n, std::chrono::steady_clock::duration limit = 60s)
{
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back([&] { ioc.run_for(limit); });
    for (auto& t : threads) t.join();
}

// poll()/run() on a context that may have run out of work before (a stopped
// io_context does nothing until restart()).
std::size_t poll(asio::io_context& ioc)
{
    ioc.restart();
    return ioc.poll();
}

std::size_t run(asio::io_context& ioc)
{
    ioc.restart();
    return ioc.run();
}

// Polls `pred` from the test thread while io threads run; false on timeout.
bool eventually(std::function<bool()> const& pred, std::chrono::milliseconds limit = 20s)
{
    auto const deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// Counts exceptions escaping spawned coroutines (Boost.Test macros are not
// thread-safe, so io threads only touch atomics; the test thread asserts).
struct spawn_errors {
    std::atomic<int> count{0};
    auto handler()
    {
        return [this](std::exception_ptr e) {
            if (e) ++count;
        };
    }
};

void raise_peak(std::atomic<int>& peak, int value)
{
    int prev = peak.load();
    while (prev < value && !peak.compare_exchange_weak(prev, value)) {
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(test_governor)

// 1,000 concurrent acquirers on a 4-thread io_context, concurrency limit 8.
// The contract caps max_commands at 256 per sandbox, so one governor (one
// sandbox) can never admit 1,000 commands. The honest set-up that stays within
// the contract is 4 governors (4 sandboxes) x 250 acquirers, all started at
// once on the same io_context: every governor must keep its own peak <= 8 while
// 1,000 coroutines contend from 4 threads.
BOOST_AUTO_TEST_CASE(thousand_acquirers_four_threads_peak_at_most_eight)
{
    constexpr int governors = 4;
    constexpr int per_governor = 250;
    asio::io_context ioc(4);
    std::vector<std::unique_ptr<exec_governor>> gov;
    for (int g = 0; g < governors; ++g) gov.push_back(std::make_unique<exec_governor>(make_limits(per_governor, 8)));

    struct counters {
        std::atomic<int> current{0};
        std::atomic<int> peak{0};
        std::atomic<int> finished{0};
        std::atomic<int> failed{0};
    };
    std::array<counters, governors> c;
    spawn_errors errors;

    auto worker = [](exec_governor& g, counters& k) -> asio::awaitable<void> {
        auto permit = co_await g.acquire();
        if (!permit) {
            ++k.failed;
            co_return;
        }
        raise_peak(k.peak, ++k.current);
        asio::steady_timer t(co_await asio::this_coro::executor, 1ms);
        co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        // Leave the measured section before the slot is returned, so the
        // measurement can only under-count, never over-count.
        --k.current;
        permit->reset();
        ++k.finished;
    };
    for (int i = 0; i < per_governor; ++i)
        for (int g = 0; g < governors; ++g) asio::co_spawn(ioc, worker(*gov[g], c[g]), errors.handler());

    run_threads(ioc, 4);

    BOOST_TEST(errors.count == 0);
    for (int g = 0; g < governors; ++g) {
        BOOST_TEST(c[g].peak.load() <= 8);
        BOOST_TEST(c[g].peak.load() >= 1);
        BOOST_TEST(c[g].failed.load() == 0);
        BOOST_TEST(c[g].finished.load() == per_governor);
        BOOST_TEST(gov[g]->commands_admitted() == static_cast<std::uint32_t>(per_governor));
        BOOST_TEST(gov[g]->in_flight() == 0u);
        BOOST_TEST(gov[g]->waiting() == 0u);
    }
}

// Deterministic saturation: exactly max_concurrent_execs permits are granted
// and the rest wait; no busy waiting (the context goes idle).
BOOST_AUTO_TEST_CASE(saturates_exactly_and_waits_idle)
{
    asio::io_context ioc(1);
    exec_governor gov(make_limits(100, 8));
    std::vector<exec_permit> held;
    int granted = 0;
    for (int i = 0; i < 20; ++i)
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto p = co_await gov.acquire();
                if (p) {
                    ++granted;
                    held.push_back(std::move(*p));
                }
            },
            asio::detached);
    poll(ioc);
    BOOST_TEST(granted == 8);
    BOOST_TEST(gov.in_flight() == 8u);
    BOOST_TEST(gov.waiting() == 12u);
    BOOST_TEST(gov.commands_admitted() == 20u);
    // Nothing is runnable while they wait: no polling loop inside the governor.
    BOOST_TEST(poll(ioc) == 0u);

    // Releasing one permit hands the slot to exactly one waiter.
    held.front().reset();
    poll(ioc);
    BOOST_TEST(granted == 9);
    BOOST_TEST(gov.in_flight() == 8u);
    BOOST_TEST(gov.waiting() == 11u);

    held.clear();  // releases 8: 8 more waiters get slots
    poll(ioc);
    BOOST_TEST(granted == 17);
    held.clear();
    poll(ioc);
    BOOST_TEST(granted == 20);
    held.clear();
    poll(ioc);
    BOOST_TEST(gov.in_flight() == 0u);
    BOOST_TEST(gov.waiting() == 0u);
}

BOOST_AUTO_TEST_CASE(fifo_order_on_one_thread)
{
    asio::io_context ioc(1);
    exec_governor gov(make_limits(100, 1));
    std::optional<exec_permit> holder;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { holder.emplace(*(co_await gov.acquire())); }, asio::detached);
    poll(ioc);
    BOOST_REQUIRE(holder.has_value());

    std::vector<int> queued_order;
    std::vector<int> granted_order;
    for (int i = 0; i < 50; ++i)
        asio::co_spawn(
            ioc,
            [&, i]() -> asio::awaitable<void> {
                queued_order.push_back(i);
                auto p = co_await gov.acquire();
                if (p) granted_order.push_back(i);
                // p releases here: the next waiter in line gets the slot.
            },
            asio::detached);
    poll(ioc);
    BOOST_TEST(gov.waiting() == 50u);
    BOOST_TEST(granted_order.empty());
    holder.reset();
    run(ioc);
    BOOST_TEST(queued_order.size() == 50u);
    BOOST_TEST(granted_order == queued_order);
}

// Cancelled waiters leave the queue at once (while every slot is still held),
// complete with errc::cancelled, never take a slot and are refunded; the work
// done afterwards is exactly the surviving waiters'. 4 threads; each waiter
// runs on its own strand and its signal is emitted on that strand, as Asio
// requires of cancellation slots.
BOOST_AUTO_TEST_CASE(cancelling_queued_waiters_multithreaded)
{
    constexpr int waiters = 200;
    asio::io_context ioc(4);
    exec_governor gov(make_limits(256, 2));

    // Two blockers hold every slot; the test thread releases them later.
    std::mutex held_mutex;
    std::vector<exec_permit> held;
    for (int i = 0; i < 2; ++i)
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                auto p = co_await gov.acquire();
                if (p) {
                    std::lock_guard lock(held_mutex);
                    held.push_back(std::move(*p));
                }
            },
            asio::detached);

    struct waiter {
        explicit waiter(asio::io_context& ioc) : strand(asio::make_strand(ioc)) {}
        asio::strand<asio::io_context::executor_type> strand;
        asio::cancellation_signal signal;
    };
    std::vector<std::unique_ptr<waiter>> w;
    std::atomic<int> work{0}, cancelled{0}, other{0}, wrong_executor{0};
    spawn_errors errors;

    // Keep the io threads alive while the test thread drives the scenario;
    // on any exit (including a failed REQUIRE) stop and join them.
    auto guard = asio::make_work_guard(ioc);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) threads.emplace_back([&] { ioc.run_for(60s); });
    struct joiner {
        asio::io_context& ioc;
        std::vector<std::thread>& threads;
        ~joiner()
        {
            ioc.stop();
            for (auto& t : threads)
                if (t.joinable()) t.join();
        }
    } join_on_exit{ioc, threads};

    BOOST_REQUIRE(eventually([&] { return gov.in_flight() == 2u; }));
    for (int i = 0; i < waiters; ++i) {
        w.push_back(std::make_unique<waiter>(ioc));
        auto& me = *w.back();
        asio::co_spawn(
            me.strand,
            [&]() -> asio::awaitable<void> {
                auto p = co_await gov.acquire();
                if (!me.strand.running_in_this_thread()) ++wrong_executor;
                if (p) {
                    ++work;
                } else if (p.error() == errc::cancelled) {
                    ++cancelled;
                } else {
                    ++other;
                }
            },
            asio::bind_cancellation_slot(me.signal.slot(), errors.handler()));
    }
    BOOST_REQUIRE(eventually([&] { return gov.waiting() == static_cast<std::uint32_t>(waiters); }));
    BOOST_TEST(gov.commands_admitted() == static_cast<std::uint32_t>(2 + waiters));

    for (int i = 0; i < waiters; i += 2) {
        auto& me = *w[i];
        asio::post(me.strand, [&me] { me.signal.emit(asio::cancellation_type::terminal); });
    }
    // Freed immediately: both slots are still held by the blockers.
    BOOST_TEST(eventually([&] { return cancelled.load() == waiters / 2; }));
    BOOST_TEST(work.load() == 0);
    BOOST_TEST(gov.in_flight() == 2u);
    BOOST_TEST(gov.waiting() == static_cast<std::uint32_t>(waiters / 2));
    BOOST_TEST(gov.commands_admitted() == static_cast<std::uint32_t>(2 + waiters / 2));  // refunded

    {
        std::lock_guard lock(held_mutex);
        held.clear();  // released from a non-io thread
    }
    BOOST_TEST(eventually([&] { return work.load() + cancelled.load() + other.load() == waiters; }));
    guard.reset();
    for (auto& t : threads) t.join();

    BOOST_TEST(work.load() == waiters / 2);
    BOOST_TEST(cancelled.load() == waiters / 2);
    BOOST_TEST(other.load() == 0);
    BOOST_TEST(wrong_executor.load() == 0);
    BOOST_TEST(errors.count == 0);
    BOOST_TEST(gov.in_flight() == 0u);
    BOOST_TEST(gov.waiting() == 0u);
    BOOST_TEST(gov.commands_admitted() == static_cast<std::uint32_t>(2 + waiters / 2));
}

// Cancellations racing with slot hand-offs on 4 threads: every waiter ends
// exactly once, either with a permit or with errc::cancelled, and the counters
// agree with what happened (run it under TSan to check the synchronisation).
BOOST_AUTO_TEST_CASE(cancellation_racing_release_multithreaded)
{
    constexpr int waiters = 250;
    asio::io_context ioc(4);
    exec_governor gov(make_limits(256, 2));
    struct waiter {
        explicit waiter(asio::io_context& ioc) : strand(asio::make_strand(ioc)) {}
        asio::strand<asio::io_context::executor_type> strand;
        asio::cancellation_signal signal;
        bool finished = false;  // touched on `strand` only
    };
    std::vector<std::unique_ptr<waiter>> w;
    std::atomic<int> work{0}, cancelled{0}, other{0}, current{0}, peak{0};
    spawn_errors errors;
    for (int i = 0; i < waiters; ++i) {
        w.push_back(std::make_unique<waiter>(ioc));
        auto& me = *w.back();
        asio::co_spawn(
            me.strand,
            [&]() -> asio::awaitable<void> {
                // A signal that arrives after the grant must not turn the timer
                // wait below into an exception (Asio's default for a cancelled coroutine).
                co_await asio::this_coro::throw_if_cancelled(false);
                auto p = co_await gov.acquire();
                if (p) {
                    ++work;
                    raise_peak(peak, ++current);
                    asio::steady_timer t(co_await asio::this_coro::executor, 200us);
                    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));  // may be cut short by the signal
                    --current;
                } else if (p.error() == errc::cancelled) {
                    ++cancelled;
                } else {
                    ++other;
                }
                me.finished = true;
            },
            asio::bind_cancellation_slot(me.signal.slot(), errors.handler()));
    }
    std::thread canceller([&] {
        // Cancel every third waiter in a shuffled order, spread over the
        // whole run (~25 ms of work), so some signals hit queued waiters, some
        // land while the slot is being handed over and some after the grant.
        std::vector<int> order;
        for (int i = 0; i < waiters; i += 3) order.push_back(i);
        std::shuffle(order.begin(), order.end(), std::mt19937(7));
        for (int i : order) {
            auto& me = *w[i];
            asio::post(me.strand, [&me] {
                if (!me.finished) me.signal.emit(asio::cancellation_type::terminal);
            });
            std::this_thread::sleep_for(300us);
        }
    });
    run_threads(ioc, 4);
    canceller.join();
    run(ioc);  // emits posted after the workers ran out of work

    BOOST_TEST(errors.count == 0);
    BOOST_TEST(other.load() == 0);
    BOOST_TEST(work.load() + cancelled.load() == waiters);
    BOOST_TEST(cancelled.load() <= (waiters + 2) / 3);
    BOOST_TEST(peak.load() <= 2);
    BOOST_TEST(gov.commands_admitted() == static_cast<std::uint32_t>(work.load()));
    BOOST_TEST(gov.in_flight() == 0u);
    BOOST_TEST(gov.waiting() == 0u);
    BOOST_TEST_MESSAGE("race: " << work.load() << " granted, " << cancelled.load() << " cancelled");
}

BOOST_AUTO_TEST_CASE(partial_and_total_cancellation_are_honoured)
{
    for (auto type :
         {asio::cancellation_type::terminal, asio::cancellation_type::partial, asio::cancellation_type::total}) {
        asio::io_context ioc(1);
        exec_governor gov(make_limits(10, 1));
        std::optional<exec_permit> holder;
        asio::co_spawn(
            ioc, [&]() -> asio::awaitable<void> { holder.emplace(*(co_await gov.acquire())); }, asio::detached);
        poll(ioc);
        BOOST_REQUIRE(holder.has_value());

        asio::cancellation_signal signal;
        std::optional<result<exec_permit>> outcome;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                // A coroutine accepts only terminal cancellation unless it says otherwise.
                co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation());
                outcome.emplace(co_await gov.acquire());
            },
            asio::bind_cancellation_slot(signal.slot(), asio::detached));
        poll(ioc);
        BOOST_TEST(gov.waiting() == 1u);
        BOOST_TEST(gov.commands_admitted() == 2u);
        signal.emit(type);
        poll(ioc);
        BOOST_REQUIRE(outcome.has_value());
        BOOST_TEST(!outcome->has_value());
        BOOST_TEST((outcome->error() == errc::cancelled));
        BOOST_TEST(gov.waiting() == 0u);
        BOOST_TEST(gov.commands_admitted() == 1u);
        BOOST_TEST(gov.in_flight() == 1u);  // still the holder's slot only
        holder.reset();
        BOOST_TEST(gov.in_flight() == 0u);
    }
}

BOOST_AUTO_TEST_CASE(cancellation_after_grant_is_harmless)
{
    asio::io_context ioc(1);
    exec_governor gov(make_limits(10, 1));
    asio::cancellation_signal signal;
    std::optional<exec_permit> permit;
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            auto p = co_await gov.acquire();
            if (p) permit.emplace(std::move(*p));
        },
        asio::bind_cancellation_slot(signal.slot(), asio::detached));
    run(ioc);
    BOOST_REQUIRE(permit.has_value());
    signal.emit(asio::cancellation_type::terminal);  // the op is over: nothing to cancel
    BOOST_TEST(gov.commands_admitted() == 1u);
    BOOST_TEST(gov.in_flight() == 1u);
    permit.reset();
    BOOST_TEST(gov.in_flight() == 0u);
}

BOOST_AUTO_TEST_CASE(max_commands_limit_exceeded_without_waiting)
{
    asio::io_context ioc(1);
    exec_governor gov(make_limits(3, 8));
    std::vector<result<exec_permit>> results;
    for (int i = 0; i < 5; ++i)
        asio::co_spawn(
            ioc, [&]() -> asio::awaitable<void> { results.push_back(co_await gov.acquire()); }, asio::detached);
    run(ioc);
    BOOST_REQUIRE(results.size() == 5u);
    int ok = 0, limited = 0;
    for (auto& r : results) {
        if (r)
            ++ok;
        else if (r.error() == errc::limit_exceeded)
            ++limited;
    }
    BOOST_TEST(ok == 3);
    BOOST_TEST(limited == 2);
    // Counted per lifetime: releasing every permit does not give commands back.
    results.clear();
    BOOST_TEST(gov.in_flight() == 0u);
    std::optional<result<exec_permit>> again;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { again.emplace(co_await gov.acquire()); }, asio::detached);
    run(ioc);
    BOOST_REQUIRE(again.has_value());
    BOOST_TEST((!again->has_value() && again->error() == errc::limit_exceeded));
    BOOST_TEST(gov.commands_admitted() == 3u);
}

BOOST_AUTO_TEST_CASE(cancelled_waiter_refunds_its_command)
{
    asio::io_context ioc(1);
    exec_governor gov(make_limits(2, 1));
    std::optional<exec_permit> holder;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { holder.emplace(*(co_await gov.acquire())); }, asio::detached);
    asio::cancellation_signal signal;
    std::optional<result<exec_permit>> waiter;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { waiter.emplace(co_await gov.acquire()); },
        asio::bind_cancellation_slot(signal.slot(), asio::detached));
    std::optional<result<exec_permit>> third;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { third.emplace(co_await gov.acquire()); }, asio::detached);
    poll(ioc);
    BOOST_REQUIRE(third.has_value());
    BOOST_TEST((!third->has_value() && third->error() == errc::limit_exceeded));
    BOOST_TEST(gov.commands_admitted() == 2u);

    signal.emit(asio::cancellation_type::terminal);
    poll(ioc);
    BOOST_REQUIRE(waiter.has_value());
    BOOST_TEST((waiter->error() == errc::cancelled));
    BOOST_TEST(gov.commands_admitted() == 1u);

    // The refunded command can be admitted again.
    std::optional<result<exec_permit>> fourth;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { fourth.emplace(co_await gov.acquire()); }, asio::detached);
    poll(ioc);
    BOOST_TEST(!fourth.has_value());  // admitted, queued behind the holder
    BOOST_TEST(gov.waiting() == 1u);
    holder.reset();
    poll(ioc);
    BOOST_REQUIRE(fourth.has_value());
    BOOST_TEST(fourth->has_value());
    BOOST_TEST(gov.commands_admitted() == 2u);
}

BOOST_AUTO_TEST_CASE(permit_outlives_governor)
{
    asio::io_context ioc(1);
    auto gov = std::make_unique<exec_governor>(make_limits(10, 1));
    std::optional<exec_permit> permit;
    std::optional<result<exec_permit>> orphan;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { permit.emplace(*(co_await gov->acquire())); }, asio::detached);
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { orphan.emplace(co_await gov->acquire()); }, asio::detached);
    poll(ioc);
    BOOST_REQUIRE(permit.has_value());
    BOOST_TEST(!orphan.has_value());

    gov.reset();  // a queued waiter is failed, not left hanging
    poll(ioc);
    BOOST_REQUIRE(orphan.has_value());
    BOOST_TEST((!orphan->has_value() && orphan->error() == errc::cancelled));

    // The permit still works and releases into the (kept-alive) shared state.
    BOOST_TEST(permit->budget().consume(10));
    permit->reset();
    BOOST_TEST(!*permit);
    permit.reset();
}

// acquire() is lazy (it starts when awaited) and keeps the shared state: an
// awaitable that outlives its governor completes with errc::cancelled.
BOOST_AUTO_TEST_CASE(acquire_awaited_after_governor_is_gone)
{
    asio::io_context ioc(1);
    auto gov = std::make_unique<exec_governor>(make_limits(10, 1));
    auto pending = gov->acquire();
    gov.reset();
    std::optional<result<exec_permit>> outcome;
    asio::co_spawn(
        ioc, [&]() -> asio::awaitable<void> { outcome.emplace(co_await std::move(pending)); }, asio::detached);
    run(ioc);
    BOOST_REQUIRE(outcome.has_value());
    BOOST_TEST((!outcome->has_value() && outcome->error() == errc::cancelled));
}

BOOST_AUTO_TEST_CASE(permit_move_semantics_release_once)
{
    asio::io_context ioc(1);
    exec_governor gov(make_limits(10, 2));
    std::vector<exec_permit> p;
    for (int i = 0; i < 2; ++i)
        asio::co_spawn(
            ioc, [&]() -> asio::awaitable<void> { p.push_back(*(co_await gov.acquire())); }, asio::detached);
    run(ioc);
    BOOST_REQUIRE(p.size() == 2u);
    BOOST_TEST(gov.in_flight() == 2u);
    exec_permit moved(std::move(p[0]));
    BOOST_TEST(!p[0]);
    BOOST_TEST(static_cast<bool>(moved));
    BOOST_TEST(gov.in_flight() == 2u);
    moved = std::move(p[1]);  // releases moved's old slot
    BOOST_TEST(gov.in_flight() == 1u);
    p.clear();  // empty permits release nothing
    BOOST_TEST(gov.in_flight() == 1u);
    BOOST_TEST(moved.budget().max() == sandbox_limits{}.max_output_bytes);
    moved.reset();
    moved.reset();
    BOOST_TEST(gov.in_flight() == 0u);
}

BOOST_AUTO_TEST_CASE(output_budget_reports_overflow)
{
    output_budget b(100);
    BOOST_TEST(b.consume(60));
    BOOST_TEST(b.consume(40));  // exactly the budget is fine
    BOOST_TEST(!b.overflowed());
    BOOST_TEST(b.used() == 100u);
    BOOST_TEST(!b.consume(1));
    BOOST_TEST(b.overflowed());
    BOOST_TEST(!b.consume(0));  // sticky
    BOOST_TEST(b.max() == 100u);

    output_budget huge(10);
    BOOST_TEST(!huge.consume(UINT64_MAX));
    BOOST_TEST(!huge.consume(UINT64_MAX));  // saturates, never wraps back under the budget
    BOOST_TEST(huge.used() == UINT64_MAX);
}

BOOST_AUTO_TEST_CASE(output_budget_concurrent_consumers)
{
    constexpr int threads = 4;
    constexpr int per_thread = 10000;
    output_budget b(threads * per_thread * 3 - 1);  // one byte short of the total
    std::atomic<int> refused{0};
    std::vector<std::thread> t;
    for (int i = 0; i < threads; ++i)
        t.emplace_back([&] {
            for (int k = 0; k < per_thread; ++k)
                if (!b.consume(3)) ++refused;
        });
    for (auto& x : t) x.join();
    BOOST_TEST(b.used() == static_cast<std::uint64_t>(threads * per_thread * 3));
    BOOST_TEST(b.overflowed());
    BOOST_TEST(refused.load() == 1);  // only the last 3 bytes crossed the line
}

BOOST_AUTO_TEST_SUITE_END()
