// Sandbox lifecycle operations (create, kill, pause, resume, expiry, spawn).
#include "emulator/server_state.hpp"

#include <prism_e2b/redactor.hpp>

#include "emulator/engines/gvisor/runsc.hpp"
#include "emulator/envd_agent.hpp"
#include "emulator/host_tool.hpp"
#include "emulator/ledger.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/sandbox_tree.hpp"
#include "emulator/small_files.hpp"
#include "emulator/state_records.hpp"
#include "emulator/system_layer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace fs = std::filesystem;

std::optional<os_user> sandbox_user(sandbox const& sb, std::string_view name)
{
    return lookup_user(name.empty() ? std::string_view(sb.default_user) : name);
}

namespace {

/// The server's own registration of a sandbox's access token, released when the sandbox goes.
std::string token_scope(std::string const& sandbox_id) { return "prism-e2b-local/" + sandbox_id; }

}  // namespace

// ---------------------------------------------------------------- templates

namespace {

/// The directories of a sandbox that a template or snapshot seeds (a template has no system layer).
std::vector<std::string> const& seeded_dirs()
{
    static std::vector<std::string> const dirs = {"home/user", "workspace", "tmp", "root", system_layer_name};
    return dirs;
}

/// Extracts a tarball into `into` with tar (numeric owners, as root), for copy_tree to translate.
result<void> extract_tarball(fs::path const& tarball, fs::path const& into)
{
    std::error_code ec;
    fs::create_directories(into, ec);
    auto r = run_host_tool(
        {"tar", "--numeric-owner", "--no-same-permissions", "-xf", tarball.string(), "-C", into.string()}, "tar");
    if (!r)
        return error(errc::server_error, "tar could not extract the template's rootfs " + tarball.string(),
                     {"template"});
    return result<void>{};
}

/// Copies a snapshot's files (owners kept, as ids inside) or a template's into the new sandbox's
/// own directories. A template's are the operator's files: /home/user and /workspace become the
/// default user's, /tmp and /root the sandbox root's, whoever owns them on the host.
result<void> seed_from_template(template_spec const& tpl, sandbox& sb)
{
    if (tpl.from_snapshot) return copy_tree(tpl.rootfs, sb.root, sb.ids.base(), seeded_dirs());
    auto from = tpl.rootfs;
    auto const staging = sb.dir / "template-staging";
    result<void> r;
    if (tpl.rootfs_is_tarball) {
        r = extract_tarball(tpl.rootfs, staging);
        from = staging;
    }
    for (auto const* dir : {"home/user", "workspace", "tmp", "root"}) {
        if (!r) break;
        std::vector<std::string> const only = {dir};
        uid_t const owner =
            std::string_view(dir) == "home/user" || std::string_view(dir) == "workspace" ? default_uid : 0;
        r = copy_tree(from, sb.root, sb.ids.base(), only, owner);
    }
    if (tpl.rootfs_is_tarball) remove_tree(staging.string());
    return r;
}

}  // namespace

void server_state::run_start_command(std::shared_ptr<sandbox> const& sb)
{
    if (sb->start_cmd.empty()) return;
    auto const user = lookup_user(sb->default_user);
    if (auto started = engine->start_command(*this, sb, *user); !started)
        log(log_level::warning,
            "prism-e2b-local: the start command of sandbox " + sb->id + " did not start: " + started.error().message());
}

result<bool> server_state::capture_snapshot(std::shared_ptr<sandbox> const& sb, fs::path const& to)
{
    bool paused_now = false;  // then the ledger is written once the lock is let go
    auto taken = [&]() -> result<bool> {
        std::unique_lock lk(sb->mutex);  // nothing starts, pauses or resumes meanwhile
        sb->memory_written.wait(lk, [&] { return !sb->memory_writing; });
        if (sb->gone) return error(errc::not_found, "sandbox " + sb->id + " not found", {"snapshot"});
        return engine->capture(*this, *sb, to, paused_now);
    }();
    if (paused_now) persist(*sb);
    return taken;
}

