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
// The listener (limits in server_options): credentials (X-API-KEY, X-Admin-Token,
// the sandbox id and X-Access-Token) are judged from the request head, and a refused
// request is answered before a byte of its body is read; bodies count against a
// server-wide byte budget (503 past it); connections are capped (503 past it);
// when descriptors run out (EMFILE/ENFILE) the connections that waited longest for a
// request are closed first (HTTP/1.1 between requests, or new and silent) and accept
// backs off until descriptors free up; a slow head (header_timeout), a new connection
// that sends nothing (the shorter of the two timeouts) or an idle one (idle_timeout) is closed.
//
// What a sandbox is here (differences from E2B's VMs), per isolation engine
// (server_options::engine; the info's extra fields "isolation" and "envd", "in-sandbox" or
// "in-server", say which one a sandbox has and where its envd runs, and "isolationEnforced"
// what holds for it: rootless, distinctUsers, memoryLimit, cpuLimit, pidsLimit, diskQuota):
// - "namespaces" (the default; start() fails, naming why and the weaker engines, when it
//   cannot run: a weaker engine is used only when named): each sandbox has an init
//   process, pid 1 of its own pid namespace (`ps` shows only the sandbox's processes), in
//   its own user namespace mapping its ids 0..65535 to a host range of its own
//   (100000 + 65536*k, reserved machine-wide with an flock), mount namespace, uts
//   (hostname "e2b-<id prefix>") and ipc namespaces, and, when created with
//   `allow_internet_access: false`, an empty network namespace (loopback only). Its root
//   is a tmpfs assembled with pivot_root: the host's /usr, /bin, /sbin, /lib*, /opt and
//   /etc read-only (passwd/group that know "user"; shadow files masked), the sandbox's own
//   writable /home/user, /workspace, /tmp and /root, a private /dev (null, zero, full,
//   random, urandom, tty, its own devpts), its own /proc with its own boot id at
//   /proc/sys/kernel/random/boot_id, new on every cold boot (create, filesystem resume).
//   Host root is not mapped, so root in a sandbox cannot read root-only host files nor write
//   host directories. The init and every command sit in the sandbox's cgroup-v1 memory,
//   pids and cpu cgroups (server_options::sandbox_*; the info's cpuCount and memoryMB are
//   read back from them; diskSizeMB is its disk quota, see sandbox_disk_mb).
//   envd runs inside: the init is prism-e2b-envd (argv "prism-e2b-envd init"), which reaps
//   orphans and runs the envd agent as its first child; the agent serves envd's protocol
//   over a Unix socket in the sandbox's directory (outside its root) and starts every
//   command, so the pids the API reports are the sandbox's own. The server checks the
//   access token and proxies envd requests to it. Not isolated: with internet access the
//   sandbox shares the host's network (loopback included). Any state dir works, a private one
//   (0700 parents, umask 077) too: the init looks up its host paths with the server's ids
//   before it takes the sandbox's, so the state dir is never opened to other host users.
//   Rootless (a server that is not root): the same namespaces, with one mapped id, the
//   server's own, as the sandbox's uid/gid 1000: commands run as "user" whoever asks (no
//   distinct root, no capabilities once the agent runs), no cgroups (memory, cpu not
//   enforced; the pids limit is RLIMIT_NPROC, counted per user namespace), no disk quota,
//   no uid range, no freezer (pause stops the processes with SIGSTOP), slirp4netns only
//   when the server may open /dev/net/tun (else internet sandboxes share the host's network),
//   and capabilities() attests no privilege isolation (the sandbox's processes are the
//   server's host user). A server restarted after a crash boots its rootless sandboxes again.
// - "gvisor" (only when named: `--engine gvisor`; needs root and runsc): each sandbox is a
//   runsc (gVisor) container on the ptrace platform. gVisor's kernel answers every syscall
//   (`uname -r` and `dmesg` are gVisor's); its own pids (`ps` shows only the sandbox, pid 1 is
//   prism-e2b-envd), mounts and /proc; a read-only root of the host's /usr, /etc (passwd/group
//   that know "user", shadow files masked), /opt and the sandbox's own writable /home/user,
//   /workspace, /tmp, /root; its own boot id, new on every cold boot; no network at all
//   (runsc --network=none: only loopback inside, whatever allow_internet_access says; the info
//   reports allowInternetAccess false), since runsc cannot checkpoint a sandbox on the host's
//   network. The Sentry runs in the sandbox's memory, pids and cpu cgroups (the template's
//   limits). envd runs inside as the container's init and binds its socket in a directory the
//   server shares with the container (runsc --host-uds=create). Pause with memory is
//   `runsc checkpoint` into the sandbox's directory: a memory image on disk (the info's
//   "pauseKind" is "checkpoint", "memorySnapshotBytes" its size), nothing left in RAM, kept
//   across a server restart; resume is `runsc restore` and the processes continue. envd's
//   connections and streams are cut by the pause (re-attach with process.Connect). A sandbox
//   whose process listens on a Unix socket in its own directories cannot be checkpointed (409;
//   pause without memory works). A failed checkpoint leaves the sandbox paused without its
//   memory (500). Limits of this runsc build (Debian, 2022-12): `ls PATH` fails with EINVAL
//   (statx with AT_NO_AUTOMOUNT is refused; `ls` without an argument and globs work), no
//   pidfd_open or openat2 inside (the agent falls back), syscall-heavy work is several times
//   slower than on the host.
// - "mount-namespace": each command gets its own mount namespace where the sandbox's
//   directories are bound over /workspace, /home/user and /tmp (and passwd/group that know
//   "user"). Everything else (/, /etc, /usr, network, pids, host root) is the host's: a
//   development server, not a security boundary.
// - "none" (only when named: `--engine none`, isolate = false): commands run as the server's user on the host;
//   cwd, HOME and TMPDIR point at the sandbox's real directories.
// server::capabilities() says what each engine attests (only what a test demonstrates).
// - Crashes: state_dir/ledger keeps a record of every sandbox (atomic files, see
//   src/emulator/ledger.hpp); a server started on the state dir of one that died takes the
//   sandboxes back. namespaces engine: sandboxes do not die with the server, so running
//   ones are still running with their processes (re-attach with process.Connect) and
//   memory-paused ones still frozen (resume continues them). gvisor: running containers keep
//   running, memory-paused ones keep their image on disk (resume restores it). Other engines (envd in the
//   server): running ones boot again with their files (their processes are gone), a
//   memory pause becomes a filesystem one. Paused ones stay paused, deadlines keep
//   counting. stop() kills and removes every sandbox and its record. One server per state
//   dir (flock on state_dir/server.lock).
// - Commands run as "user" (uid 1000) unless `Authorization: Basic base64("root:")`
//   asks for root; other user names are refused. Relative paths start at /home/user.
// - /files and filesystem.* see only the sandbox's own tree (state_dir/sandboxes/<id>/root
//   is its "/"): a path that climbs above "/" is refused (400 / invalid_argument) and
//   symlinks are resolved inside that root (openat2 RESOLVE_IN_ROOT), never on the host.
//   /files reads and writes regular files only: a FIFO, socket or device is refused
//   (400) without being opened for I/O, so nothing waits on it. EntryInfo's symlinkTarget is
//   the absolute target resolved inside that root, as E2B's envd reports it. A Remove of a
//   path that is not there succeeds (envd's RemoveAll). /files takes `Content-Encoding: gzip`
//   uploads (inflated within max_file_bytes) and gzips downloads of up to 8 MiB when
//   Accept-Encoding takes it. Remove (and kill)
//   delete trees of any depth with a constant number of descriptors.
// - Pause with memory freezes the sandbox's cgroup-v1 freezer cgroup (else SIGSTOPs
//   its process groups); the info's extra field "pauseKind" says which. Pause without
//   memory kills the processes and keeps the files. Streams of killed processes are cut
//   without an end event, as when a VM goes away.
// - Templates (src/emulator/templates.hpp): `base` always exists; any other templateID is a
//   file state_dir/templates/<id>.json (rootfs directory or tarball seeding the sandbox's
//   /home/user, /workspace, /tmp and /root; cpuCount, memoryMB: cgroup limits with the
//   namespaces engine; diskSizeMB: the sandbox's disk quota (sandbox_disk_mb); default
//   user, envVars, startCmd run on every cold boot). An unknown id answers 404, as E2B does.
//   With the other engines cpuCount/memoryMB in the info stay the host's (nothing enforces them).
// - Snapshots (POST /sandboxes/{id}/snapshots, GET /snapshots, DELETE /templates/{id}):
//   a copy of the sandbox's files (never what a symlink points at; FIFOs, sockets, devices and
//   set-id bits dropped), taken with its processes frozen for the copy; kept in
//   state_dir/snapshots across restarts; a create naming it starts from those files and the
//   source's settings. On the gvisor engine it holds the memory too (runsc's checkpoint
//   image): a sandbox created from it is restored, its processes going on from the snapshot
//   (their environment and the hostname are the source's); new commands get the new
//   sandbox's id and env vars. Other engines: files only, a sandbox from it boots cold.
// - Metrics: one sample per request (E2B keeps a series), from the sandbox's memory cgroup
//   (namespaces; else its processes' resident sets), its processes' CPU time since the previous
//   sample, and its directory tree on disk. List answers X-Total-Running.
// - Signed /files URLs (signature, signature_expiration) are verified as the SDK signs them.
// - Control plane v1 and v2 (the SDK since 2.51 creates with POST /v2/sandboxes and connects
//   with POST /v2/sandboxes/{id}/connect, body optional): E2B's defaults are the server's,
//   timeout 15 s on v1 create and 300 s on v2 create and v2 connect (v1 connect requires one),
//   pause memory true. What create asks for and this server cannot honour is refused with a
//   400, never ignored: network egress rules (allowOut, denyOut, egressProxy, rules,
//   httpsPorts; allow_internet_access is the only switch), iam tokens, mcp; volumeMounts on an
//   engine that cannot mount (mount-namespace, none, a rootless server: volumes need an idmapped
//   mount onto the sandbox's ids, or gVisor's bind).
// - Not implemented: network settings after create (PUT /sandboxes/{id}/network answers 501
//   "unimplemented"), other ports than envd's through `<port>-<id>.<domain>` (getHost),
//   process.StreamInput.
// - PTYs (Start with `pty`, input and Update/resize), WatchDir (inotify, recursive on request,
//   the entry's info with includeEntry) and the polling watchers (CreateWatcher,
//   GetWatcherEvents, RemoveWatcher) work. File metadata (envd 0.6.2): an upload's
//   X-Metadata-<key> headers are kept as xattrs user.e2b.<key> (keys lower-cased, as header
//   names) and reported in every EntryInfo. A directory on a network file system (NFS, SMB,
//   CIFS, FUSE) is watched only with allowNetworkMounts (envd 0.6.4).
#ifndef PRISM_E2B_LOCAL_SERVER_HPP
#define PRISM_E2B_LOCAL_SERVER_HPP

