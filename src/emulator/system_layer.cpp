// The sandbox's writable system layer: its directories, first files and whiteouts (system_layer.hpp).
#include "emulator/system_layer.hpp"

#include "emulator/engines/namespaces/sandbox_init.hpp"
#include "emulator/random_ids.hpp"
#include "emulator/sandbox_disk.hpp"
#include "emulator/sandbox_fs.hpp"
#include "emulator/sandbox_tree.hpp"
#include "emulator/small_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <mutex>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

constexpr int max_layer_depth = 64;

/// The sandbox's /etc/sudoers: root as usual, "user" without a password (E2B's base template).
constexpr char sudoers[] =
    "Defaults\tenv_reset\n"
    "Defaults\tsecure_path=\"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\"\n"
    "root\tALL=(ALL:ALL) ALL\n"
    "user\tALL=(ALL:ALL) NOPASSWD: ALL\n";

void walk_hidden(int dir, dev_t dev, std::string const& rel, int depth, std::vector<std::string>& out)
{
    if (depth > max_layer_depth) return;
    std::vector<std::string> names, subdirs;
    if (!list_dir_names(dir, names)) return;
    for (auto const& name : names) {
        struct stat st {};
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        std::string const path = rel + "/" + name;
        if (S_ISDIR(st.st_mode)) {
            if ((st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
                out.push_back(path);
            else if (st.st_dev == dev)  // another file system mounted here is not the system's
                subdirs.push_back(name);
        } else if (S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) == 0) {
            out.push_back(path);
        }
    }
    for (auto const& name : subdirs) {
        unique_fd sub(::openat(dir, name.c_str(), tree_dir_flags));
        if (sub) walk_hidden(sub.get(), dev, rel + "/" + name, depth + 1, out);
    }
}

/// The host's owner of `st`, as the sandbox's range sees it through the idmap.
uid_t mapped(uid_t base, uid_t host_id) { return host_id < ns_range_size ? base + host_id : base; }

/// Makes each missing directory of `rel` (relative to the system dir `dir`) under `upper`
/// with the mode and (mapped) owner of the host's; an open descriptor of the last one.
unique_fd upper_parent(std::string const& dir, fs::path const& upper, std::string const& rel, uid_t base)
{
    unique_fd cur(::open(upper.c_str(), tree_dir_flags));
    std::string host = "/" + dir;
    std::size_t i = 0;
    while (cur && i < rel.size()) {
        auto j = rel.find('/', i);
        if (j == std::string::npos) j = rel.size();
        std::string const part = rel.substr(i, j - i);
        i = j + 1;
        if (part.empty()) continue;
        host += "/" + part;
        struct stat hs {};
        if (::mkdirat(cur.get(), part.c_str(), 0755) == 0 && ::lstat(host.c_str(), &hs) == 0 && S_ISDIR(hs.st_mode)) {
            unique_fd made(::openat(cur.get(), part.c_str(), tree_dir_flags));
            if (made) {
                (void)::fchown(made.get(), mapped(base, hs.st_uid), mapped(base, hs.st_gid));
                (void)::fchmod(made.get(), hs.st_mode & 07777);
            }
        }
        cur = unique_fd(::openat(cur.get(), part.c_str(), tree_dir_flags));
    }
    return cur;
}

/// Splits "etc/ssl/private" into the system dir ("etc"), the parent inside it ("ssl") and the name.
bool split(std::string const& path, std::string& dir, std::string& parent, std::string& name)
{
    auto const first = path.find('/');
    auto const last = path.rfind('/');
    if (first == std::string::npos) return false;
    dir = path.substr(0, first);
    parent = last > first ? path.substr(first + 1, last - first - 1) : std::string();
    name = path.substr(last + 1);
    return !name.empty();
}

/// Whether the upper layer of `dir` holds something (a file, a directory, a whiteout) at `path`.
bool upper_holds(fs::path const& layer, std::string const& dir, std::string const& rest)
{
    struct stat st {};
    return ::lstat((layer / dir / "upper" / rest).c_str(), &st) == 0;
}

result<void> write_first(fs::path const& layer, std::string const& path, std::string const& text, mode_t mode,
                         uid_t base)
{
    std::string dir, parent, name;
    if (!split(path, dir, parent, name)) return result<void>{};
    if (upper_holds(layer, dir, parent.empty() ? name : parent + "/" + name)) return result<void>{};
    auto const at = upper_parent(dir, layer / dir / "upper", parent, base);
    unique_fd f;
    if (at) f = unique_fd(::openat(at.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!f || write_all(f.get(), text) != 0 || ::fchown(f.get(), base, base) != 0 || ::fchmod(f.get(), mode) != 0)
        return error(errc::server_error, "cannot write the sandbox's /" + path, {"create"});
    return result<void>{};
}

/// /etc/hosts resolves `hostname` (a fork boots with a new one): the host's file with the name
/// added the first time, the sandbox's own (kept as it wrote it) with the name appended.
result<void> name_host(fs::path const& layer, std::string const& hostname, uid_t base)
{
    if (hostname.empty()) return result<void>{};
    std::string const line = "127.0.1.1\t" + hostname + "\n";
    auto const own = layer / "etc" / "upper" / "hosts";
    struct stat st {};
    if (::lstat(own.c_str(), &st) != 0)
        return write_first(layer, "etc/hosts", read_small_file("/etc/hosts") + line, 0644, base);
    if (!S_ISREG(st.st_mode)) return result<void>{};  // removed (a whiteout) or replaced by the sandbox
    auto const text = read_small_file(own.string());
    if (text.find("\t" + hostname + "\n") != std::string::npos) return result<void>{};
    unique_fd f(::open(own.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
    if (!f || write_all(f.get(), (text.empty() || text.back() == '\n' ? "" : "\n") + line) != 0)
        return error(errc::server_error, "cannot name the sandbox's host in /etc/hosts", {"create"});
    return result<void>{};
}

/// What of /etc a snapshot holds: each entry "other" may read (and its directories may be
/// entered), in walk order (a directory before what it holds).
struct etc_entry {
    std::string rel;  ///< below /etc; empty: /etc itself
    struct stat st;
    std::string link;  ///< a symlink's target
};

void list_etc(int dir, dev_t dev, std::string const& rel, int depth, std::vector<etc_entry>& out)
{
    if (depth > max_layer_depth) return;
    std::vector<std::string> names;
    if (!list_dir_names(dir, names)) return;
    std::sort(names.begin(), names.end());  // the digest does not depend on the directory's order
    for (auto const& name : names) {
        etc_entry e{rel.empty() ? name : rel + "/" + name, {}, {}};
        if (::fstatat(dir, name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(e.st.st_mode)) {
            if ((e.st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) || e.st.st_dev != dev) continue;
            unique_fd sub(::openat(dir, name.c_str(), tree_dir_flags));
            if (!sub) continue;
            out.push_back(e);
            list_etc(sub.get(), dev, e.rel, depth + 1, out);
        } else if (S_ISREG(e.st.st_mode)) {
            if ((e.st.st_mode & S_IROTH) != 0) out.push_back(std::move(e));
        } else if (S_ISLNK(e.st.st_mode)) {
            std::string target(static_cast<std::size_t>(e.st.st_size) + 1, '\0');
            ssize_t const n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
            if (n < 0 || static_cast<std::size_t>(n) >= target.size()) continue;
            target.resize(static_cast<std::size_t>(n));
            e.link = std::move(target);
            out.push_back(std::move(e));
        }
    }
}

/// FNV-1a over what the snapshot would hold: a change of content shows as size or mtime.
std::string digest(std::vector<etc_entry> const& entries)
{
    std::uint64_t h = 14695981039346656037ull;
    auto mix = [&](std::string const& s) {
        for (unsigned char c : s) {
            h ^= c;
            h *= 1099511628211ull;
        }
    };
    for (auto const& e : entries)
        mix(e.rel + '|' + std::to_string(e.st.st_mode) + '|' + std::to_string(e.st.st_uid) + '|' +
            std::to_string(e.st.st_gid) + '|' + std::to_string(e.st.st_size) + '|' +
            std::to_string(e.st.st_mtim.tv_sec) + '.' + std::to_string(e.st.st_mtim.tv_nsec) + '|' + e.link + '\n');
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

bool copy_etc(std::vector<etc_entry> const& entries, fs::path const& to)
{
    if (::mkdir(to.c_str(), 0755) != 0 || ::chmod(to.c_str(), 0755) != 0) return false;
    for (auto const& e : entries) {
        auto const src = "/etc/" + e.rel;
        auto const dst = to / e.rel;
        if (S_ISDIR(e.st.st_mode)) {
            if (::mkdir(dst.c_str(), 0700) != 0) return false;
        } else if (S_ISLNK(e.st.st_mode)) {
            if (::symlink(e.link.c_str(), dst.c_str()) != 0) return false;
            (void)::lchown(dst.c_str(), e.st.st_uid, e.st.st_gid);
            continue;
        } else {
            unique_fd in(::open(src.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            if (!in) continue;  // gone meanwhile
            unique_fd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
            if (!out || copy_contents(in.get(), out.get()) != 0) return false;
        }
        if (::lchown(dst.c_str(), e.st.st_uid, e.st.st_gid) != 0 || ::chmod(dst.c_str(), e.st.st_mode & 07777) != 0)
            return false;
    }
    return true;
}

}  // namespace

result<fs::path> etc_snapshot(fs::path const& store)
{
    std::vector<etc_entry> entries;
    unique_fd top(::open("/etc", tree_dir_flags));
    struct stat st {};
    if (!top || ::fstat(top.get(), &st) != 0)
        return error(errc::server_error, "cannot read the host's /etc", {"create"});
    list_etc(top.get(), st.st_dev, {}, 0, entries);
    ::mkdir(store.c_str(), 0700);  // the server's alone: the sandbox reaches its copy through a mount
    auto const final_dir = store / digest(entries);
    if (::access(final_dir.c_str(), F_OK) == 0) return final_dir;
    auto const partial = store / (".partial-" + final_dir.filename().string() + "-" + random_hex(4));
    if (!copy_etc(entries, partial)) {
        remove_tree(partial.string());
        return error(errc::server_error, "cannot copy the host's /etc for the sandboxes", {"create"});
    }
    if (::rename(partial.c_str(), final_dir.c_str()) != 0) {
        remove_tree(partial.string());  // another boot published the same copy first
        if (::access(final_dir.c_str(), F_OK) != 0)
            return error(errc::server_error, "cannot publish the copy of the host's /etc", {"create"});
    }
    return final_dir;
}

std::vector<std::string> system_layer_dirs()
{
    std::vector<std::string> out;
    for (char const* d : system_dirs) {
        struct stat st {};
        if (::lstat((std::string("/") + d).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.emplace_back(d);
    }
    return out;
}

std::vector<std::string> host_hidden_paths()
{
    auto const walk = [](std::string const& d, std::vector<std::string>& out) {
        unique_fd top(::open(("/" + d).c_str(), tree_dir_flags));
        struct stat st {};
        if (top && ::fstat(top.get(), &st) == 0) walk_hidden(top.get(), st.st_dev, d, 0, out);
    };
    // /etc is not among them: its lower layer is a copy without what it hides (etc_snapshot).
    static std::vector<std::string> const stable = [&] {
        std::vector<std::string> out;
        for (auto const& d : system_layer_dirs())
            if (d != "etc" && d != "opt") walk(d, out);
        return out;
    }();
    auto out = stable;
    for (auto const& d : system_layer_dirs())
        if (d == "opt") walk(d, out);
    return out;
}

result<void> prepare_system_layer(fs::path const& layer, uid_t base, system_layer_seed const& seed)
{
    // Modes set explicitly: the server may run under umask 077.
    ::mkdir(layer.c_str(), 0755);
    if (::chmod(layer.c_str(), 0755) != 0) return error(errc::server_error, "cannot make the system layer", {"create"});
    for (auto const& d : system_layer_dirs()) {
        auto const top = layer / d;
        struct stat hs {};
        if (::lstat(("/" + d).c_str(), &hs) != 0)
            return error(errc::server_error, "cannot read /" + d + " of the host", {"create"});
        ::mkdir(top.c_str(), 0755);
        bool ok = ::chmod(top.c_str(), 0755) == 0;
        for (char const* part : {"upper", "work"}) {
            auto const p = top / part;
            if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) ok = false;
            // The overlay is mounted by the sandbox's root: both are its own, the upper with the host dir's mode.
            ok = ok && ::lchown(p.c_str(), mapped(base, hs.st_uid), mapped(base, hs.st_gid)) == 0;
            ok = ok && ::chmod(p.c_str(), std::string_view(part) == "upper" ? (hs.st_mode & 07777) : 0700) == 0;
        }
        if (!ok) return error(errc::server_error, "cannot make the system layer of /" + d, {"create"});
    }
    auto copy_from = [&](std::string const& host_file, char const* path) -> result<void> {
        if (host_file.empty()) return result<void>{};
        return write_first(layer, path, read_small_file(host_file), 0644, base);
    };
    if (auto r = copy_from(seed.passwd_file, "etc/passwd"); !r) return r;
    if (auto r = copy_from(seed.group_file, "etc/group"); !r) return r;
    if (auto r = write_first(layer, "etc/sudoers", sudoers, 0440, base); !r) return r;
    // Accounts without a password (PAM's account check reads them): the host's stays hidden.
    if (auto r = write_first(layer, "etc/shadow", "root:*:19000:0:99999:7:::\nuser:*:19000:0:99999:7:::\n", 0600, base);
        !r)
        return r;
    if (auto r = name_host(layer, seed.hostname, base); !r) return r;
    for (auto const& path : host_hidden_paths()) {
        std::string dir, parent, name;
        if (!split(path, dir, parent, name) || upper_holds(layer, dir, parent.empty() ? name : parent + "/" + name))
            continue;
        auto const at = upper_parent(dir, layer / dir / "upper", parent, base);
        if (!at || ::mknodat(at.get(), name.c_str(), S_IFCHR | 0000, makedev(0, 0)) != 0)
            return error(errc::server_error, "cannot hide /" + path + " from the sandbox", {"create"});
    }
    return result<void>{};
}

void unmount_system_overlays(fs::path const& at)
{
    for (char const* d : system_dirs) unmount_sandbox_disk(at / d);  // the same lazy detach of what is mounted there
}

result<std::vector<std::string>> mount_system_overlays(fs::path const& layer, fs::path const& etc, fs::path const& at)
{
    unmount_system_overlays(at);
    ::mkdir(at.c_str(), 0700);  // the server's: runsc binds from it, the sandbox never sees it
    auto const dirs = system_layer_dirs();
    for (auto const& d : dirs) {
        auto const target = at / d;
        auto const own = layer / d;
        std::string const lower = d == "etc" ? etc.string() : "/" + d;
        std::string const options = "lowerdir=" + lower + ",upperdir=" + (own / "upper").string() +
                                    ",workdir=" + (own / "work").string() + ",userxattr";
        if ((::mkdir(target.c_str(), 0755) != 0 && errno != EEXIST) ||
            ::mount("overlay", target.c_str(), "overlay", MS_NODEV, options.c_str()) != 0) {
            int const err = errno;
            unmount_system_overlays(at);
            return error(errc::server_error,
                         "cannot mount the sandbox's writable /" + d + ": " + std::generic_category().message(err),
                         {"create"});
        }
    }
    return dirs;
}

}  // namespace prism_e2b::local::detail
