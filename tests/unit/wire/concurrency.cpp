// Concurrency: 500 streamed execs at once on a 2-thread io_context, each with
// its own output, while the pool never opens more connections than its cap;
// the client-wide in-flight cap queues instead of failing; the semaphore is
// FIFO and honours cancellation.
#include <prism_e2b/e2b/client.hpp>

#include "client_fixture.hpp"
#include "core/async_semaphore.hpp"
#include "eventually.hpp"
#include "protocol/base64.hpp"
#include "protocol/envelope.hpp"
#include "run_coro.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

using namespace prism_e2b;
using namespace prism_e2b::test;
namespace asio = boost::asio;
namespace json = boost::json;

BOOST_AUTO_TEST_SUITE(test_concurrency)

namespace {

/// Echoes the third argv element of a Start request as stdout, split over two
/// data events, and exits with (n % 256).
scripted_response echo_exec(recorded_request const& r)
{
    wire::envelope_decoder d;
    std::vector<wire::envelope> out;
    if (!d.feed(r.body, out) || out.size() != 1)
        return scripted_response::json(400, R"({"code":"invalid_argument","message":"bad envelope"})");
    auto v = json::parse(out[0].payload);
    std::string word(v.at("process").at("args").at(2).as_string());
    int n = std::stoi(word.substr(word.find('-') + 1));
    auto half = word.size() / 2;
    return connect_stream(
        {R"({"event":{"start":{"pid":)" + std::to_string(1000 + n) + "}}}",
         R"({"event":{"data":{"stdout":")" + detail::base64_encode(word.substr(0, half)) + R"("}}})",
         R"({"event":{"keepalive":{}}})",
         R"({"event":{"data":{"stdout":")" + detail::base64_encode(word.substr(half) + "\n") + R"("}}})",
         R"({"event":{"end":{"exitCode":)" + std::to_string(n % 256) + R"(,"exited":true,"status":"exit status"}}})"});
}

struct exec_result {
    std::string out;
    std::int32_t code = -999;
    std::uint32_t pid = 0;
    std::string failure;
    bool done = false;
};

asio::awaitable<void> one_exec(e2b::client& c, int i, exec_result& res, std::atomic<int>& finished)
{
    e2b::start_process_params p;
    p.process.cmd = "/bin/bash";
    p.process.args = {"-l", "-c", "word-" + std::to_string(i)};
    auto t = target_for();
    auto s = co_await c.async_start_process(t, p);
    if (!s) {
        res.failure = s.error().to_string();
    } else {
        for (;;) {
            auto ev = co_await (*s)->async_next();
            if (!ev) {
                res.failure = ev.error().to_string();
                break;
            }
            if (!*ev) break;
            if (auto const* st = std::get_if<e2b::start_event>(&**ev)) res.pid = st->pid;
            if (auto const* d = std::get_if<e2b::data_event>(&**ev)) res.out += d->bytes;
            if (auto const* e = std::get_if<e2b::end_event>(&**ev)) res.code = e->exit_code;
        }
    }
    res.done = true;
    ++finished;
}

}  // namespace

BOOST_AUTO_TEST_CASE(five_hundred_streamed_execs_within_the_connection_cap)
{
    constexpr int n = 500;
    constexpr std::size_t cap = 32;
    test_http_server::options so;
    so.threads = 2;
    test_http_server server(echo_exec, so);
    std::vector<exec_result> results(n);
    std::atomic<int> finished{0};
    auto const t0 = std::chrono::steady_clock::now();
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto o = options_for(server.url());
            o.max_connections_per_origin = cap;
            auto c = e2b::make_client(ex, o);
            if (!c) co_return;
            auto client = *c;
            for (int i = 0; i < n; ++i) asio::co_spawn(ex, one_exec(*client, i, results[i], finished), asio::detached);
            asio::steady_timer timer(ex);
            while (finished.load() < n) {
                timer.expires_after(std::chrono::milliseconds(5));
                co_await timer.async_wait(asio::use_awaitable);
            }
        },
        std::chrono::seconds(120), 2);
    auto const took = std::chrono::steady_clock::now() - t0;
    int ok = 0;
    for (int i = 0; i < n; ++i) {
        auto const& r = results[i];
        BOOST_TEST(r.failure.empty(), "exec " << i << ": " << r.failure);
        BOOST_TEST(r.out == "word-" + std::to_string(i) + "\n", "exec " << i);
        BOOST_TEST(r.code == i % 256);
        BOOST_TEST(r.pid == static_cast<std::uint32_t>(1000 + i));
        ok += r.failure.empty() && r.out == "word-" + std::to_string(i) + "\n";
    }
    BOOST_TEST(ok == n);
    BOOST_TEST(server.request_count() == static_cast<std::size_t>(n));
    BOOST_TEST(server.accepted_connections() <= cap);
    BOOST_TEST(server.max_open_connections() <= cap);
    BOOST_TEST_MESSAGE("500 streamed execs on a 2-thread io_context: "
                       << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms, "
                       << server.accepted_connections() << " connections accepted (cap " << cap << "), max open "
                       << server.max_open_connections());
}

