// create_e2b_sandbox / connect_e2b_sandbox and the lifecycle of e2b_sandbox
// (status, pause, resume, stop, kill, close) plus process start/attach.
#include <prism_e2b/e2b_sandbox.hpp>
#include <prism_e2b/process_ref.hpp>
#include <prism_e2b/redactor.hpp>

#include "adapter/exec.hpp"
#include "adapter/files.hpp"
#include "adapter/lifecycle.hpp"
#include "adapter/pty.hpp"
#include "adapter/sandbox_core.hpp"
#include "adapter/workspace_path.hpp"
#include "core/spawn_op.hpp"

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

// ---- helpers ---------------------------------------------------------------

namespace {

using detail::validate_path;

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

// The files() roots besides the workdir, normalised; each must be absolute.
result<std::vector<std::string>> resolve_file_roots(std::vector<std::string> const& roots)
{
    std::vector<std::string> out;
    for (auto const& r : roots) {
        auto n = detail::normalize_absolute(r);
        if (!n || r.size() > 4096)
            return error(errc::invalid_argument, "file_roots must be absolute paths without NUL", {"options"});
        out.push_back(std::move(*n));
    }
    return out;
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
    auto stream = co_await client.async_start_process(std::move(target), std::move(p));
    if (!stream) co_return stream.error();
    for (;;) {
        auto ev = co_await (*stream)->async_next();
        if (!ev) co_return ev.error();
        if (!*ev) break;
        if (auto* end = std::get_if<e2b::end_event>(&**ev)) {
            if (end->exited && end->exit_code == 0) co_return result<void>();
            co_return error(errc::permission_denied, "could not create the workdir (" + end->status + ")", {"create"});
        }
    }
    co_return error(errc::unknown_outcome, "workdir creation ended without an end event", {"create"});
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
    auto roots = resolve_file_roots(options.file_roots);
    if (!roots) co_return roots.error();
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
    core->file_roots = std::move(*roots);
    core->labels = options.labels;
    core->vendor_timeout = params.timeout;

    auto created = co_await (*client)->async_create_sandbox(std::move(params));
    if (!created) co_return created.error();
    core->id = created->sandbox_id;
    core->fsm = detail::sandbox_fsm(e2b::envd_target::from(*created), sandbox_state::running);
    auto const target = core->fsm.target();
    core->started_at = core->last_activity = std::chrono::system_clock::now();
    if (core->id.empty()) co_return error(errc::protocol_error, "the vendor returned no sandbox id", {"create"});

    // The workdir must exist when the sandbox is handed out; if not, the vendor
    // sandbox would leak: kill it before reporting.
    // Cleanup must run even when the caller cancelled the set-up.
    co_await asio::this_coro::throw_if_cancelled(false);
    result<void> dir;
    if (auto made = co_await (*client)->async_make_dir(target, core->workdir); !made) {
        dir = made.error();
        if (made.error() == errc::permission_denied)
            dir = co_await make_workdir_as_root(**client, target, core->workdir);
    }
    if (!dir) {
        co_await asio::this_coro::reset_cancellation_state();
        core->log(log_level::error, "create: workdir set-up failed, killing sandbox " + core->id);
        auto k = co_await (*client)->async_kill_sandbox(core->id);
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
    auto roots = resolve_file_roots(options.file_roots);
    if (!roots) co_return roots.error();
    auto client = resolve_client(executor, options.api_key, options.client, options.client_options);
    if (!client) co_return client.error();

    auto info = co_await (*client)->async_get_sandbox_info(options.sandbox_id);
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
    core->file_roots = std::move(*roots);
    core->labels = info->metadata;
    core->vendor_timeout = ceil_seconds(*timeout);
    auto target = e2b::envd_target::from(*info);
    target.sandbox_id = core->id;
    auto const paused = info->state == e2b::sandbox_state::paused;
    core->fsm = detail::sandbox_fsm(std::move(target), paused ? sandbox_state::paused : sandbox_state::running);
    core->started_at = parse_rfc3339(info->started_at, std::chrono::system_clock::now());
    core->last_activity = std::chrono::system_clock::now();

    // The same resume as e2b_sandbox::resume(): one envd-target merge rule.
    if (paused && options.resume)
        if (auto r = co_await detail::run_resume(core); !r) co_return r.error();
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

e2b_sandbox::e2b_sandbox(std::shared_ptr<detail::e2b_sandbox_core> core)
    : core_(std::move(core)), files_(detail::make_e2b_files(core_)), pty_(detail::make_e2b_pty(core_))
{
}

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
    f.user = std::move(req.user);
    f.on_data = std::move(req.on_data);
    f.timeout = req.timeout;
    f.capture_output = req.capture_output;
    co_return co_await exec_file(std::move(f));
}

asio::awaitable<result<exec_result>> e2b_sandbox::exec_file(exec_file_request req)
{
    co_return co_await detail::run_exec(core_, std::move(req));
}

asio::awaitable<result<sandbox_status>> e2b_sandbox::status() { return detail::run_status(core_); }

asio::awaitable<result<pause_outcome>> e2b_sandbox::pause(pause_options opts) { return detail::run_pause(core_, opts); }

asio::awaitable<result<void>> e2b_sandbox::resume() { return detail::run_resume(core_); }

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

asio::awaitable<result<void>> e2b_sandbox::kill() { return detail::run_kill(core_); }

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
    auto info = co_await core_->client->async_get_sandbox_info(core_->id);
    if (!info) co_return info.error();
    co_return std::move(info->metadata);
}

asio::awaitable<result<std::unique_ptr<process_handle>>> e2b_sandbox::start_process(process_request req)
{
    return detail::run_start_process(core_, std::move(req));
}

asio::awaitable<result<std::unique_ptr<process_handle>>> e2b_sandbox::attach_process(std::string ref,
                                                                                     output_callback on_data)
{
    return detail::run_attach_process(core_, std::move(ref), std::move(on_data));
}

}  // namespace prism_e2b
