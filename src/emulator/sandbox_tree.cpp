// Tree copy with owner translation, and disk usage (sandbox_tree.hpp).
#include "emulator/sandbox_tree.hpp"

#include "emulator/namespaces_engine.hpp"
#include "emulator/sandbox_fs.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

constexpr int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

/// The names in a directory (without "." and ".."), read from a duplicate of `fd`.
bool list_dir(int fd, std::vector<std::string>& names)
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

struct copier {
    uid_t to_base;
    std::optional<uid_t> owner_inside;
    bool chown_ok = ::geteuid() == 0;
    std::string failed;  ///< the relative path that failed, with the reason

    void own(int fd, char const* name, struct stat const& st, bool symlink) const
    {
        if (!chown_ok) return;
        uid_t const uid = to_base + owner_inside.value_or(sandbox_view_id(st.st_uid));
        gid_t const gid = to_base + owner_inside.value_or(sandbox_view_id(st.st_gid));
        if (symlink)
            (void)::fchownat(fd, name, uid, gid, AT_SYMLINK_NOFOLLOW);
        else
            (void)::fchown(fd, uid, gid);
    }

    bool fail(std::string const& rel, char const* what)
    {
        failed = rel + ": " + what + " (" + std::strerror(errno) + ")";
        return false;
    }

    bool copy_file(int from_dir, int to_dir, std::string const& name, std::string const& rel, struct stat const& st)
    {
        unique_fd in(::openat(from_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!in) return fail(rel, "cannot open");
        struct stat now {};
        if (::fstat(in.get(), &now) != 0 || !S_ISREG(now.st_mode)) return true;  // swapped meanwhile: skip
        ::unlinkat(to_dir, name.c_str(), 0);
        unique_fd out(::openat(to_dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!out) return fail(rel, "cannot create");
        char buf[1 << 16];
        for (;;) {
            ssize_t const n = ::read(in.get(), buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return fail(rel, "cannot read");
            if (n == 0) break;
            for (ssize_t off = 0; off < n;) {
                ssize_t const w = ::write(out.get(), buf + off, static_cast<std::size_t>(n - off));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) return fail(rel, "cannot write");
                off += w;
            }
        }
        own(out.get(), nullptr, st, false);
        ::fchmod(out.get(), st.st_mode & 01777);  // no set-uid/set-gid: owners change hands here
        return true;
    }

    bool copy_dir(int from, int to, std::string const& rel, int depth)
    {
        if (depth > max_tree_depth) {
            errno = ELOOP;
            return fail(rel, "deeper than the copy allows");
        }
        std::vector<std::string> names;
        if (!list_dir(from, names)) return fail(rel, "cannot list");
        for (auto const& name : names) {
            std::string const sub = rel.empty() ? name : rel + "/" + name;
            struct stat st {};
            if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
            if (S_ISDIR(st.st_mode)) {
                unique_fd in(::openat(from, name.c_str(), dir_flags));
                if (!in) continue;  // swapped for something else meanwhile
                if (::mkdirat(to, name.c_str(), 0700) != 0 && errno != EEXIST) return fail(sub, "cannot create");
                unique_fd out(::openat(to, name.c_str(), dir_flags));
                if (!out) return fail(sub, "cannot open the copy");
                if (!copy_dir(in.get(), out.get(), sub, depth + 1)) return false;
                own(out.get(), nullptr, st, false);
                ::fchmod(out.get(), st.st_mode & 01777);
            } else if (S_ISREG(st.st_mode)) {
                if (!copy_file(from, to, name, sub, st)) return false;
            } else if (S_ISLNK(st.st_mode)) {
                std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
                ssize_t const n = ::readlinkat(from, name.c_str(), target.data(), target.size());
                if (n < 0 || static_cast<std::size_t>(n) >= target.size()) continue;  // changed meanwhile
                target.resize(static_cast<std::size_t>(n));
                ::unlinkat(to, name.c_str(), 0);
                if (::symlinkat(target.c_str(), to, name.c_str()) != 0) return fail(sub, "cannot create the link");
                own(to, name.c_str(), st, true);
            }
            // FIFOs, sockets and devices are not part of a copy.
        }
        return true;
    }
};

/// Opens (creating when `create`) each component of `rel` under `dir` without following symlinks.
unique_fd open_relative(int dir, std::string const& rel, bool create)
{
    unique_fd cur(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
    std::size_t i = 0;
    while (cur && i < rel.size()) {
        auto j = rel.find('/', i);
        if (j == std::string::npos) j = rel.size();
        std::string const part = rel.substr(i, j - i);
        if (!part.empty()) {
            if (create) ::mkdirat(cur.get(), part.c_str(), 0755);
            cur = unique_fd(::openat(cur.get(), part.c_str(), dir_flags));
        }
        i = j + 1;
    }
    return cur;
}

std::uint64_t usage_of(int dir, int depth)
{
    if (depth > max_tree_depth) return 0;
    std::vector<std::string> names;
    if (!list_dir(dir, names)) return 0;
    std::uint64_t total = 0;
    for (auto const& name : names) {
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        total += static_cast<std::uint64_t>(st.st_blocks) * 512u;
        if (S_ISDIR(st.st_mode))
            if (unique_fd sub(::openat(dir, name.c_str(), dir_flags)); sub) total += usage_of(sub.get(), depth + 1);
    }
    return total;
}

}  // namespace

result<void> copy_tree(fs::path const& from, fs::path const& to, uid_t to_base, std::vector<std::string> const& only,
                       std::optional<uid_t> owner_inside)
{
    auto failure = [](std::string const& what) { return error(errc::server_error, what, {"copy"}); };
    std::error_code ec;
    fs::create_directories(to, ec);
    unique_fd from_root(::open(from.c_str(), dir_flags));
    unique_fd to_root(::open(to.c_str(), dir_flags));
    if (!from_root) return failure("cannot open " + from.string());
    if (!to_root) return failure("cannot open " + to.string());
    copier c{to_base, owner_inside};
    if (only.empty()) {
        if (!c.copy_dir(from_root.get(), to_root.get(), "", 0)) return failure("cannot copy " + c.failed);
        return result<void>{};
    }
    for (auto const& rel : only) {
        unique_fd in = open_relative(from_root.get(), rel, false);
        if (!in) continue;  // not in this tree (or not a real directory)
        unique_fd out = open_relative(to_root.get(), rel, true);
        if (!out) return failure("cannot create " + rel);
        if (!c.copy_dir(in.get(), out.get(), rel, 0)) return failure("cannot copy " + c.failed);
    }
    return result<void>{};
}

std::uint64_t tree_disk_usage(fs::path const& root)
{
    unique_fd fd(::open(root.c_str(), dir_flags));
    return fd ? usage_of(fd.get(), 0) : 0;
}

}  // namespace prism_e2b::local::detail
