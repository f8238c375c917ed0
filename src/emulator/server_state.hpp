// Shared state of the local server: the sandbox registry and the operations
// the control plane, envd routes, admin routes and the expiry reaper share.
#ifndef PRISM_E2B_EMULATOR_SERVER_STATE_HPP
#define PRISM_E2B_EMULATOR_SERVER_STATE_HPP

#include <prism_e2b/local_server.hpp>

#include "emulator/engines/isolation_engine.hpp"
#include "emulator/engines/namespaces/sandbox_init.hpp"
#include "emulator/envd_agent.hpp"
#include "emulator/envd_proxy.hpp"
#include "emulator/envd_watch.hpp"
#include "emulator/fault_switches.hpp"
#include "emulator/http_message.hpp"
#include "emulator/os_users.hpp"
#include "emulator/process_runner.hpp"
#include "emulator/random_ids.hpp"
#include "emulator/rest_replies.hpp"
#include "emulator/rfc3339.hpp"
#include "emulator/route_paths.hpp"
#include "emulator/sandbox_disk.hpp"
#include "emulator/snapshots.hpp"
#include "emulator/stream_deadlines.hpp"
#include "emulator/templates.hpp"
#include "emulator/volumes.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

enum class sandbox_state { running, paused };

struct sandbox;
/// lookup_user, where no name (no Authorization) means the sandbox template's default user.
std::optional<os_user> sandbox_user(sandbox const& sb, std::string_view name);

/// One sandbox. The identity fields are immutable after creation; everything
/// below `mutex` is guarded by it.
struct sandbox {
    std::string id;
    std::string template_id;
    std::string access_token;
    std::filesystem::path dir;   ///< state_dir/sandboxes/<id>
    std::filesystem::path root;  ///< dir/root: the sandbox's "/"
    int root_fd = -1;            ///< O_PATH descriptor of root, for RESOLVE_IN_ROOT lookups
    std::string cgroup_dir;      ///< freezer cgroup; empty when the freezer is not available
    std::string isolation;       ///< its engine's name (isolation_engine::name), for the info and the ledger
    bool internet = true;        ///< allow_internet_access; false: an empty network namespace (namespaces)
    // -- namespaces engine only --
    uid_range ids;                           ///< its host uid/gid range
    std::vector<std::string> limit_cgroups;  ///< memory, pids, cpu cgroups with its limits
    std::filesystem::path stage;             ///< dir/stage: where its init mounts the new root
    std::filesystem::path boot_id_file;      ///< dir/boot_id, new on every cold boot
    std::shared_ptr<agent_pool> agent;       ///< its envd agent's socket (dir/envd.sock) and connections
    std::map<std::string, std::string> metadata;
    std::map<std::string, std::string> env_vars;
    std::vector<volume_mount> volume_mounts;  ///< namespaces (as root), gvisor engines: mounted at every boot
    // -- from its template (templates.hpp) --
    cgroup_limits limits;               ///< its cgroup limits (namespaces engine)
    std::uint32_t disk_mb = 0;          ///< its disk quota (dir/disk.ext4 on root); 0: the state dir's filesystem
    std::string default_user = "user";  ///< who commands and file operations run as without Authorization
    std::string start_cmd;              ///< run on every cold boot; empty: none
    std::chrono::system_clock::time_point started_at;
    bool auto_pause = false;
    bool auto_pause_memory = true;
    bool auto_resume = false;
    std::uint64_t seq = 0;  ///< creation order