asio::awaitable<void> handle_envd(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb, http_request req,
                                  response_sink& sink)
{
    if (req.path == "/health" && req.method == "GET") {
        http_response r;
        r.status = 204;
        r.content_type.clear();
        co_await sink.send(std::move(r));
    } else if (req.path == "/files") {
        co_await handle_files(st, sb, std::move(req), sink);
    } else if (req.path.rfind("/process.Process/", 0) == 0) {
        co_await handle_process_rpc(st, sb, std::move(req), sink);
    } else if (req.path.rfind("/filesystem.Filesystem/", 0) == 0) {
        co_await handle_filesystem_rpc(st, sb, std::move(req), sink);
    } else {
        co_await sink.send(rest_error(404, "no such route"));
    }
}

http_response exec_counts(sandbox const& sb)
{
    boost::json::object o;
    {
        std::lock_guard lk(sb.mutex);
        o["peak"] = sb.peak;
        o["running"] = sb.running;
    }
    http_response r;
    r.body = boost::json::serialize(o);
    return r;
}

// ---------------------------------------------------------------- sandbox

sandbox::~sandbox()
{
    if (root_fd >= 0) ::close(root_fd);
}

std::shared_ptr<sandbox> server_state::find(std::string const& id) const
{
    std::lock_guard lk(mutex);
    auto it = sandboxes.find(id);
    return it == sandboxes.end() ? nullptr : it->second;
}

result<template_spec> server_state::resolve_template(std::string const& id) const
{
    if (auto snap = snapshots.find(id)) {
        auto spec = snap->spec;
        spec.id = snap->snapshot_id();
        return spec;
    }
    return find_template(templates_dir, id, ns_defaults);
}

