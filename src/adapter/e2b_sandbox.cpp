// create_e2b_sandbox / connect_e2b_sandbox and the lifecycle of e2b_sandbox
// (status, pause, resume, stop, kill, close) plus process start/attach.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_ref.hpp>
#include <prism_e2b/redactor.hpp>

#include "adapter/exec.hpp"
#include "adapter/process_state.hpp"
#include "adapter/sandbox_core.hpp"
#include "adapter/spawn_op.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace asio = boost::asio;

namespace prism_e2b {

// ---- detail::e2b_sandbox_core ----------------------------------------------

namespace detail {

result<e2b::envd_target> e2b_sandbox_core::activity_target(std::string_view operation)
{
    std::lock_guard lk(mu);
    if (state == sandbox_state::killed)
        return error(errc::not_found, "the sandbox was killed", {std::string(operation)});
    if (state == sandbox_state::paused)
        return error(errc::paused, "the sandbox is paused; call resume() first (activity never resumes it)",
                     {std::string(operation)});
    last_activity = std::chrono::system_clock::now();
    return target;
}

std::uint64_t e2b_sandbox_core::current_pause_epoch() const
{
    std::lock_guard lk(mu);
    return pause_epoch;
}

sandbox_state e2b_sandbox_core::current_state() const
{
    std::lock_guard lk(mu);
    return state;
}

void e2b_sandbox_core::register_process(std::shared_ptr<e2b_process_state> const& p)
{
    std::lock_guard lk(mu);
    std::erase_if(live, [](auto const& w) { return w.expired(); });
    live.push_back(p);
    if (rebooted) pids_since_reboot.insert(p->pid);
}

std::vector<std::shared_ptr<e2b_process_state>> e2b_sandbox_core::live_processes()
{
    std::lock_guard lk(mu);
    std::vector<std::shared_ptr<e2b_process_state>> out;
    for (auto const& w : live)
        if (auto p = w.lock()) out.push_back(std::move(p));
    return out;
}

}  // namespace detail

// ---- helpers ---------------------------------------------------------------

namespace {

std::chrono::seconds ceil_seconds(std::chrono::milliseconds ms)
{
    return std::chrono::seconds((ms.count() + 999) / 1000);
}

// "2026-11-30T01:17:22.123Z" or with an offset; falls back to `fallback`.
std::chrono::system_clock::time_point parse_rfc3339(std::string const& s,
                                                    std::chrono::system_clock::time_point fallback)
{
    std::tm tm{};
    int consumed = 0;
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec, &consumed) != 6)
        return fallback;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    auto t = ::timegm(&tm);
    if (t == static_cast<std::time_t>(-1)) return fallback;
    auto rest = std::string_view(s).substr(static_cast<std::size_t>(consumed));
    while (!rest.empty() && (rest.front() == '.' || (rest.front() >= '0' && rest.front() <= '9')))
        rest.remove_prefix(1);
    if (rest.size() >= 6 && (rest[0] == '+' || rest[0] == '-')) {
        int hh = 0, mm = 0;
        if (std::sscanf(std::string(rest.substr(1)).c_str(), "%2d:%2d", &hh, &mm) == 2)
            t -= (rest[0] == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    }
    return std::chrono::system_clock::from_time_t(t);
}

result<void> validate_path(std::string const& p, char const* what)
{
    if (p.empty() || p.front() != '/' || p.find('\0') != std::string::npos || p.size() > 4096)
        return error(errc::invalid_argument, std::string(what) + " must be an absolute path without NUL", {"options"});
    return {};
}

// Exactly one of api_key / client; builds the real client for an API key.
result<std::shared_ptr<e2b::client>> resolve_client(asio::any_io_executor ex, std::optional<std::string> const& api_key,
                                                    std::shared_ptr<e2b::client> const& injected,
                                                    e2b::client_options copts)
{
    if (api_key && injected)
        return error(errc::invalid_argument, "pass either api_key or client, not both", {"options"});
    if (injected) return injected;
    if (!api_key || api_key->empty())
        return error(errc::invalid_argument, "an E2B api_key or an injected client is required", {"options"});
    secret_redactor::global().add(*api_key);
    copts.api_key = *api_key;
    return e2b::make_client(std::move(ex), std::move(copts));
}

result<std::chrono::milliseconds> resolve_timeout(std::optional<std::chrono::milliseconds> t, sandbox_limits const& l)
{
    auto const v = t.value_or(l.wall_time);
    if (v.count() <= 0 || v > sandbox_limit_caps::wall_time)
        return error(errc::invalid_argument, "timeout must be within (0, 30 min]", {"options"});
    return v;
}

std::shared_ptr<detail::e2b_sandbox_core> make_core(asio::any_io_executor ex, std::shared_ptr<e2b::client> c,
                                                    sandbox_limits const& limits,
                                                    std::optional<sandbox_capabilities> caps, log_sink logger)
{
    auto core = std::make_shared<detail::e2b_sandbox_core>(std::move(ex), std::move(c), limits);
    core->caps = caps.value_or(e2b_default_capabilities());
    core->logger = std::move(logger);
    return core;
}

// E2B's default envd user cannot create a directory under "/": when MakeDir is
// refused, create the workdir once as root and open it to the default user.
asio::awaitable<result<void>> make_workdir_as_root(e2b::client& client, e2b::envd_target target, std::string workdir)
{
    e2b::start_process_params p;
    p.process.cmd = "/bin/sh";
    p.process.args = {"-c", "mkdir -p -- \"$1\" && chmod 0777 -- \"$1\"", "prism-workdir", workdir};
    p.user = "root";
    p.stdin = false;
    p.timeout = std::chrono::milliseconds(30000);
    auto stream = co_await client.start_process(std::move(target), std::move(p));
    if (!stream) co_return stream.error();
    for (;;) {
        auto ev = co_await (*stream)->next();
        if (!ev) co_return ev.error();
        if (!*ev) break;
        if (auto* end = std::get_if<e2b::end_event>(&**ev)) {
            if (end->exited && end->exit_code == 0) co_return result<void>();
            co_return error(errc::permission_denied, "could not create the workdir (" + end->status + ")", {"create"});
        }
    }
    co_return error(errc::unknown_outcome, "workdir creation ended without an end event", {"create"});
}

// Stops following every live process and marks it gone (kill, reboot).
void processes_gone(detail::e2b_sandbox_core& core, std::string const& why)
{
    for (auto& p : core.live_processes()) p->on_gone(why);
}

}  // namespace

