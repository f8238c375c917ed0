// fork/exec, pipes, pidfd exit watch and event fan-out for the local server.
#include "emulator/process_runner.hpp"

#include "emulator/use_nothrow.hpp"
#include "protocol/on_strand.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;

// ---------------------------------------------------------------- event_queue

namespace {
// A watcher that does not read is cut off rather than growing without bound.
constexpr std::size_t max_buffered_bytes = 32u << 20;
}  // namespace

event_queue::event_queue(asio::any_io_executor ex) : wake_(ex, 1) {}

void event_queue::notify() { wake_.try_send(boost::system::error_code{}); }

void event_queue::push(process_event ev)
{
    {
        std::lock_guard lk(mutex_);
        if (closed_) return;
        buffered_bytes_ += ev.data.size();
        if (buffered_bytes_ > max_buffered_bytes) {
            closed_ = true;
            aborted_ = true;
            events_.clear();
        } else {
            events_.push_back(std::move(ev));
        }
    }
    notify();
}

void event_queue::close(bool aborted)
{
    {
        std::lock_guard lk(mutex_);
        if (closed_) return;
        closed_ = true;
        aborted_ = aborted;
        if (aborted) events_.clear();
    }
    notify();
}

asio::awaitable<void> event_queue::wait()
{
    {
        std::lock_guard lk(mutex_);
        if (!events_.empty() || closed_) co_return;
    }
    co_await wake_.async_receive(use_nothrow);
}

bool event_queue::pop(process_event& out)
{
    std::lock_guard lk(mutex_);
    if (events_.empty()) return false;
    out = std::move(events_.front());
    events_.pop_front();
    buffered_bytes_ -= std::min(buffered_bytes_, out.data.size());
    return true;
}

bool event_queue::closed() const
{
    std::lock_guard lk(mutex_);
    return closed_ && events_.empty();
}

bool event_queue::aborted() const
{
    std::lock_guard lk(mutex_);
    return aborted_;
}

// ---------------------------------------------------------------- helpers

std::string wait_status_text(int st)
{
    if (WIFEXITED(st)) return "exit status " + std::to_string(WEXITSTATUS(st));
    if (WIFSIGNALED(st)) {
        int const sig = WTERMSIG(st);
        std::string name;
        switch (sig) {
            case SIGKILL:
                name = "killed";
                break;
            case SIGTERM:
                name = "terminated";
                break;
            case SIGINT:
                name = "interrupt";
                break;
            case SIGHUP:
                name = "hangup";
                break;
            case SIGQUIT:
                name = "quit";
                break;
            case SIGABRT:
                name = "aborted";
                break;
            case SIGSEGV:
                name = "segmentation fault";
                break;
            case SIGPIPE:
                name = "broken pipe";
                break;
            case SIGBUS:
                name = "bus error";
                break;
            case SIGFPE:
                name = "floating point exception";
                break;
            case SIGILL:
                name = "illegal instruction";
                break;
            case SIGUSR1:
                name = "user defined signal 1";
                break;
            case SIGUSR2:
                name = "user defined signal 2";
                break;
            case SIGALRM:
                name = "alarm clock";
                break;
            default:
                name = "signal " + std::to_string(sig);
                break;
        }
        std::string s = "signal: " + name;
        if (WCOREDUMP(st)) s += " (core dumped)";
        return s;
    }
    return "exit status -1";
}

