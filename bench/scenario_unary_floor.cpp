// Unary floor: filesystem.Filesystem/Stat through the native client
// (e2b::client::stat) and through raw_envd_connection, in alternating blocks
// of the same run so drift hits both alike. Calls: cfg.n * 40 per side.
#include <prism_e2b/e2b/client.hpp>

#include "io_run.hpp"
#include "progress_bar.hpp"
#include "raw_floor.hpp"
#include "resource_usage.hpp"
#include "scenario.hpp"
#include "stats.hpp"

#include <boost/url/parse.hpp>

namespace prism_e2b::bench {

namespace asio = boost::asio;

std::string run_unary_floor(bench_config const& cfg, server_endpoint const& srv, scenario_report& report)
{
    if (!plain_http(srv))
        return "unary_floor compares the client with a plain-HTTP/1.1 loop: run it against a server without TLS";
    std::size_t const calls = cfg.n * 40;
    std::size_t const block = std::min<std::size_t>(10, calls);
    report.params["calls_per_side"] = calls;
    report.params["block"] = block;
    report.params["call"] = "filesystem.Filesystem/Stat {\"path\":\"/home/user\"}";
    auto& sdk = report.side("cpp", "prism-e2b (C++ e2b::client)");
    auto& raw = report.side("raw", "raw Beast keep-alive loop");
    auto u = boost::urls::parse_uri(srv.sandbox_url);
    int const port = u ? static_cast<int>(u->port_number()) : 0;
    double sdk_cpu = 0, raw_cpu = 0;

    std::string err = run_io(cfg.threads, [&](asio::any_io_executor ex) -> asio::awaitable<std::string> {
        auto const o = client_options_for(srv);
        auto client = e2b::make_client(ex, o);
        if (!client) co_return "client: " + client.error().to_string();
        e2b::create_sandbox_params p;
        p.timeout = std::chrono::seconds(600);
        auto h = co_await (*client)->async_create_sandbox(p);
        if (!h) co_return "create: " + h.error().to_string();
        auto const target = e2b::envd_target::from(*h);
        std::string const stat_path = "/home/user";
        raw_envd_connection conn(ex, port, h->sandbox_id, h->envd_access_token.value_or(""));
        std::string failure = co_await conn.connect();
        // Warm-up: both paths open their connection and touch every code path once.
        for (int i = 0; i < 20 && failure.empty(); ++i) {
            if (auto r = co_await (*client)->async_stat(target, stat_path); !r)
                failure = "sdk stat: " + r.error().to_string();
            else
                failure = co_await conn.stat(stat_path);
        }
        progress_bar bar("unary floor", 2 * calls, cfg.quiet);
        for (std::size_t done = 0; done < calls && failure.empty(); done += block) {
            std::size_t const k = std::min(block, calls - done);
            auto c0 = sample_self();
            for (std::size_t i = 0; i < k && failure.empty(); ++i) {
                auto const t0 = std::chrono::steady_clock::now();
                auto r = co_await (*client)->async_stat(target, stat_path);
                sdk.op("stat").push_back(to_ms(std::chrono::steady_clock::now() - t0));
                if (!r) failure = "sdk stat: " + r.error().to_string();
                bar.tick();
            }
            auto c1 = sample_self();
            for (std::size_t i = 0; i < k && failure.empty(); ++i) {
                auto const t0 = std::chrono::steady_clock::now();
                failure = co_await conn.stat(stat_path);
                raw.op("stat").push_back(to_ms(std::chrono::steady_clock::now() - t0));
                bar.tick();
            }
            auto c2 = sample_self();
            sdk_cpu += c1.cpu_seconds() - c0.cpu_seconds();
            raw_cpu += c2.cpu_seconds() - c1.cpu_seconds();
        }
        bar.finish();
        (void)co_await (*client)->async_kill_sandbox(h->sandbox_id);
        co_return failure;
    });
    sdk.set_metric("calls", static_cast<double>(sdk.find_op("stat") ? sdk.find_op("stat")->size() : 0));
    sdk.set_metric("cpu_seconds", sdk_cpu);
    sdk.set_metric("peak_rss_kib", static_cast<double>(sample_self().peak_rss_kib));
    raw.set_metric("calls", static_cast<double>(raw.find_op("stat") ? raw.find_op("stat")->size() : 0));
    raw.set_metric("cpu_seconds", raw_cpu);
    report.notes.push_back(
        "CPU is summed per block of calls from getrusage (tick-granular): approximate; "
        "the raw loop runs in the same process, so peak RSS is reported for the process once");
    if (!err.empty()) return err;
    if (cfg.js)
        if (auto e = run_js_side("unary_floor", cfg, srv, report); !e.empty()) return "js: " + e;
    return {};
}

}  // namespace prism_e2b::bench
