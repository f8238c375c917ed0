// Plain data of the E2B API (e2b-spec/openapi.yml, process.proto, filesystem.proto)
// as the C++ client exposes it. No JSON or HTTP types leak here.
#ifndef PRISM_E2B_E2B_TYPES_HPP
#define PRISM_E2B_E2B_TYPES_HPP

#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace prism_e2b::e2b {

using metadata_map = std::map<std::string, std::string>;

enum class sandbox_state { running, paused };

/// POST /sandboxes body (NewSandbox).
struct create_sandbox_params {
    std::string template_id = "base";
    metadata_map metadata;
    env_map env_vars;
    std::chrono::seconds timeout{300};  ///< whole seconds on the wire
    bool secure = true;
    bool allow_internet_access = true;
    std::optional<bool> auto_pause;         ///< sent only when set
    std::optional<bool> auto_pause_memory;  ///< sent only when set
    std::optional<bool> auto_resume;        ///< sent as {"autoResume":{"enabled":..}} when set
};

/// The Sandbox schema: what create and connect answer.
struct sandbox_handle {
    std::string sandbox_id;
    std::string template_id;
    std::string alias;
    std::string envd_version;
    std::optional<std::string> envd_access_token;  ///< secret; registered with the redactor
    std::optional<std::string> domain;
};

struct sandbox_lifecycle {
    bool auto_resume = false;
    std::string on_timeout = "kill";  ///< "kill" or "pause"
};

/// SandboxDetail / ListedSandbox.
struct sandbox_info {
    std::string sandbox_id;
    std::string template_id;
    std::string alias;
    sandbox_state state = sandbox_state::running;
    metadata_map metadata;
    std::string started_at;  ///< RFC 3339 as sent
    std::string end_at;      ///< RFC 3339 as sent
    std::string envd_version;
    std::optional<std::string> envd_access_token;
    std::optional<std::string> domain;
    std::int32_t cpu_count = 0;
    std::int32_t memory_mb = 0;
    std::int32_t disk_size_mb = 0;
    std::optional<sandbox_lifecycle> lifecycle;
};

/// GET /v2/sandboxes query.
struct list_params {
    metadata_map metadata;              ///< all must match
    std::vector<sandbox_state> states;  ///< empty: the server's default
    std::optional<std::uint32_t> limit;
    std::optional<std::string> next_token;
};

struct sandbox_page {
    std::vector<sandbox_info> sandboxes;
    std::optional<std::string> next_token;  ///< from header x-next-token; empty: last page
};

/// What POST /sandboxes/{id}/connect did.
struct connect_result {
    enum class kind { already_running /*200*/, resumed /*201*/ };
    kind outcome = kind::already_running;
    sandbox_handle sandbox;
};

/// What POST /sandboxes/{id}/pause did. busy (503) leaves the sandbox running.
struct pause_reply {
    enum class kind { paused /*204*/, already_paused /*409*/, busy /*503*/, not_found /*404*/ };
    kind outcome = kind::paused;
    int http_status = 0;
    std::string message;
};

/// Where envd of one sandbox is and how to authenticate to it.
struct envd_target {
    std::string sandbox_id;
    std::optional<std::string> access_token;  ///< X-Access-Token; secret
    std::optional<std::string> domain;        ///< the sandbox's domain, else the client's
    std::string envd_version;                 ///< gates CloseStdin (>= 0.5.2) and octet-stream upload (>= 0.5.7)

    static envd_target from(sandbox_handle const& h);
    static envd_target from(sandbox_info const& i);
};

// ---- process.Process -------------------------------------------------------

struct process_config {
    std::string cmd;
    std::vector<std::string> args;
    env_map envs;
    std::optional<std::string> cwd;
};

struct start_process_params {
    process_config process;
    bool stdin = false;
    std::optional<std::string> tag;
    std::optional<std::string> user;  ///< Authorization: Basic base64("user:")
    /// Connect-Timeout-Ms: envd kills the process when it passes. 0 sends no
    /// deadline (long-running processes). The official SDK's default is 60 s.
    std::chrono::milliseconds timeout{60000};
};

struct process_selector {
    std::optional<std::uint32_t> pid;
    std::optional<std::string> tag;
};

struct process_info {
    process_config config;
    std::uint32_t pid = 0;
    std::optional<std::string> tag;
};

struct start_event {
    std::uint32_t pid = 0;
};
struct data_event {
    enum class stream_kind { stdout_data, stderr_data, pty };
    stream_kind stream = stream_kind::stdout_data;
    std::string bytes;  ///< decoded from base64
};
struct end_event {
    std::int32_t exit_code = 0;  ///< absent on the wire means 0
    bool exited = false;
    std::string status;
    std::optional<std::string> error;
};
struct keepalive_event {};

using process_event = std::variant<start_event, data_event, end_event, keepalive_event>;

/// A server stream of process events (Start or Connect).
///
/// next() yields events in order. After the `end` event and a clean
/// end-of-stream it yields std::nullopt. A stream that ends without an `end`
/// event, or is cut, is errc::unknown_outcome. An end-of-stream error is mapped
/// to its code (not_found, timed_out, ...). Destroying the stream closes its
/// connection (it never returns to the pool half-read).
///
/// Thread safety: one next() at a time. Per-operation cancellation of next():
/// terminal; the stream is unusable afterwards.
class process_event_stream {
public:
    virtual ~process_event_stream() = default;
    virtual boost::asio::awaitable<result<std::optional<process_event>>> next() = 0;
    /// Closes the connection now; a pending next() completes with errc::cancelled.
    virtual void close() noexcept = 0;
};

// ---- filesystem.Filesystem + /files ----------------------------------------

enum class file_type { unspecified, file, directory, symlink };

struct entry_info {
    std::string name;
    file_type type = file_type::unspecified;
    std::string path;
    std::int64_t size = 0;
    std::uint32_t mode = 0;
    std::string permissions;
    std::string owner;
    std::string group;
    std::string modified_time;  ///< RFC 3339 as sent
    std::optional<std::string> symlink_target;
};

}  // namespace prism_e2b::e2b

#endif
