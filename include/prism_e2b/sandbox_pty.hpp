// Optional: interactive terminals (a process on a pseudo-terminal) in the
// sandbox. Obtain with disposable_sandbox::pty(); nullptr means "not supported".
#ifndef PRISM_E2B_SANDBOX_PTY_HPP
#define PRISM_E2B_SANDBOX_PTY_HPP

#include <prism_e2b/async.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>
#include <prism_e2b/process.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace prism_e2b {

/// A terminal's size in character cells; 1..1000 each.
struct terminal_size {
    std::uint32_t cols = 80;  ///< columns
    std::uint32_t rows = 24;  ///< rows
};

/// What runs on a new terminal.
struct terminal_request {
    std::string file = "/bin/bash";             ///< the program (a path in the sandbox)
    std::vector<std::string> args{"-i", "-l"};  ///< its arguments, without argv[0]
    std::optional<std::string> cwd;             ///< default: the sandbox's workdir
    env_map env;                                ///< extra environment variables (limits: sandbox_limits)
    terminal_size size;                         ///< the initial size
    std::optional<std::string> user;            ///< the sandbox user; default: the backend's
};

/// What one read of a terminal yields.
struct terminal_output {
    std::string data;                   ///< bytes the terminal wrote (may be empty once it ended)
    std::optional<process_exit> ended;  ///< set once the program ended; later reads repeat it
};

/// One terminal. Every operation follows the universal model.
///
/// Thread safety: one async_read() at a time; the other operations may be
/// called concurrently with it. Per-operation cancellation: terminal; a
/// cancelled read stops following the output (the program keeps running; attach
/// again by pid). Destroying the handle stops following; the program keeps
/// running. The handle must outlive its operations.
class PRISM_E2B_API terminal_handle {
public:
    virtual ~terminal_handle() = default;

    virtual std::uint32_t pid() const noexcept = 0;  ///< the program's pid in the sandbox

    /// The next output: `result<terminal_output>`. A stream cut before the end
    /// is errc::unknown_outcome (never an exit).
    template <class CompletionToken = default_completion_token>
    auto async_read(CompletionToken&& token = {})
    {
        return detail::initiate<terminal_output>(
            std::forward<CompletionToken>(token),
            [this](completion_handler<terminal_output> h) { do_read(std::move(h)); });
    }
    /// Writes keystrokes to the terminal: `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_write(std::string bytes, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](std::string b, completion_handler<void> h) { do_write(std::move(b), std::move(h)); },
            std::move(bytes));
    }
    /// Resizes the terminal (the program receives SIGWINCH): `result<void>`.
    template <class CompletionToken = default_completion_token>
    auto async_resize(terminal_size size, CompletionToken&& token = {})
    {
        return detail::initiate<void>(
            std::forward<CompletionToken>(token),
            [this](terminal_size s, completion_handler<void> h) { do_resize(s, std::move(h)); }, size);
    }
    /// SIGKILLs the program: `result<void>`; errc::not_found when it is gone.
    template <class CompletionToken = default_completion_token>
    auto async_kill(CompletionToken&& token = {})
    {
        return detail::initiate<void>(std::forward<CompletionToken>(token),
                                      [this](completion_handler<void> h) { do_kill(std::move(h)); });
    }

protected:
    virtual void do_read(completion_handler<terminal_output> h) = 0;             ///< body of async_read
    virtual void do_write(std::string bytes, completion_handler<void> h) = 0;    ///< body of async_write
    virtual void do_resize(terminal_size size, completion_handler<void> h) = 0;  ///< body of async_resize
    virtual void do_kill(completion_handler<void> h) = 0;                        ///< body of async_kill
};

/// Optional: terminals. Obtain with disposable_sandbox::pty().
///
/// Thread safety, completion executor, cancellation and lifetimes: as
/// disposable_sandbox.
class PRISM_E2B_API pty_capable {
public:
    virtual ~pty_capable() = default;

    /// Starts `req.file` on a new terminal: `result<std::unique_ptr<terminal_handle>>`.
    template <class CompletionToken = default_completion_token>
    auto async_start_terminal(terminal_request req, CompletionToken&& token = {})
    {
        return detail::initiate<std::unique_ptr<terminal_handle>>(
            std::forward<CompletionToken>(token),
            [this](terminal_request r, completion_handler<std::unique_ptr<terminal_handle>> h) {
                do_start_terminal(std::move(r), std::move(h));
            },
            std::move(req));
    }
    /// Re-attaches to a running terminal by pid; its output streams from now on.
    /// errc::not_found when no such process runs.
    template <class CompletionToken = default_completion_token>
    auto async_attach_terminal(std::uint32_t pid, CompletionToken&& token = {})
    {
        return detail::initiate<std::unique_ptr<terminal_handle>>(
            std::forward<CompletionToken>(token),
            [this](std::uint32_t p, completion_handler<std::unique_ptr<terminal_handle>> h) {
                do_attach_terminal(p, std::move(h));
            },
            pid);
    }

protected:
    virtual void do_start_terminal(terminal_request req,
                                   completion_handler<std::unique_ptr<terminal_handle>> h) = 0;  ///< body
    virtual void do_attach_terminal(std::uint32_t pid,
                                    completion_handler<std::unique_ptr<terminal_handle>> h) = 0;  ///< body
};

}  // namespace prism_e2b

#endif