// ---- factories -------------------------------------------------------------

namespace detail {

/// The one way to build an e2b_sandbox (its constructor is private).
struct e2b_sandbox_access {
    static std::shared_ptr<e2b_sandbox> make(std::shared_ptr<e2b_sandbox_core> core)
    {
        return std::shared_ptr<e2b_sandbox>(new e2b_sandbox(std::move(core)));
    }
};

}  // namespace detail

namespace {

asio::awaitable<result<std::shared_ptr<e2b_sandbox>>> create_e2b_sandbox(asio::any_io_executor executor,
                                                                         e2b_sandbox_options options)
{
    // Everything is validated before any vendor call.
    if (options.api_key && !options.api_key->empty()) secret_redactor::global().add(*options.api_key);
    if (!options.api_key && !options.client)
        co_return error(errc::invalid_argument, "an E2B api_key or an injected client is required", {"create"});
    if (auto v = options.limits.validate(); !v) co_return v.error();
    auto timeout = resolve_timeout(options.timeout, options.limits);
    if (!timeout) co_return timeout.error();
    if (options.template_name.empty() || options.template_name.size() > 256 ||
        options.template_name.find('\0') != std::string::npos)
        co_return error(errc::invalid_argument, "template must be a non-empty name", {"create"});
    if (auto v = validate_path(options.workdir, "workdir"); !v) co_return v.error();
    if (auto v = validate_labels(options.labels); !v) co_return v.error();
    for (auto const& [k, v] : options.env_vars)
        if (!is_valid_env_name(k) || v.find('\0') != std::string::npos)
            co_return error(errc::invalid_argument, "env_vars: invalid name or NUL in a value", {"create"});

    auto client = resolve_client(executor, options.api_key, options.client, options.client_options);
    if (!client) co_return client.error();

    e2b::create_sandbox_params params;
    params.template_id = options.template_name;
    params.metadata = options.labels;
    params.env_vars = options.env_vars;
    params.timeout = ceil_seconds(*timeout);
    params.auto_pause = options.on_timeout == e2b_on_timeout::pause;
    params.auto_resume = false;  // activity never resumes (seed: autoResume is forced false)

    auto core = make_core(executor, *client, options.limits, options.capabilities, options.logger);
    core->template_name = options.template_name;
    core->workdir = options.workdir;
    core->labels = options.labels;
    core->vendor_timeout = params.timeout;

    auto created = co_await (*client)->create_sandbox(std::move(params));
    if (!created) co_return created.error();
    core->id = created->sandbox_id;
    core->target = e2b::envd_target::from(*created);
    core->started_at = core->last_activity = std::chrono::system_clock::now();
    if (core->id.empty()) co_return error(errc::protocol_error, "the vendor returned no sandbox id", {"create"});

    // The workdir must exist when the sandbox is handed out; if not, the vendor
    // sandbox would leak: kill it before reporting.
    // Cleanup must run even when the caller cancelled the set-up.
    co_await asio::this_coro::throw_if_cancelled(false);
    result<void> dir;
    if (auto made = co_await (*client)->make_dir(core->target, core->workdir); !made) {
        dir = made.error();
        if (made.error() == errc::permission_denied)
            dir = co_await make_workdir_as_root(**client, core->target, core->workdir);
    }
    if (!dir) {
        co_await asio::this_coro::reset_cancellation_state();
        core->log(log_level::error, "create: workdir set-up failed, killing sandbox " + core->id);
        auto k = co_await (*client)->kill_sandbox(core->id);
        if (!k) core->log(log_level::error, "create: cleanup kill failed: " + k.error().to_string());
        co_return error(dir.error().code(), "workdir set-up failed (the sandbox was killed): " + dir.error().message(),
                        {"create", dir.error().http_status(), dir.error().vendor_code()});
    }
    core->log(log_level::info, "created sandbox " + core->id + " (template " + core->template_name + ")");
    co_return detail::e2b_sandbox_access::make(std::move(core));
}

asio::awaitable<result<std::shared_ptr<e2b_sandbox>>> connect_e2b_sandbox(asio::any_io_executor executor,
                                                                          e2b_connect_options options)
{
    if (options.api_key && !options.api_key->empty()) secret_redactor::global().add(*options.api_key);
    if (!options.api_key && !options.client)
        co_return error(errc::invalid_argument, "an E2B api_key or an injected client is required", {"connect"});
    if (options.sandbox_id.empty() || options.sandbox_id.size() > 256 ||
        options.sandbox_id.find('\0') != std::string::npos)
        co_return error(errc::invalid_argument, "sandbox_id is required", {"connect"});
    if (auto v = options.limits.validate(); !v) co_return v.error();
    auto timeout = resolve_timeout(options.timeout, options.limits);
    if (!timeout) co_return timeout.error();
    if (auto v = validate_path(options.workdir, "workdir"); !v) co_return v.error();
    auto client = resolve_client(executor, options.api_key, options.client, options.client_options);
    if (!client) co_return client.error();

    auto info = co_await (*client)->get_sandbox_info(options.sandbox_id);
    if (!info) co_return info.error();
    // Fail closed: every expected label must be there with exactly this value.
    for (auto const& [k, v] : options.expected_labels) {
        auto it = info->metadata.find(k);
        if (it == info->metadata.end() || it->second != v)
            co_return error(errc::wrong_owner, "the sandbox's labels do not match the expected labels", {"connect"});
    }

    auto core = make_core(executor, *client, options.limits, options.capabilities, options.logger);
    core->id = info->sandbox_id.empty() ? options.sandbox_id : info->sandbox_id;
    core->template_name = info->template_id;
    core->workdir = options.workdir;
    core->labels = info->metadata;
    core->vendor_timeout = ceil_seconds(*timeout);
    core->target = e2b::envd_target::from(*info);
    core->target.sandbox_id = core->id;
    core->started_at = parse_rfc3339(info->started_at, std::chrono::system_clock::now());
    core->last_activity = std::chrono::system_clock::now();
    core->state = info->state == e2b::sandbox_state::paused ? sandbox_state::paused : sandbox_state::running;

    if (core->state == sandbox_state::paused && options.resume) {
        auto c = co_await (*client)->connect_sandbox(core->id, core->vendor_timeout);
        if (!c) co_return c.error();
        core->target = e2b::envd_target::from(c->sandbox);
        core->target.sandbox_id = core->id;
        core->state = sandbox_state::running;
    }
    co_return detail::e2b_sandbox_access::make(std::move(core));
}

}  // namespace

