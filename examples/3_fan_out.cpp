// Fan-out: 1,000 short execs (sleep 50 ms, echo) across 20 sandboxes, all started at once. Each
// sandbox's governor (max_concurrent_execs = 8) queues the rest in FIFO order;
// against the embedded server the example checks from the server's side that
// no sandbox ever ran more than 8 at once.
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b_sandbox.hpp>

#include "common/example_main.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

namespace asio = boost::asio;
using namespace prism_e2b;

constexpr std::size_t sandbox_count = 20;
constexpr std::size_t exec_count = 1000;
constexpr std::uint32_t max_concurrent = 8;

asio::awaitable<int> co_main(example::environment env)
{
    auto ex = co_await asio::this_coro::executor;

    // One client for all sandboxes: one connection pool and TLS context.
    // (create_e2b_sandbox takes either an api_key or a client, not both.)
    e2b::client_options copts = env.client_options;
    copts.api_key = env.api_key;
    auto client = e2b::make_client(ex, std::move(copts));
    if (!client) co_return example::fail("client: " + client.error().to_string());

    // Create the sandboxes concurrently.
    using create_op = decltype(asio::co_spawn(ex, async_create_e2b_sandbox(ex, {}), asio::deferred));
    std::vector<create_op> creates;
    for (std::size_t i = 0; i < sandbox_count; ++i) {
        e2b_sandbox_options o;
        o.client = *client;
        o.limits.max_concurrent_execs = max_concurrent;
        o.limits.max_commands = 100;
        creates.push_back(asio::co_spawn(ex, async_create_e2b_sandbox(ex, std::move(o)), asio::deferred));
    }
    auto [order, cerrs, created] = co_await asio::experimental::make_parallel_group(std::move(creates))
                                       .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
    std::vector<std::shared_ptr<e2b_sandbox>> sandboxes;
    int rc = 0;
    for (std::size_t i = 0; i < created.size(); ++i) {
        if (cerrs[i] || !created[i])
            rc = example::fail("create: " + (created[i] ? std::string("exception") : created[i].error().to_string()));
        else
            sandboxes.push_back(*created[i]);
    }
    std::printf("created %zu sandboxes\n", sandboxes.size());

    if (rc == 0) {
        // All 1,000 execs at once; the governors queue what exceeds 8 per sandbox.
        auto const t0 = std::chrono::steady_clock::now();
        using exec_op = decltype(asio::co_spawn(ex, sandboxes[0]->async_exec_file({}), asio::deferred));
        std::vector<exec_op> execs;
        for (std::size_t i = 0; i < exec_count; ++i) {
            exec_file_request req;
            // Each command lasts ~50 ms so the per-sandbox limit is actually exercised.
            req.file = "/bin/sh";
            req.args = {"-c", "sleep 0.05; echo ok " + std::to_string(i)};
            execs.push_back(
                asio::co_spawn(ex, sandboxes[i % sandboxes.size()]->async_exec_file(std::move(req)), asio::deferred));
        }
        auto [eorder, eerrs, results] = co_await asio::experimental::make_parallel_group(std::move(execs))
                                            .async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
        double const secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::size_t ok = 0;
        for (std::size_t i = 0; i < results.size(); ++i) {
            auto const& r = results[i];
            if (!eerrs[i] && r && r->exit_code == 0 && r->stdout_data == "ok " + std::to_string(i) + "\n")
                ++ok;
            else if (rc == 0)
                rc = example::fail("exec " + std::to_string(i) + ": " +
                                   (r ? "output '" + r->stdout_data + "'" : r.error().to_string()));
        }
        std::printf("%zu/%zu execs ok in %.2f s (%.0f execs/s)\n", ok, exec_count, secs,
                    static_cast<double>(ok) / secs);
        if (ok != exec_count && rc == 0) rc = example::fail("not every exec succeeded");

        if (env.local) {
            std::uint32_t peak = 0;
            for (auto const& s : sandboxes) peak = std::max(peak, env.local->peak_concurrent_execs(s->id()));
            std::printf("peak concurrent execs in one sandbox (server side): %u (limit %u)\n", peak, max_concurrent);
            if (peak == 0 || peak > max_concurrent)
                rc = example::fail("server-side peak concurrency " + std::to_string(peak) + " outside 1.." +
                                   std::to_string(max_concurrent));
        }
    }
    for (auto const& s : sandboxes)
        if (auto k = co_await s->async_kill(); !k && rc == 0) rc = example::fail("kill: " + k.error().to_string());
    co_return rc;
}

int main() { return example::main(co_main); }