    mutable std::mutex ledger_mutex;  ///< one ledger write at a time (taken before `mutex`)
    mutable std::mutex mutex;
    sandbox_state state = sandbox_state::running;
    bool paused_with_memory = false;
    /// How the last memory pause held it: "cgroup-freezer" or "sigstop" (its memory in RAM), or
    /// "checkpoint" (gvisor: a memory image on disk).
    std::string freeze_method;
    /// gvisor: its memory image is being written to disk (it is thawed for that meanwhile);
    /// memory_written is notified when that ends. Resumes and snapshots wait for it.
    bool memory_writing = false;
    std::condition_variable memory_written;
    bool gone = false;  ///< killed; every call answers not found
    std::chrono::system_clock::time_point end_at;
    std::map<std::uint32_t, std::shared_ptr<process>> processes;
    std::uint32_t running = 0;
    std::uint32_t peak = 0;
    ns_init init;               ///< namespaces engine: pid 1 of the sandbox (pid -1 while filesystem-paused)
    watcher_registry watchers;  ///< CreateWatcher's polling watchers (their own lock)
    // metrics.cpp: the CPU time of the last sample, for the next one's cpuUsedPct.
    std::uint64_t sampled_cpu_ticks = 0;
    std::chrono::steady_clock::time_point sampled_at{};

    /// The host id of an id inside the sandbox (the same id without a user namespace).
    uid_t host_id(uid_t inside) const noexcept { return ids.base() + inside; }
    ~sandbox();
};

/// Thread safety: the operations below may run on any thread of a multi-threaded
/// io_context. The registry (`sandboxes`) sits behind `mutex`, each sandbox's
/// state behind its own mutex, each process's watchers behind the process's.
/// Lock order: sandbox -> process; the registry lock is never held together with
/// another one. Fork/exec happens under the sandbox lock so a pause or kill never
/// races a starting process.
struct server_state : std::enable_shared_from_this<server_state> {
    boost::asio::any_io_executor ex;
    server_options opts;
    detail::fault_switches faults;
    std::filesystem::path state_dir;
    bool owns_state_dir = false;
    unique_fd state_lock;          ///< flock on state_dir/server.lock, held while the server runs
    std::filesystem::path ledger;  ///< state_dir/ledger (see ledger.hpp)
    /// What keeps its sandboxes apart (engines/isolation_engine.hpp); set once at start.
    std::unique_ptr<isolation_engine> engine;
    cgroup_limits ns_defaults;  ///< the limits every sandbox gets (the template's)
    /// Cgroup roots of a server that died on this state dir, holding the sandboxes taken back
    /// from it: where the ledger says -> where they are now (take_over_cgroup_root). stop() removes them.
    std::map<std::string, std::string> inherited_cgroup_roots;
    /// A recorded cgroup path as it is now (its root may have been taken over).
    std::string inherited_cgroup(std::string const& recorded) const;
    bool freezer_available = false;
    std::string freezer_root;  ///< /sys/fs/cgroup/freezer/prism-e2b-<pid>
    /// passwd/group (the host's plus "user") bound over /etc in each mount namespace; empty: none.
    std::string passwd_file, group_file;

    /// Per-sandbox disk quotas (sandbox_disk.hpp): the formatted images, null when this machine
    /// cannot loop-mount (disk_quota_problem says why; the info's diskSizeMB is then only reported).
    std::unique_ptr<disk_image_cache> disk_images;
    std::string disk_quota_problem;

    std::filesystem::path templates_dir;  ///< state_dir/templates (templates.hpp)
    snapshot_store snapshots;             ///< state_dir/snapshots (snapshots.hpp)
    volume_store volumes;                 ///< state_dir/volumes (volumes.hpp)

    mutable std::mutex mutex;  ///< guards `sandboxes` and `next_seq`
    std::map<std::string, std::shared_ptr<sandbox>> sandboxes;
    std::uint64_t next_seq = 0;
    std::atomic<bool> stopping{false};

    std::shared_ptr<sandbox> find(std::string const& id) const;