namespace {

enum child_stage : int {
    stage_unshare = 1,
    stage_mount_private,
    stage_bind,
    stage_cgroup,
    stage_chdir,
    stage_exec,
    stage_dup,
    stage_identity,
    stage_setns,
    stage_close,
    stage_forked  ///< not a failure: `err` is the pid of the process that joined the namespaces
};

struct child_failure {
    int stage;
    int err;
};

[[noreturn]] void child_fail(int fd, int stage)
{
    child_failure f{stage, errno};
    ssize_t r = ::write(fd, &f, sizeof f);
    (void)r;
    ::syscall(SYS_exit_group, 127);
    ::_exit(127);  // not reached
}

/// write() that never raises SIGPIPE in a host that did not ignore it (an embedded
/// server must not kill its host when a process closed its stdin).
ssize_t write_without_sigpipe(int fd, char const* data, std::size_t size)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    bool const was_pending = sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t const n = ::write(fd, data, size);
    int const e = errno;
    if (n < 0 && e == EPIPE && !was_pending) {
        timespec zero{0, 0};
        ::sigtimedwait(&pipe_set, nullptr, &zero);  // consume the SIGPIPE this write raised
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = e;
    return n;
}

void set_nonblocking(int fd)
{
    int const fl = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

void write_cgroup_procs(spawn_spec const& spec, int report_w);
[[noreturn]] void exec_child(spawn_spec const& spec, char const* const* argv, char const* const* envp, int in_r,
                             int out_w, int err_w, int report_w);

struct child_args {
    spawn_spec const* spec;
    char const* const* argv;
    char const* const* envp;
    int in_r, out_w, err_w, report_w;
};

int exec_child_entry(void* p)
{
    auto const* a = static_cast<child_args const*>(p);
    exec_child(*a->spec, a->argv, a->envp, a->in_r, a->out_w, a->err_w, a->report_w);
}

/// Joins the sandbox's namespaces. A pid namespace is entered only by children, so
/// this starts the real process with CLONE_PARENT (it is the server's child, waited
/// for and watched like any other), as a vfork on its own stack (no second copy of
/// the server's page tables), then reports its pid and exits.
[[noreturn]] void join_sandbox(child_args const& args, char* stack_top)
{
    auto const& spec = *args.spec;
    write_cgroup_procs(spec, args.report_w);  // while still host root: the cgroup files are the host's
    if (::setns(spec.join_pidfd, spec.join_namespaces) != 0) child_fail(args.report_w, stage_setns);
    int const pid = ::clone(exec_child_entry, stack_top, CLONE_PARENT | CLONE_VM | CLONE_VFORK | SIGCHLD,
                            const_cast<child_args*>(&args));
    if (pid < 0) child_fail(args.report_w, stage_setns);
    child_failure f{stage_forked, pid};
    ssize_t r = ::write(args.report_w, &f, sizeof f);
    (void)r;
    ::syscall(SYS_exit_group, 0);
    ::_exit(0);  // not reached
}

void write_cgroup_procs(spawn_spec const& spec, int report_w)
{
    char buf[24];
    int n = 0;
    pid_t p = static_cast<pid_t>(::syscall(SYS_getpid));
    char tmp[24];
    int t = 0;
    while (p > 0) {
        tmp[t++] = static_cast<char>('0' + p % 10);
        p /= 10;
    }
    while (t > 0) buf[n++] = tmp[--t];
    for (auto const& procs : spec.cgroup_procs) {
        int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) continue;
        if (::write(fd, buf, static_cast<std::size_t>(n)) < 0) child_fail(report_w, stage_cgroup);
        ::close(fd);
    }
}

// Only async-signal-safe calls below: the parent may have many threads.
[[noreturn]] void run_child(spawn_spec const& spec, char const* const* argv, char const* const* envp, int in_r,
                            int out_w, int err_w, int report_w, char* stack_top)
{
    if (spec.join_pidfd >= 0) join_sandbox(child_args{&spec, argv, envp, in_r, out_w, err_w, report_w}, stack_top);
    exec_child(spec, argv, envp, in_r, out_w, err_w, report_w);
}

[[noreturn]] void exec_child(spawn_spec const& spec, char const* const* argv, char const* const* envp, int in_r,
                             int out_w, int err_w, int report_w)
{
    bool const joined = spec.join_pidfd >= 0;
    if (spec.pty)
        ::setsid();  // session and group leader, ready to take the terminal
    else
        ::setpgid(0, 0);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);

