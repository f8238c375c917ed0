// prism-e2b-local as a child process on an ephemeral loopback port (tests that
// kill it with SIGKILL and start it again on the same state dir).
#ifndef PRISM_E2B_TESTS_COMMON_SERVER_PROCESS_HPP
#define PRISM_E2B_TESTS_COMMON_SERVER_PROCESS_HPP

#ifdef PRISM_E2B_HAVE_LOCAL_BINARY

#include "built_binaries.hpp"

#include <csignal>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace prism_e2b::test {

/// Host ids a server_process runs as (a root test starting a server that is not root).
struct run_as {
    uid_t uid = 0;
    gid_t gid = 0;
};

/// prism-e2b-local as a child process; its port comes from its first stdout line.
class server_process {
public:
    /// `extra` are more arguments (e.g. {"--engine", "gvisor"}); `as`: the ids it runs as
    /// (no supplementary groups); empty: the test's own.
    server_process(std::string const& state_dir, std::string const& api_key, std::vector<std::string> extra = {},
                   std::optional<run_as> as = std::nullopt)
    {
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error("pipe");
        std::string const env_key = "E2B_API_KEY=" + api_key;
        std::vector<char const*> argv = {prism_e2b_local_binary(), "--listen", "127.0.0.1:0", "--state-dir",
                                         state_dir.c_str()};
        for (auto const& a : extra) argv.push_back(a.c_str());
        argv.push_back(nullptr);
        char const* envp[] = {env_key.c_str(), "PATH=/usr/bin:/bin", nullptr};
        pid_ = ::fork();  // the child only makes syscalls: everything it needs is built above
        if (pid_ == 0) {
            ::dup2(out[1], 1);
            ::close(out[0]);
            ::close(out[1]);
            // Raw syscalls: the child of a threaded test process only makes syscalls.
            if (as && (::syscall(SYS_setgroups, 0, nullptr) != 0 ||
                       ::syscall(SYS_setresgid, as->gid, as->gid, as->gid) != 0 ||
                       ::syscall(SYS_setresuid, as->uid, as->uid, as->uid) != 0))
                ::_exit(126);
            ::execve(argv[0], const_cast<char* const*>(argv.data()), const_cast<char* const*>(envp));
            ::_exit(127);
        }
        ::close(out[1]);
        out_ = out[0];
        std::string line;
        char c;
        while (::read(out_, &c, 1) == 1 && c != '\n') line.push_back(c);
        auto const colon = line.rfind(':');
        if (line.rfind("E2B_API_URL=", 0) != 0 || colon == std::string::npos)
            throw std::runtime_error("prism-e2b-local did not start: " + line);
        port_ = static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
    }
    ~server_process()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(out_);
    }
    std::uint16_t port() const { return port_; }
    /// Sends `sig` and returns the wait status.
    int signal_and_wait(int sig)
    {
        ::kill(pid_, sig);
        int st = 0;
        ::waitpid(pid_, &st, 0);
        pid_ = -1;
        return st;
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::uint16_t port_ = 0;
};

}  // namespace prism_e2b::test

#endif  // PRISM_E2B_HAVE_LOCAL_BINARY

#endif
