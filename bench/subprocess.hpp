// Child processes for the benchmarks: the local server (so the client's CPU
// and RSS are measured alone) and node running the official JS SDK.
#ifndef PRISM_E2B_BENCH_SUBPROCESS_HPP
#define PRISM_E2B_BENCH_SUBPROCESS_HPP

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::bench {

/// A spawned child (posix_spawn). The destructor terminates it (SIGTERM, then
/// SIGKILL after 3 s) if it still runs. Not thread-safe.
class child_process {
public:
    /// `env` entries are added to (or override) this process's environment, so
    /// secrets travel in the environment, never in argv. With capture_stdout the
    /// child's stdout is a pipe read by read_all_stdout(); stderr is inherited.
    static std::optional<child_process> spawn(std::string const& program, std::vector<std::string> const& args,
                                              std::map<std::string, std::string> const& env, bool capture_stdout,
                                              std::string* error);
    child_process(child_process&& o) noexcept;
    child_process& operator=(child_process&&) = delete;
    child_process(child_process const&) = delete;
    ~child_process();

    pid_t pid() const noexcept { return pid_; }
    /// Reads stdout until EOF (only with capture_stdout).
    std::string read_all_stdout();
    /// Reads one line of stdout (without the newline); empty at EOF.
    std::string read_line();
    /// Waits for exit; returns the exit status (or 128+signal).
    int wait();
    /// SIGTERM, wait up to `grace`, then SIGKILL.
    int terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));

private:
    child_process() = default;
    pid_t pid_ = -1;
    int stdout_fd_ = -1;
    std::optional<int> status_;
};

/// A loopback port that was free a moment ago (bind 127.0.0.1:0, then close).
int free_loopback_port();
/// Polls a TCP connect to 127.0.0.1:port until it succeeds or `timeout` passes.
bool wait_for_port(int port, std::chrono::milliseconds timeout);
/// `name` next to this executable or in the directories above it (build tree
/// layouts), else the compile-time fallback; empty when not found.
std::string find_sibling_executable(std::string const& name, std::string const& fallback);
/// Absolute path of a program on PATH, empty when none.
std::string which(std::string const& program);

}  // namespace prism_e2b::bench

#endif