void detail::do_create_e2b_sandbox(asio::any_io_executor executor, e2b_sandbox_options options,
                                   completion_handler<std::shared_ptr<e2b_sandbox>> h)
{
    auto ex = executor;
    detail::spawn_op(ex, create_e2b_sandbox(std::move(executor), std::move(options)), std::move(h));
}

void detail::do_connect_e2b_sandbox(asio::any_io_executor executor, e2b_connect_options options,
                                    completion_handler<std::shared_ptr<e2b_sandbox>> h)
{
    auto ex = executor;
    detail::spawn_op(ex, connect_e2b_sandbox(std::move(executor), std::move(options)), std::move(h));
}

// ---- e2b_sandbox: the public operations --------------------------------------
// Each do_x runs its coroutine on the sandbox's executor (spawn_op.hpp).

void e2b_sandbox::do_exec(exec_request req, completion_handler<exec_result> h)
{
    detail::spawn_op(core_->executor, exec(std::move(req)), std::move(h));
}
void e2b_sandbox::do_exec_file(exec_file_request req, completion_handler<exec_result> h)
{
    detail::spawn_op(core_->executor, exec_file(std::move(req)), std::move(h));
}
void e2b_sandbox::do_status(completion_handler<sandbox_status> h)
{
    detail::spawn_op(core_->executor, status(), std::move(h));
}
void e2b_sandbox::do_stop(stop_options opts, completion_handler<void> h)
{
    detail::spawn_op(core_->executor, stop(opts), std::move(h));
}
void e2b_sandbox::do_kill(completion_handler<void> h) { detail::spawn_op(core_->executor, kill(), std::move(h)); }
void e2b_sandbox::do_close(close_options opts, completion_handler<void> h)
{
    detail::spawn_op(core_->executor, close(opts), std::move(h));
}
void e2b_sandbox::do_start_process(process_request req, completion_handler<std::unique_ptr<process_handle>> h)
{
    detail::spawn_op(core_->executor, start_process(std::move(req)), std::move(h));
}
void e2b_sandbox::do_attach_process(std::string ref, output_callback on_data,
                                    completion_handler<std::unique_ptr<process_handle>> h)
{
    detail::spawn_op(core_->executor, attach_process(std::move(ref), std::move(on_data)), std::move(h));
}
void e2b_sandbox::do_pause(pause_options opts, completion_handler<pause_outcome> h)
{
    detail::spawn_op(core_->executor, pause(opts), std::move(h));
}
void e2b_sandbox::do_resume(completion_handler<void> h) { detail::spawn_op(core_->executor, resume(), std::move(h)); }
void e2b_sandbox::do_fetch_labels(completion_handler<label_map> h)
{
    detail::spawn_op(core_->executor, fetch_labels(), std::move(h));
}