result<std::shared_ptr<sandbox>> server_state::create_sandbox(
    template_spec const& tpl, std::map<std::string, std::string> metadata, std::map<std::string, std::string> env_vars,
    std::chrono::seconds timeout, bool auto_pause, bool auto_pause_memory, bool auto_resume, bool allow_internet,
    std::vector<volume_mount> volume_mounts)
{
    if (stopping) return error(errc::service_busy, "server is stopping", {"create"});
    auto sb = std::make_shared<sandbox>();
    sb->id = random_id(20);
    sb->template_id = tpl.id;
    sb->limits = tpl.limits;
    sb->disk_mb = tpl.disk_mb;  // reported only, unless the quota below applies
    sb->default_user = tpl.user;
    sb->start_cmd = tpl.start_cmd;
    sb->volume_mounts = std::move(volume_mounts);
    sb->access_token = random_hex(32);
    secret_redactor::global().add(sb->access_token, token_scope(sb->id));
    sb->dir = state_dir / "sandboxes" / sb->id;
    sb->root = sb->dir / "root";
    if (auto reserved = engine->reserve_ids(*sb); !reserved) return reserved.error();
    std::error_code ec;
    // Its writable directories on a file system of the template's size, mounted before anything is put there.
    if (std::uint32_t const quota = tpl.disk_mb ? tpl.disk_mb : opts.sandbox_disk_mb; disk_images && quota) {
        fs::create_directories(sb->dir, ec);
        if (auto disk = create_sandbox_disk(*disk_images, quota, sb->dir / "disk.ext4", sb->root); !disk) {
            remove_sandbox_files(sb->dir);
            return disk.error();
        }
        sb->disk_mb = quota;
    }
    for (auto const* sub : {"workspace", "home/user", "tmp", "root"}) fs::create_directories(sb->root / sub, ec);
    if (ec) {
        remove_sandbox_files(sb->dir);
        return error(errc::server_error, "cannot create the sandbox's directories: " + ec.message(), {"create"});
    }
    ::chmod((sb->root / "tmp").c_str(), 01777);
    ::chmod((sb->root / "root").c_str(), 0700);
    // The default user owns its home and the workspace, as in E2B's base template;
    // with a user namespace, root owns /tmp and /root (ids of the sandbox's range).
    if (::geteuid() == 0) {  // a server that is not root runs everything as itself
        for (auto const* sub : {"workspace", "home/user"})
            if (::chown((sb->root / sub).c_str(), sb->host_id(default_uid), sb->host_id(default_gid)) != 0)
                return error(errc::server_error, "cannot hand the sandbox's directories to the default user",
                             {"create"});
        for (auto const* sub : {"tmp", "root"})
            if (::chown((sb->root / sub).c_str(), sb->host_id(0), sb->host_id(0)) != 0)
                return error(errc::server_error, "cannot hand the sandbox's directories to its root", {"create"});
    }
    if (!tpl.rootfs.empty())
        if (auto seeded = seed_from_template(tpl, *sb); !seeded) {
            remove_sandbox_files(sb->dir);
            return seeded.error();
        }
    // Traversable (not listable) for the engines whose commands run under host ids; the
    // namespaces engine's init reaches them with the server's ids (sandbox_init.cpp).
    for (auto const& d : {sb->dir, sb->root}) ::chmod(d.c_str(), engine->host_ids_reach_sandbox_files() ? 0711 : 0700);
    sb->root_fd = ::open(sb->root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (sb->root_fd < 0) {
        remove_sandbox_files(sb->dir);
        return error(errc::server_error, "cannot open the sandbox root", {"create"});
    }
    if (freezer_available) {
        std::string dir = freezer_root + "/" + sb->id;
        if (::mkdir(dir.c_str(), 0755) == 0) sb->cgroup_dir = dir;
    }
    sb->isolation = std::string(engine->name());
    bool memory_restored = false;
    sb->internet = allow_internet && engine->allows_internet();
    // The template's env vars, overridden by the create's (the agent is told them when it boots).
    sb->env_vars = tpl.env_vars;
    for (auto& [k, v] : env_vars) sb->env_vars[k] = std::move(v);
    if (auto limited = engine->limit(*sb); !limited) {
        if (!sb->cgroup_dir.empty()) ::rmdir(sb->cgroup_dir.c_str());
        remove_sandbox_files(sb->dir);
        return limited.error();
    }
    engine->attach(*sb);
    {
        std::lock_guard lk(sb->mutex);
        if (engine->checkpoints_memory() && !tpl.memory_snapshot.empty()) {  // its processes go on in the new sandbox
            auto restored = engine->restore_memory(*this, *sb, tpl.memory_snapshot);
            if (!restored)
                log(log_level::warning,
                    "prism-e2b-local: sandbox " + sb->id + " from snapshot " + tpl.id +
                        " boots from its files: its memory was not restored: " + restored.error().message());
            memory_restored = static_cast<bool>(restored);
        }
        if (auto booted = memory_restored ? result<void>{} : engine->boot(*this, *sb); !booted) {
            for (auto const& d : sb->limit_cgroups) ::rmdir(d.c_str());
            if (!sb->cgroup_dir.empty()) ::rmdir(sb->cgroup_dir.c_str());
            remove_sandbox_files(sb->dir);
            return booted.error();
        }
    }
    sb->metadata = std::move(metadata);
    sb->started_at = std::chrono::system_clock::now();
    sb->end_at = sb->started_at + timeout;
    sb->auto_pause = auto_pause;
    sb->auto_pause_memory = auto_pause_memory;
    sb->auto_resume = auto_resume;
    {
        std::lock_guard lk(mutex);
        sb->seq = next_seq++;
        sandboxes[sb->id] = sb;
    }
    persist(*sb);
    log(log_level::info, "prism-e2b-local: created sandbox " + sb->id + " (template " + sb->template_id +
                             (memory_restored ? ", its memory restored)" : ")"));
    if (!memory_restored) run_start_command(sb);  // restored: it runs already
    return sb;
}

agent_config server_state::agent_config_for(sandbox const& sb) const
{
    agent_config cfg;
    cfg.sandbox_id = sb.id;
    cfg.env_vars = sb.env_vars;
    cfg.default_user = sb.default_user;
    cfg.max_file_bytes = opts.max_file_bytes;
    cfg.envd_version = opts.envd_version;
    engine->configure_agent(cfg);
    // A stream per process it can run, and room for unary calls and file transfers beside them.
    cfg.max_connections = std::size_t{sb.limits.max_pids} + 256;
    return cfg;
}

result<std::pair<fs::path, fs::path>> server_state::system_layer_for(sandbox const& sb,
                                                                     std::string const& hostname) const
{
    auto const layer = sb.root / system_layer_name;
    if (auto prepared = prepare_system_layer(layer, sb.ids.base(), {passwd_file, group_file, hostname}); !prepared)
        return prepared.error();
    auto etc = etc_snapshot(state_dir / "system-etc");
    if (!etc) return etc.error();
    return std::pair{layer, std::move(*etc)};
}

void server_state::remove_sandbox_files(fs::path const& dir) const
{
    unmount_system_overlays(gvisor_system_mounts(dir));  // a gvisor sandbox's, left by a boot that failed
    unmount_sandbox_disk(dir / "root");
    remove_tree(dir.string());  // not fs::remove_all: it holds one descriptor per level
}

void server_state::halt_sandbox(sandbox& sb)
{
    pid_t const pid = engine->halt(sb);
    if (pid <= 0) return;
    // The init exits once every process of its pid namespace is gone (and reaped by
    // their watchers): reap it without blocking an io thread.
    asio::co_spawn(
        ex,
        [pid]() -> asio::awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor);
            for (int i = 0; i < 600 && ::waitpid(pid, nullptr, WNOHANG) == 0; ++i) {
                t.expires_after(std::chrono::milliseconds(50));
                co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
            }
        },
        asio::detached);
}

