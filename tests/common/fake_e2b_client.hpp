// A scripted, recording e2b::client for adapter unit tests: every call is
// recorded (name, sandbox id, key arguments) and answered from a small
// in-memory model of sandboxes and processes, with scripted failures and
// scripted process event streams. Header-only so other test tiers are not
// affected.
#ifndef PRISM_E2B_TESTS_COMMON_FAKE_E2B_CLIENT_HPP
#define PRISM_E2B_TESTS_COMMON_FAKE_E2B_CLIENT_HPP

#include <prism_e2b/e2b/coroutine_client.hpp>
#include <prism_e2b/redactor.hpp>

#include "core/spawn_op.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::test {

struct fake_call {
    std::string name;
    std::string sandbox_id;
    std::string detail;  ///< key arguments, e.g. "timeout=600" or "memory=false"
};

/// How a scripted process behaves after its start event.
struct process_script {
    enum class then {
        exit,             ///< `events`, then end with exit_code
        wait_for_signal,  ///< `events`, then run until a signal ends it ("signal: killed")
        cut,              ///< `events`, then the stream is cut (unknown_outcome)
    };
    std::vector<e2b::process_event> events;
    then after = then::exit;
    int exit_code = 0;
    bool echo_stdin = false;  ///< stdin bytes come back as stdout data
};

inline e2b::process_event stdout_event(std::string bytes)
{
    return e2b::data_event{e2b::data_event::stream_kind::stdout_data, std::move(bytes)};
}
inline e2b::process_event stderr_event(std::string bytes)
{
    return e2b::data_event{e2b::data_event::stream_kind::stderr_data, std::move(bytes)};
}

/// Thread safety: every member may be called concurrently (one mutex).
/// Its coroutines run on the executor it is constructed with.
class fake_e2b_client final : public e2b::coroutine_client {
public:
    explicit fake_e2b_client(boost::asio::any_io_executor ex) : coroutine_client(std::move(ex)) {}

    struct fake_process {
        std::uint32_t pid = 0;
        std::string sandbox_id;
        e2b::process_config config;
        std::optional<std::string> tag;
        std::vector<e2b::process_event> log;  ///< events after start, in order
        bool ended = false;
        bool cut = false;
        bool echo_stdin = false;
        std::string stdin_data;
        bool stdin_closed = false;
        std::vector<process_signal> signals;
        std::uint64_t breaks = 0;  ///< streams opened before the last break are cut
    };

    struct fake_sandbox {
        std::string id;
        std::string template_id = "base";
        e2b::sandbox_state state = e2b::sandbox_state::running;
        e2b::metadata_map metadata;
        std::string token;
        bool killed = false;
        bool last_pause_memory = true;
    };

    // ---- recording ---------------------------------------------------------
    std::vector<fake_call> calls() const
    {
        std::lock_guard lk(mu_);
        return calls_;
    }
    std::vector<std::string> call_names() const
    {
        std::lock_guard lk(mu_);
        std::vector<std::string> out;
        for (auto const& c : calls_) out.push_back(c.name);
        return out;
    }
    std::size_t count(std::string_view name) const
    {
        std::lock_guard lk(mu_);
        return static_cast<std::size_t>(
            std::count_if(calls_.begin(), calls_.end(), [&](auto const& c) { return c.name == name; }));
    }
    std::vector<fake_call> calls_named(std::string_view name) const
    {
        std::lock_guard lk(mu_);
        std::vector<fake_call> out;
        for (auto const& c : calls_)
            if (c.name == name) out.push_back(c);
        return out;
    }
    void clear_calls()
    {
        std::lock_guard lk(mu_);
        calls_.clear();
    }
    std::vector<e2b::create_sandbox_params> create_params() const
    {
        std::lock_guard lk(mu_);
        return creates_;
    }
    std::vector<e2b::start_process_params> start_params() const
    {
        std::lock_guard lk(mu_);
        return starts_;
    }

