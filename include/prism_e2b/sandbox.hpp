// The DisposableSandbox contract (contract.md) and its optional capability interfaces.
#ifndef PRISM_E2B_SANDBOX_HPP
#define PRISM_E2B_SANDBOX_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/capabilities.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>
#include <prism_e2b/sandbox_files.hpp>
#include <prism_e2b/sandbox_pty.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b {

/// One argv command, no shell.
struct exec_file_request {
    std::string file;                ///< the executable (a path in the sandbox)
    std::vector<std::string> args;   ///< arguments, without argv[0]
    std::optional<std::string> cwd;  ///< default: the sandbox's workdir
    env_map env;                     ///< extra environment variables (limits: sandbox_limits)
    /// The sandbox user to run as (E2B: "user", "root"); default: the backend's.
    /// No control characters and no ':' (errc::invalid_argument).
    std::optional<std::string> user;
    output_callback on_data;               ///< live output; may be empty
    std::chrono::milliseconds timeout{0};  ///< 0: no per-command timeout
    bool capture_output = true;            ///< also collect output into exec_result

    /// `file` with `args`, everything else defaulted: `exec_file_request::argv("/bin/echo", "ok")`.
    /// A function's result is safe to pass inline even with g++ 12 (see exec_request::shell).
    template <class... Args>
    static exec_file_request argv(std::string file, Args&&... args)
    {
        exec_file_request r;
        r.file = std::move(file);
        r.args.reserve(sizeof...(Args));
        (r.args.emplace_back(std::forward<Args>(args)), ...);
        return r;
    }
};

/// One shell command: exec_file("/bin/sh", {"-c", command}).
struct exec_request {
    std::string command;             ///< the shell command line
    std::optional<std::string> cwd;  ///< default: the sandbox's workdir
    env_map env;                     ///< extra environment variables
    /// The sandbox user to run as (E2B: "user", "root"); default: the backend's.
    /// No control characters and no ':' (errc::invalid_argument).
    std::optional<std::string> user;
    output_callback on_data;               ///< live output; may be empty
    std::chrono::milliseconds timeout{0};  ///< 0: no per-command timeout
    bool capture_output = true;            ///< also collect output into exec_result

    /// `command` with everything else defaulted: `co_await sb->async_exec(exec_request::shell("echo x"))`.
    /// g++ 12 miscompiles aggregate (braced or designated) temporaries inside a
    /// co_await full-expression in the caller's own frame, before any library
    /// code runs; a factory's result is not an aggregate temporary and is safe.
    static exec_request shell(std::string command)
    {
        exec_request r;
        r.command = std::move(command);
        return r;
    }
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
    kind what = kind::paused;                        ///< what happened
    snapshot_kind snapshot = snapshot_kind::memory;  ///< memory or filesystem only, as requested
    int http_status = 0;                             ///< vendor status (204, 409, 503)
    std::string message;                             ///< vendor message, redacted

    bool is_paused() const noexcept
    {
        return what != kind::refused_busy;
    }  ///< true when the sandbox is paused (paused or already_paused)
};

/// Optional: long-running processes. Obtain with disposable_sandbox::processes().
///
/// Thread safety, completion executor, cancellation and lifetimes: as
/// disposable_sandbox.
class PRISM_E2B_API process_capable {
public:
    virtual ~process_capable() = default;

