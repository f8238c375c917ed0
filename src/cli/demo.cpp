// prism-e2b demo: the main job. Walks the seed scenario (seed/hosted-sandboxes.md)
// through the adapter, one line per step with its timing, and exits non-zero
// when any step's outcome is wrong. Without E2B_API_KEY (and without --remote)
// it embeds prism-e2b-local in-process; with it, the same scenario runs
// against real E2B, without the fault-injection step.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_ref.hpp>

#include "cli/commands.hpp"
#ifdef PRISM_E2B_HAVE_EMULATOR
#include <prism_e2b/local_server.hpp>
#endif

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

/// One line per step: "  3/14 pause with memory ............ ok   12.3 ms  detail".
class step_printer {
public:
    explicit step_printer(int total) : total_(total) {}

    void start(std::string name)
    {
        name_ = std::move(name);
        ++index_;
        t0_ = std::chrono::steady_clock::now();
    }
    /// Prints the step; returns ok.
    bool done(bool ok, std::string const& detail)
    {
        double const ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
        std::string dots(name_.size() < 44 ? 44 - name_.size() : 1, '.');
        std::printf("%3d/%d %s %s %-4s %8.1f ms  %s\n", index_, total_, name_.c_str(), dots.c_str(), ok ? "ok" : "FAIL",
                    ms, detail.c_str());
        std::fflush(stdout);
        if (!ok) ++failures_;
        return ok;
    }
    int failures() const noexcept { return failures_; }

private:
    int total_;
    int index_ = 0;
    int failures_ = 0;
    std::string name_;
    std::chrono::steady_clock::time_point t0_;
};

std::string random_hex(std::size_t bytes)
{
    std::random_device rd;
    std::string s;
    for (std::size_t i = 0; i < bytes; ++i) {
        char buf[3];
        std::snprintf(buf, sizeof buf, "%02x", rd() & 0xffu);
        s += buf;
    }
    return s;
}

struct demo_target {
    std::string api_key;
    e2b::client_options client_options;
    std::function<void()> inject_pause_busy;  ///< empty: no fault injection (real E2B)
};

/// Collects a process's output; thread-safe (the callback may run on any thread).
struct output_probe {
    std::mutex mutex;
    std::string data;
    output_callback callback()
    {
        return [this](output_stream, std::string_view d) {
            std::lock_guard lock(mutex);
            data.append(d);
        };
    }
    std::size_t size()
    {
        std::lock_guard lock(mutex);
        return data.size();
    }
};

