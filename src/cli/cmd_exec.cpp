// prism-e2b exec SANDBOX [--user U] [--cwd DIR] [--env K=V]... [--background] [--json] -- argv...
// Streams stdout/stderr live, forwards this process's stdin when it is a pipe
// or a file (closed at its end), and exits with the command's
// exit code. --background prints the pid once the command started and leaves it running.
#include "cli/commands.hpp"
#include "cli/terminal_io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <csignal>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace json = boost::json;

namespace prism_e2b::cli {
namespace {

/// stdin is forwarded when it is a pipe, a socket or a file; not from a
/// terminal or another device (/dev/null: nothing to send).
bool stdin_is_data()
{
    struct stat st {};
    if (::fstat(0, &st) != 0) return false;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode);
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
    bool done = false;                 // the command ended: stop waiting for signals
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
        auto r = co_await c->async_send_signal(target, sel, sig);
        if (!r) fail(exit_vendor, "exec: could not forward the signal: " + r.error().to_string());
    }
}

asio::awaitable<void> forward_signals(std::shared_ptr<e2b::client> c, e2b::envd_target target,
                                      std::shared_ptr<asio::signal_set> signals, std::shared_ptr<signal_state> st)
{
    for (;;) {
        auto [ec, signo] = co_await signals->async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec || st->done) co_return;  // the command ended
        ++st->received;
        co_await forward_pending(c, target, st);
    }
}

/// Copies stdin to the command's stdin, then closes it. Ends early when the
/// command is gone (its stdin refuses) or the reader is cancelled.
asio::awaitable<void> pump_stdin(std::shared_ptr<e2b::client> c, e2b::envd_target target, std::uint32_t pid,
                                 std::shared_ptr<stdin_reader> in)
{
    e2b::process_selector sel;
    sel.pid = pid;
    for (;;) {
        auto chunk = co_await in->read();
        if (!chunk) break;
        auto r = co_await c->async_send_stdin(target, sel, std::move(*chunk));
        if (!r) co_return;  // the command ended (or stopped reading): its end event says how
    }
    auto r = co_await c->async_close_stdin(target, sel);
    if (!r && r.error() != errc::not_found)
        fail(exit_vendor, "exec: could not close the command's stdin: " + r.error().to_string());
}

struct exec_options {
    std::string sandbox;
    std::vector<std::string> argv;
    std::optional<std::string> user;
    std::optional<std::string> cwd;
    std::vector<std::string> env;
    bool background = false;
    bool no_stdin = false;
    output_format format = output_format::text;
};

/// Output of the command, live in text mode or collected for --json.
struct output {
    bool json = false;
    std::string out, err;
    void write(e2b::data_event const& d)
    {
        bool const is_err = d.stream == e2b::data_event::stream_kind::stderr_data;
        if (json)
            (is_err ? err : out) += d.bytes;
        else
            write_all(is_err ? 2 : 1, d.bytes);
    }
};