    // ---- scripting ---------------------------------------------------------
    /// The next call named `name` fails with `e` (queued per name).
    void fail_next(std::string name, error e)
    {
        std::lock_guard lk(mu_);
        failures_[std::move(name)].push_back(std::move(e));
    }
    /// The next pause answers `reply` (e.g. busy 503) without changing state.
    void pause_reply_next(e2b::pause_reply reply)
    {
        std::lock_guard lk(mu_);
        pause_replies_.push_back(std::move(reply));
    }
    /// The next start_process follows `s` (default: exit 0 with no output).
    void script_next_process(process_script s)
    {
        std::lock_guard lk(mu_);
        scripts_.push_back(std::move(s));
    }
    /// A successful memory pause cuts every open process stream of the sandbox
    /// (as a vendor may); the processes themselves keep running.
    void cut_streams_on_pause(bool on)
    {
        std::lock_guard lk(mu_);
        cut_on_pause_ = on;
    }
    /// Adds a sandbox that exists already (for connect tests).
    void add_sandbox(fake_sandbox sb)
    {
        std::lock_guard lk(mu_);
        if (sb.token.empty()) sb.token = "envd-token-" + sb.id + "-0123456789";
        secret_redactor::global().add(sb.token);
        sandboxes_[sb.id] = std::move(sb);
    }
    std::optional<fake_sandbox> sandbox(std::string const& id) const
    {
        std::lock_guard lk(mu_);
        auto it = sandboxes_.find(id);
        if (it == sandboxes_.end()) return std::nullopt;
        return it->second;
    }
    std::shared_ptr<fake_process> process(std::uint32_t pid) const
    {
        std::lock_guard lk(mu_);
        auto it = processes_.find(pid);
        return it == processes_.end() ? nullptr : it->second;
    }
    /// Appends an event to a running process (as if it printed something).
    void push_event(std::uint32_t pid, e2b::process_event ev)
    {
        std::lock_guard lk(mu_);
        if (auto it = processes_.find(pid); it != processes_.end()) it->second->log.push_back(std::move(ev));
    }
    /// Ends a running process with an exit code (as if it exited on its own).
    void end_process(std::uint32_t pid, int code)
    {
        std::lock_guard lk(mu_);
        if (auto it = processes_.find(pid); it != processes_.end() && !it->second->ended) {
            it->second->log.push_back(e2b::end_event{code, true, "exit status " + std::to_string(code), {}});
            it->second->ended = true;
        }
    }

    // ---- control plane -----------------------------------------------------
    boost::asio::awaitable<result<e2b::sandbox_handle>> create_sandbox(e2b::create_sandbox_params params) override
    {
        std::lock_guard lk(mu_);
        record("create_sandbox", "",
               "template=" + params.template_id + " timeout=" + std::to_string(params.timeout.count()));
        creates_.push_back(params);
        if (auto f = take_failure("create_sandbox")) co_return *f;
        fake_sandbox sb;
        sb.id = "sbx-" + std::to_string(next_sandbox_++);
        sb.template_id = params.template_id;
        sb.metadata = params.metadata;
        sb.token = "envd-token-" + sb.id + "-0123456789";
        secret_redactor::global().add(sb.token);
        sandboxes_[sb.id] = sb;
        e2b::sandbox_handle h;
        h.sandbox_id = sb.id;
        h.template_id = sb.template_id;
        h.envd_version = "0.5.8";
        h.envd_access_token = sb.token;
        co_return h;
    }

    boost::asio::awaitable<result<e2b::connect_result>> connect_sandbox(std::string sandbox_id,
                                                                        std::chrono::seconds timeout) override
    {
        std::lock_guard lk(mu_);
        record("connect_sandbox", sandbox_id, "timeout=" + std::to_string(timeout.count()));
        if (auto f = take_failure("connect_sandbox")) co_return *f;
        auto* sb = live_sandbox(sandbox_id);
        if (!sb) co_return error(errc::not_found, "sandbox not found", {"connect", 404});
        e2b::connect_result r;
        if (sb->state == e2b::sandbox_state::paused) {
            sb->state = e2b::sandbox_state::running;
            r.outcome = e2b::connect_result::kind::resumed;
            if (!sb->last_pause_memory) drop_processes(sandbox_id);  // filesystem-only resume is a reboot
        }
        r.sandbox.sandbox_id = sb->id;
        r.sandbox.template_id = sb->template_id;
        r.sandbox.envd_version = "0.5.8";
        r.sandbox.envd_access_token = sb->token;
        co_return r;
    }

