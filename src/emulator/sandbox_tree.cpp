// Tree copy with owner translation, and disk usage (sandbox_tree.hpp).
#include "emulator/sandbox_tree.hpp"

#include "emulator/engines/namespaces/sandbox_init.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/small_files.hpp"
#include "emulator/system_layer.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

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

    /// The writable system's upper layers (system_layer.hpp) are copied as an overlay reads
    /// them: whiteouts, its user.overlay.* attributes and set-id bits (owned in the range) kept.
    static bool in_layer(std::string const& rel)
    {
        std::string_view const l = system_layer_name;
        return rel.starts_with(l) && (rel.size() == l.size() || rel[l.size()] == '/');
    }

    static void copy_overlay_xattrs(int from, int to)
    {
        char names[4096];
        ssize_t const n = ::flistxattr(from, names, sizeof names);
        for (ssize_t i = 0; i < n;) {
            std::string_view const name(names + i);
            i += static_cast<ssize_t>(name.size()) + 1;
            if (!name.starts_with("user.overlay.")) continue;
            char value[4096];
            ssize_t const v = ::fgetxattr(from, name.data(), value, sizeof value);
            if (v >= 0) (void)::fsetxattr(to, name.data(), value, static_cast<std::size_t>(v), 0);
        }
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
        if (int const e = copy_contents(in.get(), out.get()); e != 0) {
            errno = e;
            return fail(rel, "cannot copy");
        }
        own(out.get(), nullptr, st, false);
        bool const layer = in_layer(rel);
        if (layer) copy_overlay_xattrs(in.get(), out.get());
        // No set-uid/set-gid where owners change hands (a template's files); the system layer
        // keeps them: its owners stay in the sandbox's range.
        ::fchmod(out.get(), st.st_mode & (layer ? 07777 : 01777));
        return true;
    }

    bool copy_dir(int from, int to, std::string const& rel, int depth)
    {
        if (depth > max_tree_depth) {
            errno = ELOOP;
            return fail(rel, "deeper than the copy allows");
        }
        std::vector<std::string> names;
        if (!list_dir_names(from, names)) return fail(rel, "cannot list");
        for (auto const& name : names) {
            std::string const sub = rel.empty() ? name : rel + "/" + name;
            struct stat st {};
            if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
            if (S_ISDIR(st.st_mode)) {
                unique_fd in(::openat(from, name.c_str(), tree_dir_flags));
                if (!in) continue;  // swapped for something else meanwhile
                if (::mkdirat(to, name.c_str(), 0700) != 0 && errno != EEXIST) return fail(sub, "cannot create");
                unique_fd out(::openat(to, name.c_str(), tree_dir_flags));
                if (!out) return fail(sub, "cannot open the copy");
                if (!copy_dir(in.get(), out.get(), sub, depth + 1)) return false;
                own(out.get(), nullptr, st, false);
                if (in_layer(sub)) copy_overlay_xattrs(in.get(), out.get());
                ::fchmod(out.get(), st.st_mode & (in_layer(sub) ? 07777 : 01777));
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
            } else if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0) && in_layer(sub)) {
                ::unlinkat(to, name.c_str(), 0);  // a whiteout: what the layer hides stays hidden
                if (::mknodat(to, name.c_str(), S_IFCHR | 0000, makedev(0, 0)) != 0)
                    return fail(sub, "cannot create the whiteout");
                own(to, name.c_str(), st, true);
            }
            // FIFOs, sockets and other devices are not part of a copy.
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
            cur = unique_fd(::openat(cur.get(), part.c_str(), tree_dir_flags));
        }
        i = j + 1;
    }
    return cur;
}

std::uint64_t usage_of(int dir, int depth)
{
    if (depth > max_tree_depth) return 0;
    std::vector<std::string> names;
    if (!list_dir_names(dir, names)) return 0;
    std::uint64_t total = 0;
    for (auto const& name : names) {
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        total += static_cast<std::uint64_t>(st.st_blocks) * 512u;
        if (S_ISDIR(st.st_mode))
            if (unique_fd sub(::openat(dir, name.c_str(), tree_dir_flags)); sub)
                total += usage_of(sub.get(), depth + 1);
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
    unique_fd from_root(::open(from.c_str(), tree_dir_flags));
    unique_fd to_root(::open(to.c_str(), tree_dir_flags));
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
    unique_fd fd(::open(root.c_str(), tree_dir_flags));
    return fd ? usage_of(fd.get(), 0) : 0;
}

}  // namespace prism_e2b::local::detail