    if (::dup2(in_r, 0) < 0 || ::dup2(out_w, 1) < 0 || ::dup2(err_w, 2) < 0) child_fail(report_w, stage_dup);
    if (spec.pty && ::ioctl(0, TIOCSCTTY, 0) != 0) child_fail(report_w, stage_dup);
    // Every other inherited descriptor (sockets, other children's pipes) must not leak into the child.
    if (::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
        // gVisor's kernel has no CLOSE_RANGE_CLOEXEC: close them now, all but the report pipe. Its
        // close_range also refuses a last descriptor above INT_MAX (EINVAL, nothing closed: the
        // agent's connections above the pipes leaked into every command), hence INT_MAX.
        unsigned const keep = static_cast<unsigned>(report_w);
        unsigned const last = static_cast<unsigned>(INT_MAX);
        if (keep > 3u && ::syscall(SYS_close_range, 3u, keep - 1, 0u) != 0) child_fail(report_w, stage_close);
        if (::syscall(SYS_close_range, keep + 1, last, 0u) != 0) child_fail(report_w, stage_close);
    }

    if (!joined) write_cgroup_procs(spec, report_w);

    if (!spec.binds.empty()) {
        if (::unshare(CLONE_NEWNS) != 0) child_fail(report_w, stage_unshare);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            child_fail(report_w, stage_mount_private);
        for (auto const& [src, dst] : spec.binds)
            if (::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
                child_fail(report_w, stage_bind);
    }
    if (joined || spec.uid != 0 || spec.gid != 0) {
        // Raw syscalls: glibc's wrappers would try to broadcast to the parent's other threads.
        if (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setresgid, spec.gid, spec.gid, spec.gid) != 0 ||
            ::syscall(SYS_setresuid, spec.uid, spec.uid, spec.uid) != 0)
            child_fail(report_w, stage_identity);
    }
    if (::chdir(spec.chdir_to.c_str()) != 0) child_fail(report_w, stage_chdir);
    ::execve(argv[0], const_cast<char* const*>(argv), const_cast<char* const*>(envp));
    child_fail(report_w, stage_exec);
}

}  // namespace

// ---------------------------------------------------------------- process

process::process(asio::any_io_executor ex, pid_t pid, process_config config, exit_callback on_exit,
                 std::chrono::milliseconds output_grace)
    : strand_(asio::make_strand(ex)),
      pid_(pid),
      config_(std::move(config)),
      on_exit_(std::move(on_exit)),
      out_(strand_),
      err_(strand_),
      in_(strand_),
      pidfd_(strand_),
      grace_(strand_),
      output_grace_(output_grace)
{
}

process::~process()
{
    boost::system::error_code ec;
    out_.close(ec);
    err_.close(ec);
    in_.close(ec);
    pidfd_.close(ec);
    if (!finished_) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, nullptr, WNOHANG);
    }
}

