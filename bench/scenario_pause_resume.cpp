// pause/resume latency: N cycles of pause(memory)/resume and
// pause(filesystem)/resume through the adapter, on a sandbox running a process
// that holds cfg.memory_mib of memory (started again after each filesystem
// pause, untimed: a filesystem resume is a reboot). The control plane goes
// through timing_proxy so each operation splits into the server's own time
// (Server-Timing) and the rest ("client": SDK + loopback).
#include <prism_e2b/e2b_sandbox.hpp>

#include "io_run.hpp"
#include "progress_bar.hpp"
#include "resource_usage.hpp"
#include "scenario.hpp"
#include "stats.hpp"
#include "timing_proxy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>

#include <atomic>

namespace prism_e2b::bench {

namespace asio = boost::asio;

namespace {

int port_of(std::string const& url)
{
    auto u = boost::urls::parse_uri(url);
    return u ? static_cast<int>(u->port_number()) : 0;
}

/// Server time of the control-plane calls recorded since the last take().
double server_ms_of(timing_proxy& proxy, std::string const& suffix, bool& missing)
{
    double sum = 0;
    bool seen = false;
    for (auto const& x : proxy.take()) {
        if (x.target.size() >= suffix.size() &&
            x.target.compare(x.target.size() - suffix.size(), suffix.size(), suffix) == 0) {
            if (x.server_ms < 0)
                missing = true;
            else
                sum += x.server_ms;
            seen = true;
        }
    }
    if (!seen) missing = true;
    return sum;
}

}  // namespace

/// Splits the JS side's totals with the proxy's records, in order: each cycle
/// is pause, connect, pause, connect.
void split_js_pause_resume(std::vector<timed_exchange> const& records, side_report& js)
{
    std::vector<double> pauses, connects;
    for (auto const& x : records) {
        if (x.method != "POST" || x.server_ms < 0) continue;
        if (x.target.ends_with("/pause"))
            pauses.push_back(x.server_ms);
        else if (x.target.ends_with("/connect"))
            connects.push_back(x.server_ms);
    }
    auto const* pm = js.find_op("pause_memory");
    auto const* rm = js.find_op("resume_memory");
    auto const* pf = js.find_op("pause_filesystem");
    auto const* rf = js.find_op("resume_filesystem");
    if (!pm || !rm || !pf || !rf || pauses.size() != 2 * pm->size() || connects.size() != 2 * rm->size()) {
        js.notes.push_back("server/client split unavailable: the SDK's pause/connect calls did not pair one to one");
        return;
    }
    // Copies: op() may reallocate the vector of operations.
    auto const pmv = *pm, rmv = *rm, pfv = *pf, rfv = *rf;
    for (std::size_t i = 0; i < pmv.size(); ++i) {
        js.op("pause_memory.server").push_back(pauses[2 * i]);
        js.op("pause_memory.client").push_back(pmv[i] - pauses[2 * i]);
        js.op("resume_memory.server").push_back(connects[2 * i]);
        js.op("resume_memory.client").push_back(rmv[i] - connects[2 * i]);
        js.op("pause_filesystem.server").push_back(pauses[2 * i + 1]);
        js.op("pause_filesystem.client").push_back(pfv[i] - pauses[2 * i + 1]);
        js.op("resume_filesystem.server").push_back(connects[2 * i + 1]);
        js.op("resume_filesystem.client").push_back(rfv[i] - connects[2 * i + 1]);
    }
}

std::string run_pause_resume(bench_config const& cfg, server_endpoint const& srv, scenario_report& report)
{
    report.params["cycles"] = cfg.n;
    report.params["memory_mib"] = cfg.memory_mib;
    report.params["holder"] = "perl -e '$x = \"a\" x (MiB * 1048576); $| = 1; print \"ready\\n\"; sleep 100000'";
    auto& side = report.side("cpp", "prism-e2b (C++ adapter)");

    // Between the clients and the control plane, to split each call's time; not over TLS.
    timing_proxy proxy;
    bool const timed = plain_http(srv);
    if (timed)
        if (auto err = proxy.start(port_of(srv.api_url)); !err.empty()) return err;

    std::string const holder =
        "$x = \"a\" x (" + std::to_string(cfg.memory_mib) + " * 1048576); $| = 1; print \"ready\\n\"; sleep 100000";
    auto const cpu0 = sample_self();
    std::string err = run_io(cfg.threads, [&](asio::any_io_executor ex) -> asio::awaitable<std::string> {
        e2b_sandbox_options o;
        o.api_key = srv.api_key;
        o.client_options = client_options_for(srv);
        if (timed) o.client_options.api_url = proxy.url();
        o.timeout = std::chrono::minutes(10);
        auto created = co_await async_create_e2b_sandbox(ex, std::move(o));
        if (!created) co_return "create: " + created.error().to_string();
        auto sbx = *created;
        std::string failure;
        progress_bar bar("pause/resume (C++)", cfg.n, cfg.quiet);
        for (std::size_t i = 0; i < cfg.n && failure.empty(); ++i) {
            process_request pr;
            pr.file = "/usr/bin/perl";
            pr.args = {"-e", holder};
            pr.stdin_open = false;
            // Pause only once the process holds its memory (it prints "ready").
            auto ready = std::make_shared<std::atomic<bool>>(false);
            pr.on_data = [ready](output_stream, std::string_view d) {
                if (d.find("ready") != std::string_view::npos) *ready = true;
            };
            auto proc = co_await sbx->async_start_process(std::move(pr));
            if (!proc) {
                failure = "start holder: " + proc.error().to_string();
                break;
            }
            {
                asio::steady_timer t(ex);
                for (int w = 0; w < 30000 && !ready->load(); ++w) {
                    t.expires_after(std::chrono::milliseconds(1));
                    co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
                }
            }
            if (!ready->load()) {
                failure = "the memory holder did not report ready";
                break;
            }
            co_await (*proc)->async_release();
            proxy.take();
            struct step {
                char const* name;
                bool pause;
                bool memory;
                char const* suffix;
            };
            for (step s : {step{"pause_memory", true, true, "/pause"}, step{"resume_memory", false, true, "/connect"},
                           step{"pause_filesystem", true, false, "/pause"},
                           step{"resume_filesystem", false, false, "/connect"}}) {
                auto const t0 = std::chrono::steady_clock::now();
                if (s.pause) {
                    pause_options opts;
                    opts.keep_memory = s.memory;
                    auto r = co_await sbx->async_pause(opts);
                    if (!r || !r->is_paused()) {
                        failure = std::string(s.name) + ": " + (r ? "refused" : r.error().to_string());
                        break;
                    }
                } else {
                    auto r = co_await sbx->async_resume();
                    if (!r) {
                        failure = std::string(s.name) + ": " + r.error().to_string();
                        break;
                    }
                }
                double const total = to_ms(std::chrono::steady_clock::now() - t0);
                bool missing = false;
                double const server = server_ms_of(proxy, s.suffix, missing);
                side.op(s.name).push_back(total);
                if (!missing) {
                    side.op(std::string(s.name) + ".server").push_back(server);
                    side.op(std::string(s.name) + ".client").push_back(total - server);
                }
            }
            bar.tick();
        }
        bar.finish();
        auto k = co_await sbx->async_kill();
        if (!k && failure.empty()) failure = "kill: " + k.error().to_string();
        co_return failure;
    });
    auto const cpu1 = sample_self();
    side.set_metric("cycles",
                    static_cast<double>(side.find_op("pause_memory") ? side.find_op("pause_memory")->size() : 0));
    side.set_metric("cpu_seconds", cpu1.cpu_seconds() - cpu0.cpu_seconds());
    side.set_metric("peak_rss_kib", static_cast<double>(cpu1.peak_rss_kib));
    if (!timed)
        side.notes.push_back("over TLS: no timing proxy, server/client split unavailable");
    else if (!side.find_op("pause_memory.server"))
        side.notes.push_back("no Server-Timing seen: server/client split unavailable");
    if (!err.empty()) return err;

    if (cfg.js) {
        proxy.take();
        server_endpoint via_proxy = srv;
        if (timed) via_proxy.api_url = proxy.url();
        if (auto e = run_js_side("pause_resume", cfg, via_proxy, report); !e.empty()) return "js: " + e;
        if (auto* js = const_cast<side_report*>(report.find_side("js"))) split_js_pause_resume(proxy.take(), *js);
    }
    if (timed)
        report.notes.push_back(
            "both clients reach the control plane through the same timing proxy; "
            "'.server' = Server-Timing app;dur, '.client' = total - server (SDK + loopback hops)");
    return {};
}

}  // namespace prism_e2b::bench