namespace {

void kill_everything(sandbox& sb, std::map<std::uint32_t, std::shared_ptr<process>>& procs)
{
    for (auto& [pid, p] : procs) p->kill_and_abort_watchers();
    if (!sb.cgroup_dir.empty()) {
        // Daemons that left their process group are still in the cgroup.
        for (pid_t p : cgroup_pids(sb.cgroup_dir)) ::kill(p, SIGKILL);
        thaw_cgroup(sb.cgroup_dir);  // SIGKILL takes effect only once thawed
    } else {
        for (auto& [pid, p] : procs) ::kill(-static_cast<pid_t>(pid), SIGCONT);
    }
}

}  // namespace

void server_state::kill_sandbox(std::shared_ptr<sandbox> const& sb)
{
    std::map<std::uint32_t, std::shared_ptr<process>> procs;
    {
        std::lock_guard lk(sb->mutex);
        if (sb->gone) return;
        sb->gone = true;
        procs.swap(sb->processes);
        sb->running = 0;
    }
    {
        std::lock_guard lk(mutex);
        sandboxes.erase(sb->id);
    }
    {
        std::lock_guard lk(sb->ledger_mutex);
        if (!ledger.empty()) ledger_remove(ledger, sb->id);
    }
    secret_redactor::global().release(token_scope(sb->id));
    kill_everything(*sb, procs);
    {
        std::lock_guard lk(sb->mutex);
        halt_sandbox(*sb);
    }
    procs.clear();
    // Its disk is detached at once (lazily: its dying processes may still hold it), so no stop or
    // crash before the files below are removed leaves it mounted.
    unmount_sandbox_disk(sb->root);
    log(log_level::info, "prism-e2b-local: killed sandbox " + sb->id);
    // Removing the files and the cgroup can wait for the processes to be gone.
    auto self = shared_from_this();
    asio::co_spawn(
        ex,
        [self, sb]() -> asio::awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor);
            auto cgroups = sb->limit_cgroups;
            if (!sb->cgroup_dir.empty()) cgroups.push_back(sb->cgroup_dir);
            for (int i = 0; i < 50 && !cgroups.empty(); ++i) {
                std::erase_if(cgroups, [](std::string const& d) { return ::rmdir(d.c_str()) == 0 || errno == ENOENT; });
                for (auto const& d : cgroups)
                    for (pid_t p : cgroup_pids(d)) ::kill(p, SIGKILL);
                t.expires_after(std::chrono::milliseconds(100));
                co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
            }
            self->remove_sandbox_files(sb->dir);
        },
        asio::detached);
}

