// exec_file: admission by the governor, one envd Start stream read to its end,
// and the three ways we stop the remote process ourselves (timeout,
// cancellation, output overflow).
#include "adapter/exec.hpp"

#include "adapter/process_fsm.hpp"
#include "protocol/on_strand.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>

namespace asio = boost::asio;
using namespace boost::asio::experimental::awaitable_operators;

namespace prism_e2b::detail {

namespace {

struct exec_ctx {
    exec_result res;
    output_budget* budget = nullptr;
    output_callback const* on_data = nullptr;
    bool capture = true;
    bool overflow = false;
    bool ended = false;
    std::optional<std::uint32_t> pid;
};

// Reads until the end event (or overflow). Errors: the stream's own (cut:
// unknown_outcome, cancelled, ...).
asio::awaitable<result<void>> read_exec_stream(e2b::process_event_stream& stream, exec_ctx& ctx)
{
    for (;;) {
        // A cancellation emitted while no read was pending only marks the state.
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
            co_return error(errc::cancelled, "exec was cancelled", {"exec"});
        auto r = co_await stream.async_next();
        if (!r) co_return r.error();
        if (!*r) co_return error(errc::unknown_outcome, "the process stream ended without an end event", {"exec"});
        auto& ev = **r;
        if (auto* s = std::get_if<e2b::start_event>(&ev)) {
            ctx.pid = s->pid;
        } else if (auto* d = std::get_if<e2b::data_event>(&ev)) {
            if (!ctx.budget->consume(d->bytes.size())) {
                ctx.overflow = true;  // the caller stops the process
                co_return result<void>();
            }
            auto const which = d->stream == e2b::data_event::stream_kind::stderr_data ? output_stream::stderr_stream
                                                                                      : output_stream::stdout_stream;
            if (*ctx.on_data && !d->bytes.empty()) (*ctx.on_data)(which, d->bytes);
            if (ctx.capture)
                (which == output_stream::stderr_stream ? ctx.res.stderr_data : ctx.res.stdout_data) += d->bytes;
        } else if (auto* end = std::get_if<e2b::end_event>(&ev)) {
            auto e = map_end_event(*end, false);
            ctx.res.exit_code = e.exit_code;
            ctx.res.outcome = e.outcome;
            ctx.res.status = std::move(e.status);
            ctx.ended = true;
            co_return result<void>();
        }
    }
}

// Reads a process's stream until it ends (its end event, or the stream's end).
asio::awaitable<void> drain_until_end(e2b::process_event_stream& stream)
{
    for (;;) {
        auto r = co_await stream.async_next();
        if (!r || !*r || std::holds_alternative<e2b::end_event>(**r)) co_return;
    }
}

// Waits, at most cleanup_deadline, until a process we SIGKILLed has ended on
// the vendor's side: the exec keeps its governor slot until then, so the
// vendor never runs more than max_concurrent_execs of them (the fault soak
// saw a cut exec's process still running when the next exec started).
asio::awaitable<void> await_remote_end(e2b_sandbox_core& core, e2b::envd_target const& target,
                                       e2b::process_selector const& sel)
{
    auto stream = co_await core.client->async_connect_process(target, sel, std::chrono::milliseconds(0));
    if (!stream) co_return;  // not_found: already gone (or unreachable: nothing more to learn)
    asio::steady_timer deadline(co_await asio::this_coro::executor, core.limits.cleanup_deadline);
    co_await (drain_until_end(**stream) || deadline.async_wait(asio::as_tuple(asio::use_awaitable)));
    (*stream)->close();
}

asio::awaitable<void> stop_remote(e2b_sandbox_core& core, e2b::envd_target const& target,
                                  std::optional<std::uint32_t> pid, std::string const& tag, char const* why)
{
    e2b::process_selector sel;
    if (pid)
        sel.pid = pid;
    else
        sel.tag = tag;
    auto r = co_await core.client->async_send_signal(target, sel, process_signal::sigkill);
    if (r) co_await await_remote_end(core, target, sel);
    if (!r && r.error() != errc::not_found)
        core.log(log_level::warning,
                 std::string("exec: could not stop the process after ") + why + ": " + r.error().to_string());
}

asio::awaitable<result<exec_result>> exec_body(std::shared_ptr<e2b_sandbox_core> core, exec_file_request req)
{
    co_await asio::this_coro::throw_if_cancelled(false);
    auto const cancelled = [&]() -> asio::awaitable<bool> {
        co_return (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
    };

    if (auto v = validate_command(req.file, req.args, req.env, core->limits); !v) co_return v.error();
    if (req.cwd && (req.cwd->empty() || req.cwd->find('\0') != std::string::npos))
        co_return error(errc::invalid_argument, "cwd must be a path without NUL", {"exec"});
    if (req.timeout.count() < 0) co_return error(errc::invalid_argument, "timeout must not be negative", {"exec"});
    if (auto v = validate_user(req.user, "exec"); !v) co_return v.error();
    // Activity never resumes: a paused sandbox fails here, before any vendor call.
    if (auto t = core->activity_target("exec"); !t) co_return t.error();

    auto permit = co_await core->governor.acquire();
    if (!permit) co_return permit.error();
    auto target = core->activity_target("exec");  // the state may have changed while queued
    if (!target) co_return target.error();

    auto const tag = make_process_tag("prism-exec");
    e2b::start_process_params params;
    params.process.cmd = req.file;
    params.process.args = req.args;
    params.process.envs = std::move(req.env);
    params.process.cwd = req.cwd.value_or(core->workdir);
    params.stdin = false;
    params.tag = tag;
    params.user = std::move(req.user);
    // envd kills the process at Connect-Timeout-Ms. With a per-command timeout:
    // it plus a margin, so ours fires first. Without one the contract lets the
    // command run as long as its sandbox: the sandbox's wall time, not the
    // official SDK's 60 s (which would kill commands the contract allows), so
    // envd still reaps a command whose client vanished (README "Exec deadlines").
    params.timeout = req.timeout.count() > 0 ? req.timeout + exec_deadline_margin : core->limits.wall_time;

    auto stream = co_await core->client->async_start_process(*target, std::move(params));
    if (!stream) {
        if (co_await cancelled()) {
            co_await asio::this_coro::reset_cancellation_state();
            co_await stop_remote(*core, *target, std::nullopt, tag, "cancellation");
            co_return error(errc::cancelled, "exec was cancelled", {"exec"});
        }
        co_return stream.error();
    }

    exec_ctx ctx;
    ctx.budget = &permit->budget();
    ctx.on_data = &req.on_data;
    ctx.capture = req.capture_output;

    result<void> rr;
    bool timed_out = false;
    if (req.timeout.count() > 0) {
        asio::steady_timer timer(co_await asio::this_coro::executor, req.timeout);
        auto v = co_await (read_exec_stream(**stream, ctx) || timer.async_wait(asio::as_tuple(asio::use_awaitable)));
        if (v.index() == 0)
            rr = std::get<0>(std::move(v));
        else
            timed_out = !std::get<0>(std::get<1>(v));
    } else {
        rr = co_await read_exec_stream(**stream, ctx);
    }
    (*stream)->close();

    if (co_await cancelled()) {
        co_await asio::this_coro::reset_cancellation_state();
        if (!ctx.ended) co_await stop_remote(*core, *target, ctx.pid, tag, "cancellation");
        co_return error(errc::cancelled, "exec was cancelled; the process was stopped", {"exec"});
    }
    if (timed_out && !ctx.ended) {
        co_await stop_remote(*core, *target, ctx.pid, tag, "its timeout");
        exec_result res = std::move(ctx.res);
        res.exit_code.reset();
        res.outcome = exit_outcome::timed_out;
        res.status = "timed out after " + std::to_string(req.timeout.count()) + " ms; the process was stopped";
        co_return res;
    }
    if (ctx.overflow) {
        co_await stop_remote(*core, *target, ctx.pid, tag, "output overflow");
        co_return error(errc::limit_exceeded,
                        "output exceeded max_output_bytes (" + std::to_string(permit->budget().max()) +
                            "); the process was stopped",
                        {"exec"});
    }
    if (ctx.ended) co_return std::move(ctx.res);
    if (!rr && rr.error() != errc::unknown_outcome && !ctx.pid) co_return rr.error();
    // A stream cut before the end: the outcome is unknown, never an exit code.
    // Nobody follows the process any more, so stop it if it still runs.
    co_await stop_remote(*core, *target, ctx.pid, tag, "its stream was cut");
    exec_result res = std::move(ctx.res);
    res.exit_code.reset();
    res.outcome = exit_outcome::unknown;
    res.status = rr ? std::string("the process stream ended without an end event") : rr.error().message();
    co_return res;
}

}  // namespace

std::string make_process_tag(char const* prefix)
{
    static std::atomic<std::uint64_t> counter{0};
    thread_local std::mt19937_64 rng{std::random_device{}()};
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s-%016llx-%llu", prefix, static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(counter.fetch_add(1)));
    return buf;
}

result<void> validate_user(std::optional<std::string> const& user, char const* operation)
{
    if (!user) return {};
    bool const ok = !user->empty() && user->size() <= 64 && std::none_of(user->begin(), user->end(), [](char c) {
        auto const u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f || c == ':';
    });
    if (!ok)
        return error(errc::invalid_argument, "user must be 1..64 bytes without control characters or ':'", {operation});
    return {};
}

asio::awaitable<result<exec_result>> run_exec(std::shared_ptr<e2b_sandbox_core> core, exec_file_request req)
{
    // Every exec runs on the sandbox's strand: its timer, stream and callbacks
    // never race, while execs of one sandbox still overlap at their I/O.
    auto strand = core->strand;
    co_return co_await protocol::on_strand(strand, exec_body(std::move(core), std::move(req)));
}

}  // namespace prism_e2b::detail