asio::awaitable<void> one_signal(std::shared_ptr<e2b::client> client, std::atomic<int>* ok, std::atomic<int>* finished)
{
    auto t = target_for();
    e2b::process_selector s;
    s.pid = 1;
    auto r = co_await client->async_send_signal(t, s, process_signal::sigterm);
    *ok += r.has_value();
    ++*finished;
}

BOOST_AUTO_TEST_CASE(sequential_unary_calls_over_one_keep_alive_connection)
{
    test_http_server server([](recorded_request const&) { return scripted_response::json(200, "{}"); });
    constexpr int n = 2000;
    std::vector<double> us;
    run_coro([&](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto c = e2b::make_client(ex, options_for(server.url()));
        auto t = target_for();
        e2b::process_selector s;
        s.pid = 1;
        for (int i = 0; i < n; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            auto r = co_await (*c)->async_send_signal(t, s, process_signal::sigterm);
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            if (!r) break;
        }
    });
    BOOST_TEST_REQUIRE(us.size() == static_cast<std::size_t>(n));
    BOOST_TEST(server.accepted_connections() == 1u);
    std::sort(us.begin(), us.end());
    BOOST_TEST_MESSAGE(n << " sequential SendSignal calls over one keep-alive connection: p50 " << us[n / 2]
                         << " us, p99 " << us[n * 99 / 100] << " us");
}

BOOST_AUTO_TEST_CASE(inflight_cap_queues_instead_of_failing)
{
    test_http_server::options so;
    so.threads = 2;
    test_http_server server(
        [](recorded_request const&) {
            scripted_response r;
            r.headers = {{"Content-Type", "application/json"}};
            r.chunks = {"{", "}"};
            r.chunk_delay = std::chrono::milliseconds(20);
            return r;
        },
        so);
    constexpr int n = 60;
    std::atomic<int> ok{0}, finished{0};
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto o = options_for(server.url());
            o.max_inflight_envd_requests = 4;
            o.max_connections_per_origin = 100;
            auto c = e2b::make_client(ex, o);
            auto client = *c;
            for (int i = 0; i < n; ++i) asio::co_spawn(ex, one_signal(client, &ok, &finished), asio::detached);
            asio::steady_timer timer(ex);
            while (finished.load() < n) {
                timer.expires_after(std::chrono::milliseconds(5));
                co_await timer.async_wait(asio::use_awaitable);
            }
        },
        std::chrono::seconds(60), 2);
    BOOST_TEST(ok.load() == n);
    // Never more than 4 requests at once, so never more than 4 connections.
    BOOST_TEST(server.max_open_connections() <= 4u);
    BOOST_TEST(server.accepted_connections() <= 4u);
}