    boost::asio::awaitable<result<e2b::pause_reply>> pause_sandbox(std::string sandbox_id, bool memory) override
    {
        std::lock_guard lk(mu_);
        record("pause_sandbox", sandbox_id, std::string("memory=") + (memory ? "true" : "false"));
        if (auto f = take_failure("pause_sandbox")) co_return *f;
        if (!pause_replies_.empty()) {
            auto r = pause_replies_.front();
            pause_replies_.pop_front();
            co_return r;
        }
        e2b::pause_reply r;
        auto* sb = live_sandbox(sandbox_id);
        if (!sb) {
            r.outcome = e2b::pause_reply::kind::not_found;
            r.http_status = 404;
            co_return r;
        }
        if (sb->state == e2b::sandbox_state::paused) {
            r.outcome = e2b::pause_reply::kind::already_paused;
            r.http_status = 409;
            co_return r;
        }
        sb->state = e2b::sandbox_state::paused;
        sb->last_pause_memory = memory;
        if (cut_on_pause_)
            for (auto& [pid, p] : processes_)
                if (p->sandbox_id == sandbox_id) ++p->breaks;
        r.outcome = e2b::pause_reply::kind::paused;
        r.http_status = 204;
        co_return r;
    }

    boost::asio::awaitable<result<bool>> kill_sandbox(std::string sandbox_id) override
    {
        std::lock_guard lk(mu_);
        record("kill_sandbox", sandbox_id, "");
        if (auto f = take_failure("kill_sandbox")) co_return *f;
        auto* sb = live_sandbox(sandbox_id);
        if (!sb) co_return false;
        sb->killed = true;
        drop_processes(sandbox_id);
        co_return true;
    }

    boost::asio::awaitable<result<e2b::sandbox_info>> get_sandbox_info(std::string sandbox_id) override
    {
        std::lock_guard lk(mu_);
        record("get_sandbox_info", sandbox_id, "");
        if (auto f = take_failure("get_sandbox_info")) co_return *f;
        auto* sb = live_sandbox(sandbox_id);
        if (!sb) co_return error(errc::not_found, "sandbox not found", {"info", 404});
        co_return info_of(*sb);
    }

    boost::asio::awaitable<result<e2b::sandbox_page>> list_sandboxes(e2b::list_params) override
    {
        std::lock_guard lk(mu_);
        record("list_sandboxes", "", "");
        e2b::sandbox_page page;
        for (auto const& [id, sb] : sandboxes_)
            if (!sb.killed) page.sandboxes.push_back(info_of(sb));
        co_return page;
    }

    boost::asio::awaitable<result<void>> set_sandbox_timeout(std::string sandbox_id, std::chrono::seconds t) override
    {
        std::lock_guard lk(mu_);
        record("set_sandbox_timeout", sandbox_id, "timeout=" + std::to_string(t.count()));
        co_return result<void>();
    }

    // ---- envd: processes ---------------------------------------------------
    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> start_process(
        e2b::envd_target target, e2b::start_process_params params) override
    {
        std::unique_lock lk(mu_);
        std::string detail = "cmd=" + params.process.cmd;
        for (auto const& a : params.process.args) detail += " " + a;
        detail += " cwd=" + params.process.cwd.value_or("") + " timeout=" + std::to_string(params.timeout.count()) +
                  " stdin=" + (params.stdin ? "true" : "false");
        record("start_process", target.sandbox_id, detail);
        starts_.push_back(params);
        if (auto f = take_failure("start_process")) co_return *f;
        if (auto e = check_envd(target, "process.Start")) co_return *e;
        process_script script;
        if (!scripts_.empty()) {
            script = std::move(scripts_.front());
            scripts_.pop_front();
        }
        auto p = std::make_shared<fake_process>();
        p->pid = next_pid_++;
        p->sandbox_id = target.sandbox_id;
        p->config = params.process;
        p->tag = params.tag;
        p->log = script.events;
        p->echo_stdin = script.echo_stdin;
        switch (script.after) {
            case process_script::then::exit:
                p->log.push_back(
                    e2b::end_event{script.exit_code, true, "exit status " + std::to_string(script.exit_code), {}});
                p->ended = true;
                break;
            case process_script::then::cut:
                p->cut = true;
                break;
            case process_script::then::wait_for_signal:
                break;
        }
        processes_[p->pid] = p;
        lk.unlock();
        auto ex = co_await boost::asio::this_coro::executor;
        co_return std::unique_ptr<e2b::process_event_stream>(std::make_unique<stream>(this, p, ex));
    }

