// prism-e2b bench pause_resume_memory: pause/resume latency against the memory a
// sandbox holds, on each isolation engine of the embedded local server, next to
// E2B's published figures (about 4 s per GiB to pause, about 1 s to resume), with
// what the paused sandbox costs: a memory image on disk (gvisor: runsc checkpoint)
// or the RAM it keeps (namespaces: a cgroup freeze). The gvisor engine once per
// memory tier: frozen in RAM (gvisor-ram), its image written behind the answer and
// resumed from disk (gvisor-disk), the image before the answer (gvisor-sync). A
// process in the sandbox holds the memory (random bytes: nothing compresses them away).
#include <prism_e2b/e2b_sandbox.hpp>

#include "cli/commands.hpp"
#ifdef PRISM_E2B_HAVE_EMULATOR
#include <prism_e2b/local_server.hpp>
#endif

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace prism_e2b::cli {

#ifdef PRISM_E2B_HAVE_EMULATOR
namespace {

/// An engine as the bench names it: the gvisor engine once per memory tier policy.
struct bench_engine {
    std::string label;   ///< the row's name
    std::string engine;  ///< server_options::engine
    local::memory_tier_policy tiers;
    bool waits_for_image = false;  ///< resume only once the image is on disk (the disk tier)
};

/// namespaces, mount-namespace, none: as named. gvisor-ram: the pause freezes it in RAM and the
/// resume thaws it (no image is written meanwhile); gvisor-disk: frozen, the image written at once
/// behind the answer, the resume after it (from disk); gvisor-sync: the image before the pause answers.
std::optional<bench_engine> bench_engine_named(std::string const& name)
{
    bench_engine e{name, name, {}, false};
    if (name == "gvisor-ram") {
        e.engine = "gvisor";
        e.tiers.image_after.reset();
        e.tiers.frozen_memory_cap_mb = std::uint64_t{1} << 30;
    } else if (name == "gvisor-disk") {
        e.engine = "gvisor";
        e.tiers.image_after = std::chrono::seconds(0);
        e.waits_for_image = true;
    } else if (name == "gvisor-sync") {
        e.engine = "gvisor";
        e.tiers.sync = true;
    } else if (name == "gvisor") {
        return std::nullopt;  // which tier? (one of the three above)
    }
    return e;
}

struct bench_options {
    std::vector<std::string> engines = {"namespaces", "gvisor-ram", "gvisor-disk", "gvisor-sync"};
    std::vector<unsigned> sizes_mib = {64, 256};
    int cycles = 3;
};

struct row {
    std::string engine;
    unsigned mib = 0;
    std::vector<double> pause_ms, resume_ms;
    std::vector<double> image_ms;   ///< gvisor-disk: from the pause's answer to a whole image on disk
    std::uint64_t image_bytes = 0;  ///< the memory image on disk while paused (0: memory kept in RAM)
    std::string error;
};

double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// A python process that fills `mib` MiB with random bytes (16 MiB at a time: no second copy)
/// and keeps them; the script returns once they are held, or fails when python died.
std::string hold_memory_script(unsigned mib)
{
    return "rm -f /tmp/held; nohup python3 -c 'import os,time\n"
           "n = " +
           std::to_string(std::uint64_t{mib} << 20) +
           "\nb = bytearray(n)\nfor i in range(0, n, 1 << 24): b[i:i + (1 << 24)] = os.urandom(min(1 << 24, n - i))\n"
           "open(\"/tmp/held\", \"w\").close()\ntime.sleep(10**6)' > /dev/null 2>&1 &\n"
           "until [ -e /tmp/held ]; do kill -0 $! || exit 1; sleep 0.05; done";
}

std::string read_text(fs::path const& p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Bytes of the memory image of `id` (gvisor: state_dir/sandboxes/<id>/memory).
std::uint64_t image_bytes(fs::path const& state_dir, std::string const& id)
{
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(state_dir / "sandboxes" / id / "memory", ec))
        if (e.is_regular_file(ec)) total += e.file_size(ec);
    return total;
}

/// Looks at `reached` every 5 ms until it holds or `deadline` passes (a named predicate: g++ 12
/// and temporaries inside co_await).
template <class Pred>
asio::awaitable<void> poll_until(Pred const& reached, std::chrono::steady_clock::time_point deadline)
{
    asio::steady_timer poll(co_await asio::this_coro::executor);
    while (!reached() && std::chrono::steady_clock::now() < deadline) {
        poll.expires_after(std::chrono::milliseconds(5));
        co_await poll.async_wait(asio::use_awaitable);
    }
}

asio::awaitable<void> measure(std::string api_key, e2b::client_options co, fs::path state_dir, bench_options opts,
                              bench_engine engine, std::vector<row>& rows)
{
    auto ex = co_await asio::this_coro::executor;
    for (unsigned const mib : opts.sizes_mib) {
        row r;
        r.engine = engine.label;
        r.mib = mib;
        e2b_sandbox_options so;
        so.api_key = api_key;
        so.client_options = co;
        so.timeout = std::chrono::minutes(20);
        auto created = co_await async_create_e2b_sandbox(ex, std::move(so));
        if (!created) {
            r.error = created.error().to_string();
            rows.push_back(std::move(r));
            continue;
        }
        auto sbx = *created;
        auto req = exec_file_request::argv("/bin/bash", "-c", hold_memory_script(mib));
        auto held = co_await sbx->async_exec_file(std::move(req));
        if (!held || held->exit_code != 0) r.error = "could not hold the memory";
        pause_options with_memory;
        with_memory.keep_memory = true;
        for (int i = 0; i < opts.cycles && r.error.empty(); ++i) {
            auto t0 = std::chrono::steady_clock::now();
            auto paused = co_await sbx->pause_control()->async_pause(with_memory);
            r.pause_ms.push_back(ms_since(t0));
            if (!paused || paused->what != pause_outcome::kind::paused) {
                r.error = paused ? "pause refused" : paused.error().to_string();
                break;
            }
            if (engine.waits_for_image) {  // the writer's work behind the answer, polled on disk
                auto const deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
                auto const image = state_dir / "sandboxes" / sbx->id() / "memory" / "checkpoint.img";
                auto const image_whole = [&] {
                    std::error_code ec;
                    return fs::exists(image, ec);
                };
                co_await poll_until(image_whole, deadline);
                r.image_ms.push_back(ms_since(t0) - r.pause_ms.back());
                // Resumed from the disk tier, once the server recorded it (runsc's container takes
                // about a second to exit after its checkpoint; a resume meanwhile waits for that).
                auto const ledger = state_dir / "ledger" / (sbx->id() + ".json");
                auto const on_disk = [&] {
                    return read_text(ledger).find(R"("freezeMethod":"checkpoint")") != std::string::npos;
                };
                co_await poll_until(on_disk, deadline);
            }
            r.image_bytes = std::max(r.image_bytes, image_bytes(state_dir, sbx->id()));
            t0 = std::chrono::steady_clock::now();
            auto resumed = co_await sbx->pause_control()->async_resume();
            r.resume_ms.push_back(ms_since(t0));
            if (!resumed) r.error = resumed.error().to_string();
        }
        (void)co_await sbx->async_kill();
        rows.push_back(std::move(r));
    }
}

std::string random_key()
{
    std::random_device rd;
    std::ostringstream s;
    s << "e2b_bench_" << std::hex << rd() << rd() << rd();
    return s.str();
}

/// One engine: an embedded server on it (skipped with the reason when this machine cannot run it).
void run_engine(bench_engine const& engine, bench_options const& opts, std::vector<row>& rows)
{
    asio::io_context server_ioc(2);
    auto work = asio::make_work_guard(server_ioc);
    local::server_options so;
    so.api_key = random_key();
    so.engine = engine.engine;
    so.memory_tiers = engine.tiers;
    so.state_dir =
        (fs::temp_directory_path() / ("prism-e2b-bench-" + engine.label + "-" + random_key().substr(10))).string();
    so.sandbox_memory_mb = *std::max_element(opts.sizes_mib.begin(), opts.sizes_mib.end()) + 512;
    local::server server(server_ioc.get_executor(), so);
    if (auto started = server.start(); !started) {
        row r;
        r.engine = engine.label;
        r.error = "skipped: " + started.error().message();
        rows.push_back(std::move(r));
        std::error_code ec;
        fs::remove_all(so.state_dir, ec);
        return;
    }
    std::thread t1([&] { server_ioc.run(); }), t2([&] { server_ioc.run(); });
    e2b::client_options co;
    co.api_url = server.api_url();
    co.sandbox_url = server.sandbox_url();
    {
        asio::io_context ioc(1);
        auto fut = asio::co_spawn(ioc, measure(so.api_key, co, so.state_dir, opts, engine, rows), asio::use_future);
        ioc.run();
        try {
            fut.get();
        } catch (std::exception const& e) {
            row r;
            r.engine = engine.label;
            r.error = e.what();
            rows.push_back(std::move(r));
        }
    }
    server.stop();
    work.reset();
    server_ioc.stop();
    t1.join();
    t2.join();
    std::error_code ec;
    fs::remove_all(so.state_dir, ec);
}

/// One row per engine and size: p50s, the image written behind the answer (gvisor-disk), and the
/// ratios against E2B's published figures (about 4 s per GiB to pause, about 1 s to resume).
void print(std::vector<row> const& rows)
{
    std::printf("%-12s %6s %11s %11s %12s %10s %9s %10s %16s\n", "engine", "MiB", "pause p50", "resume p50",
                "image after", "image s/GiB", "pause/E2B", "resume/E2B", "while paused");
    for (auto const& r : rows) {
        if (!r.error.empty() && r.pause_ms.empty()) {
            std::printf("%-12s %6s  %s\n", r.engine.c_str(), r.mib ? std::to_string(r.mib).c_str() : "-",
                        r.error.c_str());
            continue;
        }
        double const gib = r.mib / 1024.0;
        double const p = median(r.pause_ms), s = median(r.resume_ms), w = median(r.image_ms);
        std::string const cost =
            r.image_bytes ? std::to_string(r.image_bytes >> 20) + " MiB on disk" : std::to_string(r.mib) + " MiB RAM";
        std::string const image = r.image_ms.empty() ? std::string("-") : std::to_string(static_cast<long>(w)) + " ms";
        std::string const image_rate = r.image_ms.empty() ? std::string("-") : std::to_string(w / 1000.0 / gib);
        std::printf("%-12s %6u %8.0f ms %8.0f ms %12s %10.6s %9.3f %10.3f %16s%s%s\n", r.engine.c_str(), r.mib, p, s,
                    image.c_str(), image_rate.c_str(), p / (4000.0 * gib), s / 1000.0, cost.c_str(),
                    r.error.empty() ? "" : "  ", r.error.c_str());
    }
    std::printf("%-12s %6s %11s %11s %12s %10s %9s %10s %16s\n", "E2B (docs)", "1024", "~4000 ms", "~1000 ms", "-", "-",
                "1", "1", "snapshot on disk");
}

int bench_pause_resume_memory(std::vector<std::string> const& args)
{
    bench_options opts;
    for (std::size_t i = 1; i < args.size(); ++i) {
        auto const& a = args[i];
        auto value = [&]() -> std::string { return i + 1 < args.size() ? args[++i] : std::string(); };
        auto list = [](std::string const& s) {
            std::vector<std::string> out;
            std::stringstream ss(s);
            for (std::string item; std::getline(ss, item, ',');)
                if (!item.empty()) out.push_back(item);
            return out;
        };
        if (a == "--engines") {
            opts.engines = list(value());
        } else if (a == "--sizes") {
            opts.sizes_mib.clear();
            for (auto const& s : list(value())) opts.sizes_mib.push_back(static_cast<unsigned>(std::stoul(s)));
        } else if (a == "--max-mib") {  // doubling from 64 up to it
            opts.sizes_mib.clear();
            for (unsigned m = 64, max = static_cast<unsigned>(std::stoul(value())); m <= max; m *= 2)
                opts.sizes_mib.push_back(m);
        } else if (a == "--n") {
            opts.cycles = std::max(1, std::stoi(value()));
        } else {
            return fail(exit_usage, "bench pause_resume_memory: unknown option " + a +
                                        " (--engines namespaces,gvisor-ram,gvisor-disk,gvisor-sync --sizes 64,256 | "
                                        "--max-mib N, --n cycles)");
        }
    }
    if (opts.sizes_mib.empty() || opts.engines.empty())
        return fail(exit_usage, "bench pause_resume_memory: nothing to measure");
    std::vector<bench_engine> engines;
    for (auto const& name : opts.engines) {
        auto e = bench_engine_named(name);
        if (!e)
            return fail(exit_usage,
                        "bench pause_resume_memory: name the gvisor tier: gvisor-ram, gvisor-disk or "
                        "gvisor-sync");
        engines.push_back(std::move(*e));
    }
    std::vector<row> rows;
    for (auto const& e : engines) run_engine(e, opts, rows);
    print(rows);
    return exit_ok;
}

}  // namespace
#endif

/// `prism-e2b bench pause_resume_memory ...`: nullopt for any other bench scenario.
std::optional<int> run_bench_pause_resume_memory(std::vector<std::string> const& args)
{
    if (args.empty() || args[0] != "pause_resume_memory") return std::nullopt;
#ifdef PRISM_E2B_HAVE_EMULATOR
    try {
        return bench_pause_resume_memory(args);
    } catch (std::exception const& e) {
        return fail(exit_usage, std::string("bench pause_resume_memory: ") + e.what());
    }
#else
    return fail(exit_config, "bench pause_resume_memory: built without the local server");
#endif
}

}  // namespace prism_e2b::cli
