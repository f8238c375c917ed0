// The E2B adapter: create_e2b_sandbox / connect_e2b_sandbox map one E2B sandbox
// onto the disposable_sandbox contract (seed/hosted-sandboxes.md, contract.md).
#ifndef PRISM_E2B_E2B_SANDBOX_HPP
#define PRISM_E2B_E2B_SANDBOX_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/capabilities.hpp>
#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/log.hpp>
#include <prism_e2b/process.hpp>
#include <prism_e2b/sandbox.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b {

using label_map = std::map<std::string, std::string>;

/// What E2B does when the sandbox timeout passes.
enum class e2b_on_timeout {
    kill,   ///< the vendor destroys the sandbox (default)
    pause,  ///< the vendor pauses it (sent as autoPause: true); it persists until kill()
};

/// Bounds of label validation (E2B metadata).
struct label_caps {
    static constexpr std::size_t max_labels = 64;        ///< at most this many labels
    static constexpr std::size_t max_key_bytes = 128;    ///< longest key, in bytes
    static constexpr std::size_t max_value_bytes = 512;  ///< longest value, in bytes
};

/// Checks labels before they become E2B metadata: at most label_caps::max_labels,
/// non-empty keys within the byte bounds, no control characters, and no value
/// that is or contains a known secret (secret_redactor::global()).
/// Errors: errc::invalid_argument naming the offending key (never the value).
PRISM_E2B_API result<void> validate_labels(label_map const& labels);

/// Options of create_e2b_sandbox. Exactly one of `api_key` and `client` is required.
struct e2b_sandbox_options {
    /// The E2B API key; the adapter builds the real client (e2b::make_client) with
    /// `client_options`. Secret: registered with the redactor, never logged.
    std::optional<std::string> api_key;
    /// A host-injected client (tests, a pinned transport). Used as is.
    std::shared_ptr<e2b::client> client;
    /// Endpoints, timeouts and retries of the real client (used with api_key only;
    /// its api_key field is ignored in favour of `api_key`).
    e2b::client_options client_options;

    std::string template_name = "base";  ///< the E2B template to start
    /// Working directory: created through envd when the sandbox starts; the
    /// default cwd of exec and processes, and the workspace of process refs.
    std::string workdir = "/workspace";
    /// Absolute directories the files() capability may reach besides `workdir`
    /// (e.g. "/tmp"); empty: the workdir only (README "Files, terminals and users").
    std::vector<std::string> file_roots;
    /// E2B sandbox timeout (idle/cost budget), sent in whole seconds (rounded up).
    /// Empty: limits.wall_time. Must be within [1 ms, sandbox_limit_caps::wall_time].
    std::optional<std::chrono::milliseconds> timeout;
    e2b_on_timeout on_timeout = e2b_on_timeout::kill;  ///< what E2B does when the timeout passes
    /// Stored as E2B metadata for reconnect attestation. No secrets (validate_labels()).
    label_map labels;
    /// Environment of the sandbox (E2B envVars). Values are never logged.
    env_map env_vars;
    /// Full host attestation; empty: e2b_default_capabilities().
    std::optional<sandbox_capabilities> capabilities;
    /// Validated before any vendor call.
    sandbox_limits limits;
    log_sink logger;  ///< receives redacted log lines; empty: no logging
};

/// Options of connect_e2b_sandbox. Exactly one of `api_key` and `client` is required.
struct e2b_connect_options {
    std::optional<std::string> api_key;   ///< the E2B API key (secret), or
    std::shared_ptr<e2b::client> client;  ///< a host-injected client
    e2b::client_options client_options;   ///< options of the real client (with api_key only)

    std::string sandbox_id;  ///< the sandbox to connect to
    /// Every label must be present with exactly this value, else errc::wrong_owner
    /// and nothing else happens (no resume, no exec).
    label_map expected_labels;
    /// false (default): a paused sandbox stays paused and no connect call is made
    /// until resume(). true: a paused sandbox is resumed now.
    bool resume = false;
    /// The workdir the sandbox was created with (not created again).
    std::string workdir = "/workspace";
    /// Absolute directories the files() capability may reach besides `workdir`
    /// (e.g. "/tmp"); empty: the workdir only (README "Files, terminals and users").
    std::vector<std::string> file_roots;
    /// Timeout sent by resume() (whole seconds, rounded up). Empty: limits.wall_time.
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<sandbox_capabilities> capabilities;  ///< host attestation; empty: e2b_default_capabilities()
    sandbox_limits limits;                             ///< validated before any vendor call
    log_sink logger;                                   ///< receives redacted log lines; empty: no logging
};

namespace detail {
struct e2b_sandbox_core;
struct e2b_sandbox_access;
}  // namespace detail