result<std::shared_ptr<process>> process::spawn(asio::any_io_executor ex, spawn_spec const& spec, process_config config,
                                                exit_callback on_exit)
{
    // Resolve the program the way the shell would (PATH), before fork.
    std::string program = spec.cmd;
    if (program.find('/') == std::string::npos) {
        std::string path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        for (auto const& e : spec.env)
            if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
        std::size_t start = 0;
        std::string found;
        while (start <= path.size()) {
            auto end = path.find(':', start);
            if (end == std::string::npos) end = path.size();
            std::string dir = path.substr(start, end - start);
            if (dir.empty()) dir = ".";
            std::string cand = dir + "/" + program;
            if (::access(cand.c_str(), X_OK) == 0) {
                found = cand;
                break;
            }
            start = end + 1;
        }
        if (found.empty())
            return error(errc::invalid_argument, "executable file not found in $PATH: " + program, {"process.Start"});
        program = found;
    }
    std::vector<std::string> argv_s;
    argv_s.push_back(program);
    argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
    std::vector<char const*> argv, envp;
    for (auto const& a : argv_s) argv.push_back(a.c_str());
    argv.push_back(nullptr);
    for (auto const& e : spec.env) envp.push_back(e.c_str());
    envp.push_back(nullptr);

    int in_p[2] = {-1, -1}, out_p[2], err_p[2], rep[2];
    auto close_all = [&] {
        for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1], err_p[0], err_p[1], rep[0], rep[1]})
            if (fd >= 0) ::close(fd);
    };
    out_p[0] = out_p[1] = err_p[0] = err_p[1] = rep[0] = rep[1] = -1;
    bool ok = ::pipe2(rep, O_CLOEXEC) == 0;
    if (ok && spec.pty) {
        // The terminal: the child gets the slave on 0, 1 and 2; we read and write the master.
        int const master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        char name[128];
        ok = master >= 0 && ::grantpt(master) == 0 && ::unlockpt(master) == 0 &&
             ::ptsname_r(master, name, sizeof name) == 0;
        out_p[0] = master;
        if (ok) {
            winsize ws{};
            ws.ws_col = spec.pty->first;
            ws.ws_row = spec.pty->second;
            ::ioctl(master, TIOCSWINSZ, &ws);
            in_p[0] = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
            out_p[1] = in_p[0] >= 0 ? ::fcntl(in_p[0], F_DUPFD_CLOEXEC, 0) : -1;
            err_p[1] = in_p[0] >= 0 ? ::fcntl(in_p[0], F_DUPFD_CLOEXEC, 0) : -1;
            in_p[1] = ::fcntl(master, F_DUPFD_CLOEXEC, 0);
            ok = in_p[0] >= 0 && out_p[1] >= 0 && err_p[1] >= 0 && in_p[1] >= 0;
        }
    } else if (ok) {
        ok = ::pipe2(out_p, O_CLOEXEC) == 0 && ::pipe2(err_p, O_CLOEXEC) == 0;
    }
    if (ok && !spec.pty) {
        if (spec.open_stdin)
            ok = ::pipe2(in_p, O_CLOEXEC) == 0;
        else {
            in_p[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            ok = in_p[0] >= 0;
        }
    }
    if (!ok) {
        auto const e = errno;
        close_all();
        return error(boost::system::error_code(e, boost::system::system_category()), "cannot create pipes",
                     {"process.Start"});
    }

    // The stack of the process that joins a sandbox (see join_sandbox), allocated before fork.
    std::unique_ptr<char[]> join_stack;
    char* stack_top = nullptr;
    if (spec.join_pidfd >= 0) {
        constexpr std::size_t stack_size = 256 * 1024;
        join_stack.reset(new char[stack_size]);
        stack_top = join_stack.get() + stack_size;  // grows down; new[] is aligned for clone's 16 bytes
    }
    pid_t const forked = ::fork();
    pid_t pid = forked;
    if (pid < 0) {
        auto const e = errno;
        close_all();
        return error(boost::system::error_code(e, boost::system::system_category()), "fork failed", {"process.Start"});
    }
    if (pid == 0) run_child(spec, argv.data(), envp.data(), in_p[0], out_p[1], err_p[1], rep[1], stack_top);

    bool const joining = spec.join_pidfd >= 0;
    // Also done by the child; whichever runs first wins the race.
    if (!spec.pty && !joining) ::setpgid(pid, pid);
    ::close(in_p[0]);
    in_p[0] = -1;
    ::close(out_p[1]);
    out_p[1] = -1;
    ::close(err_p[1]);
    err_p[1] = -1;
    ::close(rep[1]);
    rep[1] = -1;
    child_failure f{};
    ssize_t n;
    do {
        n = ::read(rep[0], &f, sizeof f);
    } while (n < 0 && errno == EINTR);
    if (joining) {
        // Until EOF: the pid of the real process (after it exec'd or failed: a vfork) and
        // maybe its failure, in either order.
        std::optional<child_failure> failure;
        bool forked_reported = false;
        while (n == static_cast<ssize_t>(sizeof f)) {
            if (f.stage == stage_forked) {
                pid = static_cast<pid_t>(f.err);
                forked_reported = true;
            } else {
                failure = f;
            }
            do {
                n = ::read(rep[0], &f, sizeof f);
            } while (n < 0 && errno == EINTR);
        }
        if (forked_reported) ::waitpid(forked, nullptr, 0);
        if (forked_reported && !spec.pty) ::setpgid(pid, pid);
        if (!failure && !forked_reported) {
            ::waitpid(forked, nullptr, 0);
            close_all();
            return error(errc::server_error, "starting the process failed: the sandbox is gone", {"process.Start"});
        }
        n = failure ? static_cast<ssize_t>(sizeof f) : 0;
        if (failure) f = *failure;
    }
    ::close(rep[0]);
    rep[0] = -1;
    if (n == static_cast<ssize_t>(sizeof f)) {
        ::waitpid(pid, nullptr, 0);
        close_all();
        std::string what;
        switch (f.stage) {
            case stage_chdir:
                return error(errc::invalid_argument, "chdir " + spec.chdir_to + ": " + std::strerror(f.err),
                             {"process.Start"});
            case stage_exec:
                return error(errc::invalid_argument, "fork/exec " + program + ": " + std::strerror(f.err),
                             {"process.Start"});
            case stage_unshare:
                what = "unshare";
                break;
            case stage_mount_private:
            case stage_bind:
                what = "mount";
                break;
            case stage_cgroup:
                what = "cgroup";
                break;
            case stage_identity:
                what = "setuid";
                break;
            case stage_setns:
                what = "joining the sandbox's namespaces";
                break;
            case stage_close:
                what = "closing the descriptors it must not inherit";
                break;
            default:
                what = "dup2";
                break;
        }
        return error(errc::server_error, "starting the process failed at " + what + ": " + std::strerror(f.err),
                     {"process.Start"});
    }

    int const pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    auto p = std::shared_ptr<process>(new process(ex, pid, std::move(config), std::move(on_exit), spec.output_grace));
    set_nonblocking(out_p[0]);
    p->out_.assign(out_p[0]);
    if (spec.pty) {
        p->pty_ = true;
        p->err_done_ = true;  // one terminal stream, no separate stderr
    } else {
        set_nonblocking(err_p[0]);
        p->err_.assign(err_p[0]);
    }
    if (spec.open_stdin || spec.pty) {
        set_nonblocking(in_p[1]);
        p->in_.assign(in_p[1]);
        p->stdin_open_ = true;
    }
    if (pidfd >= 0) p->pidfd_.assign(pidfd);
    return p;
}

