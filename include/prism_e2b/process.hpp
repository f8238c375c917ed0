// Long-running processes of the contract: request, exit status and handle.
#ifndef PRISM_E2B_PROCESS_HPP
#define PRISM_E2B_PROCESS_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b {

enum class output_stream { stdout_stream, stderr_stream };

/// Receives output as it arrives. Called on a strand of the sandbox's executor
/// (e2b_sandbox: one strand per sandbox), one call at a time; it must not block.
using output_callback = std::function<void(output_stream stream, std::string_view data)>;

/// How a command or process ended.
enum class exit_outcome {
    exited,     ///< it exited on its own; exit_code is set
    killed,     ///< a signal ended it (ours or another's); exit_code is empty
    timed_out,  ///< our timeout stopped it; exit_code is empty
    unknown,    ///< the stream was cut or the sandbox went away; exit_code is empty
};

/// The end of a process. exit_code is present only for exit_outcome::exited: it
/// is never invented.
struct process_exit {
    std::optional<int> exit_code;                  ///< present only when it exited on its own
    exit_outcome outcome = exit_outcome::unknown;  ///< exited, killed, timed out or unknown
    std::string status;                            ///< vendor text such as "exit status 3" or "signal: killed"
};

/// Signals a host may send to a process.
enum class process_signal { sigterm, sigkill };

/// Parses "SIGTERM"/"TERM"/"sigterm" and "SIGKILL"/"KILL"/"sigkill".
PRISM_E2B_API std::optional<process_signal> parse_process_signal(std::string_view name) noexcept;

/// A long-running process to start (process_capable::start_process).
struct process_request {
    std::string file;                ///< the executable (a path in the sandbox)
    std::vector<std::string> args;   ///< arguments, without argv[0]
    std::optional<std::string> cwd;  ///< default: the sandbox's workdir
    env_map env;                     ///< extra environment variables
    bool stdin_open = true;          ///< keep stdin open for write()
    /// The sandbox user to run as; default: the backend's. No control characters, no ':'.
    std::optional<std::string> user;
    output_callback on_data;  ///< live output; may be empty

    /// `file` with `args`, everything else defaulted: `process_request::argv("/bin/sleep", "60")`.
    template <class... Args>
    static process_request argv(std::string file, Args&&... args)
    {
        process_request r;
        r.file = std::move(file);
        r.args.reserve(sizeof...(Args));
        (r.args.emplace_back(std::forward<Args>(args)), ...);
        return r;
    }
};

/// A long-running process. Every operation follows the universal model
/// (prism_e2b/async.hpp): completion `void(result<T>)`, any token.
///
/// Thread safety: members may be called from any thread; calls are serialised
/// on the process's strand. Completion executor: the handler's associated
/// executor, otherwise the sandbox's. Lifetimes: the handle must outlive the
/// operations started on it. Destroying the handle without async_release()
/// stops following the output (the reader ends; the process keeps running).
/// Per-operation cancellation: terminal on every operation.
class PRISM_E2B_API process_handle {
public:
    virtual ~process_handle() = default;

    virtual std::uint32_t pid() const noexcept = 0;  ///< the process id in the sandbox
    /// Non-secret reference `prism-e2b-proc:<base64url>` for attach_process().
    virtual std::string const& ref() const noexcept = 0;

    /// Writes to its stdin: `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_write(std::string bytes, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string b, completion_handler<void> h) { do_write(std::move(b), std::move(h)); },
            std::move(bytes));
    }
    /// Closes its stdin (EOF): `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_close_stdin(CompletionToken&& token = {})
    {
        return detail::initiate<void>(std::forward<CompletionToken>(token),
                                      [this](completion_handler<void> h) { do_close_stdin(std::move(h)); });
    }
    /// Sends `sig`: `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_signal(process_signal sig, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](process_signal g, completion_handler<void> h) { do_signal(g, std::move(h)); }, sig);
    }
    /// SIGKILL: `result<void>`. A process that already ended is not an error.
    template <class CompletionToken = default_completion_token>
    auto async_kill(CompletionToken&& token = {})
    {
        return detail::initiate<void>(std::forward<CompletionToken>(token),
                                      [this](completion_handler<void> h) { do_kill(std::move(h)); });
    }
    /// Detach: stop following output; the process keeps running and can be
    /// re-attached by ref(). `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_release(CompletionToken&& token = {})
    {
        return detail::initiate<void>(std::forward<CompletionToken>(token),
                                      [this](completion_handler<void> h) { do_release(std::move(h)); });
    }
    /// Waits for the end: `result<process_exit>`. With a timeout, errc::timed_out
    /// when it passes (the process keeps running). Per-operation cancellation:
    /// terminal, errc::cancelled; the process keeps running.
    template <class CompletionToken = default_completion_token>
    auto async_wait(std::optional<std::chrono::milliseconds> timeout, CompletionToken&& token = {})
    {
        return detail::initiate<process_exit>(
            std::forward<CompletionToken>(token),
            [this](std::optional<std::chrono::milliseconds> t, completion_handler<process_exit> h) {
                do_wait(t, std::move(h));
            },
            timeout);
    }

protected:
    virtual void do_write(std::string bytes, completion_handler<void> h) = 0;    ///< body of async_write
    virtual void do_close_stdin(completion_handler<void> h) = 0;                 ///< body of async_close_stdin
    virtual void do_signal(process_signal sig, completion_handler<void> h) = 0;  ///< body of async_signal
    virtual void do_kill(completion_handler<void> h) = 0;                        ///< body of async_kill
    virtual void do_release(completion_handler<void> h) = 0;                     ///< body of async_release
    virtual void do_wait(std::optional<std::chrono::milliseconds> timeout,
                         completion_handler<process_exit> h) = 0;  ///< body of async_wait
};

}  // namespace prism_e2b

#endif