/// One E2B sandbox as a disposable_sandbox with processes and pause/resume.
/// Obtain one with async_create_e2b_sandbox or async_connect_e2b_sandbox.
///
/// Every operation is an async_x of the universal model (prism_e2b/async.hpp),
/// inherited from disposable_sandbox, process_capable and pausable: any
/// completion token, completion `void(result<T>)`, errors as values.
///
/// exec/exec_file run under the exec_governor (max_commands, max_concurrent_execs,
/// max_output_bytes, env caps). Activity never resumes: on a paused sandbox
/// exec, start_process and process I/O fail with errc::paused and make no vendor
/// call. Processes (start_process) count against max_commands but take no
/// governor slot: they are long-running by design; process_sessions caps them.
///
/// Per-operation cancellation: terminal, on every operation (bind a slot to the
/// token). A cancelled exec stops its remote process (SIGKILL) and reports
/// errc::cancelled; a cancelled vendor call (status, pause, resume, kill)
/// reports errc::cancelled and may or may not have reached the vendor.
///
/// Thread safety: every member may be called concurrently from any thread of a
/// multi-threaded io_context. The lifecycle state is one state machine behind
/// one mutex (never held across a suspension); every exec, process reader and
/// output callback of one sandbox runs on that sandbox's strand (callbacks of
/// one sandbox never run concurrently). Completion handlers run on their
/// associated executor (co_await: the awaiting coroutine's), else on the sandbox's.
///
/// Lifetime: the sandbox must outlive the operations started on it (hold the
/// shared_ptr). Destroying the object does not destroy the vendor sandbox (the
/// host owns it; call async_kill()), nor stop process readers: a reader belongs
/// to its process_handle and keeps following output while the handle lives.
/// Destroy the object before its execution context (it holds a strand of it).
class PRISM_E2B_API e2b_sandbox final : public disposable_sandbox, public process_capable, public pausable {
public:
    ~e2b_sandbox() override;
    e2b_sandbox(e2b_sandbox const&) = delete;
    e2b_sandbox& operator=(e2b_sandbox const&) = delete;

    std::string const& id() const noexcept override;
    /// The executor its operations run on (the one given to create/connect).
    boost::asio::any_io_executor get_executor() const noexcept;
    sandbox_capabilities capabilities()
        const noexcept override;                  ///< as configured (e2b_default_capabilities() unless overridden)
    std::string const& workdir() const noexcept;  ///< the working directory (default cwd, workspace of process refs)
    std::string const& template_name() const noexcept;  ///< the template it was started from
    /// Labels as created, or the vendor metadata seen by connect.
    label_map const& labels() const noexcept;

    process_capable* processes() noexcept override { return this; }
    pausable* pause_control() noexcept override { return this; }
    /// Files over envd, under the workspace rules (workdir plus file_roots).
    /// On a paused sandbox every call fails with errc::paused, making no vendor call.
    sandbox_files* files() noexcept override { return files_.get(); }
    /// Terminals over envd's pty (needs the client of e2b::make_client(); another
    /// client answers errc::unsupported). Paused: errc::paused.
    pty_capable* pty() noexcept override { return pty_.get(); }

    /// The sandbox's metadata as the vendor reports it now (get_sandbox_info):
    /// `result<label_map>`. Per-operation cancellation: terminal.
    template <class CompletionToken = default_completion_token>
    auto async_fetch_labels(CompletionToken&& token = {})
    {
        return detail::initiate<label_map>(std::forward<CompletionToken>(token),
                                           [this](completion_handler<label_map> h) { do_fetch_labels(std::move(h)); });
    }

protected:
    /// exec_file("/bin/sh", {"-c", command}); errors as do_exec_file.
    void do_exec(exec_request req, completion_handler<exec_result> h) override;
    /// Errors: errc::paused (no vendor call), errc::not_found after kill(),
    /// invalid_argument/limit_exceeded from validate_command and the governor,
    /// limit_exceeded when output overflows (the process is SIGKILLed),
    /// errc::cancelled (the process is SIGKILLed). A timeout is not an error:
    /// outcome timed_out, no exit code. A cut stream: outcome unknown.
    void do_exec_file(exec_file_request req, completion_handler<exec_result> h) override;
    /// Refreshes the state from the vendor (get_sandbox_info) unless killed.
    void do_status(completion_handler<sandbox_status> h) override;
    /// Pauses with memory; a 503 refusal is errc::service_busy.
    void do_stop(stop_options opts, completion_handler<void> h) override;
    /// Destroys the sandbox once; later calls make no vendor call.
    void do_kill(completion_handler<void> h) override;
    /// kill(); with export_snapshot errc::unsupported and nothing is destroyed.
    void do_close(close_options opts, completion_handler<void> h) override;
    /// Starts a long-running process (not under the governor); paused: errc::paused.
    void do_start_process(process_request req, completion_handler<std::unique_ptr<process_handle>> h) override;
    /// Re-attaches by ref; null when it cannot be attested.
    void do_attach_process(std::string ref, output_callback on_data,
                           completion_handler<std::unique_ptr<process_handle>> h) override;
    /// 204 paused, 409 already_paused, 503 refused_busy (state stays running).
    void do_pause(pause_options opts, completion_handler<pause_outcome> h) override;
    /// Calls the vendor's connect with the configured timeout. After a
    /// filesystem-only pause this is a reboot: processes are gone and are not restarted.
    void do_resume(completion_handler<void> h) override;
    /// Body of async_fetch_labels.
    void do_fetch_labels(completion_handler<label_map> h);

private:
    friend struct detail::e2b_sandbox_access;
    explicit e2b_sandbox(std::shared_ptr<detail::e2b_sandbox_core> core);

