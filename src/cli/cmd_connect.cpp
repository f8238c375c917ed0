// prism-e2b connect SANDBOX: an interactive terminal. A login shell on an envd
// pty of this terminal's size; keys go to it raw (Ctrl-C included), a window
// resize (SIGWINCH) resizes it, and the command exits with the shell's exit code.
#include <prism_e2b/e2b/pty.hpp>

#include "cli/commands.hpp"
#include "cli/terminal_io.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace asio = boost::asio;

namespace prism_e2b::cli {
namespace {

struct connect_options {
    std::string sandbox;
    std::optional<std::string> user;
    std::optional<std::string> cwd;
    std::string shell = "/bin/bash";
};

/// The coroutines of one session share this on the CLI's single thread.
struct session {
    std::shared_ptr<e2b::client> client;
    e2b::envd_target target;
    e2b::process_selector shell;
    bool done = false;  // the shell ended: helpers stop
};

/// Keys to the shell, in order, one SendInput at a time.
asio::awaitable<void> pump_keys(std::shared_ptr<session> s, std::shared_ptr<stdin_reader> in)
{
    while (!s->done) {
        auto keys = co_await in->read();
        if (!keys || s->done) co_return;  // end of input: the shell keeps running until it exits
        auto r = co_await s->client->async_send_pty_input(s->target, s->shell, std::move(*keys));
        if (!r) co_return;  // the shell is gone; its end event says how
    }
}

/// SIGWINCH -> Update(pty.size); SIGINT/SIGTERM/SIGHUP (from outside: in raw
/// mode Ctrl-C is a key) kill the shell so it does not outlive the session.
asio::awaitable<void> watch_signals(std::shared_ptr<session> s, std::shared_ptr<asio::signal_set> signals)
{
    while (!s->done) {
        auto [ec, signo] = co_await signals->async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec || s->done) co_return;
        if (signo == SIGWINCH) {
            auto size = terminal_size(0);
            if (!size) size = terminal_size(1);
            if (!size) continue;
            auto r = co_await s->client->async_resize_pty(s->target, s->shell, *size);
            if (!r && r.error() != errc::not_found)
                fail(exit_vendor, "connect: resize failed: " + r.error().to_string());
        } else {
            auto r = co_await s->client->async_kill_pty(s->target, s->shell);
            if (!r && r.error() != errc::not_found)
                fail(exit_vendor, "connect: could not end the shell: " + r.error().to_string());
        }
    }
}

asio::awaitable<int> connect(std::shared_ptr<e2b::client> c, connect_options o)
{
    auto t = co_await running_target(*c, "connect", o.sandbox);
    if (!t.target) co_return t.exit;
    e2b::pty_start_params p;
    p.process.cmd = o.shell;
    p.process.args = {"-i", "-l"};
    char const* term = std::getenv("TERM");
    p.process.envs["TERM"] = term && *term ? term : "xterm-256color";
    p.process.cwd = o.cwd;
    p.user = o.user;
    if (auto size = terminal_size(0)) p.size = *size;
    auto ex = co_await asio::this_coro::executor;
    auto stream = co_await c->async_start_pty(*t.target, p);
    if (!stream) co_return report("connect", stream.error());

    auto s = std::make_shared<session>(session{c, *t.target, {}, false});
    auto signals = std::make_shared<asio::signal_set>(ex, SIGWINCH, SIGINT, SIGTERM);
    signals->add(SIGHUP);
    auto in = std::make_shared<stdin_reader>(ex);
    std::optional<raw_mode> raw;
    struct stop_helpers {  // on every way out: the terminal back to normal, nothing left running
        std::shared_ptr<session> s;
        std::shared_ptr<asio::signal_set> signals;
        std::shared_ptr<stdin_reader> in;
        ~stop_helpers()
        {
            s->done = true;
            signals->cancel();
            in->cancel();
        }
    } stop{s, signals, in};
    std::optional<e2b::end_event> end;
    for (;;) {
        auto ev = co_await (*stream)->async_next();
        if (!ev) {
            raw.reset();
            co_return report("connect", ev.error());
        }
        if (!*ev) break;
        if (auto const* st = std::get_if<e2b::start_event>(&**ev)) {
            s->shell.pid = st->pid;
            raw.emplace(0);
            asio::co_spawn(ex, pump_keys(s, in), asio::detached);
            asio::co_spawn(ex, watch_signals(s, signals), asio::detached);
        } else if (auto const* d = std::get_if<e2b::data_event>(&**ev)) {
            write_all(1, d->bytes);
        } else if (auto const* e = std::get_if<e2b::end_event>(&**ev)) {
            end = *e;
        }
    }
    raw.reset();
    if (!end) co_return fail(exit_unknown_outcome, "connect: the terminal's stream ended without the shell's end");
    co_return end->exited ? end->exit_code & 0xff : 128 + 9;
}

}  // namespace

void add_connect_command(CLI::App& app, run_state& st)
{
    auto o = std::make_shared<connect_options>();
    auto* cmd = app.add_subcommand("connect", "open an interactive terminal (a login shell on a pty) in a sandbox");
    cmd->alias("cn");
    cmd->add_option("sandbox", o->sandbox, "the sandbox id")->required();
    cmd->add_option("-u,--user", o->user, "the sandbox user to log in as");
    cmd->add_option("-c,--cwd", o->cwd, "working directory");
    cmd->add_option("--shell", o->shell, "the shell to run (default /bin/bash, started with -i -l)");
    cmd->footer(
        "The terminal is in raw mode while connected: every key (Ctrl-C, Ctrl-D) goes to the shell;\n"
        "exit the shell to leave. A window resize reaches the shell (SIGWINCH).\n\n" +
        exit_codes_help());
    cmd->callback([o, &st] {
        st.exit =
            run_with_client("connect", [o = *o](std::shared_ptr<e2b::client> c) { return connect(std::move(c), o); });
    });
}

}  // namespace prism_e2b::cli