// ---- e2b_sandbox -----------------------------------------------------------

e2b_sandbox::e2b_sandbox(std::shared_ptr<detail::e2b_sandbox_core> core) : core_(std::move(core)) {}

e2b_sandbox::~e2b_sandbox()
{
    // Readers belong to their handles; they keep running while a handle lives.
}

std::string const& e2b_sandbox::id() const noexcept { return core_->id; }
asio::any_io_executor e2b_sandbox::get_executor() const noexcept { return core_->executor; }
sandbox_capabilities e2b_sandbox::capabilities() const noexcept { return core_->caps; }
std::string const& e2b_sandbox::workdir() const noexcept { return core_->workdir; }
std::string const& e2b_sandbox::template_name() const noexcept { return core_->template_name; }
label_map const& e2b_sandbox::labels() const noexcept { return core_->labels; }

asio::awaitable<result<exec_result>> e2b_sandbox::exec(exec_request req)
{
    exec_file_request f;
    f.file = "/bin/sh";
    f.args = {"-c", std::move(req.command)};
    f.cwd = std::move(req.cwd);
    f.env = std::move(req.env);
    f.on_data = std::move(req.on_data);
    f.timeout = req.timeout;
    f.capture_output = req.capture_output;
    co_return co_await exec_file(std::move(f));
}