    /// Starts a long-running process; its handle carries a ref to re-attach with.
    /// Completes with `result<std::unique_ptr<process_handle>>`. Errors: as the
    /// backend documents (e2b_sandbox: errc::paused, errc::not_found after kill,
    /// invalid_argument, errc::cancelled). Per-operation cancellation: terminal.
    template <class CompletionToken = default_completion_token>
    auto async_start_process(process_request req, CompletionToken&& token = {})
    {
        return detail::initiate<std::unique_ptr<process_handle>>(
            std::forward<CompletionToken>(token),
            [this](process_request r, completion_handler<std::unique_ptr<process_handle>> h) {
                do_start_process(std::move(r), std::move(h));
            },
            std::move(req));
    }
    /// Re-attaches by ref. A null handle (not an error) when the process cannot be
    /// attested: another sandbox's ref, a malformed ref, after a filesystem-only
    /// pause, or a process that is gone. Per-operation cancellation: terminal.
    template <class CompletionToken = default_completion_token>
    auto async_attach_process(std::string ref, output_callback on_data, CompletionToken&& token = {})
    {
        return detail::initiate<std::unique_ptr<process_handle>>(
            std::forward<CompletionToken>(token),
            [this](std::string r, output_callback cb, completion_handler<std::unique_ptr<process_handle>> h) {
                do_attach_process(std::move(r), std::move(cb), std::move(h));
            },
            std::move(ref), std::move(on_data));
    }

protected:
    /// The compiled body of async_start_process.
    virtual void do_start_process(process_request req, completion_handler<std::unique_ptr<process_handle>> h) = 0;
    /// The compiled body of async_attach_process.
    virtual void do_attach_process(std::string ref, output_callback on_data,
                                   completion_handler<std::unique_ptr<process_handle>> h) = 0;
};

/// Optional: pause and explicit resume. Obtain with disposable_sandbox::pause_control().
///
/// Thread safety, completion executor, cancellation and lifetimes: as
/// disposable_sandbox.
class PRISM_E2B_API pausable {
public:
    virtual ~pausable() = default;

    /// Pauses; completes with `result<pause_outcome>` whose `what` says whether it
    /// did (refused_busy: still running, not an error). Per-operation
    /// cancellation: terminal; the vendor call may still have happened (check status()).
    template <class CompletionToken = default_completion_token>
    auto async_pause(pause_options opts, CompletionToken&& token = {})
    {
        return detail::initiate<pause_outcome>(
            std::forward<CompletionToken>(token),
            [this](pause_options o, completion_handler<pause_outcome> h) { do_pause(o, std::move(h)); }, opts);
    }
    /// Explicit resume (the vendor's connect). The only way a paused sandbox runs
    /// again. Completes with `result<void>`. Per-operation cancellation: terminal.
    template <class CompletionToken = default_completion_token>
    auto async_resume(CompletionToken&& token = {})
    {
        return detail::initiate<void>(std::forward<CompletionToken>(token),
                                      [this](completion_handler<void> h) { do_resume(std::move(h)); });
    }

protected:
    virtual void do_pause(pause_options opts, completion_handler<pause_outcome> h) = 0;  ///< body of async_pause
    virtual void do_resume(completion_handler<void> h) = 0;                              ///< body of async_resume
};

/// The optional parts of a sandbox, for disposable_sandbox::supports().
enum class sandbox_feature { processes, pause, files, pty };

/// A sandbox that runs commands and is destroyed when done.
///
/// Every operation follows the universal model (prism_e2b/async.hpp): any
/// completion token, completion `void(result<T>)`, errors as values.
///
/// Thread safety: every member may be called concurrently from any thread of a
/// multi-threaded io_context.
/// Completion executor: the handler's associated executor (co_await: the
/// awaiting coroutine's); otherwise the sandbox's executor.
/// Lifetimes: arguments are copied before the operation starts; the sandbox
/// object must outlive every operation started on it (hold its shared_ptr).
/// Per-operation cancellation: terminal on every operation, with the effect
/// each backend documents (e2b_sandbox: a cancelled exec SIGKILLs its process).
class PRISM_E2B_API disposable_sandbox {
public:
    virtual ~disposable_sandbox() = default;

    /// Vendor sandbox id: non-secret, enough to reconnect.
    virtual std::string const& id() const noexcept = 0;
    virtual sandbox_capabilities capabilities() const noexcept = 0;  ///< what this backend supports

