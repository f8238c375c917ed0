// Runs the real prism-e2b binary (prism_e2b_cli_binary) as a child process
// against a local server: with its own environment (never the test's), a
// given stdin, and a deadline after which it is killed (and the test fails).
#ifndef PRISM_E2B_TESTS_CLI_CLI_HARNESS_HPP
#define PRISM_E2B_TESTS_CLI_CLI_HARNESS_HPP

#include "built_binaries.hpp"
#include "local_server_fixture.hpp"

#include <boost/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace prism_e2b::test {

/// Writing to a child that closed its stdin must fail with EPIPE, not end the test.
inline bool const sigpipe_ignored = (::signal(SIGPIPE, SIG_IGN), true);

struct cli_result {
    int exit = -1;  ///< the exit code; 128+N for signal N; -1 when the deadline killed it
    std::string out;
    std::string err;
    long peak_rss_kib = 0;  ///< the child's peak resident set (wait4's ru_maxrss)

    boost::json::value json() const { return boost::json::parse(out); }
};

/// The child's whole environment: what the official SDK reads, for `srv`.
inline std::map<std::string, std::string> cli_env(local_server_fixture const& srv)
{
    return {{"E2B_API_KEY", srv.api_key()},
            {"E2B_API_URL", srv.api_url()},
            {"E2B_SANDBOX_URL", srv.sandbox_url()},
            {"PATH", "/usr/local/bin:/usr/bin:/bin"},
            {"HOME", "/tmp"}};
}

inline std::vector<char*> c_strings(std::vector<std::string>& v)
{
    std::vector<char*> out;
    for (auto& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

inline std::vector<std::string> env_strings(std::map<std::string, std::string> const& env)
{
    std::vector<std::string> out;
    for (auto const& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

/// Runs `prism-e2b args...`, writing `input` to its stdin (then closing it).
inline cli_result run_cli(std::vector<std::string> args, std::map<std::string, std::string> const& env,
                          std::string const& input = {}, std::chrono::milliseconds deadline = std::chrono::seconds(90))
{
    std::vector<std::string> argv_s{prism_e2b_cli_binary()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    auto envp_s = env_strings(env);
    auto argv = c_strings(argv_s);
    auto envp = c_strings(envp_s);
    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    pid_t const pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // only async-signal-safe calls until exec
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::syscall(SYS_close_range, 3u, ~0u, 0u);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::fcntl(in[1], F_SETFL, O_NONBLOCK);
    std::size_t written = 0;
    if (input.empty()) {
        ::close(in[1]);
        in[1] = -1;
    }
    cli_result r;
    auto const until = std::chrono::steady_clock::now() + deadline;
    int open_outputs = 2;
    bool killed = false;
    while (open_outputs > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            ::kill(pid, SIGKILL);
            killed = true;
            break;
        }
        pollfd fds[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
        ::poll(fds, in[1] >= 0 ? 3 : 2, static_cast<int>(left.count()));
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[65536];
            auto n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                (i == 0 ? out[0] : err[0]) = -1;
                --open_outputs;
            }
        }
        if (in[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            auto n = ::write(in[1], input.data() + written, input.size() - written);
            if (n > 0) written += static_cast<std::size_t>(n);
            if (n < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // the child closed its stdin
            if (written == input.size()) {
                ::close(in[1]);
                in[1] = -1;
            }
        }
    }
    for (int fd : {in[1], out[0], err[0]})
        if (fd >= 0) ::close(fd);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    r.peak_rss_kib = usage.ru_maxrss;
    if (killed)
        r.exit = -1;
    else if (WIFEXITED(status))
        r.exit = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        r.exit = 128 + WTERMSIG(status);
    return r;
}

}  // namespace prism_e2b::test

#endif