result<void> server_state::pause_sandbox(std::shared_ptr<sandbox> const& sb, bool memory)
{
    std::map<std::uint32_t, std::shared_ptr<process>> killed;
    std::optional<error> failed_snapshot;
    if (memory && sb->agent) (void)agent_peak(*sb);  // keeps the agent's counters: frozen, it cannot answer
    {
        std::lock_guard lk(sb->mutex);
        if (sb->gone) return error(errc::not_found, "sandbox " + sb->id + " not found", {"pause"});
        if (sb->state != sandbox_state::running)
            return error(errc::conflict, "sandbox " + sb->id + " is already paused", {"pause"});
        if (memory) {
            auto held = engine->pause_with_memory(*this, *sb);
            if (!held) return held.error();                // it runs on
            if (held->lost) failed_snapshot = held->lost;  // paused as without memory: its files are kept
            sb->freeze_method = held->method;
        } else {
            killed.swap(sb->processes);
            sb->running = 0;
            halt_sandbox(*sb);  // a filesystem pause ends the "VM"; resume boots it again
        }
        sb->state = sandbox_state::paused;
        sb->paused_with_memory = memory && !failed_snapshot;
    }
    if (!memory) kill_everything(*sb, killed);
    persist(*sb);
    if (failed_snapshot) {  // paused as if without memory: resume boots it again
        log(log_level::error, "prism-e2b-local: sandbox " + sb->id + ": " + failed_snapshot->message());
        return *failed_snapshot;
    }
    log(log_level::info, "prism-e2b-local: paused sandbox " + sb->id + (memory ? " (memory)" : " (filesystem)"));
    return result<void>{};
}

result<void> server_state::resume_sandbox(std::shared_ptr<sandbox> const& sb, std::chrono::seconds timeout)
{
    bool cold = false;
    auto r = resume_locked(*sb, timeout, cold);
    if (r) persist(*sb);
    if (r && cold) run_start_command(sb);
    return r;
}

result<void> server_state::resume_locked(sandbox& sbr, std::chrono::seconds timeout, bool& cold)
{
    auto* sb = &sbr;
    std::unique_lock lk(sb->mutex);
    // A write of its memory image to disk behind its pause ends first (then it resumes from disk).
    sb->memory_written.wait(lk, [&] { return !sb->memory_writing; });
    if (sb->gone) return error(errc::not_found, "sandbox " + sb->id + " not found", {"resume"});
    if (sb->state != sandbox_state::paused) return result<void>{};
    cold = !sb->paused_with_memory;
    if (sb->paused_with_memory) {
        if (auto resumed = engine->resume_with_memory(*this, *sb); !resumed) return resumed.error();
    } else {
        if (!sb->cgroup_dir.empty()) thaw_cgroup(sb->cgroup_dir);  // processes killed while frozen can now die
        if (auto booted = engine->boot(*this, *sb); !booted) return booted.error();
    }
    sb->state = sandbox_state::running;
    sb->end_at = std::chrono::system_clock::now() + timeout;
    log(log_level::info, "prism-e2b-local: resumed sandbox " + sb->id);
    return result<void>{};
}

std::string server_state::host_path_for_cwd(sandbox const& sb, std::string const& sandbox_path) const
{
    for (std::string_view prefix : {"/workspace", "/home/user", "/tmp"}) {
        if (sandbox_path == prefix ||
            (sandbox_path.size() > prefix.size() && sandbox_path.compare(0, prefix.size(), prefix) == 0 &&
             sandbox_path[prefix.size()] == '/'))
            return (sb.root.string() + sandbox_path);
    }
    return sandbox_path;
}

