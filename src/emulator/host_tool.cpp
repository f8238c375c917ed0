// Running a host program to completion (host_tool.hpp).
#include "emulator/host_tool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace prism_e2b::local::detail {

std::string find_host_tool(std::string_view name)
{
    if (name.find('/') != std::string_view::npos)
        return ::access(std::string(name).c_str(), X_OK) == 0 ? std::string(name) : std::string();
    std::string dirs = "/usr/sbin:/sbin:/usr/bin:/bin";
    if (char const* path = std::getenv("PATH")) dirs = std::string(path) + ":" + dirs;
    std::size_t start = 0;
    while (start <= dirs.size()) {
        auto const end = std::min(dirs.find(':', start), dirs.size());
        auto candidate = dirs.substr(start, end - start) + "/" + std::string(name);
        if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return {};
}

result<void> run_host_tool(std::vector<std::string> const& argv, std::string_view what)
{
    auto const fail = [&](std::string why) {
        return error(errc::server_error, std::string(what) + " " + why, {"host tool"});
    };
    auto const program = argv.empty() ? std::string() : find_host_tool(argv[0]);
    if (program.empty()) return fail("is not installed");
    std::vector<char*> args;
    for (auto const& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    for (int fd : {0, 1, 2}) ::posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
    ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // none of the server's sockets or files
    pid_t pid = -1;
    int const rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return fail("could not start");
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return fail("could not be waited for");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return fail("failed");
    return result<void>{};
}

}  // namespace prism_e2b::local::detail
