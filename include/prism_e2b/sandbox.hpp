// The DisposableSandbox contract (contract.md) and its optional capability interfaces.
#ifndef PRISM_E2B_SANDBOX_HPP
#define PRISM_E2B_SANDBOX_HPP

#include <prism_e2b/capabilities.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b {

/// One argv command, no shell.
struct exec_file_request {
    std::string file;                      ///< the executable (a path in the sandbox)
    std::vector<std::string> args;         ///< arguments, without argv[0]
    std::optional<std::string> cwd;        ///< default: the sandbox's workdir
    env_map env;                           ///< extra environment variables (limits: sandbox_limits)
    output_callback on_data;               ///< live output; may be empty
    std::chrono::milliseconds timeout{0};  ///< 0: no per-command timeout
    bool capture_output = true;            ///< also collect output into exec_result
};

/// One shell command: exec_file("/bin/sh", {"-c", command}).
struct exec_request {
    std::string command;                   ///< the shell command line
    std::optional<std::string> cwd;        ///< default: the sandbox's workdir
    env_map env;                           ///< extra environment variables
    output_callback on_data;               ///< live output; may be empty
    std::chrono::milliseconds timeout{0};  ///< 0: no per-command timeout
    bool capture_output = true;            ///< also collect output into exec_result
};

/// What one command did.
struct exec_result {
    /// Present only when the command exited on its own; empty when it was killed,
    /// timed out or its outcome is unknown. Never invented.
    std::optional<int> exit_code;
    exit_outcome outcome = exit_outcome::unknown;  ///< exited, killed, timed out or unknown
    std::string status;                            ///< vendor text ("exit status 3")
    std::string stdout_data;                       ///< when capture_output
    std::string stderr_data;                       ///< when capture_output
};

/// A sandbox's state as the host sees it.
enum class sandbox_state { running, paused, killed, unknown };

/// A snapshot of a sandbox's state.
struct sandbox_status {
    std::string id;                                            ///< the vendor sandbox id
    sandbox_state state = sandbox_state::unknown;              ///< running, paused, killed or unknown
    std::string template_name;                                 ///< the template it was started from
    std::chrono::system_clock::time_point started_at{};        ///< when it started
    std::chrono::system_clock::time_point last_activity_at{};  ///< last command or lifecycle call
    std::uint32_t command_count = 0;                           ///< commands admitted so far
};

/// Options of disposable_sandbox::stop().
struct stop_options {
    std::chrono::milliseconds grace{5000};  ///< how long running commands get before they are killed
};

/// Options of disposable_sandbox::close().
struct close_options {
    /// Export a snapshot before destroying. Unsupported on E2B (pause is the
    /// snapshot): close fails with errc::unsupported and destroys nothing.
    bool export_snapshot = false;
};

/// Options of pausable::pause().
struct pause_options {
    /// true: memory snapshot, processes survive resume. false: filesystem only,
    /// resume is a reboot and every process is gone.
    bool keep_memory = true;
};

/// What a pause snapshot keeps.
enum class snapshot_kind { memory, filesystem };

/// The typed result of pause(). Only `paused` and `already_paused` mean the
/// sandbox is paused; `refused_busy` (HTTP 503) leaves it running.
struct pause_outcome {
    /// Paused now, was already paused, or refused (503, still running).
    enum class kind { paused, already_paused, refused_busy };
    kind result = kind::paused;                      ///< what happened
    snapshot_kind snapshot = snapshot_kind::memory;  ///< memory or filesystem only, as requested
    int http_status = 0;                             ///< vendor status (204, 409, 503)
    std::string message;                             ///< vendor message, redacted

    bool is_paused() const noexcept
    {
        return result != kind::refused_busy;
    }  ///< true when the sandbox is paused (paused or already_paused)
};

/// Optional: long-running processes. Obtain with disposable_sandbox::processes().
class PRISM_E2B_API process_capable {
public:
    virtual ~process_capable() = default;
    virtual boost::asio::awaitable<result<std::unique_ptr<process_handle>>> start_process(
        process_request
            req) = 0;  ///< starts a long-running process (process_request); its handle carries a ref to re-attach with
    /// Re-attaches by ref. A null handle (not an error) when the process cannot be
    /// attested: another sandbox's ref, a malformed ref, after a filesystem-only
    /// pause, or a process that is gone.
    virtual boost::asio::awaitable<result<std::unique_ptr<process_handle>>> attach_process(std::string ref,
                                                                                           output_callback on_data) = 0;
};

/// Optional: pause and explicit resume. Obtain with disposable_sandbox::pause_control().
class PRISM_E2B_API pausable {
public:
    virtual ~pausable() = default;
    virtual boost::asio::awaitable<result<pause_outcome>> pause(
        pause_options opts) = 0;  ///< pauses; the outcome says whether it did (refused_busy: still running)
    /// Explicit resume (the vendor's connect). The only way a paused sandbox runs again.
    virtual boost::asio::awaitable<result<void>> resume() = 0;
};

/// A sandbox that runs commands and is destroyed when done.
///
/// Thread safety: every member may be called concurrently from any thread of a
/// multi-threaded io_context.
class PRISM_E2B_API disposable_sandbox {
public:
    virtual ~disposable_sandbox() = default;

    /// Vendor sandbox id: non-secret, enough to reconnect.
    virtual std::string const& id() const noexcept = 0;
    virtual sandbox_capabilities capabilities() const noexcept = 0;  ///< what this backend supports

    virtual boost::asio::awaitable<result<exec_result>> exec(
        exec_request req) = 0;  ///< runs a shell command and waits for it
    virtual boost::asio::awaitable<result<exec_result>> exec_file(
        exec_file_request req) = 0;  ///< runs an argv command and waits for it
    virtual boost::asio::awaitable<result<sandbox_status>>
    status() = 0;  ///< the sandbox's state, fetched from the vendor
    virtual boost::asio::awaitable<result<void>> stop(
        stop_options
            opts) = 0;  ///< stops the sandbox without destroying it (on E2B: a pause with memory; refused is an error)
    /// Destroys the sandbox. Idempotent; a sandbox already gone is not an error.
    virtual boost::asio::awaitable<result<void>> kill() = 0;
    virtual boost::asio::awaitable<result<void>> close(
        close_options opts) = 0;  ///< destroys the sandbox (like kill()); export_snapshot is unsupported on E2B

    /// Process support, or nullptr when this backend has none ("not supported").
    virtual process_capable* processes() noexcept { return nullptr; }
    /// Pause/resume support, or nullptr when this backend has none.
    virtual pausable* pause_control() noexcept { return nullptr; }
};

}  // namespace prism_e2b

#endif