#include <prism_e2b/capabilities.hpp>
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
    /// Empty: a fresh temp dir, removed by stop() (if the server is killed instead, by the next
    /// server started without one).
    std::string state_dir;
    std::string api_key;      ///< required: X-API-KEY must equal it
    std::string admin_token;  ///< empty: fault-injection admin routes disabled
    /// The isolation engine: "namespaces" (own user, pid, mount, uts, ipc and, without
    /// internet, network namespaces, cgroup limits; needs root), "gvisor" (a runsc container
    /// per sandbox, memory snapshots on disk; needs root and runsc; never chosen unless named), "mount-namespace" (the
    /// sandbox's directories bound over the host's in a mount namespace of each command),
    /// "none", or empty: "namespaces". start() fails when the engine (named or the default)
    /// is not available; a weaker one is never chosen on its own.
    std::string engine;
    bool isolate = true;  ///< false: engine "none" whatever `engine` says
    // The limits of every sandbox with the namespaces and gvisor engines, written to its cgroups;
    // the info's cpuCount and memoryMB are read back from them.
    unsigned sandbox_cpu_count = 2;          ///< CPUs (cpu.cfs_quota_us = count * period)
    std::uint32_t sandbox_memory_mb = 1024;  ///< memory.limit_in_bytes, in MiB
    std::uint32_t sandbox_max_pids = 1024;   ///< pids.max: processes and threads at once
    /// Disk quota of a sandbox whose template names no diskSizeMB: its /home/user, /workspace,
    /// /tmp and /root live on an ext4 image of this size (sparse, loop-mounted; needs root,
    /// /dev/loop-control and mkfs.ext4, any engine). 0: no quota, diskSizeMB is the state dir's.
    std::uint32_t sandbox_disk_mb = 1024;
    /// Freeze paused sandboxes with the cgroup-v1 freezer when available; false: SIGSTOP/SIGCONT.
    bool cgroup_freezer = true;
    log_sink logger;  ///< receives redacted log lines; empty: no logging
    /// Reported as envdVersion: 0.6.4 makes the official SDK (2.49.1, 2.51.0) use CloseStdin,
    /// octet-stream uploads, file metadata (0.6.2), watch entry info (0.6.3) and network-mount
    /// watching (0.6.4), the last version the SDK gates a feature on; no higher, as this
    /// server has not implemented what later envds added.
    std::string envd_version = "0.6.4";
    /// Upper bound for a /files upload body; JSON bodies are capped at 1 MiB.
    std::size_t max_file_bytes = 64u << 20;

    // -- the listener against slow or hostile clients --------------------------
    /// Open connections at once; one more is answered 503 (Retry-After: 1) and closed.
    std::size_t max_connections = 512;
    /// Request-body bytes held at once by all connections together. A request whose
    /// Content-Length does not fit (or a chunked body that outgrows it) is answered 503
    /// before its body is read (a chunked body may pass it by one read, 64 KiB). One
    /// connection holds at most its route's body limit (max_file_bytes for POST /files,
    /// else 1 MiB) plus about 128 KiB of head and read-ahead. Responses are not counted
    /// (a download of up to 8 MiB is read whole, larger ones are streamed).
    std::size_t max_buffered_bytes = 256u << 20;
    /// From the first byte of a request to the end of its head (slowloris); then the connection is
    /// closed. A new connection's first byte must come within this too (or idle_timeout if shorter).
    std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
    /// A keep-alive connection waiting for its next request, or a request body with no
    /// byte arriving, is closed after this long.
    std::chrono::milliseconds idle_timeout = std::chrono::seconds(60);

    // -- TLS and HTTP/2 (h2 is always served: h2c with prior knowledge on plain TCP) --
    /// Both set: the listener speaks TLS only, with this PEM certificate chain and
    /// key, and ALPN h2 / http/1.1 (HTTP/2 when the client offers it); api_url() is https.
    std::string tls_cert_file;
    std::string tls_key_file;  ///< the PEM private key of tls_cert_file (both set: TLS)
};