result<std::shared_ptr<process>> server_state::spawn(std::shared_ptr<sandbox> const& sb, process_config cfg,
                                                     bool open_stdin, os_user const& user,
                                                     std::optional<std::pair<unsigned short, unsigned short>> pty)
{
    auto const cwd = normalize_sandbox_path(cfg.cwd.value_or(std::string(sandbox_home)));
    if (!cwd) return error(errc::invalid_argument, "invalid cwd", {"process.Start"});
    spawn_spec spec;
    spec.cmd = cfg.cmd;
    spec.args = cfg.args;
    spec.open_stdin = open_stdin;
    bool const ns = engine->own_mount_namespace();
    std::map<std::string, std::string> env = {
        {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
        {"HOME", user.uid == 0 ? user.home : (ns ? std::string(sandbox_home) : (sb->root / "home/user").string())},
        {"USER", user.name},
        {"LOGNAME", user.name},
        {"SHELL", "/bin/bash"},
        {"LANG", "C.UTF-8"},
        {"E2B_SANDBOX", "true"},
        {"E2B_SANDBOX_ID", sb->id},
    };
    if (!ns) env["TMPDIR"] = (sb->root / "tmp").string();
    for (auto const& [k, v] : sb->env_vars) env[k] = v;
    for (auto const& [k, v] : cfg.envs) env[k] = v;
    for (auto const& [k, v] : env) spec.env.push_back(k + "=" + v);
    engine->place(*this, *sb, spec, *cwd, user);
    if (!sb->cgroup_dir.empty()) spec.cgroup_procs.push_back(sb->cgroup_dir + "/cgroup.procs");
    spec.pty = pty;
    if (cfg.cwd) cfg.cwd = *cwd;

    std::weak_ptr<sandbox> weak = sb;
    std::shared_ptr<process> p;
    {
        std::lock_guard lk(sb->mutex);
        if (sb->gone) return error(errc::not_found, "sandbox " + sb->id + " not found", {"process.Start"});
        if (sb->state != sandbox_state::running)
            return error(errc::paused, "sandbox " + sb->id + " is paused", {"process.Start"});
        engine->join(*sb, spec);
        auto r = process::spawn(ex, spec, std::move(cfg), [weak](process& pr) {
            if (auto s = weak.lock()) {
                std::lock_guard lk2(s->mutex);
                auto it = s->processes.find(pr.pid());
                if (it != s->processes.end() && it->second.get() == &pr) {
                    s->processes.erase(it);
                    if (s->running > 0) --s->running;
                }
            }
        });
        if (!r) return r.error();
        p = *r;
        sb->processes[p->pid()] = p;
        ++sb->running;
        sb->peak = std::max(sb->peak, sb->running);
    }
    if (auto delay = faults.take_kill_during_exec(sb->id)) schedule_kill(sb->id, *delay);
    return p;
}

void server_state::schedule_kill(std::string id, std::chrono::milliseconds after)
{
    auto self = shared_from_this();
    asio::co_spawn(
        ex,
        [self, id, after]() -> asio::awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor);
            t.expires_after(after);
            co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
            auto sb = self->find(id);
            if (!sb) co_return;
            self->log(log_level::info, "prism-e2b-local: fault injection kills sandbox " + id + " during an exec");
            self->kill_sandbox(sb);
        },
        asio::detached);
}

void server_state::persist(sandbox const& sb) const
{
    if (ledger.empty()) return;
    std::lock_guard lk(sb.ledger_mutex);
    if (!ledger_write(ledger, sb))
        log(log_level::error, "prism-e2b-local: cannot write the ledger record of sandbox " + sb.id);
}