asio::awaitable<result<exec_result>> e2b_sandbox::exec_file(exec_file_request req)
{
    co_return co_await detail::run_exec(core_, std::move(req));
}

asio::awaitable<result<sandbox_status>> e2b_sandbox::status()
{
    auto core = core_;
    if (core->current_state() != sandbox_state::killed) {
        auto info = co_await core->client->get_sandbox_info(core->id);
        std::lock_guard lk(core->mu);
        if (info) {
            if (core->state != sandbox_state::killed)
                core->state =
                    info->state == e2b::sandbox_state::paused ? sandbox_state::paused : sandbox_state::running;
        } else if (info.error() == errc::not_found) {
            core->state = sandbox_state::killed;  // gone (timeout kill or killed elsewhere)
        } else {
            co_return info.error();
        }
    }
    sandbox_status s;
    std::lock_guard lk(core->mu);
    s.id = core->id;
    s.state = core->state;
    s.template_name = core->template_name;
    s.started_at = core->started_at;
    s.last_activity_at = core->last_activity;
    s.command_count = core->governor.commands_admitted();
    co_return s;
}

asio::awaitable<result<pause_outcome>> e2b_sandbox::pause(pause_options opts)
{
    auto core = core_;
    {
        std::lock_guard lk(core->mu);
        if (core->state == sandbox_state::killed) co_return error(errc::not_found, "the sandbox was killed", {"pause"});
        ++core->pause_epoch;  // streams cut by this pause are not process outcomes
    }
    auto r = co_await core->client->pause_sandbox(core->id, opts.keep_memory);
    if (!r) {
        for (auto& p : core->live_processes()) p->on_resumed();
        co_return r.error();
    }
    pause_outcome out;
    out.http_status = r->http_status;
    out.message = secret_redactor::global().redact(r->message);
    out.snapshot = opts.keep_memory ? snapshot_kind::memory : snapshot_kind::filesystem;
    switch (r->outcome) {
        case e2b::pause_reply::kind::paused:
        case e2b::pause_reply::kind::already_paused: {
            out.what = r->outcome == e2b::pause_reply::kind::paused ? pause_outcome::kind::paused
                                                                    : pause_outcome::kind::already_paused;
            bool gone = false;
            {
                std::lock_guard lk(core->mu);
                core->state = sandbox_state::paused;
                if (r->outcome == e2b::pause_reply::kind::paused || !core->paused_kind)
                    core->paused_kind = out.snapshot;
                if (r->outcome == e2b::pause_reply::kind::paused && !opts.keep_memory) {
                    // Filesystem-only: the resume will be a reboot; every pid is void.
                    core->rebooted = true;
                    core->pids_since_reboot.clear();
                    gone = true;
                }
            }
            if (gone) processes_gone(*core, "filesystem-only pause: the process is gone");
            core->log(log_level::info,
                      "paused sandbox " + core->id + (opts.keep_memory ? " (memory)" : " (filesystem)"));
            co_return out;
        }
        case e2b::pause_reply::kind::busy:
            // 503: nothing changed, the sandbox is still running. Not success.
            out.what = pause_outcome::kind::refused_busy;
            for (auto& p : core->live_processes()) p->on_resumed();
            core->log(log_level::warning, "pause of " + core->id + " refused (busy); still running");
            co_return out;
        case e2b::pause_reply::kind::not_found: {
            std::lock_guard lk(core->mu);
            core->state = sandbox_state::killed;
            co_return error(errc::not_found, "the sandbox does not exist", {"pause", r->http_status});
        }
    }
    co_return error(errc::protocol_error, "unexpected pause reply", {"pause"});
}