    boost::asio::awaitable<result<std::unique_ptr<e2b::process_event_stream>>> connect_process(
        e2b::envd_target target, e2b::process_selector selector, std::chrono::milliseconds timeout) override
    {
        std::unique_lock lk(mu_);
        record("connect_process", target.sandbox_id,
               "pid=" + std::to_string(selector.pid.value_or(0)) + " timeout=" + std::to_string(timeout.count()));
        if (auto f = take_failure("connect_process")) co_return *f;
        if (auto e = check_envd(target, "process.Connect")) co_return *e;
        auto p = find_process(target.sandbox_id, selector);
        if (!p || p->ended)
            co_return error(errc::not_found, "process not found", {"process.Connect", 200, "not_found"});
        auto ex = co_await boost::asio::this_coro::executor;
        auto s = std::make_unique<stream>(this, p, ex);
        s->index_ = p->log.size();  // from this point on
        lk.unlock();
        co_return std::unique_ptr<e2b::process_event_stream>(std::move(s));
    }

    boost::asio::awaitable<result<std::vector<e2b::process_info>>> list_processes(e2b::envd_target target) override
    {
        std::lock_guard lk(mu_);
        record("list_processes", target.sandbox_id, "");
        if (auto f = take_failure("list_processes")) co_return *f;
        if (auto e = check_envd(target, "process.List")) co_return *e;
        std::vector<e2b::process_info> out;
        for (auto const& [pid, p] : processes_)
            if (p->sandbox_id == target.sandbox_id && !p->ended) out.push_back({p->config, pid, p->tag});
        co_return out;
    }

    boost::asio::awaitable<result<void>> send_stdin(e2b::envd_target target, e2b::process_selector selector,
                                                    std::string bytes) override
    {
        std::lock_guard lk(mu_);
        record("send_stdin", target.sandbox_id,
               "pid=" + std::to_string(selector.pid.value_or(0)) + " bytes=" + std::to_string(bytes.size()));
        if (auto f = take_failure("send_stdin")) co_return *f;
        auto p = find_process(target.sandbox_id, selector);
        if (!p || p->ended)
            co_return error(errc::not_found, "process not found", {"process.SendInput", 404, "not_found"});
        p->stdin_data += bytes;
        if (p->echo_stdin) p->log.push_back(stdout_event(bytes));
        co_return result<void>();
    }

    boost::asio::awaitable<result<void>> close_stdin(e2b::envd_target target, e2b::process_selector selector) override
    {
        std::lock_guard lk(mu_);
        record("close_stdin", target.sandbox_id, "pid=" + std::to_string(selector.pid.value_or(0)));
        auto p = find_process(target.sandbox_id, selector);
        if (!p || p->ended)
            co_return error(errc::not_found, "process not found", {"process.CloseStdin", 404, "not_found"});
        p->stdin_closed = true;
        co_return result<void>();
    }

    boost::asio::awaitable<result<void>> send_signal(e2b::envd_target target, e2b::process_selector selector,
                                                     process_signal sig) override
    {
        std::lock_guard lk(mu_);
        record("send_signal", target.sandbox_id,
               (selector.pid ? "pid=" + std::to_string(*selector.pid) : "tag=" + selector.tag.value_or("")) +
                   (sig == process_signal::sigkill ? " SIGKILL" : " SIGTERM"));
        if (auto f = take_failure("send_signal")) co_return *f;
        auto p = find_process(target.sandbox_id, selector);
        if (!p || p->ended)
            co_return error(errc::not_found, "process not found", {"process.SendSignal", 404, "not_found"});
        p->signals.push_back(sig);
        p->log.push_back(
            e2b::end_event{-1, false, sig == process_signal::sigkill ? "signal: killed" : "signal: terminated", {}});
        p->ended = true;
        p->cut = false;
        co_return result<void>();
    }