    // The coroutines behind the do_x functions (run on the sandbox's executor).
    boost::asio::awaitable<result<exec_result>> exec(exec_request req);
    boost::asio::awaitable<result<exec_result>> exec_file(exec_file_request req);
    boost::asio::awaitable<result<sandbox_status>> status();
    boost::asio::awaitable<result<void>> stop(stop_options opts);
    boost::asio::awaitable<result<void>> kill();
    boost::asio::awaitable<result<void>> close(close_options opts);
    boost::asio::awaitable<result<std::unique_ptr<process_handle>>> start_process(process_request req);
    boost::asio::awaitable<result<std::unique_ptr<process_handle>>> attach_process(std::string ref,
                                                                                   output_callback on_data);
    boost::asio::awaitable<result<pause_outcome>> pause(pause_options opts);
    boost::asio::awaitable<result<void>> resume();
    boost::asio::awaitable<result<label_map>> fetch_labels();

    std::shared_ptr<detail::e2b_sandbox_core> core_;
    std::unique_ptr<sandbox_files> files_;
    std::unique_ptr<pty_capable> pty_;
};

namespace detail {
/// Body of async_create_e2b_sandbox.
PRISM_E2B_API void do_create_e2b_sandbox(boost::asio::any_io_executor executor, e2b_sandbox_options options,
                                         completion_handler<std::shared_ptr<e2b_sandbox>> h);
/// Body of async_connect_e2b_sandbox.
PRISM_E2B_API void do_connect_e2b_sandbox(boost::asio::any_io_executor executor, e2b_connect_options options,
                                          completion_handler<std::shared_ptr<e2b_sandbox>> h);
}  // namespace detail

/// Creates an E2B sandbox and its workdir: `result<std::shared_ptr<e2b_sandbox>>`.
///
/// Validates everything (client/api_key, limits, timeout, labels, template,
/// workdir) before any vendor call. Sends autoResume disabled always, and
/// autoPause true when on_timeout is pause. If set-up fails after the vendor
/// created the sandbox, the sandbox is killed before the error is reported.
/// The sandbox's operations run on `executor`. Per-operation cancellation:
/// terminal; once the vendor created the sandbox, a set-up that fails because
/// of it kills the sandbox before the error is reported.
template <class CompletionToken = default_completion_token>
auto async_create_e2b_sandbox(boost::asio::any_io_executor executor, e2b_sandbox_options options,
                              CompletionToken&& token = {})
{
    return detail::initiate<std::shared_ptr<e2b_sandbox>>(
        std::forward<CompletionToken>(token),
        [](boost::asio::any_io_executor ex, e2b_sandbox_options o, completion_handler<std::shared_ptr<e2b_sandbox>> h) {
            detail::do_create_e2b_sandbox(std::move(ex), std::move(o), std::move(h));
        },
        std::move(executor), std::move(options));
}

/// Connects to an existing sandbox: get_sandbox_info, then the label check (fail
/// closed: errc::wrong_owner and no further call), then connect only when
/// `resume` is true and the sandbox is paused. `result<std::shared_ptr<e2b_sandbox>>`.
/// Per-operation cancellation: terminal.
template <class CompletionToken = default_completion_token>
auto async_connect_e2b_sandbox(boost::asio::any_io_executor executor, e2b_connect_options options,
                               CompletionToken&& token = {})
{
    return detail::initiate<std::shared_ptr<e2b_sandbox>>(
        std::forward<CompletionToken>(token),
        [](boost::asio::any_io_executor ex, e2b_connect_options o, completion_handler<std::shared_ptr<e2b_sandbox>> h) {
            detail::do_connect_e2b_sandbox(std::move(ex), std::move(o), std::move(h));
        },
        std::move(executor), std::move(options));
}

}  // namespace prism_e2b

#endif