asio::awaitable<result<void>> e2b_sandbox::resume()
{
    auto core = core_;
    if (core->current_state() == sandbox_state::killed)
        co_return error(errc::not_found, "the sandbox was killed", {"resume"});
    // Explicit connect with the configured timeout: a resume that falls back to the
    // vendor default would silently shrink the sandbox's life (wire-notes.md).
    auto c = co_await core->client->connect_sandbox(core->id, core->vendor_timeout);
    if (!c) {
        if (c.error() == errc::not_found) {
            std::lock_guard lk(core->mu);
            core->state = sandbox_state::killed;
        }
        co_return c.error();
    }
    {
        std::lock_guard lk(core->mu);
        auto t = e2b::envd_target::from(c->sandbox);
        t.sandbox_id = core->id;
        if (!t.access_token) t.access_token = core->target.access_token;
        if (!t.domain) t.domain = core->target.domain;
        if (t.envd_version.empty()) t.envd_version = core->target.envd_version;
        core->target = std::move(t);
        core->state = sandbox_state::running;
        core->paused_kind.reset();
        core->last_activity = std::chrono::system_clock::now();
    }
    // Memory snapshot: processes continue; re-attach readers cut by the pause.
    // Filesystem-only: they were marked gone at pause time and are never restarted.
    for (auto& p : core->live_processes()) p->on_resumed();
    core->log(log_level::info, "resumed sandbox " + core->id);
    co_return result<void>();
}

asio::awaitable<result<void>> e2b_sandbox::stop(stop_options)
{
    pause_options const keep_memory{true};  // named: no braced temporary inside a co_await (g++ 12)
    auto r = co_await pause(keep_memory);
    if (!r) co_return r.error();
    if (!r->is_paused())
        co_return error(errc::service_busy, "the vendor refused to pause (busy); the sandbox is still running",
                        {"stop", r->http_status});
    co_return result<void>();
}

asio::awaitable<result<void>> e2b_sandbox::kill()
{
    auto core = core_;
    // Idempotent: one vendor kill. A concurrent kill() waits for the one in
    // flight and reports its outcome (or retries when it failed).
    for (;;) {
        {
            std::lock_guard lk(core->mu);
            if (core->state == sandbox_state::killed) co_return result<void>();
            if (!core->kill_started) {
                core->kill_started = true;
                break;
            }
        }
        if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none)
            co_return error(errc::cancelled, "kill was cancelled", {"kill"});
        asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
        auto [ec] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec) co_return error(errc::cancelled, "kill was cancelled", {"kill"});
    }
    auto r = co_await core->client->kill_sandbox(core->id);
    if (!r) {
        std::lock_guard lk(core->mu);
        core->kill_started = false;  // a failed kill may be retried
        co_return r.error();
    }
    {
        std::lock_guard lk(core->mu);
        core->state = sandbox_state::killed;
    }
    processes_gone(*core, "the sandbox was killed");
    core->log(log_level::info, "killed sandbox " + core->id);
    co_return result<void>();
}

asio::awaitable<result<void>> e2b_sandbox::close(close_options opts)
{
    if (opts.export_snapshot)
        co_return error(errc::unsupported,
                        "close with export is unsupported on E2B (pause is the snapshot); nothing was destroyed",
                        {"close"});
    co_return co_await kill();
}

asio::awaitable<result<label_map>> e2b_sandbox::fetch_labels()
{
    auto info = co_await core_->client->get_sandbox_info(core_->id);
    if (!info) co_return info.error();
    co_return std::move(info->metadata);
}

