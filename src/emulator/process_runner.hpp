// Real processes for the local server: fork/exec with pipes, optional mount
// namespace and cgroup, exit observed through a pidfd, events fanned out to
// the streams (Start / Connect) that watch the process.
#ifndef PRISM_E2B_EMULATOR_PROCESS_RUNNER_HPP
#define PRISM_E2B_EMULATOR_PROCESS_RUNNER_HPP

#include <prism_e2b/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace prism_e2b::local::detail {

/// Everything the child needs, prepared before fork.
struct spawn_spec {
    std::string cmd;
    std::vector<std::string> args;
    std::vector<std::string> env;  ///< "K=V"
    std::string chdir_to;          ///< directory as the child sees it
    bool open_stdin = false;
    /// Bind mounts (host source, target) made in a new mount namespace; empty: no namespace.
    std::vector<std::pair<std::string, std::string>> binds;
    std::vector<std::string> cgroup_procs;  ///< cgroup.procs files the child joins before exec
    /// Run on a pseudo-terminal of this size (cols, rows) instead of pipes.
    std::optional<std::pair<unsigned short, unsigned short>> pty;
    /// Identity the child drops to after the mounts (0: stays root).
    uid_t uid = 0;
    gid_t gid = 0;
    /// pidfd of a sandbox init whose namespaces the process joins (setns); -1: none.
    /// The identity above is then the one inside the sandbox, always switched to.
    int join_pidfd = -1;
    int join_namespaces = 0;  ///< CLONE_NEW* flags to join
    /// After the process exits, how long its output may still arrive before what is buffered
    /// is taken as the rest (a background child may hold the pipes open for ever).
    std::chrono::milliseconds output_grace{100};
};

/// What the process reports back through process.List.
struct process_config {
    std::string cmd;
    std::vector<std::string> args;
    std::map<std::string, std::string> envs;
    std::optional<std::string> cwd;
    std::optional<std::string> tag;
};

struct process_event {
    enum class kind { stdout_data, stderr_data, pty_data, end };
    kind type = kind::end;
    std::string data;
    int exit_code = 0;
    bool exited = false;
    std::string status;
    std::optional<std::string> error;
};

/// One watcher's queue of events. Thread safety: push/close from any thread,
/// wait/pop from one consumer (mutex + a one-slot wake-up channel).
class event_queue {
public:
    explicit event_queue(boost::asio::any_io_executor ex);
    void push(process_event ev);
    /// No more events will come; `aborted`: the process vanished with its sandbox (cut the stream).
    void close(bool aborted);
    /// Completes when an event is available or the queue is closed (cancellable).
    boost::asio::awaitable<void> wait();
    bool pop(process_event& out);
    bool closed() const;
    bool aborted() const;

private:
    mutable std::mutex mutex_;
    std::deque<process_event> events_;
    std::size_t buffered_bytes_ = 0;
    bool closed_ = false;
    bool aborted_ = false;
    boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> wake_;
    void notify();
};

/// A running (or finished) child process.
/// Thread safety: I/O and exit handling run on the process's strand; the
/// watcher list, stdin state and end event sit behind a mutex, so every public
/// member may be called from any thread.
class process : public std::enable_shared_from_this<process> {
public:
    using exit_callback = std::function<void(process&)>;

    /// Forks and execs. Errors: invalid_argument for a missing cwd or command
    /// (message says which), server_error for other failures.
    static result<std::shared_ptr<process>> spawn(boost::asio::any_io_executor ex, spawn_spec const& spec,
                                                  process_config config, exit_callback on_exit);
    ~process();

    /// Starts reading output and watching for exit (call after the first subscribe()).
    void start_io();

    std::uint32_t pid() const noexcept { return static_cast<std::uint32_t>(pid_); }
    process_config const& config() const noexcept { return config_; }

    /// A new watcher; nullptr when the process has already ended.
    std::shared_ptr<event_queue> subscribe(boost::asio::any_io_executor ex);
    void unsubscribe(std::shared_ptr<event_queue> const& q);

    /// Errors: not_found after exit, invalid_argument when stdin was not opened.
    boost::asio::awaitable<result<void>> write_stdin(std::string data);
    result<void> close_stdin();

    /// Signals the whole process group.
    void signal(int sig);
    /// Resizes the pseudo-terminal. Errors: invalid_argument when the process has none.
    result<void> resize(unsigned short cols, unsigned short rows);
    /// Cuts every watcher's stream (sandbox killed / rebooted), then SIGKILLs the group.
    void kill_and_abort_watchers();
    bool ended() const;

private:
    process(boost::asio::any_io_executor ex, pid_t pid, process_config config, exit_callback on_exit,
            std::chrono::milliseconds output_grace);
    boost::asio::awaitable<void> read_loop(boost::asio::posix::stream_descriptor& d, bool is_stdout);
    boost::asio::awaitable<void> exit_watch();
    boost::asio::awaitable<result<void>> write_stdin_on_strand(std::string data);
    void deliver(process_event ev);
    void maybe_finish();
    void finish();
    void drain(boost::asio::posix::stream_descriptor& d, bool is_stdout);

    boost::asio::strand<boost::asio::any_io_executor> strand_;
    pid_t pid_;
    process_config config_;
    exit_callback on_exit_;
    boost::asio::posix::stream_descriptor out_, err_, in_, pidfd_;
    boost::asio::steady_timer grace_;
    std::chrono::milliseconds output_grace_;
    bool out_done_ = false, err_done_ = false, exited_ = false, finished_ = false;
    bool grace_expired_ = false;  ///< exited, and its readers stop waiting for more output
    int wait_status_ = 0;
    bool stdin_busy_ = false;
    bool pty_ = false;

    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<event_queue>> watchers_;
    bool ended_ = false;
    bool stdin_open_ = false;
};

/// Go's os.ProcessState.String() for a wait status ("exit status 3", "signal: killed").
std::string wait_status_text(int wait_status);

}  // namespace prism_e2b::local::detail

#endif
