// Long-running processes of the contract: request, exit status and handle.
#ifndef PRISM_E2B_PROCESS_HPP
#define PRISM_E2B_PROCESS_HPP

#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>
#include <prism_e2b/limits.hpp>

#include <boost/asio/awaitable.hpp>

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
    output_callback on_data;         ///< live output; may be empty
};

/// A long-running process. Thread safety: members may be called from any
/// thread; calls are serialised internally.
class PRISM_E2B_API process_handle {
public:
    virtual ~process_handle() = default;

    virtual std::uint32_t pid() const noexcept = 0;  ///< the process id in the sandbox
    /// Non-secret reference `prism-e2b-proc:<base64url>` for attach_process().
    virtual std::string const& ref() const noexcept = 0;

    virtual boost::asio::awaitable<result<void>> write(std::string bytes) = 0;    ///< writes to its stdin
    virtual boost::asio::awaitable<result<void>> close_stdin() = 0;               ///< closes its stdin (EOF)
    virtual boost::asio::awaitable<result<void>> signal(process_signal sig) = 0;  ///< sends `sig`
    /// SIGKILL. A process that already ended is not an error.
    virtual boost::asio::awaitable<result<void>> kill() = 0;
    /// Detach: stop following output; the process keeps running and can be
    /// re-attached by ref().
    virtual boost::asio::awaitable<result<void>> release() = 0;
    /// Waits for the end. With a timeout, errc::timed_out when it passes (the
    /// process keeps running). Per-operation cancellation: terminal; the process
    /// keeps running.
    virtual boost::asio::awaitable<result<process_exit>> wait(std::optional<std::chrono::milliseconds> timeout) = 0;
};

}  // namespace prism_e2b

#endif