asio::awaitable<int> exec(std::shared_ptr<e2b::client> c, exec_options a)
{
    // Ctrl-C (or SIGTERM) stops the remote command too: SIGTERM first, SIGKILL
    // on the second signal. The command runs without a deadline, so leaving it
    // behind would leave it running. Caught from the start: a signal that comes
    // before the start event (the pid) is sent once the pid is known.
    auto ex = co_await asio::this_coro::executor;
    auto signals = std::make_shared<asio::signal_set>(ex, SIGINT, SIGTERM);
    auto t = co_await running_target(*c, "exec", a.sandbox);
    if (!t.target) co_return t.exit;
    auto target = *t.target;
    bool const forward_stdin = !a.background && !a.no_stdin && stdin_is_data();
    e2b::start_process_params p;
    p.process.cmd = a.argv.front();
    p.process.args.assign(a.argv.begin() + 1, a.argv.end());
    for (auto const& kv : a.env) p.process.envs.insert(split_label(kv));
    p.process.cwd = a.cwd;
    p.user = a.user;
    p.stdin = forward_stdin;
    p.timeout = std::chrono::milliseconds(0);  // no deadline: the command runs as long as it needs
    auto s = co_await c->async_start_process(target, p);
    if (!s) co_return report("exec", s.error());
    auto sigs = std::make_shared<signal_state>();
    auto in = forward_stdin ? std::make_shared<stdin_reader>(ex) : nullptr;
    struct stop_helpers {  // on every way out: nothing keeps the io_context running
        std::shared_ptr<signal_state> sigs;
        std::shared_ptr<asio::signal_set> signals;
        std::shared_ptr<stdin_reader> in;
        ~stop_helpers()
        {
            sigs->done = true;
            signals->cancel();
            if (in) in->cancel();
        }
    } stop{sigs, signals, in};
    if (!a.background) asio::co_spawn(ex, forward_signals(c, target, signals, sigs), asio::detached);
    output out{a.format == output_format::json, {}, {}};
    std::optional<e2b::end_event> end;
    for (;;) {
        auto ev = co_await (*s)->async_next();
        if (!ev) co_return report("exec", ev.error());
        if (!*ev) break;
        if (auto const* st = std::get_if<e2b::start_event>(&**ev)) {
            if (a.background) {
                // Closing the stream detaches; the command keeps running (it has no deadline).
                if (out.json)
                    print_json(json::object{{"sandboxID", a.sandbox}, {"pid", st->pid}});
                else
                    std::cout << st->pid << std::endl;
                co_return exit_ok;
            }
            sigs->pid = st->pid;
            if (sigs->forwarded < sigs->received) asio::co_spawn(ex, forward_pending(c, target, sigs), asio::detached);
            if (in) asio::co_spawn(ex, pump_stdin(c, target, st->pid, in), asio::detached);
        } else if (auto const* d = std::get_if<e2b::data_event>(&**ev)) {
            out.write(*d);
        } else if (auto const* e = std::get_if<e2b::end_event>(&**ev)) {
            end = *e;
        }
    }
    if (!end) co_return fail(exit_unknown_outcome, "exec: the stream ended without the command's end");
    // envd's `error` repeats "exit status N" for a non-zero exit: the exit code says it.
    int const rc = end->exited ? end->exit_code & 0xff : signal_exit(end->status);
    if (out.json)
        print_json(json::object{{"sandboxID", a.sandbox},
                                {"exitCode", rc},
                                {"exited", end->exited},
                                {"status", end->status},
                                {"stdout", out.out},
                                {"stderr", out.err}});
    co_return rc;
}

}  // namespace

void add_exec_command(CLI::App& app, run_state& st)
{
    auto o = std::make_shared<exec_options>();
    auto* cmd = app.add_subcommand("exec", "run a command in a sandbox; exits with its exit code");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    cmd->add_option("command", o->argv, "the command and its arguments (after --)")->required();
    cmd->add_option("-u,--user", o->user, "the sandbox user to run as (default: envd's default user)");
    cmd->add_option("-c,--cwd", o->cwd, "working directory");
    cmd->add_option("-e,--env", o->env, "environment variable K=V (repeatable)")
        ->allow_extra_args(false)
        ->check(label_validator());
    cmd->add_flag("-b,--background", o->background, "print the pid once started and leave it running");
    cmd->add_flag("--no-stdin", o->no_stdin, "do not forward stdin (forwarded when it is a pipe or a file)");
    add_format_options(cmd, o->format);
    cmd->footer(
        "stdin: forwarded to the command when it is a pipe or a file, then closed at its end;\n"
        "  not from a terminal or a device such as /dev/null (use `prism-e2b connect` for a shell).\n"
        "--json: {\"exitCode\",\"exited\",\"status\",\"stdout\",\"stderr\"} once the command ended;\n"
        "  with --background {\"sandboxID\",\"pid\"}.\n\n" +
        exit_codes_help());
    cmd->callback([o, &st] {
        if (!st.saw_double_dash) throw CLI::ValidationError("exec", "missing '--' before the command");
        if (o->argv.empty() || o->argv.front().empty()) throw CLI::ValidationError("exec", "missing the command");
        st.exit = run_with_client("exec", [o = *o](std::shared_ptr<e2b::client> c) { return exec(std::move(c), o); });
    });
}

}  // namespace prism_e2b::cli
