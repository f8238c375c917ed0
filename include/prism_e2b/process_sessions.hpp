// Process sessions: a host registry of long-running processes over any
// disposable_sandbox that supports processes (contract.md "Process sessions").
#ifndef PRISM_E2B_PROCESS_SESSIONS_HPP
#define PRISM_E2B_PROCESS_SESSIONS_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>
#include <prism_e2b/process_recovery.hpp>
#include <prism_e2b/sandbox.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace prism_e2b {

/// Options of process_sessions::create().
struct process_sessions_options {
    /// Must support processes (processes() != nullptr), else errc::unsupported.
    std::shared_ptr<disposable_sandbox> sandbox;
    /// Validated at creation (process_session_limits::validate()).
    process_session_limits limits;
    /// Used by attach(). Empty: the sandbox's attach_process, wired automatically.
    std::shared_ptr<process_recovery_backend> recovery;
};

/// One page of a session's output (stdout and stderr interleaved as received).
struct process_output_page {
    std::string data;  ///< the bytes of this page
    /// Absolute byte offset to pass to the next output() call.
    std::uint64_t cursor = 0;
    /// The process has ended and every retained byte up to `cursor` was returned.
    bool eof = false;
};

/// A session as info() reports it.
struct process_session_info {
    std::string id;         ///< the session id
    std::string owner;      ///< its owner
    std::string ref;        ///< the process's ref (re-attach with attach())
    std::uint32_t pid = 0;  ///< the process id in the sandbox
    /// Set once the process ended; exit_code only when it exited on its own.
    std::optional<process_exit> exit;
    /// Bytes dropped from the front because max_total_output was reached.
    std::uint64_t dropped_bytes = 0;
};

namespace detail {
struct process_sessions_state;
}

/// Keeps long-running processes by session id for their owners.
///
/// Caps (process_session_limits): max_sessions held at once (ended sessions
/// count until released), max_input_write per input(), max_output_chunk per
/// page, max_total_output retained per session (the oldest bytes are dropped
/// and the cursor keeps counting), max_lifetime after which the process is
/// killed. Every call names its owner; another owner's session is
/// errc::wrong_owner, an unknown id errc::not_found.
///
/// Operations follow the universal model (prism_e2b/async.hpp): any completion
/// token, completion `void(result<T>)`, errors as values; they run on the
/// registry's executor and complete on the handler's associated executor.
/// Per-operation cancellation: terminal, errc::cancelled; the process keeps running.
/// Lifetimes: the registry must outlive its operations (hold its shared_ptr).
///
/// Thread safety: all members may be called concurrently; state sits behind one
/// mutex, background watchers run on the registry's strand.
class PRISM_E2B_API process_sessions {
public:
    /// Errors: errc::unsupported when the sandbox has no process capability;
    /// errc::invalid_argument for a null sandbox or invalid limits.
    static result<std::shared_ptr<process_sessions>> create(boost::asio::any_io_executor executor,
                                                            process_sessions_options options);
    ~process_sessions();
    process_sessions(process_sessions const&) = delete;
    process_sessions& operator=(process_sessions const&) = delete;