/// The listener's own accounting (server::listener_stats()).
struct listener_stats {
    std::size_t open_connections = 0;       ///< connections open now (max_connections bounds it)
    std::size_t buffered_bytes = 0;         ///< request-body bytes reserved now (max_buffered_bytes bounds it)
    std::size_t peak_buffered_bytes = 0;    ///< highest buffered_bytes since start
    std::uint64_t refused_connections = 0;  ///< answered 503 at max_connections
    std::uint64_t accept_backoffs = 0;   ///< accept failures (EMFILE, ENFILE...) waited out instead of retried at once
    std::uint64_t shed_connections = 0;  ///< idle connections closed to free a descriptor for a new one
};

namespace detail {
class fault_switches;  // the server's side, private to it
}  // namespace detail

/// The fault switches of one server (server::faults()), for tests; the admin
/// HTTP routes arm the same switches. Each switch acts on the next matching
/// requests and then disarms itself.
/// Thread safety: every member may be called from any thread.
/// Lifetimes: a reference into its server; valid while the server lives.
class fault_injector {
public:
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

private:
    friend class server;
    explicit fault_injector(detail::fault_switches& switches) noexcept;
    detail::fault_switches* switches_;
};

/// The server. Thread safety: start()/stop() from one thread; port(), api_url(),
/// faults(), peak_concurrent_execs() and listener_stats() from any thread. Internally every
/// sandbox's state sits behind its own mutex and the registry behind another;
/// it may run on a multi-threaded io_context.
class server {
public:
    server(boost::asio::any_io_executor ex, server_options opts);  ///< a server on `ex`; start() binds
    ~server();                                                     ///< stop()
    server(server const&) = delete;
    server& operator=(server const&) = delete;

