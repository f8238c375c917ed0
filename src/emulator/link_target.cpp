// Resolved symlink targets (link_target.hpp).
#include "emulator/link_target.hpp"

#include "emulator/sandbox_fs.hpp"

#include <climits>
#include <fcntl.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace {

/// The host path of an open descriptor ("" when unknown).
std::string path_of(int fd)
{
    char buf[PATH_MAX];
    ssize_t const n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof buf);
    return n > 0 && static_cast<std::size_t>(n) < sizeof buf ? std::string(buf, static_cast<std::size_t>(n))
                                                             : std::string();
}

}  // namespace

std::string resolved_link_target(int root_fd, std::string const& link_path, std::string const& link_text)
{
    if (unique_fd fd = open_in_root(root_fd, link_path, O_PATH); fd) {
        auto const root = path_of(root_fd);
        auto const target = path_of(fd.get());
        if (root == "/") return target;  // the agent: the sandbox's root is "/"
        if (!root.empty() && target.rfind(root, 0) == 0 && (target.size() == root.size() || target[root.size()] == '/'))
            return target.size() == root.size() ? std::string("/") : target.substr(root.size());
    }
    std::string parent, name;
    if (link_text.empty() || link_text[0] == '/' || !split_parent(link_path, parent, name))
        return normalize_sandbox_path(link_text.empty() ? "/" : link_text).value_or(link_text);
    return normalize_sandbox_path(parent + "/" + link_text).value_or(link_text);
}

}  // namespace prism_e2b::local::detail