asio::awaitable<result<std::unique_ptr<process_handle>>> e2b_sandbox::start_process(process_request req)
{
    auto core = core_;
    if (auto v = validate_command(req.file, req.args, req.env, core->limits); !v) co_return v.error();
    auto target = core->activity_target("start_process");
    if (!target) co_return target.error();
    if (req.cwd)
        if (auto v = validate_path(*req.cwd, "cwd"); !v) co_return v.error();
    auto const epoch = core->current_pause_epoch();
    e2b::start_process_params params;
    params.process.cmd = req.file;
    params.process.args = req.args;
    params.process.envs = std::move(req.env);
    params.process.cwd = req.cwd.value_or(core->workdir);
    params.stdin = req.stdin_open;
    // Connect-Timeout-Ms makes envd kill the process when it passes: a
    // long-running process gets no deadline (wire-notes.md).
    params.timeout = std::chrono::milliseconds(0);
    // A non-secret tag lets us stop a process whose pid we never learnt.
    auto const tag = detail::make_process_tag("prism-proc");
    params.tag = tag;
    co_await asio::this_coro::throw_if_cancelled(false);
    auto stream = co_await core->client->start_process(*target, std::move(params));
    std::optional<error> failed;
    std::uint32_t pid = 0;
    if (!stream) {
        failed = stream.error();
    } else {
        auto first = co_await (*stream)->next();
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
            (void)co_await core->client->send_signal(*target, sel, process_signal::sigkill);
        }
        co_return *failed;
    }
    auto ref = encode_process_ref({core->id, pid, command_fingerprint(req.file, req.args), core->workdir});
    auto state = std::make_shared<detail::e2b_process_state>(core, pid, std::move(ref), std::move(req.on_data));
    core->register_process(state);
    {
        std::lock_guard lk(core->mu);
        core->pids_since_reboot.insert(pid);
    }
    // A named lambda: g++ 12 destroys lambda/braced temporaries of a co_await
    // full-expression twice.
    auto begin_reading = [state, s = std::move(*stream), epoch]() mutable -> asio::awaitable<void> {
        state->start_reader(std::move(s), epoch);
        co_return;
    };
    co_await asio::co_spawn(state->strand, std::move(begin_reading), asio::use_awaitable);
    co_return detail::make_process_handle(std::move(state));
}

asio::awaitable<result<std::unique_ptr<process_handle>>> e2b_sandbox::attach_process(std::string ref,
                                                                                     output_callback on_data)
{
    using handle_ptr = std::unique_ptr<process_handle>;
    auto core = core_;
    auto rec = decode_process_ref(ref);
    if (!rec || rec->sandbox_id != core->id || rec->workspace != core->workdir) co_return handle_ptr();
    e2b::envd_target target;
    {
        std::lock_guard lk(core->mu);
        if (core->state == sandbox_state::killed) co_return handle_ptr();
        if (core->state == sandbox_state::paused) {
            // After a filesystem-only pause the process is gone for good.
            if (core->paused_kind == snapshot_kind::filesystem) co_return handle_ptr();
            co_return error(errc::paused, "the sandbox is paused; call resume() first", {"attach_process"});
        }
        if (core->rebooted && !core->pids_since_reboot.contains(rec->pid))
            co_return handle_ptr();  // a pid from before the reboot: never the same process
        target = core->target;
        core->last_activity = std::chrono::system_clock::now();
    }
    // The pid must still run the command the ref names (pids are reused).
    auto procs = co_await core->client->list_processes(target);
    if (!procs) {
        if (procs.error() == errc::not_found) co_return handle_ptr();
        co_return procs.error();
    }
    auto it = std::find_if(procs->begin(), procs->end(), [&](auto const& p) { return p.pid == rec->pid; });
    if (it == procs->end() || command_fingerprint(it->config.cmd, it->config.args) != rec->command_fingerprint)
        co_return handle_ptr();
    auto const epoch = core->current_pause_epoch();
    auto stream =
        co_await core->client->connect_process(target, detail::pid_selector(rec->pid), std::chrono::milliseconds(0));
    if (!stream) {
        if (stream.error() == errc::not_found) co_return handle_ptr();
        co_return stream.error();
    }
    auto first = co_await (*stream)->next();
    if (!first) {
        if (first.error() == errc::not_found) co_return handle_ptr();
        co_return first.error();
    }
    if (!*first || !std::holds_alternative<e2b::start_event>(**first)) co_return handle_ptr();
    auto state =
        std::make_shared<detail::e2b_process_state>(core, rec->pid, encode_process_ref(*rec), std::move(on_data));
    core->register_process(state);
    // A named lambda: g++ 12 destroys lambda/braced temporaries of a co_await
    // full-expression twice.
    auto begin_reading = [state, s = std::move(*stream), epoch]() mutable -> asio::awaitable<void> {
        state->start_reader(std::move(s), epoch);
        co_return;
    };
    co_await asio::co_spawn(state->strand, std::move(begin_reading), asio::use_awaitable);
    co_return detail::make_process_handle(std::move(state));
}

}  // namespace prism_e2b