    // -- operations (thread-safe) ---------------------------------------------
    /// The template (or snapshot: those come first) a create's templateID names.
    /// Errors: not_found, invalid_argument (a malformed template file).
    result<template_spec> resolve_template(std::string const& id) const;
    result<std::shared_ptr<sandbox>> create_sandbox(template_spec const& tpl,
                                                    std::map<std::string, std::string> metadata,
                                                    std::map<std::string, std::string> env_vars,
                                                    std::chrono::seconds timeout, bool auto_pause,
                                                    bool auto_pause_memory, bool auto_resume,
                                                    bool allow_internet = true,
                                                    std::vector<volume_mount> volume_mounts = {});
    /// Kills every process, cuts their streams, removes the sandbox and its files.
    void kill_sandbox(std::shared_ptr<sandbox> const& sb);
    /// Errors: conflict when not running.
    result<void> pause_sandbox(std::shared_ptr<sandbox> const& sb, bool memory);
    /// Resumes a paused sandbox (thaw, or reboot after a filesystem pause); sets end_at.
    /// Errors: server_error when a cold boot (namespaces engine) fails.
    result<void> resume_sandbox(std::shared_ptr<sandbox> const& sb, std::chrono::seconds timeout);
    /// Spawns a process inside the sandbox (paths, isolation, cgroup, env).
    result<std::shared_ptr<process>> spawn(std::shared_ptr<sandbox> const& sb, process_config cfg, bool open_stdin,
                                           os_user const& user,
                                           std::optional<std::pair<unsigned short, unsigned short>> pty = std::nullopt);
    /// Kills sandbox `id` after `after` (fault_injector::kill_sandbox_during_exec).
    void schedule_kill(std::string id, std::chrono::milliseconds after);
    /// Expires sandboxes whose end_at passed (kill, or pause when autoPause).
    void reap_expired();
    void stop_all();

    /// Maps a sandbox path ("/workspace/x", "x" relative to /home/user) to the
    /// host path under root (used for cwd when there is no mount namespace).
    std::string host_path_for_cwd(sandbox const& sb, std::string const& sandbox_path) const;

    /// resume_sandbox's work under sb.mutex; `cold`: it booted again (a filesystem pause).
    result<void> resume_locked(sandbox& sb, std::chrono::seconds timeout, bool& cold);
    /// Records sb in the ledger (after any change a restart needs). Takes sb.ledger_mutex, sb.mutex.
    void persist(sandbox const& sb) const;
    /// At start: takes back every sandbox of the ledger. namespaces engine: a sandbox whose
    /// init (and envd agent) outlived the server is adopted as it is, running with its
    /// processes or paused with its frozen memory; otherwise a running one boots again and a
    /// paused one stays paused (filesystem), as with the other engines, whose processes die
    /// with the server.
    void restore_from_ledger();
    /// What the sandbox's envd agent is told when it boots.
    agent_config agent_config_for(sandbox const& sb) const;
    /// Its writable system (system_layer.hpp) made ready for a boot: the layer and the copy of /etc.
    result<std::pair<std::filesystem::path, std::filesystem::path>> system_layer_for(sandbox const& sb,
                                                                                     std::string const& hostname) const;
    /// Starts the template's start command (bash -lc, as the default user) after a cold boot; logs a failure.
    void run_start_command(std::shared_ptr<sandbox> const& sb);
    /// Takes a snapshot of the sandbox into the snapshot directory `to` (snapshots.hpp): its files
    /// into to/root (owners as ids inside the sandbox) with its processes held still (E2B pauses a
    /// sandbox while it snapshots). gvisor engine, running or paused with memory: its memory too
    /// (to/memory, to/boot_id): a running one is checkpointed, copied and restored (envd's
    /// connections are cut, its processes go on). True when the memory is in it. Errors: not_found
    /// (killed), server_error (the copy failed; the sandbox runs on, or is paused with its memory on
    /// disk when it could not be restored after the checkpoint).
    result<bool> capture_snapshot(std::shared_ptr<sandbox> const& sb, std::filesystem::path const& to);
    /// Unmounts the disk of the sandbox whose directory is `dir` (if it has one) and removes
    /// that directory, however deep.
    void remove_sandbox_files(std::filesystem::path const& dir) const;
    /// Ends the sandbox's machine (isolation_engine::halt); an init is reaped in the background.
    /// Call with sb.mutex held.
    void halt_sandbox(sandbox& sb);