    /// Binds synchronously and starts accepting; port() is valid afterwards.
    /// Errors: invalid_argument (no API key, bad address, an engine not available),
    /// conflict (another server holds the state dir's lock), or the bind/listen error.
    result<void> start();
    /// Kills every sandbox's processes, closes the listener and open connections.
    void stop();
    std::uint16_t port() const noexcept;  ///< the bound port (after start())
    std::string api_url() const;          ///< "http://127.0.0.1:<port>"
    std::string sandbox_url() const;      ///< same origin
    fault_injector& faults() noexcept;    ///< the fault switches of this server
    /// Peak number of concurrently running processes in the sandbox (0 when unknown).
    std::uint32_t peak_concurrent_execs(std::string const& sandbox_id) const;
    /// The engine new sandboxes get: "namespaces", "gvisor", "mount-namespace" or "none".
    std::string isolation() const;
    /// A snapshot of the listener's accounting (zeros before start()).
    local::listener_stats listener_stats() const;
    /// What a sandbox of this server attests, for e2b_sandbox's options.capabilities:
    /// namespaces: filesystem, process and privilege isolated, network isolated only
    /// without internet access; gvisor: all four (no network at all); the other engines:
    /// only workspace coherence.
    sandbox_capabilities capabilities(bool allow_internet_access = true) const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace prism_e2b::local

#endif