void process::start_io()
{
    auto self = shared_from_this();
    asio::co_spawn(strand_, read_loop(out_, true), asio::detached);
    if (!pty_) asio::co_spawn(strand_, read_loop(err_, false), asio::detached);
    asio::co_spawn(strand_, exit_watch(), asio::detached);
}

std::shared_ptr<event_queue> process::subscribe(asio::any_io_executor ex)
{
    std::lock_guard lk(mutex_);
    if (ended_) return nullptr;
    auto q = std::make_shared<event_queue>(ex);
    watchers_.push_back(q);
    return q;
}

void process::unsubscribe(std::shared_ptr<event_queue> const& q)
{
    std::lock_guard lk(mutex_);
    std::erase(watchers_, q);
}

bool process::ended() const
{
    std::lock_guard lk(mutex_);
    return ended_;
}

void process::deliver(process_event ev)
{
    std::lock_guard lk(mutex_);
    for (auto const& w : watchers_) w->push(ev);
}

asio::awaitable<void> process::read_loop(asio::posix::stream_descriptor& d, bool is_stdout)
{
    auto self = shared_from_this();
    std::array<char, 32 * 1024> buf;
    for (;;) {
        auto [ec, n] = co_await d.async_read_some(asio::buffer(buf), use_nothrow);
        if (n > 0) {
            process_event ev;
            ev.type = pty_        ? process_event::kind::pty_data
                      : is_stdout ? process_event::kind::stdout_data
                                  : process_event::kind::stderr_data;
            ev.data.assign(buf.data(), n);
            deliver(std::move(ev));
        }
        if (grace_expired_) {
            // The process exited and its grace passed (a background child may hold the pipe open
            // for ever): what is buffered now is the rest. The reader takes it itself, so bytes a
            // read already performed (its completion queued) are never dropped behind the end.
            drain(d, is_stdout);
            break;
        }
        if (ec) break;
    }
    (is_stdout ? out_done_ : err_done_) = true;
    maybe_finish();
}

