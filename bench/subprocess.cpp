// posix_spawn-based child processes and loopback port helpers.
#include "subprocess.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace prism_e2b::bench {

std::optional<child_process> child_process::spawn(std::string const& program, std::vector<std::string> const& args,
                                                  std::map<std::string, std::string> const& env, bool capture_stdout,
                                                  std::string* error)
{
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
        std::string const s(*e);
        auto const eq = s.find('=');
        if (eq != std::string::npos && env.count(s.substr(0, eq))) continue;
        env_strings.push_back(s);
    }
    for (auto const& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> argv_strings{program};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    int fds[2] = {-1, -1};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (capture_stdout) {
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            if (error) *error = std::string("pipe: ") + std::strerror(errno);
            posix_spawn_file_actions_destroy(&actions);
            return std::nullopt;
        }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    }
    child_process c;
    int const rc = ::posix_spawn(&c.pid_, program.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (capture_stdout) ::close(fds[1]);
    if (rc != 0) {
        if (capture_stdout) ::close(fds[0]);
        if (error) *error = "spawn " + program + ": " + std::strerror(rc);
        return std::nullopt;
    }
    c.stdout_fd_ = capture_stdout ? fds[0] : -1;
    return c;
}

child_process::child_process(child_process&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), stdout_fd_(std::exchange(o.stdout_fd_, -1)), status_(o.status_)
{
}

child_process::~child_process()
{
    if (pid_ > 0 && !status_) terminate();
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

std::string child_process::read_all_stdout()
{
    std::string out;
    if (stdout_fd_ < 0) return out;
    char buf[65536];
    for (;;) {
        ssize_t const n = ::read(stdout_fd_, buf, sizeof buf);
        if (n > 0)
            out.append(buf, static_cast<std::size_t>(n));
        else if (n < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    ::close(stdout_fd_);
    stdout_fd_ = -1;
    return out;
}

std::string child_process::read_line()
{
    std::string line;
    char c = 0;
    while (stdout_fd_ >= 0) {
        ssize_t const n = ::read(stdout_fd_, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || c == '\n') break;
        line += c;
    }
    return line;
}

int child_process::wait()
{
    if (status_) return *status_;
    if (pid_ <= 0) return -1;
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return *status_;
}

int child_process::terminate(std::chrono::milliseconds grace)
{
    if (status_ || pid_ <= 0) return status_.value_or(-1);
    ::kill(pid_, SIGTERM);
    auto const deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
        int st = 0;
        pid_t const r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            return *status_;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGKILL);
    return wait();
}

int free_loopback_port()
{
    int const fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    int port = -1;
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

bool wait_for_port(int port, std::chrono::milliseconds timeout)
{
    auto const deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int const fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(static_cast<std::uint16_t>(port));
        bool const ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
        ::close(fd);
        if (ok) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
}

std::string find_sibling_executable(std::string const& name, std::string const& fallback)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (fs::path dir = self.parent_path(); !dir.empty(); dir = dir.parent_path()) {
            if (fs::exists(dir / name, ec)) return (dir / name).string();
            if (dir == dir.root_path()) break;
        }
    }
    if (!fallback.empty() && fs::exists(fallback, ec)) return fallback;
    return {};
}

std::string which(std::string const& program)
{
    char const* path = std::getenv("PATH");
    if (!path) return {};
    std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
        auto const end = p.find(':', start);
        std::string const dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string const cand = (dir.empty() ? "." : dir) + "/" + program;
        if (::access(cand.c_str(), X_OK) == 0) return cand;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return {};
}

}  // namespace prism_e2b::bench