    void log(log_level level, std::string const& line) const { log_redacted(opts.logger, level, line); }
};

// -- route handlers (one file each) -------------------------------------------
/// Routes one request (local_server.cpp): admin, control plane, or a sandbox's envd.
boost::asio::awaitable<void> dispatch(std::shared_ptr<server_state> st, http_request req, response_sink& sink);
/// The control plane and the admin routes; reached only through dispatch(), whose
/// refusal() has already checked X-API-KEY / X-Admin-Token.
boost::asio::awaitable<void> handle_control(std::shared_ptr<server_state> st, http_request req, response_sink& sink);
/// POST /sandboxes/{id}/snapshots, GET /snapshots, DELETE /templates/{id} (snapshot_routes.cpp);
/// false when `req` is none of them.
boost::asio::awaitable<bool> handle_snapshot_routes(std::shared_ptr<server_state> st, http_request const& req,
                                                    response_sink& sink);
/// A snapshot of `sb` added to the store (snapshot_routes.cpp): what POST /sandboxes/{id}/snapshots
/// and fork take. Errors: not_found (the sandbox went), server_error.
result<snapshot_record> take_snapshot(server_state& st, std::shared_ptr<sandbox> const& sb, std::string name);
/// GET/POST /volumes, GET/DELETE /volumes/{id} (volume_routes.cpp); false when `req` is none of them.
boost::asio::awaitable<bool> handle_volume_routes(std::shared_ptr<server_state> st, http_request const& req,
                                                  response_sink& sink);
/// /volumecontent/{id}/{dir,path,file}: the volume-content API (volume_routes.cpp), reached only
/// through dispatch(), after volume_content_refusal().
boost::asio::awaitable<void> handle_volume_content(std::shared_ptr<server_state> st, http_request req,
                                                   response_sink& sink);
/// A /volumecontent request without its volume's Bearer token: 401. nullopt: go ahead.
std::optional<http_response> volume_content_refusal(server_state const& st, http_request const& req);
/// GET /sandboxes/{id}/metrics and GET /sandboxes/metrics (metrics.cpp); false when `req` is neither.
boost::asio::awaitable<bool> handle_metrics_routes(std::shared_ptr<server_state> st, http_request const& req,
                                                   response_sink& sink);
/// GET /v2/sandboxes/{id}/logs and /sandboxes/{id}/logs (log_routes.cpp); false when `req` is neither.
boost::asio::awaitable<bool> handle_log_routes(std::shared_ptr<server_state> st, http_request const& req,
                                               response_sink& sink);
boost::asio::awaitable<void> handle_admin(std::shared_ptr<server_state> st, http_request req, response_sink& sink);
/// envd routes for a sandbox that exists, is running and was authenticated.
boost::asio::awaitable<void> handle_process_rpc(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                                http_request req, response_sink& sink);
boost::asio::awaitable<void> handle_files(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                          http_request req, response_sink& sink);
/// envd's routes (/health, /files, process.Process, filesystem.Filesystem) for a sandbox:
/// the server's for the in-server engines, the agent's inside a namespaces sandbox.
boost::asio::awaitable<void> handle_envd(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                         http_request req, response_sink& sink);
/// EntryInfo (filesystem.proto, metadata included) of `path` in sb (envd_files.cpp); nullopt when
/// it cannot be stat-ed (gone already).
std::optional<boost::json::object> entry_info(sandbox const& sb, std::string const& path);
/// {"peak":..,"running":..}: the most execs that ran at once in sb, and how many run now.
http_response exec_counts(sandbox const& sb);
/// filesystem.Filesystem/WatchDir (server streaming).
boost::asio::awaitable<void> handle_watch_dir(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                              http_request req, response_sink& sink);
boost::asio::awaitable<void> handle_filesystem_rpc(std::shared_ptr<server_state> st, std::shared_ptr<sandbox> sb,
                                                   http_request req, response_sink& sink);

}  // namespace prism_e2b::local::detail

#endif
