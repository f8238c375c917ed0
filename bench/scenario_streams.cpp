// Long-running streams: cfg.streams processes (`sleep`) started at once from one
// client on 2 io threads (or by cfg.open_at_once openers in turn) and held open,
// each stream waiting for its process to end; then every process is killed and
// every stream read to its end event.
// Side "cpp" speaks HTTP/2 (h2c with prior knowledge: the local server is
// plain http://), side "cpp_http1" HTTP/1.1 with one connection per stream.
// Reported per side: streams held, client RSS growth per held stream (VmRSS
// now minus before the first stream, so the second side is measured from its
// own baseline), the same after malloc_trim (what the held streams take, not
// what opening them freed), TCP connections this process held, and the time to
// open all.
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/process.hpp>

#include "io_run.hpp"
#include "join_counter.hpp"
#include "progress_bar.hpp"
#include "resource_usage.hpp"
#include "scenario.hpp"
#include "stats.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <malloc.h>
#include <memory>
#include <mutex>

namespace prism_e2b::bench {

namespace asio = boost::asio;

namespace {

/// Processes per sandbox: well under the sandbox's pids.max (1024), which also
/// counts the sandbox's own agent and shells.
constexpr std::size_t streams_per_sandbox = 500;

struct held_stream {
    std::unique_ptr<e2b::process_event_stream> stream;
    std::uint32_t pid = 0;
    std::size_t sandbox = 0;
};

struct side_outcome {
    std::size_t held = 0;
    std::size_t ended = 0;  ///< streams read to their end event after the kill
    std::size_t connections = 0;
    long rss_growth_kib = 0;       ///< right after the last open: includes what opening freed but malloc kept
    long rss_held_growth_kib = 0;  ///< then after malloc_trim: what the held streams themselves take
    long rss_held_kib = 0;         ///< the whole client's RSS then (the 64 MiB goal is on this)
    double open_seconds = 0;
    double cpu_seconds = 0;
    std::vector<double> open_ms;
    std::string first_failure;
};

/// The first event of a started process is its start event (its pid).
asio::awaitable<result<std::uint32_t>> await_start(e2b::process_event_stream& s)
{
    for (;;) {
        auto ev = co_await s.async_next();
        if (!ev) co_return ev.error();
        if (!*ev) co_return error(errc::unknown_outcome, "stream ended before its start event");
        if (auto const* st = std::get_if<e2b::start_event>(&**ev)) co_return st->pid;
    }
}

/// Reads a killed process's stream to its end event; true when it came.
asio::awaitable<bool> await_end(e2b::process_event_stream& s)
{
    for (;;) {
        auto ev = co_await s.async_next();
        if (!ev || !*ev) co_return false;
        if (std::holds_alternative<e2b::end_event>(**ev)) co_return true;
    }
}

side_outcome run_side(bench_config const& cfg, server_endpoint const& srv, bool http2, std::string const& label)
{
    side_outcome out;
    std::mutex m;
    auto fail = [&](std::string what) {
        std::lock_guard lock(m);
        if (out.first_failure.empty()) out.first_failure = std::move(what);
    };
    std::string const err =
        run_io(std::max(2u, cfg.threads), [&](asio::any_io_executor ex) -> asio::awaitable<std::string> {
            auto o = client_options_for(srv);
            o.h2c_prior_knowledge = http2;
            // HTTP/1.1: one connection per stream (the local server accepts 512 at most), or they queue.
            o.max_connections_per_origin = http2 ? 200 : cfg.streams + 8;
            o.max_streams_per_connection = 2000;  // the local server's SETTINGS_MAX_CONCURRENT_STREAMS
            o.max_inflight_envd_requests = cfg.streams + 64;
            // stream_idle_timeout stays at its default (150 s): a stream whose start event never comes
            // fails in bounded time and is reported, instead of hanging the run.
            auto client = e2b::make_client(ex, o);
            if (!client) co_return "client: " + client.error().to_string();
            std::size_t const n_sandboxes = (cfg.streams + streams_per_sandbox - 1) / streams_per_sandbox;
            std::vector<e2b::envd_target> targets;
            std::vector<std::string> ids;
            for (std::size_t i = 0; i < n_sandboxes; ++i) {
                e2b::create_sandbox_params p;
                p.timeout = std::chrono::minutes(30);
                auto h = co_await (*client)->async_create_sandbox(p);
                if (!h) co_return "create: " + h.error().to_string();
                targets.push_back(e2b::envd_target::from(*h));
                ids.push_back(h->sandbox_id);
            }
            std::vector<held_stream> streams(cfg.streams);
            ::malloc_trim(0);  // what the previous side freed goes back to the kernel: this side's own baseline
            long const rss0 = current_rss_kib();
            auto const cpu0 = sample_self();
            auto const t0 = std::chrono::steady_clock::now();
            {
                progress_bar bar("open streams (" + label + ")", cfg.streams, cfg.quiet);
                join_counter join;
                join.add(cfg.streams);
                // One opener per stream (all at once), or --open-at-once openers taking the next index.
                std::size_t const openers = cfg.open_at_once ? std::min(cfg.open_at_once, cfg.streams) : cfg.streams;
                std::atomic<std::size_t> next{0};
                for (std::size_t w = 0; w < openers; ++w)
                    asio::co_spawn(
                        ex,
                        [&]() -> asio::awaitable<void> {
                            for (std::size_t i; (i = next++) < cfg.streams;) {
                                auto& slot = streams[i];
                                slot.sandbox = i % targets.size();
                                e2b::start_process_params p;
                                p.process.cmd = "/bin/sleep";
                                p.process.args = {"3600"};
                                p.timeout = std::chrono::milliseconds(0);  // long-running: no deadline
                                auto const s0 = std::chrono::steady_clock::now();
                                auto s = co_await (*client)->async_start_process(targets[slot.sandbox], p);
                                if (!s) {
                                    fail("start: " + s.error().to_string());
                                } else if (auto pid = co_await await_start(**s); !pid) {
                                    fail("start event: " + pid.error().to_string());
                                } else {
                                    slot.stream = std::move(*s);
                                    slot.pid = *pid;
                                    double const ms = to_ms(std::chrono::steady_clock::now() - s0);
                                    std::lock_guard lock(m);
                                    out.open_ms.push_back(ms);
                                    ++out.held;
                                }
                                bar.tick();
                                join.done();
                            }
                        },
                        asio::detached);
                co_await join.wait();
                bar.finish();
            }
            out.open_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            out.rss_growth_kib = current_rss_kib() - rss0;
            ::malloc_trim(0);
            out.rss_held_kib = current_rss_kib();
            out.rss_held_growth_kib = out.rss_held_kib - rss0;
            out.connections = open_sockets();
            out.cpu_seconds = sample_self().cpu_seconds() - cpu0.cpu_seconds();
            {
                progress_bar bar("kill and drain (" + label + ")", out.held, cfg.quiet);
                join_counter join;
                for (auto& slot : streams) {
                    if (!slot.stream) continue;
                    join.add(1);
                    asio::co_spawn(
                        ex,
                        [&]() -> asio::awaitable<void> {
                            e2b::process_selector sel;
                            sel.pid = slot.pid;
                            auto k = co_await (*client)->async_send_signal(targets[slot.sandbox], sel,
                                                                           process_signal::sigkill);
                            // A refused kill (HTTP/1.1 past the server's connection cap: the held
                            // streams take every connection) leaves the process running: no end comes.
                            // Not found: it ended before the kill, and its end is in the stream.
                            bool const refused = !k && !(k.error() == errc::not_found);
                            if (!k) fail("kill: " + k.error().to_string());
                            if (!refused && co_await await_end(*slot.stream)) {
                                std::lock_guard lock(m);
                                ++out.ended;
                            }
                            slot.stream.reset();
                            bar.tick();
                            join.done();
                        },
                        asio::detached);
                }
                co_await join.wait();
                bar.finish();
            }
            for (auto const& id : ids) (void)co_await (*client)->async_kill_sandbox(id);
            co_return std::string{};
        });
    if (!err.empty()) out.first_failure = err;
    return out;
}

}  // namespace

std::string run_streams(bench_config const& cfg, server_endpoint const& srv, scenario_report& report)
{
    report.params["streams"] = cfg.streams;
    report.params["streams_per_sandbox"] = streams_per_sandbox;
    report.params["open_at_once"] = cfg.open_at_once;
    report.params["command"] = "/bin/sleep 3600 (killed after all are held)";
    report.params["cpp_io_threads"] = std::max(2u, cfg.threads);
    std::string failures;
    for (bool const http2 : {true, false}) {
        auto const key = http2 ? "cpp" : "cpp_http1";
        auto& side = report.side(key, http2 ? "prism-e2b over HTTP/2 (h2c)" : "prism-e2b over HTTP/1.1");
        auto const o = run_side(cfg, srv, http2, http2 ? "HTTP/2" : "HTTP/1.1");
        side.op("open") = o.open_ms;
        side.set_metric("streams_held", static_cast<double>(o.held));
        side.set_metric("streams_ended", static_cast<double>(o.ended));
        side.set_metric("connections", static_cast<double>(o.connections));
        side.set_metric("rss_growth_kib", static_cast<double>(o.rss_growth_kib));
        side.set_metric("rss_kib_per_stream",
                        o.held ? static_cast<double>(o.rss_growth_kib) / static_cast<double>(o.held) : 0);
        side.set_metric("rss_held_growth_kib", static_cast<double>(o.rss_held_growth_kib));
        side.set_metric("client_rss_kib_while_held", static_cast<double>(o.rss_held_kib));
        side.set_metric("rss_held_kib_per_stream",
                        o.held ? static_cast<double>(o.rss_held_growth_kib) / static_cast<double>(o.held) : 0);
        side.set_metric("open_seconds", o.open_seconds);
        side.set_metric("cpu_seconds_to_open", o.cpu_seconds);
        if (!o.first_failure.empty() || o.held != cfg.streams || o.ended != o.held)
            failures += std::string(failures.empty() ? "" : "; ") + key + ": held " + std::to_string(o.held) + "/" +
                        std::to_string(cfg.streams) + ", ended " + std::to_string(o.ended) +
                        (o.first_failure.empty() ? "" : ", first failure: " + o.first_failure);
    }
    return failures;
}

}  // namespace prism_e2b::bench
