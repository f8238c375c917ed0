// Fork to first exec: cfg.n forks (count 1) of one running source sandbox, each timed
// from the fork call to the end of its first command (`/bin/true`), against the same
// for a fresh sandbox (create, then the first command), alternating in the same run so
// drift hits both alike. The anchor: mitos, a Firecracker fork, 104 ms p50.
#include <prism_e2b/e2b/client.hpp>

#include "io_run.hpp"
#include "progress_bar.hpp"
#include "scenario.hpp"
#include "stats.hpp"

namespace prism_e2b::bench {

namespace asio = boost::asio;

namespace {

/// Runs /bin/true in `target` and reads its stream to the end; empty on success.
asio::awaitable<std::string> first_exec(e2b::client& c, e2b::envd_target target)
{
    e2b::start_process_params p;
    p.process.cmd = "/bin/true";
    auto s = co_await c.async_start_process(std::move(target), std::move(p));
    if (!s) co_return "start: " + s.error().to_string();
    for (;;) {
        auto ev = co_await (*s)->async_next();
        if (!ev) co_return "stream: " + ev.error().to_string();
        if (!*ev) co_return "the stream ended without an end event";
        if (auto const* end = std::get_if<e2b::end_event>(&**ev))
            co_return end->exit_code == 0 ? std::string() : "exit " + std::to_string(end->exit_code);
    }
}

}  // namespace

std::string run_fork(bench_config const& cfg, server_endpoint const& srv, scenario_report& report)
{
    std::size_t const rounds = cfg.n;
    report.params["rounds"] = rounds;
    report.params["command"] = "/bin/true (first command in the new sandbox)";
    report.params["anchor"] = "mitos (Firecracker fork): 104 ms p50 fork to first exec";
    auto& side = report.side("cpp", "prism-e2b (C++ e2b::client)");

    std::string err = run_io(cfg.threads, [&](asio::any_io_executor ex) -> asio::awaitable<std::string> {
        auto const o = client_options_for(srv);
        auto client = e2b::make_client(ex, o);
        if (!client) co_return "client: " + client.error().to_string();
        auto& c = **client;
        e2b::create_sandbox_params p;
        p.timeout = std::chrono::seconds(600);
        auto src = co_await c.async_create_sandbox(p);
        if (!src) co_return "create the source: " + src.error().to_string();
        // The source holds some state of its own: a file the forks copy.
        if (auto w = co_await c.async_write_file(e2b::envd_target::from(*src), "/home/user/state.txt",
                                                 std::string(64 * 1024, 's'));
            !w)
            co_return "write: " + w.error().to_string();
        std::string failure;
        progress_bar bar("fork / create to first exec", 2 * rounds, cfg.quiet);
        for (std::size_t i = 0; i < rounds && failure.empty(); ++i) {
            auto const t0 = std::chrono::steady_clock::now();
            e2b::fork_params fp;
            fp.count = 1;
            fp.timeout = std::chrono::seconds(120);
            auto forks = co_await c.async_fork_sandbox(src->sandbox_id, fp);
            auto const t1 = std::chrono::steady_clock::now();
            if (!forks || forks->size() != 1 || !(*forks)[0]) {
                failure =
                    "fork: " + (forks ? forks->empty() ? std::string("no result") : (*forks)[0].error().to_string()
                                      : forks.error().to_string());
                break;
            }
            auto const fork = *(*forks)[0];
            failure = co_await first_exec(c, e2b::envd_target::from(fork));
            side.op("fork").push_back(to_ms(t1 - t0));
            side.op("fork_to_first_exec").push_back(to_ms(std::chrono::steady_clock::now() - t0));
            (void)co_await c.async_kill_sandbox(fork.sandbox_id);
            bar.tick();
            if (!failure.empty()) break;

            auto const c0 = std::chrono::steady_clock::now();
            e2b::create_sandbox_params fresh;
            fresh.timeout = std::chrono::seconds(120);
            auto h = co_await c.async_create_sandbox(fresh);
            if (!h) {
                failure = "create: " + h.error().to_string();
                break;
            }
            failure = co_await first_exec(c, e2b::envd_target::from(*h));
            side.op("create_to_first_exec").push_back(to_ms(std::chrono::steady_clock::now() - c0));
            (void)co_await c.async_kill_sandbox(h->sandbox_id);
            bar.tick();
        }
        bar.finish();
        (void)co_await c.async_kill_sandbox(src->sandbox_id);
        co_return failure;
    });
    report.notes.push_back(
        "fork_to_first_exec: POST /sandboxes/{id}/fork (count 1) of a running source with a 64 KiB file, then "
        "/bin/true in the fork to its end event; create_to_first_exec: the same for a new sandbox, alternating");
    if (!err.empty()) return err;
    return {};
}

}  // namespace prism_e2b::bench