BOOST_AUTO_TEST_CASE(opening_cap_holds_stream_opens_until_a_head_arrives_and_queues_the_rest)
{
    // Each Start is held at the server until the test lets it answer; at entry the handler notes
    // how many were opening (arrived, not yet answered). With the cap, never more than 2.
    constexpr int n = 6;
    std::mutex m;
    std::condition_variable cv;
    int arrived = 0, answered = 0, allowed = 0, most_opening = 0;
    test_http_server::options so;
    so.threads = n + 2;  // every held request has a server thread: without the cap all n would arrive
    test_http_server server(
        [&](recorded_request const&) {
            std::unique_lock lk(m);
            ++arrived;
            most_opening = std::max(most_opening, arrived - answered);
            cv.wait(lk, [&] { return allowed > answered; });
            ++answered;
            return connect_stream({R"({"event":{"start":{"pid":7}}})"});
        },
        so);
    std::atomic<int> opened{0}, failed{0};
    run_coro(
        [&](asio::any_io_executor ex) -> asio::awaitable<void> {
            auto o = options_for(server.url());
            o.max_opening_streams = 2;
            o.max_connections_per_origin = 100;
            auto c = e2b::make_client(ex, o);
            auto client = *c;
            std::vector<std::unique_ptr<e2b::process_event_stream>> held(n);
            for (int i = 0; i < n; ++i)
                asio::co_spawn(
                    ex,
                    [&, client, i]() -> asio::awaitable<void> {
                        e2b::start_process_params p;
                        p.process.cmd = "/bin/sleep";
                        auto s = co_await client->async_start_process(target_for(), p);
                        if (s) held[static_cast<std::size_t>(i)] = std::move(*s);
                        ++(s ? opened : failed);
                    },
                    asio::detached);
            // One answer at a time: each lets exactly one more request in.
            for (int k = 1; k <= n; ++k) {
                auto next_arrived = [&] {
                    std::lock_guard lk(m);
                    return arrived >= std::min(k + 1, n);
                };
                BOOST_TEST_REQUIRE(co_await async_eventually(next_arrived, std::chrono::seconds(60)));
                {
                    std::lock_guard lk(m);
                    allowed = k;
                }
                cv.notify_all();
                auto kth_done = [&] { return opened.load() + failed.load() >= k; };
                BOOST_TEST_REQUIRE(co_await async_eventually(kth_done, std::chrono::seconds(60)));
            }
        },
        std::chrono::seconds(120), 2);
    BOOST_TEST(opened.load() == n);  // queued, never refused
    BOOST_TEST(failed.load() == 0);
    BOOST_TEST(most_opening <= 2);
    BOOST_TEST(most_opening == 2);  // the cap, not fewer
}

// Parameters by value: a coroutine lambda's captures die with the lambda object.
asio::awaitable<void> waiter(std::shared_ptr<async_semaphore> sem, std::vector<int>* order, int i)
{
    auto p = co_await sem->acquire();
    order->push_back(p ? i : -i);
}

BOOST_AUTO_TEST_CASE(semaphore_is_fifo_and_cancellable)
{
    run_coro([](asio::any_io_executor ex) -> asio::awaitable<void> {
        auto sem = async_semaphore::create(1);
        auto first = co_await sem->acquire();
        BOOST_TEST_REQUIRE(first.has_value());
        BOOST_TEST(!sem->try_acquire());
        std::vector<int> order;
        asio::cancellation_signal cancel_second;
        for (int i = 0; i < 3; ++i) {
            if (i == 1)
                asio::co_spawn(ex, waiter(sem, &order, i),
                               asio::bind_cancellation_slot(cancel_second.slot(), asio::detached));
            else
                asio::co_spawn(ex, waiter(sem, &order, i), asio::detached);
        }
        auto three_queued = [&] { return sem->waiting() == 3u; };
        BOOST_TEST_REQUIRE(co_await async_eventually(three_queued));
        cancel_second.emit(asio::cancellation_type::terminal);
        auto second_out = [&] { return sem->waiting() == 2u && order.size() == 1u; };
        BOOST_TEST_REQUIRE(co_await async_eventually(second_out));
        first->reset();  // waiter 0 gets it, releases it at once, then waiter 2
        auto all_done = [&] { return order.size() == 3u && sem->available() == 1u; };
        BOOST_TEST_REQUIRE(co_await async_eventually(all_done));
        BOOST_TEST_REQUIRE(order.size() == 3u);
        BOOST_TEST(order[0] == -1);
        BOOST_TEST(order[1] == 0);
        BOOST_TEST(order[2] == 2);
        BOOST_TEST(sem->available() == 1u);
    });
}

BOOST_AUTO_TEST_SUITE_END()
