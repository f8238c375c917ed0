// Plain data of the E2B API (e2b-spec/openapi.yml, process.proto, filesystem.proto)
// as the C++ client exposes it. No JSON or HTTP types leak here.
#ifndef PRISM_E2B_E2B_TYPES_HPP
#define PRISM_E2B_E2B_TYPES_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace prism_e2b::e2b {

using metadata_map = std::map<std::string, std::string>;

/// Lifecycle state of a sandbox as the control plane reports it.
enum class sandbox_state { running, paused };

/// SandboxVolumeMount: a volume (by name) and where the sandbox sees it.
struct volume_mount {
    std::string name;  ///< the volume's name
    std::string path;  ///< absolute path inside the sandbox
};

/// POST /sandboxes body (NewSandbox).
struct create_sandbox_params {
    std::string template_id = "base";         ///< template name or id to start from
    metadata_map metadata;                    ///< metadata (labels) stored with the sandbox
    env_map env_vars;                         ///< environment variables of every process
    std::chrono::seconds timeout{300};        ///< whole seconds on the wire
    bool secure = true;                       ///< envd requires an access token (X-Access-Token)
    bool allow_internet_access = true;        ///< the sandbox may reach the internet
    std::optional<bool> auto_pause;           ///< sent only when set
    std::optional<bool> auto_pause_memory;    ///< sent only when set
    std::optional<bool> auto_resume;          ///< sent as {"autoResume":{"enabled":..}} when set
    std::vector<volume_mount> volume_mounts;  ///< volumes mounted into the sandbox; sent when not empty
};

/// The Sandbox schema: what create and connect answer.
struct sandbox_handle {
    std::string sandbox_id;                        ///< the sandbox id
    std::string template_id;                       ///< the template it was started from
    std::string alias;                             ///< the template's alias
    std::string envd_version;                      ///< envd version inside the sandbox
    std::optional<std::string> envd_access_token;  ///< secret; registered with the redactor
    std::optional<std::string> domain;             ///< the sandbox's own domain, when it differs from the client's
};

/// Lifecycle settings of a sandbox (SandboxLifecycle).
struct sandbox_lifecycle {
    bool auto_resume = false;         ///< resumed automatically on activity
    std::string on_timeout = "kill";  ///< "kill" or "pause"
};

/// SandboxDetail / ListedSandbox.
struct sandbox_info {
    std::string sandbox_id;                        ///< the sandbox id
    std::string template_id;                       ///< the template it was started from
    std::string alias;                             ///< the template's alias
    sandbox_state state = sandbox_state::running;  ///< running or paused
    metadata_map metadata;                         ///< metadata (labels) stored with the sandbox
    std::string started_at;                        ///< RFC 3339 as sent
    std::string end_at;                            ///< RFC 3339 as sent
    std::string envd_version;                      ///< envd version inside the sandbox
    std::optional<std::string> envd_access_token;  ///< envd access token; secret
    std::optional<std::string> domain;             ///< the sandbox's own domain, when it differs from the client's
    std::int32_t cpu_count = 0;                    ///< virtual CPUs
    std::int32_t memory_mb = 0;                    ///< memory in MiB
    std::int32_t disk_size_mb = 0;                 ///< disk size in MiB
    std::optional<sandbox_lifecycle> lifecycle;    ///< lifecycle settings, when the server sends them
    std::vector<volume_mount> volume_mounts;       ///< the volumes it mounts
};

/// GET /v2/sandboxes query.
struct list_params {
    metadata_map metadata;                  ///< all must match
    std::vector<sandbox_state> states;      ///< empty: the server's default
    std::optional<std::uint32_t> limit;     ///< page size; the server's default when absent
    std::optional<std::string> next_token;  ///< continuation token from the previous page
    // Filters of API v2 (openapi.yml), sent only when set:
    std::optional<std::string> template_id;    ///< `template`: a template id or alias
    std::optional<std::string> started_after;  ///< `startedAfter`: RFC 3339, sandboxes started at or after it
    std::optional<bool> ascending;             ///< `order`: asc (true) or desc (false, the server's default)
};

/// One page of GET /v2/sandboxes.
struct sandbox_page {
    std::vector<sandbox_info> sandboxes;    ///< the sandboxes on this page
    std::optional<std::string> next_token;  ///< from header x-next-token; empty: last page
};

/// What POST /sandboxes/{id}/connect did.
struct connect_result {
    /// 200: it was running; 201: it was paused and is resumed.
    enum class kind { already_running /*200*/, resumed /*201*/ };
    kind outcome = kind::already_running;  ///< what happened
    sandbox_handle sandbox;                ///< the sandbox, with a fresh envd access token
};

/// What POST /sandboxes/{id}/pause did. busy (503) leaves the sandbox running.
struct pause_reply {
    /// By HTTP status: 204, 409, 503 and 404.
    enum class kind { paused /*204*/, already_paused /*409*/, busy /*503*/, not_found /*404*/ };
    kind outcome = kind::paused;  ///< what happened
    int http_status = 0;          ///< the HTTP status received
    std::string message;          ///< the server's message, redacted
};

