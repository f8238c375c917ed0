// Exec fan-out: cfg.execs short commands across cfg.sandboxes sandboxes with
// max_concurrent_execs = cfg.concurrency, driven by cfg.concurrency workers per
// sandbox (the JS side has the same shape, so neither side queues in a
// governor). The command is what the official SDK's commands.run('/bin/true')
// runs on the server (/bin/bash -l -c /bin/true), so the server does the same
// work for both clients. Client CPU and peak RSS are this process's.
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/e2b_sandbox.hpp>

#include "io_run.hpp"
#include "join_counter.hpp"
#include "progress_bar.hpp"
#include "resource_usage.hpp"
#include "scenario.hpp"
#include "stats.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <mutex>

namespace prism_e2b::bench {

namespace asio = boost::asio;

std::string run_fan_out(bench_config const& cfg, server_endpoint const& srv, scenario_report& report)
{
    report.params["execs"] = cfg.execs;
    report.params["sandboxes"] = cfg.sandboxes;
    report.params["max_concurrent_execs"] = cfg.concurrency;
    report.params["command"] = "/bin/bash -l -c /bin/true";
    report.params["cpp_io_threads"] = cfg.threads;
    auto& side = report.side("cpp", "prism-e2b (C++ adapter)");
    std::mutex samples_mutex;
    std::vector<double> create_ms, exec_ms;
    std::atomic<std::size_t> failures{0};
    std::string first_failure;
    double wall = 0, cpu = 0, server_cpu = 0;

    std::string err = run_io(cfg.threads, [&](asio::any_io_executor ex) -> asio::awaitable<std::string> {
        // One client for every sandbox, as a host would (and as the JS SDK shares
        // one HTTP agent): one connection pool, one TLS context.
        auto const co = client_options_for(srv);
        auto client = e2b::make_client(ex, co);
        if (!client) co_return "client: " + client.error().to_string();
        std::vector<std::shared_ptr<e2b_sandbox>> sandboxes(cfg.sandboxes);
        {
            progress_bar bar("create (C++)", cfg.sandboxes, cfg.quiet);
            join_counter join;
            join.add(cfg.sandboxes);
            for (std::size_t i = 0; i < cfg.sandboxes; ++i)
                asio::co_spawn(
                    ex,
                    [&, i]() -> asio::awaitable<void> {
                        e2b_sandbox_options o;
                        o.client = *client;
                        o.timeout = std::chrono::minutes(10);
                        o.limits.max_concurrent_execs = static_cast<std::uint32_t>(cfg.concurrency);
                        o.limits.max_commands = sandbox_limit_caps::max_commands;
                        auto const t0 = std::chrono::steady_clock::now();
                        auto r = co_await async_create_e2b_sandbox(ex, std::move(o));
                        double const ms = to_ms(std::chrono::steady_clock::now() - t0);
                        {
                            std::lock_guard lock(samples_mutex);
                            if (r) {
                                create_ms.push_back(ms);
                                sandboxes[i] = *r;
                            } else if (first_failure.empty()) {
                                first_failure = "create: " + r.error().to_string();
                            }
                        }
                        bar.tick();
                        join.done();
                    },
                    asio::detached);
            co_await join.wait();
        }
        if (!first_failure.empty()) co_return first_failure;

        progress_bar bar("exec fan-out (C++)", cfg.execs, cfg.quiet);
        join_counter join;
        std::vector<std::atomic<std::size_t>> left(cfg.sandboxes);
        for (std::size_t i = 0; i < cfg.sandboxes; ++i)
            left[i] = cfg.execs / cfg.sandboxes + (i < cfg.execs % cfg.sandboxes ? 1 : 0);
        exec_ms.reserve(cfg.execs);
        auto const cpu0 = sample_self();
        double const server0 = process_cpu_seconds(srv.server_pid);
        auto const t0 = std::chrono::steady_clock::now();
        join.add(cfg.sandboxes * cfg.concurrency);
        for (std::size_t i = 0; i < cfg.sandboxes; ++i)
            for (std::size_t w = 0; w < cfg.concurrency; ++w)
                asio::co_spawn(
                    ex,
                    [&, i]() -> asio::awaitable<void> {
                        for (;;) {
                            std::size_t n = left[i].load();
                            do {
                                if (n == 0) {
                                    join.done();
                                    co_return;
                                }
                            } while (!left[i].compare_exchange_weak(n, n - 1));
                            exec_file_request req;
                            req.file = "/bin/bash";
                            req.args = {"-l", "-c", "/bin/true"};
                            auto const s0 = std::chrono::steady_clock::now();
                            auto r = co_await sandboxes[i]->async_exec_file(std::move(req));
                            double const ms = to_ms(std::chrono::steady_clock::now() - s0);
                            bool const ok = r && r->exit_code == 0;
                            {
                                std::lock_guard lock(samples_mutex);
                                exec_ms.push_back(ms);
                                if (!ok && first_failure.empty())
                                    first_failure = r ? "exec: exit " + r->status : "exec: " + r.error().to_string();
                            }
                            if (!ok) ++failures;
                            bar.tick();
                        }
                    },
                    asio::detached);
        co_await join.wait();
        wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        cpu = sample_self().cpu_seconds() - cpu0.cpu_seconds();
        server_cpu = process_cpu_seconds(srv.server_pid) - server0;
        bar.finish();
        for (auto& s : sandboxes)
            if (s) (void)co_await s->async_kill();
        co_return std::string{};
    });
    side.op("exec") = exec_ms;
    side.op("create") = create_ms;
    double const n = static_cast<double>(exec_ms.size());
    side.set_metric("execs", n);
    side.set_metric("failures", static_cast<double>(failures.load()));
    side.set_metric("wall_seconds", wall);
    side.set_metric("throughput_per_s", wall > 0 ? n / wall : 0);
    side.set_metric("cpu_seconds", cpu);
    side.set_metric("cpu_seconds_per_1000", n > 0 ? cpu / n * 1000 : 0);
    side.set_metric("peak_rss_kib", static_cast<double>(sample_self().peak_rss_kib));
    // How busy the server was meanwhile (1.0 = one core); near the machine's
    // core count the server, not the client, bounds throughput.
    side.set_metric("server_cpu_cores_busy", wall > 0 ? server_cpu / wall : 0);
    if (!err.empty()) return err;
    if (failures.load() != 0) return std::to_string(failures.load()) + " execs failed; first: " + first_failure;
    if (cfg.js)
        if (auto e = run_js_side("fan_out", cfg, srv, report); !e.empty()) return "js: " + e;
    return {};
}

}  // namespace prism_e2b::bench