    // ---- envd: files -------------------------------------------------------
    boost::asio::awaitable<result<std::string>> read_file(e2b::envd_target target, std::string path) override
    {
        std::lock_guard lk(mu_);
        record("read_file", target.sandbox_id, path);
        co_return error(errc::not_found, "no such file", {"files.read", 404});
    }
    boost::asio::awaitable<result<e2b::entry_info>> write_file(e2b::envd_target target, std::string path,
                                                               std::string) override
    {
        std::lock_guard lk(mu_);
        record("write_file", target.sandbox_id, path);
        co_return e2b::entry_info{};
    }
    boost::asio::awaitable<result<bool>> make_dir(e2b::envd_target target, std::string path) override
    {
        std::lock_guard lk(mu_);
        record("make_dir", target.sandbox_id, path);
        if (auto f = take_failure("make_dir")) co_return *f;
        if (auto e = check_envd(target, "filesystem.MakeDir")) co_return *e;
        co_return true;
    }
    boost::asio::awaitable<result<e2b::entry_info>> stat(e2b::envd_target target, std::string path) override
    {
        std::lock_guard lk(mu_);
        record("stat", target.sandbox_id, path);
        co_return error(errc::not_found, "no such file", {"filesystem.Stat", 404});
    }
    boost::asio::awaitable<result<std::vector<e2b::entry_info>>> list_dir(e2b::envd_target target, std::string path,
                                                                          std::uint32_t) override
    {
        std::lock_guard lk(mu_);
        record("list_dir", target.sandbox_id, path);
        co_return std::vector<e2b::entry_info>{};
    }
    boost::asio::awaitable<result<e2b::entry_info>> move(e2b::envd_target target, std::string source,
                                                         std::string) override
    {
        std::lock_guard lk(mu_);
        record("move", target.sandbox_id, source);
        co_return error(errc::not_found, "no such file", {"filesystem.Move", 404});
    }
    boost::asio::awaitable<result<void>> remove(e2b::envd_target target, std::string path) override
    {
        std::lock_guard lk(mu_);
        record("remove", target.sandbox_id, path);
        co_return result<void>();
    }
    boost::asio::awaitable<result<bool>> health(e2b::envd_target target) override
    {
        std::lock_guard lk(mu_);
        record("health", target.sandbox_id, "");
        auto* sb = live_sandbox(target.sandbox_id);
        co_return sb && sb->state == e2b::sandbox_state::running;
    }

private:
    /// Polls the process log (a test fake: simple beats clever). Honours
    /// per-operation cancellation and close().
    class stream final : public e2b::process_event_stream {
    public:
        stream(fake_e2b_client* c, std::shared_ptr<fake_process> p, boost::asio::any_io_executor ex)
            : client_(c), p_(std::move(p)), ex_(std::move(ex)), breaks_(p_->breaks)
        {
        }
        void close() noexcept override
        {
            std::lock_guard lk(client_->mu_);
            closed_ = true;
        }
        std::size_t index_ = 0;

    protected:
        // The library's own bridge: a cancellation emitted on another thread is
        // handed to the poll's strand, as the real stream does.
        void do_next(completion_handler<std::optional<e2b::process_event>> h) override
        {
            prism_e2b::detail::spawn_op(ex_, poll(), std::move(h));
        }

    private:
        using next_result = result<std::optional<e2b::process_event>>;

