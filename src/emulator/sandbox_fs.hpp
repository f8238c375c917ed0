// Sandbox paths: lexical normalisation (relative paths start at /home/user; a
// `..` above "/" is refused) and descriptor-based access under the sandbox's
// root with openat2(RESOLVE_IN_ROOT), so neither `..` nor symlinks can leave it.
#ifndef PRISM_E2B_EMULATOR_SANDBOX_FS_HPP
#define PRISM_E2B_EMULATOR_SANDBOX_FS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

inline constexpr std::string_view sandbox_home = "/home/user";

/// "/a/./b/../c" -> "/a/c"; "x" -> "/home/user/x"; nullopt when `..` climbs above "/"
/// or the path holds a NUL byte.
std::optional<std::string> normalize_sandbox_path(std::string_view path);

/// An owned file descriptor.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(unique_fd&& o) noexcept : fd_(o.release()) {}
    unique_fd& operator=(unique_fd&& o) noexcept;
    ~unique_fd();
    int get() const noexcept { return fd_; }
    int release() noexcept
    {
        int f = fd_;
        fd_ = -1;
        return f;
    }
    explicit operator bool() const noexcept { return fd_ >= 0; }

private:
    int fd_ = -1;
};

/// openat2(root_fd, path relative to "/", flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS).
/// `normalized` is an absolute normalised sandbox path. Returns -1 with errno set.
unique_fd open_in_root(int root_fd, std::string const& normalized, int flags, mode_t mode = 0);

/// Splits "/a/b/c" into ("/a/b", "c"); "/" has no parent (returns false).
bool split_parent(std::string const& normalized, std::string& parent, std::string& name);

/// Creates every missing directory of `normalized` under the root (mode 0755),
/// owned by uid/gid. Returns 0 or an errno value.
int make_dirs_in_root(int root_fd, std::string const& normalized, uid_t uid = 0, gid_t gid = 0);

/// A file opened by open_regular_in_root.
struct regular_file {
    unique_fd fd;
    int error = 0;      ///< 0, an errno value, or not_regular_file
    struct stat st {};  ///< of the path found (also when it was refused)
};

/// open_regular_in_root's error for a FIFO, socket or device.
inline constexpr int not_regular_file = -1;

/// Opens `normalized` (as open_in_root) only when it is a regular file, never blocking:
/// the type is checked on an O_PATH descriptor before any open for I/O (so a FIFO,
/// socket or device is never opened), and again on the real descriptor, which is
/// opened O_NONBLOCK | O_NOCTTY in case the path was swapped meanwhile. O_TRUNC is
/// applied only once the file is known to be regular. A directory gives EISDIR.
regular_file open_regular_in_root(int root_fd, std::string const& normalized, int flags, mode_t mode = 0);

/// Removes `name` inside `dir_fd`, recursively for directories (never following symlinks).
/// Holds two descriptors at most, however deep the tree (it walks back up through
/// "..", checking each parent is the directory it came down from). Returns 0 or an errno value.
int remove_tree_at(int dir_fd, std::string const& name);

/// remove_tree_at for a host path (its parent directory opened by path): for the
/// server's own directories, e.g. a killed sandbox's. Returns 0 or an errno value.
int remove_tree(std::string const& path);

/// The names in the directory `fd` (without "." and ".."), read through a duplicate of it.
/// False when it cannot be read.
bool list_dir_names(int fd, std::vector<std::string>& names);

/// Go's os.FileMode.String() for a stat mode ("-rw-r--r--", "drwxr-xr-x", "Lrwxrwxrwx").
std::string go_mode_string(mode_t mode);

}  // namespace prism_e2b::local::detail

#endif