asio::awaitable<void> process::exit_watch()
{
    auto self = shared_from_this();
    if (pidfd_.is_open()) {
        for (;;) {
            auto [ec] = co_await pidfd_.async_wait(asio::posix::stream_descriptor::wait_read, use_nothrow);
            int st = 0;
            pid_t const r = ::waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                wait_status_ = st;
                break;
            }
            if (r < 0 && errno == ECHILD) break;
            if (ec && ec != asio::error::interrupted) break;
        }
    } else {
        // No pidfd (old kernel): poll.
        asio::steady_timer t(strand_);
        for (;;) {
            int st = 0;
            pid_t const r = ::waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                wait_status_ = st;
                break;
            }
            if (r < 0) break;
            t.expires_after(std::chrono::milliseconds(20));
            co_await t.async_wait(use_nothrow);
        }
    }
    exited_ = true;
    if (out_done_ && err_done_) {
        finish();
        co_return;
    }
    // Output still in flight (or a background grandchild keeps the pipes open):
    // give the readers a moment, then take what is buffered and end.
    grace_.expires_after(output_grace_);
    co_await grace_.async_wait(use_nothrow);
    if (!finished_) {
        // The readers end: each drains what is buffered, and the last one done sends the end
        // (maybe_finish). A reader whose read already completed delivers those bytes first.
        grace_expired_ = true;
        boost::system::error_code ec;
        out_.cancel(ec);
        err_.cancel(ec);
        maybe_finish();
    }
}

void process::drain(asio::posix::stream_descriptor& d, bool is_stdout)
{
    if (!d.is_open()) return;
    std::array<char, 32 * 1024> buf;
    for (;;) {
        ssize_t const n = ::read(d.native_handle(), buf.data(), buf.size());
        if (n <= 0) break;
        process_event ev;
        ev.type = pty_        ? process_event::kind::pty_data
                  : is_stdout ? process_event::kind::stdout_data
                              : process_event::kind::stderr_data;
        ev.data.assign(buf.data(), static_cast<std::size_t>(n));
        deliver(std::move(ev));
    }
}

void process::maybe_finish()
{
    if (exited_ && out_done_ && err_done_ && !finished_) {
        grace_.cancel();
        finish();
    }
}

void process::finish()
{
    if (finished_) return;
    finished_ = true;
    boost::system::error_code ec;
    out_.close(ec);
    err_.close(ec);
    pidfd_.close(ec);
    process_event ev;
    ev.type = process_event::kind::end;
    int const st = wait_status_;
    ev.status = wait_status_text(st);
    if (WIFEXITED(st)) {
        ev.exited = true;
        ev.exit_code = WEXITSTATUS(st);
    } else {
        ev.exited = false;
        ev.exit_code = -1;
    }
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) ev.error = ev.status;
    std::vector<std::shared_ptr<event_queue>> watchers;
    {
        std::lock_guard lk(mutex_);
        ended_ = true;
        stdin_open_ = false;
        watchers.swap(watchers_);
    }
    in_.close(ec);
    // Leave the sandbox's table before anyone hears of the end, so a client that
    // saw the end never finds the process in List.
    if (on_exit_) on_exit_(*this);
    for (auto const& w : watchers) {
        w->push(ev);
        w->close(false);
    }
}