asio::awaitable<int> scenario(demo_target target, bool remote)
{
    auto ex = co_await asio::this_coro::executor;
    int const total = remote ? 13 : 14;
    step_printer step(total);
    label_map const labels{{"app.owner", "alice"}, {"app.demo", "prism-e2b"}};

    // 1. create with labels
    step.start("create with labels");
    e2b_sandbox_options co;
    co.api_key = target.api_key;
    co.client_options = target.client_options;
    co.labels = labels;
    co.timeout = std::chrono::minutes(10);
    auto created = co_await async_create_e2b_sandbox(ex, std::move(co));
    if (!step.done(static_cast<bool>(created), created ? "id " + (*created)->id() : created.error().to_string()))
        co_return 1;
    auto sbx = *created;
    std::string const id = sbx->id();

    // Whatever happens next, the sandbox is killed at the end.
    auto finish = [&](int rc) -> asio::awaitable<int> {
        step.start("kill");
        auto k1 = co_await sbx->async_kill();
        step.done(static_cast<bool>(k1), k1 ? "sandbox destroyed" : k1.error().to_string());
        std::printf("%s: %d step(s) failed\n", step.failures() ? "FAILED" : "demo complete", step.failures());
        co_return step.failures() || rc ? 1 : 0;
    };

    // 2. exec_file with streamed output
    step.start("exec_file with streamed output");
    std::string streamed;
    exec_file_request er;
    er.file = "/bin/sh";
    er.args = {"-c", "echo hello from $(pwd); echo and from stderr >&2"};
    er.on_data = [&](output_stream s, std::string_view d) {
        // Printed as it arrives (the demo's io_context has one thread).
        for (auto line_start = d.begin(); line_start < d.end();) {
            auto nl = std::find(line_start, d.end(), '\n');
            std::printf("        %s> %.*s\n", s == output_stream::stdout_stream ? "out" : "err",
                        static_cast<int>(nl - line_start), &*line_start);
            line_start = nl + 1;
        }
        streamed.append(d);
    };
    auto ran = co_await sbx->async_exec_file(std::move(er));
    bool ok = ran && ran->exit_code == 0 && streamed.find("hello from /workspace") != std::string::npos &&
              streamed.find("and from stderr") != std::string::npos;
    step.done(ok, ran ? "exit " + (ran->exit_code ? std::to_string(*ran->exit_code) : std::string("none"))
                      : ran.error().to_string());

    // 3. a long-running process and its ref
    step.start("start a long-running process");
    process_request pr;
    pr.file = "/bin/sh";
    pr.args = {"-c", "while true; do echo tick; sleep 0.2; done"};
    pr.stdin_open = false;
    auto proc = co_await sbx->async_start_process(std::move(pr));
    std::string ref;
    if (proc) {
        ref = (*proc)->ref();
        (void)co_await (*proc)->async_release();
    }
    std::uint32_t const pid = proc ? (*proc)->pid() : 0;
    ok = proc && ref.rfind(process_ref_prefix, 0) == 0;
    step.done(ok,
              proc ? "pid " + std::to_string(pid) + ", ref " + ref.substr(0, 40) + "..." : proc.error().to_string());
    if (proc) proc->reset();  // released: the host keeps only the ref
    if (!ok) co_return co_await finish(1);

    // 4. pause with memory
    step.start("pause with memory");
    pause_options with_memory;
    with_memory.keep_memory = true;
    auto p1 = co_await sbx->pause_control()->async_pause(with_memory);
    ok = p1 && p1->what == pause_outcome::kind::paused && p1->snapshot == snapshot_kind::memory;
    step.done(ok, p1 ? "HTTP " + std::to_string(p1->http_status) : p1.error().to_string());

    // 5. connect with a foreign owner fails closed
    step.start("connect with wrong labels is refused");
    e2b_connect_options wrong;
    wrong.api_key = target.api_key;
    wrong.client_options = target.client_options;
    wrong.sandbox_id = id;
    wrong.expected_labels = {{"app.owner", "mallory"}};
    auto w = co_await async_connect_e2b_sandbox(ex, std::move(wrong));
    step.done(!w && w.error() == errc::wrong_owner, w ? "connected (wrong!)" : "wrong_owner, nothing resumed");

    // 6. connect with the expected labels (stays paused)
    step.start("connect with expected labels");
    e2b_connect_options cn;
    cn.api_key = target.api_key;
    cn.client_options = target.client_options;
    cn.sandbox_id = id;
    cn.expected_labels = {{"app.owner", "alice"}};
    cn.timeout = std::chrono::minutes(10);
    auto again_r = co_await async_connect_e2b_sandbox(ex, std::move(cn));
    std::shared_ptr<e2b_sandbox> again;
    if (again_r) again = *again_r;
    ok = static_cast<bool>(again_r);
    if (ok) {
        auto st = co_await again->async_status();
        ok = st && st->state == sandbox_state::paused;
        step.done(ok, st ? std::string("state ") + (st->state == sandbox_state::paused ? "paused" : "not paused")
                         : st.error().to_string());
    } else {
        step.done(false, again_r.error().to_string());
        co_return co_await finish(1);
    }
    sbx = again;  // the host now works through the reconnected object

    // 7. resume
    step.start("resume");
    auto r1 = co_await sbx->pause_control()->async_resume();
    step.done(static_cast<bool>(r1), r1 ? "running" : r1.error().to_string());

    // 8. attach by ref: the process survived the memory snapshot
    step.start("attach by ref: process alive");
    auto probe = std::make_shared<output_probe>();
    output_callback on_output = probe->callback();
    auto att = co_await sbx->async_attach_process(ref, std::move(on_output));
    if (att && *att) {
        auto waited = co_await (*att)->async_wait(std::chrono::milliseconds(800));  // still running: times out
        bool const alive = !waited && waited.error() == errc::timed_out;
        ok = alive && probe->size() > 0;
        (void)co_await (*att)->async_release();
        att->reset();  // the host keeps only the ref
        step.done(ok, std::string(alive ? "running" : "not running") + ", " + std::to_string(probe->size()) +
                          " new output bytes");
    } else {
        step.done(false, att ? "attach returned null" : att.error().to_string());
    }

    // 9. pause without memory (filesystem only)
    step.start("pause without memory");
    pause_options filesystem_only;
    filesystem_only.keep_memory = false;
    auto p2 = co_await sbx->pause_control()->async_pause(filesystem_only);
    ok = p2 && p2->what == pause_outcome::kind::paused && p2->snapshot == snapshot_kind::filesystem;
    step.done(ok, p2 ? "HTTP " + std::to_string(p2->http_status) : p2.error().to_string());

    // 10. resume (a reboot)
    step.start("resume (reboot)");
    auto r2 = co_await sbx->pause_control()->async_resume();
    step.done(static_cast<bool>(r2), r2 ? "running, processes gone" : r2.error().to_string());

    // 11. attach by ref returns null
    step.start("attach by ref returns null");
    output_callback no_output;
    auto att2 = co_await sbx->async_attach_process(ref, std::move(no_output));
    step.done(att2 && !*att2,
              att2 ? (*att2 ? "attached (wrong!)" : "null: the process is gone") : att2.error().to_string());

    // 12. exec after the reboot still works, files survived
    step.start("exec after reboot");
    // Requests are named locals: GCC 12 destroys braced temporaries inside a
    // co_await expression twice.
    exec_request check;
    check.command = "test -d /workspace && echo still-here";
    auto after = co_await sbx->async_exec(std::move(check));
    step.done(after && after->exit_code == 0 && after->stdout_data.find("still-here") != std::string::npos,
              after ? "workspace kept" : after.error().to_string());

    // 13. an injected 503 pause is a refusal, not success
    if (target.inject_pause_busy) {
        step.start("injected 503 pause is a refusal");
        target.inject_pause_busy();
        auto p3 = co_await sbx->pause_control()->async_pause(with_memory);
        auto st = co_await sbx->async_status();
        ok = p3 && p3->what == pause_outcome::kind::refused_busy && !p3->is_paused() && st &&
             st->state == sandbox_state::running;
        step.done(ok, p3 ? "HTTP " + std::to_string(p3->http_status) + ", state " +
                               (st && st->state == sandbox_state::running ? "running" : "NOT running")
                         : p3.error().to_string());
    }

    // 14. kill
    co_return co_await finish(0);
}

