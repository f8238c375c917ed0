// Path normalisation and openat2-based access confined to a sandbox root.
#include "emulator/sandbox_fs.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

std::optional<std::string> normalize_sandbox_path(std::string_view path)
{
    if (path.find('\0') != std::string_view::npos) return std::nullopt;
    std::string full;
    if (path.empty() || path.front() != '/') {
        full = std::string(sandbox_home);
        if (!path.empty()) {
            full += '/';
            full += path;
        }
    } else {
        full = std::string(path);
    }
    std::vector<std::string> parts;
    std::size_t i = 0;
    while (i < full.size()) {
        while (i < full.size() && full[i] == '/') ++i;
        auto j = full.find('/', i);
        if (j == std::string::npos) j = full.size();
        std::string seg = full.substr(i, j - i);
        i = j;
        if (seg.empty() || seg == ".") continue;
        if (seg == "..") {
            if (parts.empty()) return std::nullopt;  // would leave the sandbox root
            parts.pop_back();
            continue;
        }
        parts.push_back(std::move(seg));
    }
    std::string out;
    for (auto const& p : parts) {
        out += '/';
        out += p;
    }
    return out.empty() ? std::string("/") : out;
}

unique_fd& unique_fd::operator=(unique_fd&& o) noexcept
{
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.release();
    }
    return *this;
}

unique_fd::~unique_fd()
{
    if (fd_ >= 0) ::close(fd_);
}

unique_fd open_in_root(int root_fd, std::string const& normalized, int flags, mode_t mode)
{
    std::string rel = normalized.size() > 1 ? normalized.substr(1) : std::string(".");
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    long r;
    do {
        r = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
    } while (r < 0 && (errno == EINTR || errno == EAGAIN));
    return unique_fd(static_cast<int>(r));
}

bool split_parent(std::string const& normalized, std::string& parent, std::string& name)
{
    if (normalized == "/" || normalized.empty()) return false;
    auto const pos = normalized.rfind('/');
    parent = pos == 0 ? std::string("/") : normalized.substr(0, pos);
    name = normalized.substr(pos + 1);
    return true;
}

int make_dirs_in_root(int root_fd, std::string const& normalized, uid_t uid, gid_t gid)
{
    unique_fd cur = open_in_root(root_fd, "/", O_PATH | O_DIRECTORY);
    if (!cur) return errno;
    std::size_t i = 1;
    while (i < normalized.size()) {
        auto j = normalized.find('/', i);
        if (j == std::string::npos) j = normalized.size();
        std::string seg = normalized.substr(i, j - i);
        i = j + 1;
        if (seg.empty()) continue;
        if (::mkdirat(cur.get(), seg.c_str(), 0755) == 0) {
            if ((uid != 0 || gid != 0) && ::fchownat(cur.get(), seg.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
                return errno;
        } else if (errno != EEXIST) {
            return errno;
        }
        // Re-resolve through the root so a symlinked component cannot lead outside.
        std::string upto = normalized.substr(0, j);
        unique_fd next = open_in_root(root_fd, upto, O_PATH | O_DIRECTORY);
        if (!next) return errno;
        cur = std::move(next);
    }
    return 0;
}

int remove_tree_at(int dir_fd, std::string const& name)
{
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ::unlinkat(dir_fd, name.c_str(), 0) == 0 ? 0 : errno;
    int sub = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) return errno;
    DIR* d = ::fdopendir(sub);
    if (!d) {
        int e = errno;
        ::close(sub);
        return e;
    }
    std::vector<std::string> names;
    while (auto* ent = ::readdir(d)) {
        std::string n = ent->d_name;
        if (n != "." && n != "..") names.push_back(std::move(n));
    }
    int rc = 0;
    for (auto const& n : names) {
        int e = remove_tree_at(::dirfd(d), n);
        if (e != 0 && e != ENOENT) rc = e;
    }
    ::closedir(d);
    if (rc != 0) return rc;
    return ::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0 ? 0 : errno;
}

std::string go_mode_string(mode_t mode)
{
    std::string s;
    if (S_ISDIR(mode))
        s += 'd';
    else if (S_ISLNK(mode))
        s += 'L';
    else if (S_ISFIFO(mode))
        s += 'p';
    else if (S_ISSOCK(mode))
        s += 'S';
    else if (S_ISCHR(mode))
        s += "Dc";
    else if (S_ISBLK(mode))
        s += 'D';
    char const* rwx = "rwxrwxrwx";
    std::string perm;
    for (int i = 0; i < 9; ++i) perm += (mode & (1 << (8 - i))) ? rwx[i] : '-';
    if (s.empty()) s = "-";
    return s + perm;
}

}  // namespace prism_e2b::local::detail