/// Where envd of one sandbox is and how to authenticate to it.
struct PRISM_E2B_API envd_target {
    std::string sandbox_id;                   ///< the sandbox id
    std::optional<std::string> access_token;  ///< X-Access-Token; secret
    std::optional<std::string> domain;        ///< the sandbox's domain, else the client's
    std::string envd_version;                 ///< gates CloseStdin (>= 0.5.2) and octet-stream upload (>= 0.5.7)

    static envd_target from(sandbox_handle const& h);  ///< the target of a created or connected sandbox
    static envd_target from(sandbox_info const& i);    ///< the target of a listed or fetched sandbox
};

// ---- process.Process -------------------------------------------------------

/// The process to start (process.ProcessConfig).
struct process_config {
    std::string cmd;                 ///< executable
    std::vector<std::string> args;   ///< arguments, without argv[0]
    env_map envs;                    ///< environment variables
    std::optional<std::string> cwd;  ///< working directory; envd's default when absent
};

/// process.Process/Start request.
struct start_process_params {
    process_config process;           ///< what to run
    bool stdin = false;               ///< keep stdin open for send_stdin
    std::optional<std::string> tag;   ///< a tag to find the process by later
    std::optional<std::string> user;  ///< Authorization: Basic base64("user:")
    /// Connect-Timeout-Ms: envd kills the process when it passes. 0 sends no
    /// deadline (long-running processes). The official SDK's default is 60 s.
    std::chrono::milliseconds timeout{60000};
};

/// Names one process: by pid or by tag (exactly one set).
struct process_selector {
    std::optional<std::uint32_t> pid;  ///< by pid
    std::optional<std::string> tag;    ///< by tag
};

/// A running process (process.Process/List).
struct process_info {
    process_config config;           ///< what was started
    std::uint32_t pid = 0;           ///< its pid
    std::optional<std::string> tag;  ///< its tag, when it has one
};

/// The process started.
struct start_event {
    std::uint32_t pid = 0;  ///< its pid
};
/// Output of the process.
struct data_event {
    /// Which stream the bytes came from.
    enum class stream_kind { stdout_data, stderr_data, pty };
    stream_kind stream = stream_kind::stdout_data;  ///< the stream
    std::string bytes;                              ///< decoded from base64
};
/// The process ended.
struct end_event {
    std::int32_t exit_code = 0;        ///< absent on the wire means 0
    bool exited = false;               ///< it exited (false: killed by a signal)
    std::string status;                ///< envd's status text, e.g. "exit status 1"
    std::optional<std::string> error;  ///< why it ended abnormally, when envd says
};
/// Sent by envd to keep an idle stream open; carries nothing.
struct keepalive_event {};

using process_event = std::variant<start_event, data_event, end_event, keepalive_event>;

/// A server stream of process events (Start or Connect).
///
/// async_next() completes with the events in order. After the `end` event and
/// a clean end-of-stream it completes with std::nullopt. A stream that ends
/// without an `end` event, or is cut, is errc::unknown_outcome. An
/// end-of-stream error is mapped to its code (not_found, timed_out, ...).
/// After an error every async_next() repeats it.
///
/// Thread safety: one async_next() at a time. close() may be called from any
/// thread. Per-operation cancellation of async_next(): terminal; it closes the
/// stream (errc::cancelled, then unusable). Destroying the stream closes its
/// connection (it never returns to the pool half-read). The stream must
/// outlive its pending async_next().
class PRISM_E2B_API process_event_stream {
public:
    virtual ~process_event_stream() = default;

    /// The next event: `result<std::optional<process_event>>`; std::nullopt
    /// after `end` and a clean end of stream.
    template <class CompletionToken = default_completion_token>
    auto async_next(CompletionToken&& token = {})
    {
        return prism_e2b::detail::initiate<std::optional<process_event>>(
            std::forward<CompletionToken>(token),
            [this](completion_handler<std::optional<process_event>> h) { do_next(std::move(h)); });
    }
    /// Closes the connection now; a pending async_next() completes with errc::cancelled.
    virtual void close() noexcept = 0;

protected:
    virtual void do_next(completion_handler<std::optional<process_event>> h) = 0;  ///< body of async_next
};

// ---- filesystem.Filesystem + /files ----------------------------------------

/// Kind of a filesystem entry.
enum class file_type { unspecified, file, directory, symlink };

/// A filesystem entry (filesystem.EntryInfo).
struct entry_info {
    std::string name;                           ///< base name
    file_type type = file_type::unspecified;    ///< file, directory or symlink
    std::string path;                           ///< absolute path
    std::int64_t size = 0;                      ///< size in bytes
    std::uint32_t mode = 0;                     ///< Unix mode bits
    std::string permissions;                    ///< permissions as text, e.g. "-rw-r--r--"
    std::string owner;                          ///< owning user
    std::string group;                          ///< owning group
    std::string modified_time;                  ///< RFC 3339 as sent
    std::optional<std::string> symlink_target;  ///< where a symlink points
};

}  // namespace prism_e2b::e2b

#endif