int demo(bool remote)
{
    char const* env_key = std::getenv("E2B_API_KEY");
    bool const have_key = env_key && *env_key;
    if (have_key) remote = true;
    if (remote && !have_key) return fail(exit_config, "demo --remote: set E2B_API_KEY");

    demo_target target;
    asio::io_context server_ioc(1);
    auto work = asio::make_work_guard(server_ioc);
    std::thread server_thread;
#ifdef PRISM_E2B_HAVE_EMULATOR
    std::unique_ptr<local::server> server;
#endif
    if (remote) {
        target.api_key = env_key;
        std::printf("prism-e2b demo against E2B (%s)\n",
                    std::getenv("E2B_API_URL") ? std::getenv("E2B_API_URL") : "https://api.e2b.app");
    } else {
#ifdef PRISM_E2B_HAVE_EMULATOR
        local::server_options so;
        so.api_key = "e2b_demo_" + random_hex(16);
        server = std::make_unique<local::server>(server_ioc.get_executor(), so);
        if (auto r = server->start(); !r) return fail(exit_config, "demo: local server: " + r.error().to_string());
        server_thread = std::thread([&] { server_ioc.run(); });
        target.api_key = so.api_key;
        target.client_options.api_url = server->api_url();
        target.client_options.sandbox_url = server->sandbox_url();
        target.inject_pause_busy = [s = server.get()] { s->faults().fail_next_pauses(1); };
        std::printf("prism-e2b demo against the embedded local server %s (isolation: %s)\n", server->api_url().c_str(),
                    server->isolation().c_str());
#else
        return fail(exit_config, "demo: built without the local server; set E2B_API_KEY or pass --remote");
#endif
    }
    std::fflush(stdout);

    int rc = 1;
    {
        asio::io_context ioc(1);
        auto fut = asio::co_spawn(ioc, scenario(std::move(target), remote), asio::use_future);
        ioc.run();
        try {
            rc = fut.get();
        } catch (std::exception const& e) {
            rc = fail(exit_vendor, std::string("demo: ") + e.what());
        }
    }
#ifdef PRISM_E2B_HAVE_EMULATOR
    if (server) server->stop();
#endif
    work.reset();
    server_ioc.stop();
    if (server_thread.joinable()) server_thread.join();
    return rc;
}

}  // namespace

void add_demo_command(CLI::App& app, run_state& st)
{
    auto remote = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand(
        "demo", "walk the main scenario end to end (embedded local server unless E2B_API_KEY or --remote)");
    cmd->add_flag("--remote", *remote, "run against E2B (needs E2B_API_KEY)");
    cmd->callback([remote, &st] { st.exit = demo(*remote); });
}

}  // namespace prism_e2b::cli
