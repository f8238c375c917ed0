// prism-e2b-local: an E2B-compatible server that runs real processes on this
// machine. One port serves the control plane (REST, X-API-KEY) and envd
// (Connect-RPC + plain HTTP, X-Access-Token), routed by the E2b-Sandbox-Id
// header or a Host of the form `49983-<id>.<domain>`.
//
// Fault-injection admin routes (enabled only when server_options::admin_token
// is set; every call needs header `X-Admin-Token: <admin_token>`, else 401;
// bodies are JSON, answers 204 unless noted):
//   POST /admin/faults/pause-busy        {"count":N}   next N pause calls answer 503, sandbox stays running
//   POST /admin/faults/create-throttle   {"count":N,"retryAfter":S}  next N creates answer 429 + Retry-After: S
//   POST /admin/faults/latency           {"route":"<prefix>","ms":M}  adds M ms before answering any request
//                                        whose path starts with <prefix> ("" or ms 0 with a route clears it)
//   POST /admin/faults/cut-stream        {"afterBytes":N,"count":C}  the next C process streams (Start or
//                                        Connect) are closed abruptly after N bytes of output, with no end event
//   POST /admin/faults/kill-during-exec  {"sandboxID":"<id>","afterMs":M}  kills that sandbox M ms after
//                                        its next process starts (or at once when one runs and M is 0)
//   POST /admin/faults/reset             clears every switch
//   GET  /admin/sandboxes/{id}/peak-execs  200 {"peak":N,"running":R}: peak concurrently running processes
//
// What a sandbox is here (differences from E2B's VMs):
// - Commands are real processes of this machine, each in its own process group and,
//   when the kernel allows (root, unshare(CLONE_NEWNS)), in its own mount namespace
//   where the sandbox's directories are bound over /workspace, /home/user and /tmp
//   (and passwd/group that know "user"). Everything else (/, /etc, /usr, network,
//   pids) is the host's: this is a development server, not a security boundary.
//   The info's extra field "isolation" says "mount-namespace" or "none"; with "none"
//   the cwd, HOME and TMPDIR point at the sandbox's real directories instead.
// - Commands run as "user" (uid 1000) unless `Authorization: Basic base64("root:")`
//   asks for root; other user names are refused. Relative paths start at /home/user.
// - /files and filesystem.* see only the sandbox's own tree (state_dir/sandboxes/<id>/root
//   is its "/"): a path that climbs above "/" is refused (400 / invalid_argument) and
//   symlinks are resolved inside that root (openat2 RESOLVE_IN_ROOT), never on the host.
// - Pause with memory freezes the sandbox's cgroup-v1 freezer cgroup (else SIGSTOPs
//   its process groups); the info's extra field "pauseKind" says which. Pause without
//   memory kills the processes and keeps the files. Streams of killed processes are cut
//   without an end event, as when a VM goes away.
// - PTYs (Start with `pty`, input and Update/resize) and WatchDir (inotify, recursive on
//   request) work. Not implemented: the polling watchers (CreateWatcher...),
//   process.StreamInput, gzip content encodings, snapshots, templates, metrics, network settings.
#ifndef PRISM_E2B_LOCAL_SERVER_HPP
#define PRISM_E2B_LOCAL_SERVER_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/log.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace prism_e2b::local {

/// Options of server.
struct server_options {
    std::string listen_address = "127.0.0.1";  ///< address to listen on (loopback by default)
    std::uint16_t port = 0;                    ///< 0: ephemeral
    std::string state_dir;                     ///< empty: a fresh temp dir, removed by stop()
    std::string api_key;                       ///< required: X-API-KEY must equal it
    std::string admin_token;                   ///< empty: fault-injection admin routes disabled
    bool isolate = true;                       ///< per-sandbox mount namespace when the kernel allows
    /// Freeze paused sandboxes with the cgroup-v1 freezer when available; false: SIGSTOP/SIGCONT.
    bool cgroup_freezer = true;
    log_sink logger;  ///< receives redacted log lines; empty: no logging
    /// Reported as envdVersion: 0.5.7 makes the official SDK 2.49.1 use CloseStdin
    /// and octet-stream uploads, and nothing this server does not implement.
    std::string envd_version = "0.5.7";
    /// Upper bound for a /files upload body; JSON bodies are capped at 1 MiB.
    std::size_t max_file_bytes = 64u << 20;
};

/// Thread-safe in-process fault switches; the admin HTTP routes call the same
/// functions. Thread safety: every member may be called from any thread (one mutex).
class fault_injector {
public:
    fault_injector();
    ~fault_injector();
    fault_injector(fault_injector const&) = delete;
    fault_injector& operator=(fault_injector const&) = delete;

    /// The next `count` pause calls answer 503 and leave the sandbox running.
    void fail_next_pauses(unsigned count);
    /// The next `count` creates answer 429 with `Retry-After: retry_after`.
    void throttle_next_creates(unsigned count, std::chrono::seconds retry_after = std::chrono::seconds(1));
    /// Adds `delay` before answering requests whose path starts with `route_prefix`
    /// (zero removes the entry for that prefix).
    void add_latency(std::string route_prefix, std::chrono::milliseconds delay);
    /// The next `count` process streams are closed after `after_bytes` output bytes, without an end event.
    void cut_next_streams(std::size_t after_bytes, unsigned count = 1);
    /// Kills `sandbox_id` `after` its next process start (at once if one runs and after is 0).
    void kill_sandbox_during_exec(std::string sandbox_id,
                                  std::chrono::milliseconds after = std::chrono::milliseconds(0));
    /// Clears every switch.
    void reset();

    // -- used by the server --------------------------------------------------
    bool take_pause_failure();  ///< true when this pause must fail (consumes one)
    /// Returns the Retry-After seconds when this create must be throttled.
    std::optional<std::chrono::seconds> take_create_throttle();
    std::chrono::milliseconds latency_for(
        std::string_view path) const;  ///< the delay for a request to `path` (zero: none)
    /// Returns the byte budget when this stream must be cut.
    std::optional<std::size_t> take_stream_cut();
    /// Returns the delay when a kill is armed for this sandbox (disarms it).
    std::optional<std::chrono::milliseconds> take_kill_during_exec(std::string const& sandbox_id);
    bool kill_armed(std::string const& sandbox_id) const;  ///< true while a kill is armed for `sandbox_id`

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// The server. Thread safety: start()/stop() from one thread; port(), api_url(),
/// faults() and peak_concurrent_execs() from any thread. Internally every
/// sandbox's state sits behind its own mutex and the registry behind another;
/// it may run on a multi-threaded io_context.
class server {
public:
    server(boost::asio::any_io_executor ex, server_options opts);  ///< a server on `ex`; start() binds
    ~server();                                                     ///< stop()
    server(server const&) = delete;
    server& operator=(server const&) = delete;

    /// Binds synchronously and starts accepting; port() is valid afterwards.
    /// Errors: invalid_argument (no API key, bad address), or the bind/listen error.
    result<void> start();
    /// Kills every sandbox's processes, closes the listener and open connections.
    void stop();
    std::uint16_t port() const noexcept;  ///< the bound port (after start())
    std::string api_url() const;          ///< "http://127.0.0.1:<port>"
    std::string sandbox_url() const;      ///< same origin
    fault_injector& faults() noexcept;    ///< the fault switches of this server
    /// Peak number of concurrently running processes in the sandbox (0 when unknown).
    std::uint32_t peak_concurrent_execs(std::string const& sandbox_id) const;
    /// "mount-namespace" or "none": what new sandboxes get on this machine.
    std::string isolation() const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace prism_e2b::local

#endif
