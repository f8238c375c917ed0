// status, pause, resume, kill and process start/attach of one e2b_sandbox.
// Each asks the sandbox's fsm what to do, performs that vendor call and
// reports the reply back; waiters wait on the fsm's state, never poll.
#include "adapter/lifecycle.hpp"

#include <prism_e2b/process_ref.hpp>
#include <prism_e2b/redactor.hpp>

#include "adapter/exec.hpp"
#include "adapter/process_state.hpp"
#include "protocol/on_strand.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace asio = boost::asio;

namespace prism_e2b::detail {

result<void> validate_path(std::string const& p, char const* what)
{
    if (p.empty() || p.front() != '/' || p.find('\0') != std::string::npos || p.size() > 4096)
        return error(errc::invalid_argument, std::string(what) + " must be an absolute path without NUL", {"options"});
    return {};
}

asio::awaitable<result<sandbox_status>> run_status(std::shared_ptr<e2b_sandbox_core> core)
{
    bool killed = false;
    {
        std::lock_guard lk(core->mu);
        killed = core->fsm.state() == sandbox_state::killed;
    }
    if (!killed) {
        auto info = co_await core->client->async_get_sandbox_info(core->id);
        if (info) {
            core->perform(core->transition([&](sandbox_fsm& f) { return f.observed(info->state); }));
        } else if (info.error() == errc::not_found) {
            // Gone: a timeout kill or killed elsewhere.
            core->perform(core->transition([](sandbox_fsm& f) { return f.vanished(); }));
        } else {
            co_return info.error();
        }
    }
    sandbox_status s;
    std::lock_guard lk(core->mu);
    s.id = core->id;
    s.state = core->fsm.state();
    s.template_name = core->template_name;
    s.started_at = core->started_at;
    s.last_activity_at = core->last_activity;
    s.command_count = core->governor.commands_admitted();
    co_return s;
}

asio::awaitable<result<pause_outcome>> run_pause(std::shared_ptr<e2b_sandbox_core> core, pause_options opts)
{
    // From now on a cut stream is not a process outcome.
    if (auto b = core->transition([](sandbox_fsm& f) { return f.pause_begin(); }); !b) co_return b.error();
    auto r = co_await core->client->async_pause_sandbox(core->id, opts.keep_memory);
    if (!r) {
        core->perform(core->transition([](sandbox_fsm& f) { return f.pause_refused(); }));
        co_return r.error();
    }
    pause_outcome out;
    out.http_status = r->http_status;
    out.message = secret_redactor::global().redact(r->message);
    out.snapshot = opts.keep_memory ? snapshot_kind::memory : snapshot_kind::filesystem;
    switch (r->outcome) {
        case e2b::pause_reply::kind::paused:
        case e2b::pause_reply::kind::already_paused: {
            auto const already = r->outcome == e2b::pause_reply::kind::already_paused;
            out.what = already ? pause_outcome::kind::already_paused : pause_outcome::kind::paused;
            core->perform(core->transition([&](sandbox_fsm& f) { return f.pause_succeeded(out.snapshot, already); }));
            core->log(log_level::info,
                      "paused sandbox " + core->id + (opts.keep_memory ? " (memory)" : " (filesystem)"));
            co_return out;
        }
        case e2b::pause_reply::kind::busy:
            // 503: nothing changed, the sandbox is still running. Not success.
            out.what = pause_outcome::kind::refused_busy;
            core->perform(core->transition([](sandbox_fsm& f) { return f.pause_refused(); }));
            core->log(log_level::warning, "pause of " + core->id + " refused (busy); still running");
            co_return out;
        case e2b::pause_reply::kind::not_found:
            core->transition([](sandbox_fsm& f) { (void)f.pause_refused(); });
            core->perform(core->transition([](sandbox_fsm& f) { return f.vanished(); }));
            co_return error(errc::not_found, "the sandbox does not exist", {"pause", r->http_status});
    }
    core->perform(core->transition([](sandbox_fsm& f) { return f.pause_refused(); }));
    co_return error(errc::protocol_error, "unexpected pause reply", {"pause"});
}

asio::awaitable<result<void>> run_resume(std::shared_ptr<e2b_sandbox_core> core)
{
    if (auto b = core->transition([](sandbox_fsm& f) { return f.resume_begin(); }); !b) co_return b.error();
    // Explicit connect with the configured timeout: a resume that falls back to the
    // vendor default would silently shrink the sandbox's life (wire-notes.md).
    auto c = co_await core->client->async_connect_sandbox(core->id, core->vendor_timeout);
    if (!c) {
        core->transition([](sandbox_fsm& f) { f.resume_failed(); });
        if (c.error() == errc::not_found) core->perform(core->transition([](sandbox_fsm& f) { return f.vanished(); }));
        co_return c.error();
    }
    auto reply = e2b::envd_target::from(c->sandbox);
    reply.sandbox_id = core->id;
    auto effects = core->transition([&](sandbox_fsm& f) { return f.resume_succeeded(std::move(reply)); });
    {
        std::lock_guard lk(core->mu);
        core->last_activity = std::chrono::system_clock::now();
    }
    core->perform(effects);
    core->log(log_level::info, "resumed sandbox " + core->id);
    co_return result<void>();
}

asio::awaitable<result<void>> run_kill(std::shared_ptr<e2b_sandbox_core> core)
{
    // Idempotent: one vendor kill. A concurrent kill() waits for the one in
    // flight to settle (killed, or failed: then it tries itself).
    co_await asio::this_coro::throw_if_cancelled(false);  // a cancelled wait is errc::cancelled
    for (;;) {
        auto const step = core->transition([](sandbox_fsm& f) { return f.kill_begin(); });
        if (step == kill_step::done) co_return result<void>();
        if (step == kill_step::call_vendor) break;
        auto settled = [&] {
            std::lock_guard lk(core->mu);
            return core->fsm.phase() != sandbox_phase::killing;
        };
        auto wait = [core, settled]() -> asio::awaitable<wait_outcome> {
            co_return co_await core->changes.wait_until(settled, std::nullopt);
        };
        auto w = co_await protocol::on_strand(core->strand, std::move(wait));
        if (w == wait_outcome::cancelled) co_return error(errc::cancelled, "kill was cancelled", {"kill"});
    }
    auto r = co_await core->client->async_kill_sandbox(core->id);
    if (!r) {
        core->transition([](sandbox_fsm& f) { f.kill_failed(); });  // a failed kill may be retried
        co_return r.error();
    }
    core->perform(core->transition([](sandbox_fsm& f) { return f.kill_succeeded(); }));
    core->log(log_level::info, "killed sandbox " + core->id);
    co_return result<void>();
}

asio::awaitable<result<std::unique_ptr<process_handle>>> run_start_process(std::shared_ptr<e2b_sandbox_core> core,
                                                                           process_request req)
{
    if (auto v = validate_command(req.file, req.args, req.env, core->limits); !v) co_return v.error();
    if (req.cwd)
        if (auto v = validate_path(*req.cwd, "cwd"); !v) co_return v.error();
    if (auto v = validate_user(req.user, "start_process"); !v) co_return v.error();
    auto target = core->activity_target("start_process");
    if (!target) co_return target.error();
    // A long-running process is a command too (contract.md: max_commands).
    if (auto a = core->governor.admit(); !a) co_return a.error();
    e2b::start_process_params params;
    params.process.cmd = req.file;
    params.process.args = req.args;
    params.process.envs = std::move(req.env);
    params.process.cwd = req.cwd.value_or(core->workdir);
    params.stdin = req.stdin_open;
    params.user = req.user;
    // Connect-Timeout-Ms makes envd kill the process when it passes: a
    // long-running process gets no deadline (wire-notes.md).
    params.timeout = std::chrono::milliseconds(0);
    // A non-secret tag lets us stop a process whose pid we never learnt.
    auto const tag = make_process_tag("prism-proc");
    params.tag = tag;
    co_await asio::this_coro::throw_if_cancelled(false);
    auto stream = co_await core->client->async_start_process(*target, std::move(params));
    std::optional<error> failed;
    std::uint32_t pid = 0;
    if (!stream) {
        failed = stream.error();
    } else {
        auto first = co_await (*stream)->async_next();
        if (!first)
            failed = first.error();
        else if (!*first || !std::holds_alternative<e2b::start_event>(**first))
            failed =
                error(errc::protocol_error, "the process stream did not begin with a start event", {"start_process"});
        else
            pid = std::get<e2b::start_event>(**first).pid;
    }
    if (failed) {
        // Started without a deadline: never leave it running unowned. When the
        // start itself failed nothing runs, unless the failure was our cancellation.
        auto const cancelled =
            (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
        if (stream || cancelled) {
            co_await asio::this_coro::reset_cancellation_state();
            e2b::process_selector sel;
            sel.tag = tag;
            (void)co_await core->client->async_send_signal(*target, sel, process_signal::sigkill);
        }
        co_return *failed;
    }
    auto ref = encode_process_ref({core->id, pid, command_fingerprint(req.file, req.args), core->workdir});
    auto state = std::make_shared<e2b_process_state>(core, pid, std::move(ref), std::move(req.on_data));
    co_await e2b_process_state::follow(state, std::move(*stream));
    co_return make_process_handle(std::move(state));
}

asio::awaitable<result<std::unique_ptr<process_handle>>> run_attach_process(std::shared_ptr<e2b_sandbox_core> core,
                                                                            std::string ref, output_callback on_data)
{
    using handle_ptr = std::unique_ptr<process_handle>;
    auto rec = decode_process_ref(ref);
    if (!rec || rec->sandbox_id != core->id || rec->workspace != core->workdir) co_return handle_ptr();
    e2b::envd_target target;
    {
        std::lock_guard lk(core->mu);
        switch (core->fsm.may_attach(rec->pid)) {
            case attach_verdict::gone:
                co_return handle_ptr();
            case attach_verdict::paused:
                co_return error(errc::paused, "the sandbox is paused; call resume() first", {"attach_process"});
            case attach_verdict::allowed:
                break;
        }
        target = core->fsm.target();
        core->last_activity = std::chrono::system_clock::now();
    }
    // The pid must still run the command the ref names (pids are reused).
    auto procs = co_await core->client->async_list_processes(target);
    if (!procs) {
        if (procs.error() == errc::not_found) co_return handle_ptr();
        co_return procs.error();
    }
    auto it = std::find_if(procs->begin(), procs->end(), [&](auto const& p) { return p.pid == rec->pid; });
    if (it == procs->end() || command_fingerprint(it->config.cmd, it->config.args) != rec->command_fingerprint)
        co_return handle_ptr();
    auto stream =
        co_await core->client->async_connect_process(target, pid_selector(rec->pid), std::chrono::milliseconds(0));
    if (!stream) {
        if (stream.error() == errc::not_found) co_return handle_ptr();
        co_return stream.error();
    }
    auto first = co_await (*stream)->async_next();
    if (!first) {
        if (first.error() == errc::not_found) co_return handle_ptr();
        co_return first.error();
    }
    if (!*first || !std::holds_alternative<e2b::start_event>(**first)) co_return handle_ptr();
    auto state = std::make_shared<e2b_process_state>(core, rec->pid, encode_process_ref(*rec), std::move(on_data));
    co_await e2b_process_state::follow(state, std::move(*stream));
    co_return make_process_handle(std::move(state));
}

}  // namespace prism_e2b::detail
