// prism-e2b exec SANDBOX [--cwd DIR] [--env K=V]... -- argv...
// Streams stdout/stderr live and exits with the command's exit code.
#include "cli/commands.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <iostream>
#include <unistd.h>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

void write_all(int fd, std::string const& bytes)
{
    std::size_t off = 0;
    while (off < bytes.size()) {
        auto n = ::write(fd, bytes.data() + off, bytes.size() - off);
        if (n <= 0) return;  // the reader went away; keep consuming the stream
        off += static_cast<std::size_t>(n);
    }
}

/// The shell convention for a command a signal ended.
int signal_exit(std::string const& status)
{
    if (status.find("killed") != std::string::npos) return 128 + 9;
    if (status.find("terminated") != std::string::npos) return 128 + 15;
    if (status.find("interrupt") != std::string::npos) return 128 + 2;
    return 128 + 6;
}

/// Ctrl-C/SIGTERM bookkeeping, shared by the coroutines of one exec on the
/// CLI's single-threaded io_context (no lock needed).
struct signal_state {
    std::optional<std::uint32_t> pid;  // once the start event arrived
    int received = 0;                  // signals caught so far
    int forwarded = 0;                 // of them, sent (or being sent) to the command
};

/// Sends the signals caught but not yet forwarded: SIGTERM first, SIGKILL after.
/// Nothing while the pid is unknown; the start event sends them then.
asio::awaitable<void> forward_pending(std::shared_ptr<e2b::client> c, e2b::envd_target target,
                                      std::shared_ptr<signal_state> st)
{
    while (st->pid && st->forwarded < st->received) {
        e2b::process_selector sel;
        sel.pid = *st->pid;
        auto const sig = st->forwarded == 0 ? process_signal::sigterm : process_signal::sigkill;
        ++st->forwarded;  // before the wait: a concurrent call sends the next one
        auto r = co_await c->send_signal(target, sel, sig);
        if (!r) fail(exit_vendor, "exec: could not forward the signal: " + r.error().to_string());
    }
}

asio::awaitable<void> forward_signals(std::shared_ptr<e2b::client> c, e2b::envd_target target,
                                      std::shared_ptr<asio::signal_set> signals, std::shared_ptr<signal_state> st)
{
    for (;;) {
        auto [ec, signo] = co_await signals->async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return;  // the command ended
        ++st->received;
        co_await forward_pending(c, target, st);
    }
}

struct exec_args {
    std::string sandbox;
    std::optional<std::string> cwd;
    env_map env;
    std::vector<std::string> argv;
};

asio::awaitable<int> exec(std::shared_ptr<e2b::client> c, exec_args a)
{
    // The envd access token comes from the control plane, never from argv.
    auto info = co_await c->get_sandbox_info(a.sandbox);
    if (!info) co_return report("exec", info.error());
    if (info->state == e2b::sandbox_state::paused)
        co_return fail(exit_vendor,
                       "exec: sandbox " + a.sandbox + " is paused (run: prism-e2b resume " + a.sandbox + ")");
    auto target = e2b::envd_target::from(*info);
    e2b::start_process_params p;
    p.process.cmd = a.argv.front();
    p.process.args.assign(a.argv.begin() + 1, a.argv.end());
    p.process.envs = a.env;
    p.process.cwd = a.cwd;
    p.stdin = false;
    p.timeout = std::chrono::milliseconds(0);  // no deadline: the command runs as long as it needs
    auto s = co_await c->start_process(target, p);
    if (!s) co_return report("exec", s.error());
    // Ctrl-C (or SIGTERM) stops the remote command too: SIGTERM first, SIGKILL
    // on the second signal. The command ran without a deadline, so leaving it
    // behind would leave it running. A signal that comes before the start event
    // (the pid) is sent once the pid is known.
    auto ex = co_await asio::this_coro::executor;
    auto signals = std::make_shared<asio::signal_set>(ex, SIGINT, SIGTERM);
    auto sigs = std::make_shared<signal_state>();
    asio::co_spawn(ex, forward_signals(c, target, signals, sigs), asio::detached);
    std::optional<e2b::end_event> end;
    for (;;) {
        auto ev = co_await (*s)->next();
        if (!ev) {
            signals->cancel();
            co_return report("exec", ev.error());
        }
        if (!*ev) break;
        if (auto const* st = std::get_if<e2b::start_event>(&**ev)) {
            sigs->pid = st->pid;
            if (sigs->forwarded < sigs->received) asio::co_spawn(ex, forward_pending(c, target, sigs), asio::detached);
        }
        if (auto const* d = std::get_if<e2b::data_event>(&**ev))
            write_all(d->stream == e2b::data_event::stream_kind::stderr_data ? 2 : 1, d->bytes);
        else if (auto const* e = std::get_if<e2b::end_event>(&**ev))
            end = *e;
    }
    signals->cancel();
    if (!end) co_return fail(exit_unknown_outcome, "exec: the stream ended without the command's end");
    if (!end->exited) co_return signal_exit(end->status);
    // envd's `error` repeats "exit status N" for a non-zero exit: the exit code says it.
    co_return end->exit_code & 0xff;
}

int run(std::vector<std::string> const& args)
{
    exec_args a;
    std::size_t i = 0;
    if (args.empty() || args[0].rfind("-", 0) == 0) return usage_error("exec", "missing SANDBOX");
    a.sandbox = args[i++];
    bool dashdash = false;
    for (; i < args.size(); ++i) {
        auto const& x = args[i];
        if (x == "--") {
            dashdash = true;
            ++i;
            break;
        }
        if (x == "--cwd" && i + 1 < args.size()) {
            a.cwd = args[++i];
        } else if (x == "--env" && i + 1 < args.size()) {
            auto kv = parse_label(args[++i]);
            if (!kv) return usage_error("exec", "--env needs K=V");
            a.env[kv->first] = kv->second;
        } else {
            return usage_error("exec", "unexpected argument '" + x + "'");
        }
    }
    if (!dashdash) return usage_error("exec", "missing '--' before the command");
    a.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
    if (a.argv.empty() || a.argv.front().empty()) return usage_error("exec", "missing command after '--'");
    return run_with_client("exec", [a](std::shared_ptr<e2b::client> c) { return exec(std::move(c), a); });
}

bool const registered =
    register_command({"exec", "exec SANDBOX [--cwd DIR] [--env K=V]... -- argv...",
                      "run a command in a sandbox, streaming its output; exits with its exit code", run});

}  // namespace
}  // namespace prism_e2b::cli
