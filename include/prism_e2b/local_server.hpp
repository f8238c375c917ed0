// prism-e2b-local: an E2B-compatible server that runs real processes on this
// machine, embeddable in a program (this header) or run as `prism-e2b-local`.
// What a sandbox is here per isolation engine, the differences from E2B, the
// admin routes of fault injection and the listener's limits:
// docs/local-server.md.
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

/// gvisor engine: where the memory of a sandbox paused with its memory is kept
/// (docs/local-server.md, "Tiered memory pause"). A pause answers once the sandbox
/// is frozen, its memory still in RAM; its memory image is written to disk behind
/// the answer (runsc checkpoint), after which the RAM is released. A resume thaws a
/// sandbox whose memory is in RAM and restores one whose image is on disk.
struct memory_tier_policy {
    /// How long a sandbox stays frozen in RAM before its image is written (0: at once,
    /// behind the pause's answer). nullopt: only when frozen sandboxes together hold more
    /// than frozen_memory_cap_mb (a host reboot then loses what is in RAM).
    std::optional<std::chrono::seconds> image_after = std::chrono::seconds(10);
    /// The pause answers only once the image is on disk (no RAM tier; seconds per GiB).
    bool sync = false;
    /// RAM the frozen sandboxes may hold together (their memory cgroups' usage); past it
    /// the longest-frozen are written to disk first, whatever image_after says.
    std::uint64_t frozen_memory_cap_mb = 4096;
};

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
    /// gvisor engine: when a memory-paused sandbox's image goes to disk (without the cgroup-v1
    /// freezer it always goes at once, before the pause answers).
    memory_tier_policy memory_tiers;
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
