// Path normalisation and openat2-based access confined to a sandbox root.
#include "emulator/sandbox_fs.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
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

namespace {

/// Is `root_fd` this process's own "/"?
bool is_own_root(int root_fd)
{
    struct stat a {
    }, b{};
    return ::fstat(root_fd, &a) == 0 && ::stat("/", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

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
    if (r < 0 && errno == ENOSYS && is_own_root(root_fd)) {
        // No openat2 (gVisor's kernel): below this process's own "/" every lookup stays inside
        // anyway, so a plain openat resolves the same (the envd agent inside a sandbox).
        do {
            r = ::openat(root_fd, rel.c_str(), flags | O_CLOEXEC, (flags & O_CREAT) ? mode : 0);
        } while (r < 0 && errno == EINTR);
    }  // elsewhere a plain openat would not be confined: ENOSYS stays the answer
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

regular_file open_regular_in_root(int root_fd, std::string const& normalized, int flags, mode_t mode)
{
    regular_file out;
    auto refuse = [&](int e) {
        out.fd = unique_fd();
        out.error = e;
        return std::move(out);
    };
    auto type_error = [](mode_t m) { return S_ISDIR(m) ? EISDIR : not_regular_file; };
    // Look first: an O_PATH descriptor opens nothing, so a FIFO cannot wait for a peer
    // and a device driver never sees an open.
    if (unique_fd probe = open_in_root(root_fd, normalized, O_PATH)) {
        if (::fstat(probe.get(), &out.st) != 0) return refuse(errno);
        if (!S_ISREG(out.st.st_mode)) return refuse(type_error(out.st.st_mode));
    } else if (errno != ENOENT || !(flags & O_CREAT)) {
        return refuse(errno);
    }
    // O_NONBLOCK in case the path became a FIFO since: open() then answers at once (ENXIO
    // for a writer without a reader) instead of waiting.
    out.fd = open_in_root(root_fd, normalized, (flags & ~O_TRUNC) | O_NONBLOCK | O_NOCTTY, mode);
    if (!out.fd) return refuse(errno == ENXIO ? not_regular_file : errno);
    if (::fstat(out.fd.get(), &out.st) != 0) return refuse(errno);
    if (!S_ISREG(out.st.st_mode)) return refuse(type_error(out.st.st_mode));
    if ((flags & O_TRUNC) && ::ftruncate(out.fd.get(), 0) != 0) return refuse(errno);
    int const fl = ::fcntl(out.fd.get(), F_GETFL);
    if (fl < 0 || ::fcntl(out.fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) return refuse(errno);
    return out;
}

namespace {

constexpr int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

enum class pass_result { empty, progress, descend, failed };

/// One pass over the directory open as `fd`: unlinks what is not a directory, removes
/// empty subdirectories, and stops at the first subdirectory that is not empty (`sub`).
pass_result empty_pass(int fd, std::string& sub, int& err)
{
    int const d2 = ::dup(fd);  // closedir closes its descriptor; `fd` stays ours
    if (d2 < 0) return err = errno, pass_result::failed;
    DIR* d = ::fdopendir(d2);
    if (!d) {
        err = errno;
        ::close(d2);
        return pass_result::failed;
    }
    ::rewinddir(d);  // the dup shares the offset a previous pass left at the end
    pass_result res = pass_result::empty;
    while (auto* ent = ::readdir(d)) {
        char const* n = ent->d_name;
        if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0) continue;
        bool is_dir = ent->d_type == DT_DIR;
        if (ent->d_type == DT_UNKNOWN) {
            struct stat st {};
            if (::fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno == ENOENT) continue;
                err = errno;
                res = pass_result::failed;
                break;
            }
            is_dir = S_ISDIR(st.st_mode);
        }
        if (::unlinkat(fd, n, is_dir ? AT_REMOVEDIR : 0) == 0 || errno == ENOENT) {
            res = pass_result::progress;
            continue;
        }
        if (is_dir && (errno == ENOTEMPTY || errno == EEXIST)) {
            sub = n;
            res = pass_result::descend;
        } else {
            err = errno;
            res = pass_result::failed;
        }
        break;
    }
    ::closedir(d);
    return res;
}

bool same_file(int fd, dev_t dev, ino_t ino)
{
    struct stat st {};
    return ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

}  // namespace

int remove_tree_at(int dir_fd, std::string const& name)
{
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ::unlinkat(dir_fd, name.c_str(), 0) == 0 ? 0 : errno;
    // The directories from `name` down to the one being emptied: names and identities
    // only, one descriptor (`cur`) for the deepest.
    struct level {
        std::string name;
        dev_t dev;
        ino_t ino;
    };
    std::vector<level> stack;
    unique_fd cur(::openat(dir_fd, name.c_str(), dir_flags));
    if (!cur) return errno;
    if (::fstat(cur.get(), &st) != 0) return errno;
    stack.push_back({name, st.st_dev, st.st_ino});
    for (;;) {
        std::string sub;
        int err = 0;
        switch (empty_pass(cur.get(), sub, err)) {
            case pass_result::failed:
                return err;
            case pass_result::progress:
                continue;  // look again: entries removed while reading may hide others
            case pass_result::descend: {
                unique_fd next(::openat(cur.get(), sub.c_str(), dir_flags));
                if (!next) {
                    if (errno == ENOENT) continue;
                    return errno;
                }
                if (::fstat(next.get(), &st) != 0) return errno;
                stack.push_back({std::move(sub), st.st_dev, st.st_ino});
                cur = std::move(next);  // the parent's descriptor is closed: one per tree, not per level
                continue;
            }
            case pass_result::empty:
                break;
        }
        level const done = std::move(stack.back());
        stack.pop_back();
        if (stack.empty()) return ::unlinkat(dir_fd, done.name.c_str(), AT_REMOVEDIR) == 0 ? 0 : errno;
        unique_fd parent(::openat(cur.get(), "..", dir_flags & ~O_NOFOLLOW));
        if (!parent) return errno;
        // Moved while we were removing it: ".." is no longer where we came from.
        if (!same_file(parent.get(), stack.back().dev, stack.back().ino)) return ESTALE;
        cur = std::move(parent);
        if (::unlinkat(cur.get(), done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) return errno;
    }
}

bool list_dir_names(int fd, std::vector<std::string>& names)
{
    int const dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return false;
    DIR* d = ::fdopendir(dup);
    if (!d) {
        ::close(dup);
        return false;
    }
    while (dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        names.emplace_back(e->d_name);
    }
    ::closedir(d);
    return true;
}

int remove_tree(std::string const& path)
{
    auto const slash = path.find_last_of('/');
    std::string const parent = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    std::string const name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (name.empty() || name == "." || name == "..") return EINVAL;
    unique_fd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return errno;
    return remove_tree_at(dir.get(), name);
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