    /// Starts a process: `result<std::string>`, the session id.
    template <class CompletionToken = default_completion_token>
    auto async_start(std::string owner, process_request req, CompletionToken&& token = {})
    {
        return detail::initiate<std::string>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, process_request req_, completion_handler<std::string> h) {
                do_start(std::move(owner_), std::move(req_), std::move(h));
            },
            std::move(owner), std::move(req));
    }
    /// Re-attaches a ref through the recovery backend: `result<std::string>`, the
    /// session id; errc::not_found when it cannot be attested (the backend's null).
    template <class CompletionToken = default_completion_token>
    auto async_attach(std::string owner, std::string ref, CompletionToken&& token = {})
    {
        return detail::initiate<std::string>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string ref_, completion_handler<std::string> h) {
                do_attach(std::move(owner_), std::move(ref_), std::move(h));
            },
            std::move(owner), std::move(ref));
    }
    /// Writes `bytes` (at most max_input_write) to the process's stdin: `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_input(std::string owner, std::string id, std::string bytes, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string id_, std::string bytes_, completion_handler<void> h) {
                do_input(std::move(owner_), std::move(id_), std::move(bytes_), std::move(h));
            },
            std::move(owner), std::move(id), std::move(bytes));
    }
    /// Closes the process's stdin: `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_close_input(std::string owner, std::string id, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string id_, completion_handler<void> h) {
                do_close_input(std::move(owner_), std::move(id_), std::move(h));
            },
            std::move(owner), std::move(id));
    }
    /// Waits for the end: `result<process_exit>`; errc::timed_out when `timeout`
    /// passes first (the process keeps running); errc::cancelled on cancellation.
    template <class CompletionToken = default_completion_token>
    auto async_wait(std::string owner, std::string id, std::optional<std::chrono::milliseconds> timeout,
                    CompletionToken&& token = {})
    {
        return detail::initiate<process_exit>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string id_, std::optional<std::chrono::milliseconds> timeout_,
                   completion_handler<process_exit> h) {
                do_wait(std::move(owner_), std::move(id_), timeout_, std::move(h));
            },
            std::move(owner), std::move(id), timeout);
    }
    /// Sends `sig` to the process: `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_signal(std::string owner, std::string id, process_signal sig, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string id_, process_signal sig_, completion_handler<void> h) {
                do_signal(std::move(owner_), std::move(id_), sig_, std::move(h));
            },
            std::move(owner), std::move(id), sig);
    }
    /// SIGKILL: `result<void>`; a process that already ended is not an error.
    template <class CompletionToken = default_completion_token>
    auto async_kill(std::string owner, std::string id, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string id_, completion_handler<void> h) {
                do_kill(std::move(owner_), std::move(id_), std::move(h));
            },
            std::move(owner), std::move(id));
    }
    /// Forgets the session; the process keeps running (its ref can re-attach): `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_release(std::string owner, std::string id, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string owner_, std::string id_, completion_handler<void> h) {
                do_release(std::move(owner_), std::move(id_), std::move(h));
            },
            std::move(owner), std::move(id));
    }
    /// Output from `cursor`, at most min(max_bytes, max_output_chunk) bytes.
    result<process_output_page> output(std::string const& owner, std::string const& id, std::uint64_t cursor,
                                       std::optional<std::uint64_t> max_bytes = std::nullopt) const;
    result<process_session_info> info(std::string const& owner, std::string const& id) const;  ///< the session's state
    std::size_t size() const;  ///< sessions held (running or ended, until released)

private:
    // The compiled bodies of the async_x operations and their coroutines.
    void do_start(std::string owner, process_request req, completion_handler<std::string> h);
    boost::asio::awaitable<result<std::string>> start(std::string owner, process_request req);
    void do_attach(std::string owner, std::string ref, completion_handler<std::string> h);
    boost::asio::awaitable<result<std::string>> attach(std::string owner, std::string ref);
    void do_input(std::string owner, std::string id, std::string bytes, completion_handler<void> h);
    boost::asio::awaitable<result<void>> input(std::string owner, std::string id, std::string bytes);
    void do_close_input(std::string owner, std::string id, completion_handler<void> h);
    boost::asio::awaitable<result<void>> close_input(std::string owner, std::string id);
    void do_wait(std::string owner, std::string id, std::optional<std::chrono::milliseconds> timeout,
                 completion_handler<process_exit> h);
    boost::asio::awaitable<result<process_exit>> wait(std::string owner, std::string id,
                                                      std::optional<std::chrono::milliseconds> timeout);
    void do_signal(std::string owner, std::string id, process_signal sig, completion_handler<void> h);
    boost::asio::awaitable<result<void>> signal(std::string owner, std::string id, process_signal sig);
    void do_kill(std::string owner, std::string id, completion_handler<void> h);
    boost::asio::awaitable<result<void>> kill(std::string owner, std::string id);
    void do_release(std::string owner, std::string id, completion_handler<void> h);
    boost::asio::awaitable<result<void>> release(std::string owner, std::string id);

    explicit process_sessions(std::shared_ptr<detail::process_sessions_state> state);
    std::shared_ptr<detail::process_sessions_state> state_;
};

}  // namespace prism_e2b

#endif
