// pty_capable over the client's terminals: a start counts against
// max_commands like a process; every call passes the sandbox's activity gate
// (paused: errc::paused, no vendor call); a terminal's reads follow its
// process event stream, its end mapped as a process's (never an invented exit).
#include "adapter/pty.hpp"

#include <prism_e2b/e2b/pty.hpp>

#include "adapter/exec.hpp"
#include "adapter/lifecycle.hpp"
#include "adapter/process_fsm.hpp"
#include "core/spawn_op.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace asio = boost::asio;

namespace prism_e2b::detail {

namespace {

e2b::pty_size to_pty_size(terminal_size s)
{
    e2b::pty_size out;
    out.cols = s.cols;
    out.rows = s.rows;
    return out;
}

class e2b_terminal final : public terminal_handle {
public:
    e2b_terminal(std::shared_ptr<e2b_sandbox_core> core, std::uint32_t pid, e2b::pty_stream stream)
        : core_(std::move(core)), pid_(pid), stream_(std::move(stream))
    {
    }
    ~e2b_terminal() override { stream_->close(); }

    std::uint32_t pid() const noexcept override { return pid_; }

protected:
    void do_read(completion_handler<terminal_output> h) override { spawn_op(core_->executor, read(), std::move(h)); }
    void do_write(std::string bytes, completion_handler<void> h) override
    {
        spawn_op(core_->executor, write(std::move(bytes)), std::move(h));
    }
    void do_resize(terminal_size size, completion_handler<void> h) override
    {
        spawn_op(core_->executor, resize(size), std::move(h));
    }
    void do_kill(completion_handler<void> h) override { spawn_op(core_->executor, kill(), std::move(h)); }

private:
    asio::awaitable<result<terminal_output>> read()
    {
        terminal_output out;
        if (ended_) {
            out.ended = *ended_;
            co_return out;
        }
        for (;;) {
            auto ev = co_await stream_->async_next();
            if (!ev) co_return ev.error();
            if (!*ev) {
                // A clean end of stream comes only after the end event, which set ended_.
                out.ended = ended_.value_or(process_exit{});
                co_return out;
            }
            if (auto* d = std::get_if<e2b::data_event>(&**ev)) {
                if (d->bytes.empty()) continue;
                out.data = std::move(d->bytes);
                co_return out;
            }
            if (auto* end = std::get_if<e2b::end_event>(&**ev)) {
                ended_ = map_end_event(*end, kill_requested_);
                out.ended = *ended_;
                co_return out;
            }
            // start and keepalive carry no output
        }
    }

    asio::awaitable<result<void>> write(std::string bytes)
    {
        auto t = core_->activity_target("terminal.write");
        if (!t) co_return t.error();
        auto sel = pid_selector(pid_);
        co_return co_await core_->client->async_send_pty_input(std::move(*t), std::move(sel), std::move(bytes),
                                                               asio::use_awaitable);
    }

    asio::awaitable<result<void>> resize(terminal_size size)
    {
        auto t = core_->activity_target("terminal.resize");
        if (!t) co_return t.error();
        auto sel = pid_selector(pid_);
        auto const s = to_pty_size(size);
        co_return co_await core_->client->async_resize_pty(std::move(*t), std::move(sel), s, asio::use_awaitable);
    }

    asio::awaitable<result<void>> kill()
    {
        auto t = core_->activity_target("terminal.kill");
        if (!t) co_return t.error();
        kill_requested_ = true;
        auto sel = pid_selector(pid_);
        co_return co_await core_->client->async_kill_pty(std::move(*t), std::move(sel), asio::use_awaitable);
    }