void server_state::restore_from_ledger()
{
    using ms = std::chrono::milliseconds;
    for (auto& rec : ledger_read_all(ledger)) {
        auto str = [&](char const* k) { return field_string(rec, k); };
        auto flag = [&](char const* k) { return field_bool(rec, k); };
        auto num = [&](char const* k) { return field_int(rec, k); };
        auto map = [&](char const* k) { return field_string_map(rec, k); };
        auto sb = std::make_shared<sandbox>();
        sb->id = str("sandboxID");
        if (sb->id.empty() || sb->id.find('/') != std::string::npos || sb->id.find('.') != std::string::npos) continue;
        auto skip = [&](std::string const& why) {
            log(log_level::warning, "prism-e2b-local: cannot take back sandbox " + sb->id + ": " + why);
        };
        if (str("isolation") != engine->name()) {
            skip("it ran on the " + str("isolation") + " engine, this server runs " + std::string(engine->name()));
            continue;
        }
        sb->template_id = str("templateID");
        sb->access_token = str("accessToken");
        secret_redactor::global().add(sb->access_token, token_scope(sb->id));
        sb->dir = state_dir / "sandboxes" / sb->id;
        sb->root = sb->dir / "root";
        // Its disk: still mounted when the server was killed, mounted again after a reboot of the host.
        if (auto const image = sb->dir / "disk.ext4"; ::access(image.c_str(), F_OK) == 0) {
            if (!disk_images) {
                skip("its disk needs a loop mount: " + disk_quota_problem);
                continue;
            }
            if (auto mounted = mount_sandbox_disk(image, sb->root); !mounted) {
                skip(mounted.error().message());
                continue;
            }
        }
        sb->root_fd = ::open(sb->root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sb->root_fd < 0) {
            skip("its files are gone");
            ledger_remove(ledger, sb->id);
            continue;
        }
        sb->isolation = std::string(engine->name());
        sb->internet = flag("internet");
        std::vector<std::string> recorded;  // its cgroups, where they are now
        if (auto const* v = rec.if_contains("cgroups"); v && v->is_array())
            for (auto const& d : v->as_array())
                if (d.is_string()) recorded.push_back(inherited_cgroup(std::string(d.as_string())));
        auto const freezer = str("freezerCgroup").empty() ? std::string() : inherited_cgroup(str("freezerCgroup"));
        sb->limits = ns_defaults;  // records written before templates had limits of their own
        if (auto const* l = rec.if_contains("limits"); l && l->is_object()) {
            auto const& lo = l->as_object();
            auto lim = [&](char const* k, std::uint32_t fallback) {
                auto const* v = lo.if_contains(k);
                return v && v->is_number() ? v->to_number<std::uint32_t>() : fallback;
            };
            sb->limits = {lim("cpuCount", ns_defaults.cpu_count), lim("memoryMB", ns_defaults.memory_mb),
                          lim("maxPids", ns_defaults.max_pids)};
        }
        sb->disk_mb = static_cast<std::uint32_t>(num("diskSizeMB"));
        if (str("defaultUser") == "root") sb->default_user = "root";
        sb->start_cmd = str("startCmd");
        sb->metadata = map("metadata");
        sb->env_vars = map("envVars");
        if (auto const* v = rec.if_contains("volumeMounts"); v && v->is_array())
            for (auto const& m : v->as_array()) {
                if (auto const* mo = m.if_object())
                    sb->volume_mounts.push_back(
                        {field_string(*mo, "name"), field_string(*mo, "volumeID"), field_string(*mo, "path")});
            }
        sb->started_at = std::chrono::system_clock::time_point(ms(num("startedAtMs")));
        sb->end_at = std::chrono::system_clock::time_point(ms(num("endAtMs")));
        sb->auto_pause = flag("autoPause");
        sb->auto_pause_memory = flag("autoPauseMemory");
        sb->auto_resume = flag("autoResume");
        sb->seq = static_cast<std::uint64_t>(num("seq"));
        bool const was_running = str("state") == "running";
        sb->state = was_running ? sandbox_state::running : sandbox_state::paused;
        sb->paused_with_memory = false;
        sandbox_remains left;
        left.was_running = was_running;
        left.paused_with_memory = flag("pausedWithMemory");
        left.freeze_method = str("freezeMethod");
        left.init_pid = static_cast<pid_t>(num("initPid"));
        left.uid_base = static_cast<uid_t>(num("uidBase"));
        left.cgroups = std::move(recorded);
        left.freezer_cgroup = freezer;
        engine->attach(*sb);
        auto const adopted = engine->adopt(*this, *sb, left);
        if (!adopted) {
            skip(adopted.error().message());
            continue;
        }
        if (!*adopted && freezer_available) {
            std::string dir = freezer_root + "/" + sb->id;
            if (::mkdir(dir.c_str(), 0755) == 0) sb->cgroup_dir = dir;
        }
        if (!*adopted) {
            if (auto limited = engine->limit(*sb); !limited) {
                skip(limited.error().message());
                continue;
            }
            if (was_running) {
                std::lock_guard lk(sb->mutex);
                if (auto booted = engine->boot(*this, *sb); !booted) {
                    skip(booted.error().message());
                    continue;
                }
            }
        }
        {
            std::lock_guard lk(mutex);
            next_seq = std::max(next_seq, sb->seq + 1);
            sandboxes[sb->id] = sb;
        }
        persist(*sb);
        engine->took_back(*this, *sb);
        if (was_running && !*adopted) run_start_command(sb);  // a cold boot runs it again
        log(log_level::info, "prism-e2b-local: took back sandbox " + sb->id +
                                 (*adopted      ? (was_running ? " (running, its processes alive)" : " (paused)")
                                  : was_running ? " (running, booted again)"
                                                : " (paused)"));
    }
}