asio::awaitable<result<void>> process::write_stdin(std::string data)
{
    // Runs on the process's strand; the caller stays on its own executor.
    co_return co_await protocol::on_strand(strand_, write_stdin_on_strand(std::move(data)));
}

asio::awaitable<result<void>> process::write_stdin_on_strand(std::string data)
{
    auto self = shared_from_this();
    // One writer at a time keeps concurrent SendInput calls from interleaving.
    asio::steady_timer wait(strand_);
    while (stdin_busy_) {
        wait.expires_after(std::chrono::milliseconds(1));
        co_await wait.async_wait(use_nothrow);
    }
    {
        std::lock_guard lk(mutex_);
        if (ended_)
            co_return error(errc::not_found, "process with pid " + std::to_string(pid_) + " not found",
                            {"process.SendInput"});
        if (!stdin_open_)
            co_return error(errc::invalid_argument, "stdin is not enabled or already closed for this process",
                            {"process.SendInput"});
    }
    stdin_busy_ = true;
    std::size_t off = 0;
    int err = 0;
    while (off < data.size() && in_.is_open()) {
        ssize_t const n = write_without_sigpipe(in_.native_handle(), data.data() + off, data.size() - off);
        if (n > 0) {
            off += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            auto [ec] = co_await in_.async_wait(asio::posix::stream_descriptor::wait_write, use_nothrow);
            if (ec) {
                err = ec.value();
                break;
            }
        } else if (n < 0 && errno != EINTR) {
            err = errno;
            break;
        }
    }
    stdin_busy_ = false;
    if (err == EPIPE) co_return error(errc::invalid_argument, "the process closed its stdin", {"process.SendInput"});
    if (err != 0 || off < data.size())
        co_return error(boost::system::error_code(err ? err : EBADF, boost::system::system_category()),
                        "writing to the process's stdin failed", {"process.SendInput"});
    co_return result<void>{};
}

result<void> process::close_stdin()
{
    {
        std::lock_guard lk(mutex_);
        if (ended_)
            return error(errc::not_found, "process with pid " + std::to_string(pid_) + " not found",
                         {"process.CloseStdin"});
        if (!stdin_open_) return result<void>{};
        stdin_open_ = false;
    }
    auto self = shared_from_this();
    asio::post(strand_, [self] {
        boost::system::error_code ec;
        self->in_.close(ec);
    });
    return result<void>{};
}

void process::signal(int sig)
{
    std::lock_guard lk(mutex_);
    if (!ended_) ::kill(-pid_, sig);
}

result<void> process::resize(unsigned short cols, unsigned short rows)
{
    std::lock_guard lk(mutex_);
    if (ended_)
        return error(errc::not_found, "process with pid " + std::to_string(pid_) + " not found", {"process.Update"});
    if (!pty_ || !in_.is_open()) return error(errc::invalid_argument, "the process has no pty", {"process.Update"});
    winsize ws{};
    ws.ws_col = cols;
    ws.ws_row = rows;
    if (::ioctl(in_.native_handle(), TIOCSWINSZ, &ws) != 0)
        return error(boost::system::error_code(errno, boost::system::system_category()), "resizing the pty failed",
                     {"process.Update"});
    return result<void>{};
}

void process::kill_and_abort_watchers()
{
    std::vector<std::shared_ptr<event_queue>> watchers;
    {
        std::lock_guard lk(mutex_);
        watchers.swap(watchers_);
        if (!ended_) ::kill(-pid_, SIGKILL);
    }
    for (auto const& w : watchers) w->close(true);
}

}  // namespace prism_e2b::local::detail