    std::shared_ptr<e2b_sandbox_core> core_;
    std::uint32_t pid_;
    e2b::pty_stream stream_;
    std::optional<process_exit> ended_;
    std::atomic<bool> kill_requested_{false};
};

/// Reads a fresh terminal stream's first event: its pid.
asio::awaitable<result<std::uint32_t>> read_start(e2b::process_event_stream& s)
{
    auto first = co_await s.async_next();
    if (!first) co_return first.error();
    if (!*first || !std::holds_alternative<e2b::start_event>(**first))
        co_return error(errc::protocol_error, "the terminal's stream did not begin with a start event",
                        {"terminal.start"});
    co_return std::get<e2b::start_event>(**first).pid;
}

class e2b_pty final : public pty_capable {
public:
    explicit e2b_pty(std::shared_ptr<e2b_sandbox_core> core) : core_(std::move(core)) {}

protected:
    void do_start_terminal(terminal_request req, completion_handler<std::unique_ptr<terminal_handle>> h) override
    {
        spawn_op(core_->executor, start(std::move(req)), std::move(h));
    }
    void do_attach_terminal(std::uint32_t pid, completion_handler<std::unique_ptr<terminal_handle>> h) override
    {
        spawn_op(core_->executor, attach(pid), std::move(h));
    }

private:
    asio::awaitable<result<std::unique_ptr<terminal_handle>>> start(terminal_request req)
    {
        if (auto v = validate_command(req.file, req.args, req.env, core_->limits); !v) co_return v.error();
        if (req.cwd)
            if (auto v = validate_path(*req.cwd, "cwd"); !v) co_return v.error();
        if (auto v = validate_user(req.user, "terminal.start"); !v) co_return v.error();
        if (req.size.cols == 0 || req.size.rows == 0 || req.size.cols > 1000 || req.size.rows > 1000)
            co_return error(errc::invalid_argument, "a terminal needs 1..1000 columns and rows", {"terminal.start"});
        auto target = core_->activity_target("terminal.start");
        if (!target) co_return target.error();
        // A terminal is a command too (contract.md: max_commands).
        if (auto a = core_->governor.admit(); !a) co_return a.error();
        e2b::pty_start_params p;
        p.process.cmd = std::move(req.file);
        p.process.args = std::move(req.args);
        p.process.envs = std::move(req.env);
        p.process.cwd = req.cwd.value_or(core_->workdir);
        p.size = to_pty_size(req.size);
        p.user = std::move(req.user);
        // A non-secret tag, so a terminal whose pid we never learnt can still be stopped.
        auto const tag = make_process_tag("prism-pty");
        p.tag = tag;
        co_await asio::this_coro::throw_if_cancelled(false);
        auto stream = co_await core_->client->async_start_pty(*target, std::move(p), asio::use_awaitable);
        if (!stream) co_return stream.error();
        auto pid = co_await read_start(**stream);
        if (!pid) {
            // Started without a deadline: never leave it running unowned.
            co_await asio::this_coro::reset_cancellation_state();
            e2b::process_selector sel;
            sel.tag = tag;
            (void)co_await core_->client->async_send_signal(*target, sel, process_signal::sigkill);
            co_return pid.error();
        }
        co_return std::unique_ptr<terminal_handle>(std::make_unique<e2b_terminal>(core_, *pid, std::move(*stream)));
    }

    asio::awaitable<result<std::unique_ptr<terminal_handle>>> attach(std::uint32_t pid)
    {
        auto target = core_->activity_target("terminal.attach");
        if (!target) co_return target.error();
        auto sel = pid_selector(pid);
        auto stream =
            co_await core_->client->async_connect_pty(std::move(*target), std::move(sel), asio::use_awaitable);
        if (!stream) co_return stream.error();
        // Connect's stream begins with a start event too.
        auto started = co_await read_start(**stream);
        if (!started) co_return started.error();
        co_return std::unique_ptr<terminal_handle>(std::make_unique<e2b_terminal>(core_, pid, std::move(*stream)));
    }

    std::shared_ptr<e2b_sandbox_core> core_;
};

}  // namespace

std::unique_ptr<pty_capable> make_e2b_pty(std::shared_ptr<e2b_sandbox_core> core)
{
    return std::make_unique<e2b_pty>(std::move(core));
}

}  // namespace prism_e2b::detail
