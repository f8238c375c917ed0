// slirp4netns for sandboxes with internet access (see sandbox_network.hpp).
#include "emulator/sandbox_network.hpp"

#include "emulator/sandbox_fs.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sstream>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

std::string find_slirp4netns()
{
    // slirp4netns opens the tun device with our ids (a rootless server's: often 0600 root).
    if (::access("/dev/net/tun", R_OK | W_OK) != 0) return {};
    if (char const* e = std::getenv("PRISM_E2B_SLIRP4NETNS"); e && *e) return ::access(e, X_OK) == 0 ? e : "";
    char const* path = std::getenv("PATH");
    std::istringstream dirs(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        std::string const candidate = dir + "/slirp4netns";
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return {};
}

namespace {

constexpr int ready_timeout_ms = 10'000;

error network_error(std::string what) { return error(errc::server_error, std::move(what), {"create"}); }

}  // namespace

result<void> attach_user_network(std::string const& slirp4netns, pid_t init_pid, int init_pidfd)
{
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) return network_error("pipe failed");
    unique_fd ready_r(ready[0]), ready_w(ready[1]);
    // Everything the children need is built before fork(): the server has threads,
    // so the children only make async-signal-safe calls.
    std::string const exit_arg = "--exit-fd=3", ready_arg = "--ready-fd=4", pid_arg = std::to_string(init_pid);
    std::array<char const*, 11> argv = {"slirp4netns",
                                        "--configure",
                                        "--mtu=65520",
                                        "--disable-host-loopback",
                                        "--enable-sandbox",
                                        "--enable-seccomp",
                                        exit_arg.c_str(),
                                        ready_arg.c_str(),
                                        pid_arg.c_str(),
                                        "tap0",
                                        nullptr};
    std::array<char const*, 1> envp = {nullptr};
    // Double fork: slirp4netns is reparented away from the server, which therefore
    // never has to reap it, and it lives on should the server die.
    pid_t const middle = ::fork();
    if (middle < 0) return network_error("fork failed");
    if (middle == 0) {
        ::setsid();
        pid_t const slirp = ::fork();
        if (slirp == 0) {
            int const null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
            if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(null_fd, 1) < 0 || ::dup2(null_fd, 2) < 0 ||
                ::dup2(init_pidfd, 3) < 0 || ::dup2(ready_w.get(), 4) < 0)
                ::_exit(127);
            // Nothing else of the server's (its listener, client sockets, sandbox files) reaches
            // slirp4netns, which runs beside sandboxed code and outlives the server.
            if (::syscall(SYS_close_range, 5u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) ::_exit(127);
            ::execve(slirp4netns.c_str(), const_cast<char* const*>(argv.data()), const_cast<char* const*>(envp.data()));
            ::_exit(127);
        }
        ::_exit(slirp < 0 ? 1 : 0);
    }
    int status = 0;
    while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    ready_w = unique_fd();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return network_error("cannot start slirp4netns");
    // slirp4netns writes "1" once tap0 is up and configured; EOF means it died first.
    pollfd p{ready_r.get(), POLLIN, 0};
    int rc;
    do {
        rc = ::poll(&p, 1, ready_timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (rc <= 0) return network_error("slirp4netns did not configure the sandbox's network in time");
    char c = 0;
    if (::read(ready_r.get(), &c, 1) != 1 || c != '1')
        return network_error("slirp4netns failed to configure the sandbox's network");
    return result<void>{};
}

}  // namespace prism_e2b::local::detail