        boost::asio::awaitable<next_result> poll()
        {
            co_await boost::asio::this_coro::throw_if_cancelled(false);
            if (!sent_start_) {
                sent_start_ = true;
                co_return std::optional<e2b::process_event>(e2b::start_event{p_->pid});
            }
            boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
            for (;;) {
                // A cancellation emitted between two polls has no operation to
                // cancel: it only marks the state, so look at it every time.
                if ((co_await boost::asio::this_coro::cancellation_state).cancelled() !=
                    boost::asio::cancellation_type::none)
                    co_return error(errc::cancelled, "stream read cancelled", {"process.stream"});
                {
                    std::lock_guard lk(client_->mu_);
                    if (closed_) co_return error(errc::cancelled, "stream closed", {"process.stream"});
                    if (p_->breaks != breaks_)
                        co_return error(errc::unknown_outcome, "stream cut by a pause", {"process.stream"});
                    if (index_ < p_->log.size()) co_return std::optional<e2b::process_event>(p_->log[index_++]);
                    if (p_->ended) co_return std::optional<e2b::process_event>();
                    if (p_->cut)
                        co_return error(errc::unknown_outcome, "stream cut before the end event", {"process.stream"});
                    if (client_->live_sandbox(p_->sandbox_id) == nullptr)
                        co_return error(errc::unknown_outcome, "sandbox gone", {"process.stream"});
                }
                t.expires_after(std::chrono::milliseconds(2));
                auto [ec] = co_await t.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
                if (ec) co_return error(errc::cancelled, "stream read cancelled", {"process.stream"});
            }
        }
        fake_e2b_client* client_;
        std::shared_ptr<fake_process> p_;
        boost::asio::any_io_executor ex_;
        bool sent_start_ = false;
        bool closed_ = false;
        std::uint64_t breaks_ = 0;
    };

    void record(std::string name, std::string id, std::string detail)
    {
        calls_.push_back({std::move(name), std::move(id), std::move(detail)});
    }
    std::optional<error> take_failure(std::string const& name)
    {
        auto it = failures_.find(name);
        if (it == failures_.end() || it->second.empty()) return std::nullopt;
        auto e = it->second.front();
        it->second.pop_front();
        return e;
    }
    fake_sandbox* live_sandbox(std::string const& id)
    {
        auto it = sandboxes_.find(id);
        return it == sandboxes_.end() || it->second.killed ? nullptr : &it->second;
    }
    // envd answers only for a running sandbox and the right token.
    std::optional<error> check_envd(e2b::envd_target const& t, char const* op)
    {
        auto* sb = live_sandbox(t.sandbox_id);
        if (!sb) return error(errc::not_found, "sandbox not found", {op, 404});
        if (sb->state != e2b::sandbox_state::running)
            return error(errc::server_error, "sandbox is not running", {op, 502});
        if (!t.access_token || *t.access_token != sb->token)
            return error(errc::unauthenticated, "bad access token", {op, 401, "unauthenticated"});
        return std::nullopt;
    }
    std::shared_ptr<fake_process> find_process(std::string const& sandbox_id, e2b::process_selector const& sel)
    {
        for (auto const& [pid, p] : processes_)
            if (p->sandbox_id == sandbox_id &&
                ((sel.pid && *sel.pid == pid) || (!sel.pid && sel.tag && p->tag == sel.tag)))
                return p;
        return nullptr;
    }
    void drop_processes(std::string const& sandbox_id)
    {
        for (auto it = processes_.begin(); it != processes_.end();)
            if (it->second->sandbox_id == sandbox_id) {
                it->second->cut = !it->second->ended;
                it = processes_.erase(it);
            } else {
                ++it;
            }
    }
    static e2b::sandbox_info info_of(fake_sandbox const& sb)
    {
        e2b::sandbox_info i;
        i.sandbox_id = sb.id;
        i.template_id = sb.template_id;
        i.state = sb.state;
        i.metadata = sb.metadata;
        i.started_at = "2026-01-02T03:04:05Z";
        i.envd_version = "0.5.8";
        i.envd_access_token = sb.token;
        return i;
    }

    mutable std::mutex mu_;
    std::vector<fake_call> calls_;
    std::vector<e2b::create_sandbox_params> creates_;
    std::vector<e2b::start_process_params> starts_;
    std::map<std::string, std::deque<error>> failures_;
    std::deque<e2b::pause_reply> pause_replies_;
    std::deque<process_script> scripts_;
    std::map<std::string, fake_sandbox> sandboxes_;
    std::map<std::uint32_t, std::shared_ptr<fake_process>> processes_;
    bool cut_on_pause_ = false;
    int next_sandbox_ = 1;
    std::uint32_t next_pid_ = 100;
};

}  // namespace prism_e2b::test

#endif