std::string server_state::inherited_cgroup(std::string const& recorded) const
{
    fs::path const path(recorded);
    auto it = inherited_cgroup_roots.find(path.parent_path().string());
    return it == inherited_cgroup_roots.end() ? recorded : (fs::path(it->second) / path.filename()).string();
}

void server_state::reap_expired()
{
    std::vector<std::shared_ptr<sandbox>> all;
    {
        std::lock_guard lk(mutex);
        for (auto& [id, sb] : sandboxes) all.push_back(sb);
    }
    auto const now = std::chrono::system_clock::now();
    for (auto& sb : all) {
        bool expired = false;
        {
            std::lock_guard lk(sb->mutex);
            expired = !sb->gone && sb->state == sandbox_state::running && now >= sb->end_at;
        }
        if (!expired) continue;
        if (sb->auto_pause) {
            log(log_level::info, "prism-e2b-local: sandbox " + sb->id + " timed out; auto-pausing");
            (void)pause_sandbox(sb, sb->auto_pause_memory);
        } else {
            log(log_level::info, "prism-e2b-local: sandbox " + sb->id + " timed out; killing");
            kill_sandbox(sb);
        }
    }
}

void server_state::stop_all()
{
    stopping = true;
    std::vector<std::shared_ptr<sandbox>> all;
    {
        std::lock_guard lk(mutex);
        for (auto& [id, sb] : sandboxes) all.push_back(sb);
    }
    // Every sandbox is killed first and waited for after, together: a stop takes as long as
    // the slowest sandbox, not the sum of them (a supervisor's grace period is a few seconds).
    std::vector<pid_t> inits;
    std::vector<std::string> cgroups;
    for (auto& sb : all) {
        std::map<std::uint32_t, std::shared_ptr<process>> procs;
        {
            std::lock_guard lk(sb->mutex);
            sb->gone = true;
            procs.swap(sb->processes);
        }
        kill_everything(*sb, procs);
        {
            std::lock_guard lk(sb->mutex);
            if (pid_t const init = engine->halt(*sb); init > 0) inits.push_back(init);
        }
        procs.clear();
        {
            std::lock_guard lk(mutex);
            sandboxes.erase(sb->id);
        }
        secret_redactor::global().release(token_scope(sb->id));
        cgroups.insert(cgroups.end(), sb->limit_cgroups.begin(), sb->limit_cgroups.end());
        if (!sb->cgroup_dir.empty()) cgroups.push_back(sb->cgroup_dir);
    }
    for (int i = 0; i < 200 && (!cgroups.empty() || !inits.empty()); ++i) {
        // An init exits once its pid namespace is empty (the watchers reap our children).
        std::erase_if(inits, [](pid_t init) { return ::waitpid(init, nullptr, WNOHANG) != 0; });
        std::erase_if(cgroups, [](std::string const& d) { return ::rmdir(d.c_str()) == 0 || errno == ENOENT; });
        for (auto const& d : cgroups)
            for (pid_t p : cgroup_pids(d)) ::kill(p, SIGKILL);
        if (!cgroups.empty() || !inits.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& sb : all) {
        // A clean stop ends the sandboxes, however deep their trees; only a crash leaves them in the ledger.
        remove_sandbox_files(sb->dir);
        std::lock_guard lk(sb->ledger_mutex);  // a write behind (the image writer's) sees it gone
        if (!ledger.empty()) ledger_remove(ledger, sb->id);
    }
    // What killed sandboxes left for their removal in the background, which a stop can outrun.
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(state_dir / "sandboxes", ec)) {
        remove_sandbox_files(e.path());
    }
}

}  // namespace prism_e2b::local::detail
