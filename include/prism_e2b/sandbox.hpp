// The DisposableSandbox contract (contract.md) and its optional capability interfaces.
#ifndef PRISM_E2B_SANDBOX_HPP
#define PRISM_E2B_SANDBOX_HPP

#include <prism_e2b/capabilities.hpp>
#include <prism_e2b/error.hpp>
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
    std::string file;
    std::vector<std::string> args;
    std::optional<std::string> cwd;  ///< default: the sandbox's workdir
    env_map env;
    output_callback on_data;               ///< live output; may be empty
    std::chrono::milliseconds timeout{0};  ///< 0: no per-command timeout
    bool capture_output = true;            ///< also collect output into exec_result
};

/// One shell command: exec_file("/bin/sh", {"-c", command}).
struct exec_request {
    std::string command;
    std::optional<std::string> cwd;
    env_map env;
    output_callback on_data;
    std::chrono::milliseconds timeout{0};
    bool capture_output = true;
};

struct exec_result {
    /// Present only when the command exited on its own; empty when it was killed,
    /// timed out or its outcome is unknown. Never invented.
    std::optional<int> exit_code;
    exit_outcome outcome = exit_outcome::unknown;
    std::string status;       ///< vendor text ("exit status 3")
    std::string stdout_data;  ///< when capture_output
    std::string stderr_data;  ///< when capture_output
};

enum class sandbox_state { running, paused, killed, unknown };

struct sandbox_status {
    std::string id;
    sandbox_state state = sandbox_state::unknown;
    std::string template_name;
    std::chrono::system_clock::time_point started_at{};
    std::chrono::system_clock::time_point last_activity_at{};
    std::uint32_t command_count = 0;
};

struct stop_options {
    std::chrono::milliseconds grace{5000};
};

struct close_options {
    /// Export a snapshot before destroying. Unsupported on E2B (pause is the
    /// snapshot): close fails with errc::unsupported and destroys nothing.
    bool export_snapshot = false;
};

struct pause_options {
    /// true: memory snapshot, processes survive resume. false: filesystem only,
    /// resume is a reboot and every process is gone.
    bool keep_memory = true;
};

enum class snapshot_kind { memory, filesystem };

/// The typed result of pause(). Only `paused` and `already_paused` mean the
/// sandbox is paused; `refused_busy` (HTTP 503) leaves it running.
struct pause_outcome {
    enum class kind { paused, already_paused, refused_busy };
    kind result = kind::paused;
    snapshot_kind snapshot = snapshot_kind::memory;
    int http_status = 0;  ///< vendor status (204, 409, 503)
    std::string message;  ///< vendor message, redacted

    bool is_paused() const noexcept { return result != kind::refused_busy; }
};

/// Optional: long-running processes. Obtain with disposable_sandbox::processes().
class process_capable {
public:
    virtual ~process_capable() = default;
    virtual boost::asio::awaitable<result<std::unique_ptr<process_handle>>> start_process(process_request req) = 0;
    /// Re-attaches by ref. A null handle (not an error) when the process cannot be
    /// attested: another sandbox's ref, a malformed ref, after a filesystem-only
    /// pause, or a process that is gone.
    virtual boost::asio::awaitable<result<std::unique_ptr<process_handle>>> attach_process(std::string ref,
                                                                                           output_callback on_data) = 0;
};

/// Optional: pause and explicit resume. Obtain with disposable_sandbox::pause_control().
class pausable {
public:
    virtual ~pausable() = default;
    virtual boost::asio::awaitable<result<pause_outcome>> pause(pause_options opts) = 0;
    /// Explicit resume (the vendor's connect). The only way a paused sandbox runs again.
    virtual boost::asio::awaitable<result<void>> resume() = 0;
};

/// A sandbox that runs commands and is destroyed when done.
///
/// Thread safety: every member may be called concurrently from any thread of a
/// multi-threaded io_context.
class disposable_sandbox {
public:
    virtual ~disposable_sandbox() = default;

    /// Vendor sandbox id: non-secret, enough to reconnect.
    virtual std::string const& id() const noexcept = 0;
    virtual sandbox_capabilities capabilities() const noexcept = 0;

    virtual boost::asio::awaitable<result<exec_result>> exec(exec_request req) = 0;
    virtual boost::asio::awaitable<result<exec_result>> exec_file(exec_file_request req) = 0;
    virtual boost::asio::awaitable<result<sandbox_status>> status() = 0;
    virtual boost::asio::awaitable<result<void>> stop(stop_options opts) = 0;
    /// Destroys the sandbox. Idempotent; a sandbox already gone is not an error.
    virtual boost::asio::awaitable<result<void>> kill() = 0;
    virtual boost::asio::awaitable<result<void>> close(close_options opts) = 0;

    /// Process support, or nullptr when this backend has none ("not supported").
    virtual process_capable* processes() noexcept { return nullptr; }
    /// Pause/resume support, or nullptr when this backend has none.
    virtual pausable* pause_control() noexcept { return nullptr; }
};

}  // namespace prism_e2b

#endif