    /// Runs a shell command and waits for it: `result<exec_result>`. Errors as async_exec_file.
    template <class CompletionToken = default_completion_token>
    auto async_exec(exec_request req, CompletionToken&& token = {})
    {
        return detail::initiate<exec_result>(
            std::forward<CompletionToken>(token),
            [this](exec_request r, completion_handler<exec_result> h) { do_exec(std::move(r), std::move(h)); },
            std::move(req));
    }
    /// Runs an argv command and waits for it: `result<exec_result>`. A timeout or
    /// a killed command is an outcome, not an error; errors are the backend's
    /// (e2b_sandbox::do_exec_file lists them).
    template <class CompletionToken = default_completion_token>
    auto async_exec_file(exec_file_request req, CompletionToken&& token = {})
    {
        return detail::initiate<exec_result>(
            std::forward<CompletionToken>(token),
            [this](exec_file_request r, completion_handler<exec_result> h) {
                do_exec_file(std::move(r), std::move(h));
            },
            std::move(req));
    }
    /// The sandbox's state, fetched from the vendor: `result<sandbox_status>`.
    template <class CompletionToken = default_completion_token>
    auto async_status(CompletionToken&& token = {})
    {
        return detail::initiate<sandbox_status>(
            std::forward<CompletionToken>(token),
            [this](completion_handler<sandbox_status> h) { do_status(std::move(h)); });
    }
    /// Stops the sandbox without destroying it (on E2B: a pause with memory; a
    /// refusal is errc::service_busy): `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_stop(stop_options opts, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](stop_options o, completion_handler<void> h) { do_stop(o, std::move(h)); }, opts);
    }
    /// Destroys the sandbox: `result<void>`. Idempotent; a sandbox already gone
    /// is not an error.
    template <class CompletionToken = default_completion_token>
    auto async_kill(CompletionToken&& token = {})
    {
        return detail::initiate<void>(std::forward<CompletionToken>(token),
                                      [this](completion_handler<void> h) { do_kill(std::move(h)); });
    }
    /// Destroys the sandbox (like async_kill()): `result<void>`; export_snapshot
    /// is errc::unsupported on E2B and destroys nothing.
    template <class CompletionToken = default_completion_token>
    auto async_close(close_options opts, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](close_options o, completion_handler<void> h) { do_close(o, std::move(h)); }, opts);
    }

    /// Process support, or nullptr when this backend has none ("not supported").
    virtual process_capable* processes() noexcept { return nullptr; }
    /// Pause/resume support, or nullptr when this backend has none.
    virtual pausable* pause_control() noexcept { return nullptr; }
    /// File support (read, write, list, stat, remove, watch), or nullptr when this backend has none.
    virtual sandbox_files* files() noexcept { return nullptr; }
    /// Terminal support, or nullptr when this backend has none.
    virtual pty_capable* pty() noexcept { return nullptr; }
    /// Whether this backend offers `f`: the same answer as the query's pointer being non-null.
    bool supports(sandbox_feature f) noexcept
    {
        switch (f) {
            case sandbox_feature::processes:
                return processes() != nullptr;
            case sandbox_feature::pause:
                return pause_control() != nullptr;
            case sandbox_feature::files:
                return files() != nullptr;
            case sandbox_feature::pty:
                return pty() != nullptr;
        }
        return false;
    }

protected:
    virtual void do_exec(exec_request req, completion_handler<exec_result> h) = 0;  ///< body of async_exec
    virtual void do_exec_file(exec_file_request req,
                              completion_handler<exec_result> h) = 0;           ///< body of async_exec_file
    virtual void do_status(completion_handler<sandbox_status> h) = 0;           ///< body of async_status
    virtual void do_stop(stop_options opts, completion_handler<void> h) = 0;    ///< body of async_stop
    virtual void do_kill(completion_handler<void> h) = 0;                       ///< body of async_kill
    virtual void do_close(close_options opts, completion_handler<void> h) = 0;  ///< body of async_close
};

}  // namespace prism_e2b

#endif
