// The namespaces engine: uid ranges, cgroups, and the sandbox init that
// assembles the sandbox's root inside its new namespaces.
#include "emulator/engines/namespaces/sandbox_init.hpp"

#include "emulator/envd_agent.hpp"
#include "emulator/envd_proxy.hpp"
#include "emulator/random_ids.hpp"
#include "emulator/sandbox_network.hpp"
#include "emulator/small_files.hpp"
#include "emulator/system_layer.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/close_range.h>
#include <memory>
#include <net/if.h>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sstream>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <type_traits>
#include <unistd.h>

// The agent's path in the build tree (generated; cmake/path_functions.cmake).
char const* prism_e2b_envd_build_path();

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- uid ranges

namespace {
constexpr uid_t first_range_base = 100000;
constexpr unsigned range_slots = 4096;  // 100000 + 65536 * 4096 stays below 2^32
}  // namespace

uid_t sandbox_view_id(uid_t host_id)
{
    return host_id >= first_range_base && host_id != static_cast<uid_t>(-1)
               ? (host_id - first_range_base) % ns_range_size
               : host_id;
}

namespace {

/// Locks slot k. nullopt: held by someone else; an error: the lock file cannot be opened.
result<std::optional<unique_fd>> lock_slot(unsigned k)
{
    std::error_code ec;
    fs::path const dir = "/run/prism-e2b/uid-ranges";
    fs::create_directories(dir, ec);
    if (ec) return error(errc::server_error, "cannot create " + dir.string() + ": " + ec.message(), {"create"});
    auto const path = dir / (std::to_string(k) + ".lock");
    unique_fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd) return error(errc::server_error, "cannot open " + path.string(), {"create"});
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return std::optional<unique_fd>{};
    return std::optional<unique_fd>{std::move(fd)};
}

}  // namespace

result<uid_range> uid_range::reserve()
{
    unsigned const start = static_cast<unsigned>(std::stoul(random_hex(2), nullptr, 16)) % range_slots;
    for (unsigned i = 0; i < range_slots; ++i) {
        unsigned const k = (start + i) % range_slots;
        auto locked = lock_slot(k);
        if (!locked) return locked.error();
        if (!*locked) continue;
        uid_range r;
        r.lock_ = std::move(**locked);
        r.base_ = first_range_base + ns_range_size * k;
        return r;
    }
    return error(errc::service_busy, "every sandbox uid range is in use", {"create"});
}

result<uid_range> uid_range::reserve_exact(uid_t base)
{
    if (base < first_range_base || (base - first_range_base) % ns_range_size != 0 ||
        (base - first_range_base) / ns_range_size >= range_slots)
        return error(errc::invalid_argument, "not a sandbox uid range: " + std::to_string(base), {"start"});
    auto locked = lock_slot((base - first_range_base) / ns_range_size);
    if (!locked) return locked.error();
    if (!*locked) return error(errc::conflict, "uid range " + std::to_string(base) + " is in use", {"start"});
    uid_range r;
    r.lock_ = std::move(**locked);
    r.base_ = base;
    return r;
}

// ---------------------------------------------------------------- boot id

bool write_boot_id(fs::path const& file)
{
    auto h = random_hex(16);
    h[12] = '4';                // version 4
    h[16] = "89ab"[h[16] % 4];  // RFC 4122 variant
    std::string const id = h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
                           h.substr(20, 12) + "\n";
    std::error_code ec;
    fs::remove(file, ec);
    std::ofstream out(file, std::ios::trunc);
    out << id;
    out.close();
    return static_cast<bool>(out) && ::chmod(file.c_str(), 0444) == 0;
}

// ---------------------------------------------------------------- the init

namespace {

/// One step of assembling the root, prepared before clone so the child only makes syscalls.
struct mount_op {
    enum kind {
        make_dir,
        make_file,
        bind_ro,
        bind_rw,
        bind_dev,
        link,
        tmpfs,
        devpts,
        proc,
        mask,
        volume,
        overlay
    } what;
    std::string src, dst;  ///< dst: relative to the new root; an overlay's src: its mount options
    /// A bind's source, cloned by the init while it still has the server's host ids (open_tree);
    /// a volume's or an overlay's lower layer, idmapped by the server before the clone (idmapped_tree).
    int tree = -1;
    std::string host;  ///< an overlay's lower layer on the host
    std::string at;    ///< where an overlay's lower layer is attached while the overlay is made
    bool binds() const noexcept { return what == bind_ro || what == bind_rw || what == bind_dev || what == mask; }
};

enum init_stage : int {
    istage_sync = 1,
    istage_identity,
    istage_private,
    istage_sources,
    istage_stage_tmpfs,
    istage_op,
    istage_pivot,
    istage_root_ro,
    istage_hostname,
    istage_loopback,
    istage_exec,
};

struct init_failure {
    int stage;
    int err;
    int op;
};

[[noreturn]] void init_fail(int fd, int stage, int op = -1)
{
    init_failure f{stage, errno, op};
    ssize_t r = ::write(fd, &f, sizeof f);
    (void)r;
    ::syscall(SYS_exit_group, 127);
    ::_exit(127);  // not reached
}

int set_attr(int dirfd, char const* path, unsigned int flags, std::uint64_t attrs)
{
    struct mount_attr a {};
    a.attr_set = attrs;
    return static_cast<int>(::syscall(SYS_mount_setattr, dirfd, path, flags, &a, sizeof a));
}

/// A fresh tmpfs ("mode=0755,size=1m") attached on `target_fd`; returns its root (an O_PATH
/// descriptor) or -1. The new mount API: its root can be entered through the descriptor.
int attach_stage_tmpfs(int target_fd)
{
    int const fs_fd = static_cast<int>(::syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
    if (fs_fd < 0) return -1;
    int mnt = -1;
    if (::syscall(SYS_fsconfig, fs_fd, FSCONFIG_SET_STRING, "mode", "0755", 0) == 0 &&
        ::syscall(SYS_fsconfig, fs_fd, FSCONFIG_SET_STRING, "size", "1m", 0) == 0 &&
        ::syscall(SYS_fsconfig, fs_fd, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0)
        mnt = static_cast<int>(::syscall(SYS_fsmount, fs_fd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
    ::close(fs_fd);
    if (mnt >= 0 &&
        ::syscall(SYS_move_mount, mnt, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
        ::close(mnt);
        return -1;
    }
    return mnt;
}

/// The directory `rel` (relative to the working directory, the new root), made where missing,
/// each component opened without following a symlink: a volume's path may run through the
/// sandbox's own files, where its processes could have left a link to a host directory (the
/// init still resolves against the host's "/"). O_PATH descriptor or -1. Only syscalls (the
/// child of clone); `rel` is at most 255 bytes (volume_mount_path_problem).
int open_mount_point(char const* rel)
{
    char buf[256];
    std::size_t n = 0;
    while (rel[n] != '\0' && n + 1 < sizeof buf) {
        buf[n] = rel[n];
        ++n;
    }
    if (rel[n] != '\0') return -1;
    buf[n] = '\0';
    int dir = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    char* part = buf;
    while (dir >= 0 && *part != '\0') {
        char* end = part;
        while (*end != '\0' && *end != '/') ++end;
        bool const last = *end == '\0';
        *end = '\0';
        if (::mkdirat(dir, part, 0755) != 0 && errno != EEXIST) {
            ::close(dir);
            return -1;
        }
        int const next = ::openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        ::close(dir);
        dir = next;
        part = last ? end : end + 1;
    }
    return dir;
}

/// Where the init attaches the system layer's directory and the lower layers while it makes
/// the overlays (in the new root, removed before the sandbox runs anything).
constexpr char layers_dir[] = ".layers";
constexpr char layers_sys[] = ".layers/sys";

struct init_program {
    std::vector<mount_op> ops;
    std::string stage, hostname;
    std::string system_layer;  ///< the host's dir of upper layers; empty: no overlays
    int system_layer_tree = -1;
    bool new_network = false;
    bool rootless = false;
    std::uint32_t max_pids = 0;
};

/// Descriptors of the parent the init hands on to the agent.
struct init_fds {
    int sync_r, report_w, agent_exe, agent_config, agent_listen;
};

// The child of clone(): only syscalls from here on (the parent may have many threads).
[[noreturn]] void run_init(init_program& p, init_fds fds)
{
    // Out of the way of 0..3, which the agent gets as config, /dev/null twice and its socket
    // (above 3, not higher: the descriptor limit may be low).
    int const sync_r = ::fcntl(fds.sync_r, F_DUPFD_CLOEXEC, 4);
    int const report_w = ::fcntl(fds.report_w, F_DUPFD_CLOEXEC, 4);
    int const agent_exe = ::fcntl(fds.agent_exe, F_DUPFD_CLOEXEC, 4);
    int const agent_config = ::fcntl(fds.agent_config, F_DUPFD_CLOEXEC, 4);
    int const agent_listen = ::fcntl(fds.agent_listen, F_DUPFD_CLOEXEC, 4);
    if (sync_r < 0 || report_w < 0 || agent_exe < 0 || agent_config < 0 || agent_listen < 0) {
        ::syscall(SYS_exit_group, 127);
        ::_exit(127);
    }
    char go = 0;
    ssize_t n;
    do {
        n = ::read(sync_r, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) init_fail(report_w, istage_sync);
    // Not the server's (a service's UMask=0077 would make the new root's /home untraversable):
    // what a fresh Linux system gives the sandbox, its agent and commands.
    ::umask(022);
    // Nothing of this mount namespace propagates to the host's (nor does what open_tree clones).
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) init_fail(report_w, istage_private);
    // Every host path is looked up now, with the server's host ids: a state dir under 0700
    // parents is out of reach of the sandbox's mapped ids, and they never need to reach it.
    int const stage = ::open(p.stage.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (stage < 0) init_fail(report_w, istage_sources);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        auto& op = p.ops[i];
        if (!op.binds()) continue;
        op.tree = static_cast<int>(
            ::syscall(SYS_open_tree, AT_FDCWD, op.src.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
        if (op.tree < 0) init_fail(report_w, istage_op, static_cast<int>(i));
    }
    if (!p.system_layer.empty()) {
        p.system_layer_tree = static_cast<int>(
            ::syscall(SYS_open_tree, AT_FDCWD, p.system_layer.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
        if (p.system_layer_tree < 0) init_fail(report_w, istage_sources);
    }
    // Root of the new user namespace, mapped to the range's first host id. Rootless, the one
    // mapped id is already ours (1000 inside); the capabilities last until the agent's exec.
    if (!p.rootless && (::syscall(SYS_setresgid, 0, 0, 0) != 0 || ::syscall(SYS_setresuid, 0, 0, 0) != 0 ||
                        ::syscall(SYS_setgroups, 0, nullptr) != 0))
        init_fail(report_w, istage_identity);
    if (p.rootless && p.max_pids) {
        rlimit const nproc{p.max_pids, p.max_pids};
        if (::syscall(SYS_prlimit64, 0, RLIMIT_NPROC, &nproc, nullptr) != 0) init_fail(report_w, istage_identity);
    }
    // The new root (owned by the sandbox's root), entered: every step below is relative to it.
    int const root = attach_stage_tmpfs(stage);
    if (root < 0 || ::fchdir(root) != 0) init_fail(report_w, istage_stage_tmpfs);
    constexpr std::uint64_t system_attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        auto const& op = p.ops[i];
        char const* dst = op.dst.c_str();
        int rc = 0;
        switch (op.what) {
            case mount_op::make_dir:
                rc = ::mkdir(dst, 0755) == 0 || errno == EEXIST ? 0 : -1;
                break;
            case mount_op::make_file: {
                int const fd = ::open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                rc = fd < 0 ? -1 : ::close(fd);
                break;
            }
            case mount_op::bind_ro:
            case mount_op::bind_rw:
            case mount_op::bind_dev:
            case mount_op::mask:
                if (op.what == mount_op::bind_ro || op.what == mount_op::mask)
                    rc = set_attr(op.tree, "", AT_EMPTY_PATH | AT_RECURSIVE, system_attrs);
                else if (op.what == mount_op::bind_rw)
                    rc = set_attr(op.tree, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_NOSUID);
                if (rc == 0)
                    rc = static_cast<int>(
                        ::syscall(SYS_move_mount, op.tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH));
                break;
            case mount_op::volume: {
                int const at = open_mount_point(dst);
                rc = at < 0 ? -1
                            : static_cast<int>(::syscall(SYS_move_mount, op.tree, "", at, "",
                                                         MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
                if (at >= 0) ::close(at);
                break;
            }
            case mount_op::overlay:
                // The layer's directory once, then this lower layer: attached, used, detached.
                if (::access(layers_sys, F_OK) != 0)
                    rc = ::mkdir(layers_dir, 0700) == 0 && ::mkdir(layers_sys, 0700) == 0
                             ? static_cast<int>(::syscall(SYS_move_mount, p.system_layer_tree, "", AT_FDCWD, layers_sys,
                                                          MOVE_MOUNT_F_EMPTY_PATH))
                             : -1;
                if (rc == 0 && ::mkdir(op.at.c_str(), 0700) != 0) rc = -1;
                if (rc == 0)
                    rc = static_cast<int>(
                        ::syscall(SYS_move_mount, op.tree, "", AT_FDCWD, op.at.c_str(), MOVE_MOUNT_F_EMPTY_PATH));
                if (rc == 0) rc = ::mount("overlay", dst, "overlay", MS_NODEV, op.src.c_str());
                if (rc == 0) rc = ::umount2(op.at.c_str(), MNT_DETACH) == 0 ? ::rmdir(op.at.c_str()) : -1;
                break;
            case mount_op::link:
                rc = ::symlink(op.src.c_str(), dst);
                break;
            case mount_op::tmpfs:
                rc = ::mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, op.src.c_str());
                break;
            case mount_op::devpts:
                rc = ::mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
                break;
            case mount_op::proc:
                rc = ::mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
                break;
        }
        if (rc != 0) init_fail(report_w, istage_op, static_cast<int>(i));
    }
    if (::access(layers_sys, F_OK) == 0 &&
        (::umount2(layers_sys, MNT_DETACH) != 0 || ::rmdir(layers_sys) != 0 || ::rmdir(layers_dir) != 0))
        init_fail(report_w, istage_op, static_cast<int>(p.ops.size()));
    if (::syscall(SYS_pivot_root, ".", ".") != 0 || ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0)
        init_fail(report_w, istage_pivot);
    if (set_attr(AT_FDCWD, "/", 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0)
        init_fail(report_w, istage_root_ro);
    if (::sethostname(p.hostname.data(), p.hostname.size()) != 0) init_fail(report_w, istage_hostname);
    if (p.new_network) {
        int const s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        ifreq ifr{};
        std::memcpy(ifr.ifr_name, "lo", 3);
        if (s < 0 || ::ioctl(s, SIOCGIFFLAGS, &ifr) != 0) init_fail(report_w, istage_loopback);
        ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
        if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) init_fail(report_w, istage_loopback);
        ::close(s);
    }
    // The init becomes prism-e2b-envd (opened before the root changed): the sandbox sees
    // neither the server's argv nor its memory or environment, and the agent reaps orphans.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int const null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || ::dup2(agent_config, agent_config_fd) < 0 || ::dup2(null_fd, 1) < 0 || ::dup2(null_fd, 2) < 0 ||
        ::dup2(agent_listen, agent_listen_fd) < 0)
        init_fail(report_w, istage_exec);
    if (::write(report_w, "k", 1) != 1) init_fail(report_w, istage_exec);
    ::syscall(SYS_close_range, 4u, ~0u, CLOSE_RANGE_CLOEXEC);
    char const* argv[] = {"prism-e2b-envd", "init", nullptr};
    char const* envp[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", nullptr};
    ::syscall(SYS_execveat, agent_exe, "", argv, envp, AT_EMPTY_PATH);
    ::syscall(SYS_exit_group, 127);
    ::_exit(127);
}

init_program plan(ns_boot_spec const& spec)
{
    init_program p;
    p.stage = spec.stage.string();
    p.hostname = spec.hostname;
    p.new_network = spec.new_network;
    p.rootless = spec.rootless;
    p.max_pids = spec.max_pids;
    p.system_layer = spec.system_layer.string();
    bool const writable_system = !spec.system_layer.empty();
    auto add = [&](mount_op::kind k, std::string src, std::string const& rel) {
        p.ops.push_back({k, std::move(src), rel});
    };
    for (char const* d : system_dirs) {
        std::string const host = std::string("/") + d;
        struct stat st {};
        if (::lstat(host.c_str(), &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
            std::error_code ec;
            auto const target = fs::read_symlink(host, ec);
            if (!ec) add(mount_op::link, target.string(), d);
        } else if (S_ISDIR(st.st_mode)) {
            add(mount_op::make_dir, {}, d);
            if (writable_system) {
                // Relative to the new root, where the init attaches the layers (userxattr: the
                // overlay is mounted inside the sandbox's user namespace).
                std::string const lower = std::string(layers_dir) + "/" + d;
                std::string const own = std::string(layers_sys) + "/" + d;
                add(mount_op::overlay,
                    "lowerdir=" + lower + ",upperdir=" + own + "/upper,workdir=" + own + "/work,userxattr", d);
                p.ops.back().host = std::string_view(d) == "etc" ? spec.system_etc.string() : host;
                p.ops.back().at = lower;
            } else {
                add(mount_op::bind_ro, host, d);
            }
        }
    }
    // Accounts that know "user"; secrets of the host masked (they are unreadable anyway:
    // host root is not mapped into the sandbox). A writable system has its own /etc files
    // and whiteouts over what the host hides (system_layer.hpp).
    if (!writable_system && !spec.passwd_file.empty()) {
        add(mount_op::mask, spec.passwd_file, "etc/passwd");
        add(mount_op::mask, spec.group_file, "etc/group");
    }
    for (char const* secret : {"etc/shadow", "etc/gshadow", "etc/shadow-", "etc/gshadow-"})
        if (!writable_system && ::access((std::string("/") + secret).c_str(), F_OK) == 0)
            add(mount_op::mask, "/dev/null", secret);
    // The sandbox's own writable directories.
    auto const own = spec.sandbox_root.string();
    for (char const* d : {"home", "var", "run", "mnt", "proc", "dev", "sys"}) add(mount_op::make_dir, {}, d);
    for (char const* d : {"home/user", "workspace", "tmp", "root"}) {
        add(mount_op::make_dir, {}, d);
        add(mount_op::bind_rw, own + "/" + d, d);
    }
    add(mount_op::tmpfs, "mode=0755,size=64m", "run");
    add(mount_op::tmpfs, "mode=0755,size=64m", "var");
    add(mount_op::make_dir, {}, "var/tmp");
    // A minimal /dev: the harmless host nodes, a private devpts, shm.
    add(mount_op::tmpfs, "mode=0755,size=1m", "dev");
    for (char const* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
        add(mount_op::make_file, {}, std::string("dev/") + node);
        add(mount_op::bind_dev, std::string("/dev/") + node, std::string("dev/") + node);
    }
    add(mount_op::make_dir, {}, "dev/pts");
    add(mount_op::devpts, {}, "dev/pts");
    add(mount_op::link, "pts/ptmx", "dev/ptmx");
    add(mount_op::make_dir, {}, "dev/shm");
    add(mount_op::tmpfs, "mode=1777,size=64m", "dev/shm");
    add(mount_op::link, "/proc/self/fd", "dev/fd");
    add(mount_op::link, "/proc/self/fd/0", "dev/stdin");
    add(mount_op::link, "/proc/self/fd/1", "dev/stdout");
    add(mount_op::link, "/proc/self/fd/2", "dev/stderr");
    // Its own /proc (its pid namespace) with its own boot id.
    add(mount_op::proc, {}, "proc");
    add(mount_op::mask, spec.boot_id_file.string(), "proc/sys/kernel/random/boot_id");
    for (auto const& v : spec.volumes) add(mount_op::volume, v.source.string(), v.path.substr(1));
    return p;
}

/// clone(2) through glibc's wrapper, never the raw syscall: a sanitizer intercepts the wrapper
/// and holds its runtime's locks across it, as for fork(), so the child of a multi-threaded
/// server never starts with a lock another thread held (under TSan a sandbox init once spun for
/// ever on one). `fn` runs in the child, on a stack of its own in its copy of the address space
/// (no CLONE_VM), and must not return. The child's pid, or -1 with errno.
template <class Fn>
pid_t clone_child(int flags, Fn&& fn)
{
    constexpr std::size_t stack_size = std::size_t{1} << 20;
    std::unique_ptr<char[]> const stack(new char[stack_size]);  // the child's copy is its stack
    auto entry = [](void* arg) -> int {
        (*static_cast<std::remove_reference_t<Fn>*>(arg))();
        return 127;
    };
    return ::clone(entry, stack.get() + stack_size, flags, &fn);
}

}  // namespace

result<unique_fd> idmapped_tree(std::string const& src, uid_t base, std::uint64_t attrs, std::string const& what)
{
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return error(errc::server_error, "pipe failed", {"create"});
    unique_fd hold_r(p[0]), hold_w(p[1]);
    // The helper only waits for the pipe to close (only syscalls in the child). It keeps
    // nothing else: its copy of another thread's helper pipe would keep that helper from
    // seeing EOF while that helper's copy of this one kept this one waiting (two concurrent
    // creates deadlocked that way).
    long const rc = clone_child(CLONE_NEWUSER | SIGCHLD, [&] {
        char c;
        auto const keep = static_cast<unsigned>(p[0]);
        if (keep > 0) ::syscall(SYS_close_range, 0u, keep - 1, 0u);
        ::syscall(SYS_close_range, keep + 1, ~0u, 0u);
        while (::read(p[0], &c, 1) < 0 && errno == EINTR) {
        }
        ::syscall(SYS_exit_group, 0);
    });
    if (rc < 0)
        return error(boost::system::error_code(errno, boost::system::system_category()),
                     "cannot create the user namespace of " + what, {"create"});
    pid_t const helper = static_cast<pid_t>(rc);
    hold_r = unique_fd();
    std::string const proc = "/proc/" + std::to_string(helper);
    std::string const map = "0 " + std::to_string(base) + " " + std::to_string(ns_range_size) + "\n";
    unique_fd userns;
    if (write_small_file(proc + "/uid_map", map) && write_small_file(proc + "/gid_map", map))
        userns = unique_fd(::open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
    hold_w = unique_fd();  // the helper exits; its namespace lives on in `userns`
    ::waitpid(helper, nullptr, 0);
    if (!userns) return error(errc::server_error, "cannot map the ids of " + what, {"create"});
    unique_fd tree(
        static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, src.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)));
    if (!tree)
        return error(boost::system::error_code(errno, boost::system::system_category()),
                     "cannot open " + what + " (" + src + ")", {"create"});
    struct mount_attr a {};
    a.attr_set = MOUNT_ATTR_IDMAP | attrs;
    a.userns_fd = static_cast<std::uint64_t>(userns.get());
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH, &a, sizeof a) != 0)
        return error(boost::system::error_code(errno, boost::system::system_category()),
                     "cannot make an idmapped mount of " + what + " (" + src + ")", {"create"});
    return tree;
}

namespace {

std::string stage_name(int stage)
{
    switch (stage) {
        case istage_sync:
            return "sync";
        case istage_identity:
            return "setuid";
        case istage_private:
            return "mount --make-rprivate";
        case istage_sources:
            return "opening the stage";
        case istage_stage_tmpfs:
            return "mounting the root tmpfs";
        case istage_pivot:
            return "pivot_root";
        case istage_root_ro:
            return "read-only root";
        case istage_hostname:
            return "sethostname";
        case istage_loopback:
            return "loopback up";
        default:
            return "exec";
    }
}

}  // namespace

result<ns_init> start_sandbox_init(ns_boot_spec const& spec)
{
    auto program = plan(spec);
    if (spec.rootless && !spec.volumes.empty())
        return error(errc::unsupported, "volumes need idmapped mounts: a server run as root", {"create"});
    std::vector<unique_fd> idmapped_trees;  // inherited by the init through the clone, closed here after it
    if (spec.rootless && !spec.system_layer.empty())
        return error(errc::unsupported, "a writable system needs idmapped mounts: a server run as root", {"create"});
    if (!spec.system_layer.empty() && spec.system_etc.empty())
        return error(errc::server_error, "a writable system needs the copy of /etc", {"create"});
    for (auto& op : program.ops) {
        if (op.what != mount_op::volume && op.what != mount_op::overlay) continue;
        // A volume: read-write, no set-id, no devices. A system dir's lower layer: read-only,
        // set-id kept (sudo: the host's root-owned programs are the sandbox root's), no devices.
        auto tree = op.what == mount_op::volume
                        ? idmapped_tree(op.src, spec.uid_base, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "a volume")
                        : idmapped_tree(op.host, spec.uid_base, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV,
                                        "the system directory " + op.host);
        if (!tree) return tree.error();
        op.tree = tree->get();
        idmapped_trees.push_back(std::move(*tree));
    }
    // Rootless: the server's own ids are all an unprivileged user may map (without setgroups).
    std::string const uid_map = spec.rootless
                                    ? "1000 " + std::to_string(::geteuid()) + " 1\n"
                                    : "0 " + std::to_string(spec.uid_base) + " " + std::to_string(ns_range_size) + "\n";
    std::string const gid_map = spec.rootless ? "1000 " + std::to_string(::getegid()) + " 1\n" : uid_map;
    if (spec.agent_listen_fd < 0) return error(errc::server_error, "no socket for the sandbox's envd", {"create"});
    unique_fd agent_exe(::open(spec.agent_path.c_str(), O_PATH | O_CLOEXEC));
    if (!agent_exe)
        return error(errc::server_error, "cannot open prism-e2b-envd (" + spec.agent_path + ")", {"create"});
    auto make_pipe = [](unique_fd& r, unique_fd& w) {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) return false;
        r = unique_fd(p[0]);
        w = unique_fd(p[1]);
        return true;
    };
    unique_fd sync_r, sync_w, rep_r, rep_w, cfg_r, cfg_w;
    if (!make_pipe(sync_r, sync_w) || !make_pipe(rep_r, rep_w) || !make_pipe(cfg_r, cfg_w))
        return error(errc::server_error, "pipe failed", {"create"});
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | SIGCHLD;
    if (spec.new_network) flags |= CLONE_NEWNET;
    // glibc has no fork() that takes namespace flags: clone. The child only makes syscalls.
    init_fds const fds{sync_r.get(), rep_w.get(), agent_exe.get(), cfg_r.get(), spec.agent_listen_fd};
    long const rc = clone_child(static_cast<int>(flags), [&] { run_init(program, fds); });
    sync_r = unique_fd();
    rep_w = unique_fd();
    cfg_r = unique_fd();
    if (rc < 0)
        return error(boost::system::error_code(errno, boost::system::system_category()),
                     "cannot create the sandbox's namespaces", {"create"});
    pid_t const pid = static_cast<pid_t>(rc);
    ns_init init;
    init.pid = pid;
    auto abort_with = [&](std::string const& what) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        return error(errc::server_error, "starting the sandbox failed at " + what, {"create"});
    };
    std::string const proc = "/proc/" + std::to_string(pid);
    if ((spec.rootless && !write_small_file(proc + "/setgroups", "deny")) ||
        !write_small_file(proc + "/uid_map", uid_map) || !write_small_file(proc + "/gid_map", gid_map))
        return abort_with("writing its uid/gid map");
    for (auto const& d : spec.cgroup_dirs)
        if (!write_small_file(d + "/cgroup.procs", std::to_string(pid))) return abort_with("joining cgroup " + d);
    if (::write(sync_w.get(), "g", 1) != 1) return abort_with("sync");
    std::array<char, sizeof(init_failure)> buf{};
    std::size_t got = 0;
    while (got < buf.size()) {
        ssize_t const n = ::read(rep_r.get(), buf.data() + got, buf.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
        if (got == 1 && buf[0] == 'k') break;
    }
    if (got == 1 && buf[0] == 'k') {
        // The agent reads its config to EOF before it serves (a pipe's buffer may be smaller).
        if (write_all(cfg_w.get(), spec.agent_config) != 0) return abort_with("handing the agent its config");
        cfg_w = unique_fd();
        init.pidfd = unique_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
        if (spec.new_network && !spec.user_network.empty()) {
            if (!init.pidfd) return abort_with("opening its pidfd");
            if (auto net = attach_user_network(spec.user_network, pid, init.pidfd.get()); !net)
                return abort_with(net.error().message());
        }
        return init;
    }
    if (got == sizeof(init_failure)) {
        init_failure f{};
        std::memcpy(&f, buf.data(), sizeof f);
        std::string what = f.stage == istage_op && f.op >= 0 && static_cast<std::size_t>(f.op) < program.ops.size()
                               ? "mounting /" + program.ops[static_cast<std::size_t>(f.op)].dst
                               : stage_name(f.stage);
        return abort_with(what + ": " + std::strerror(f.err));
    }
    return abort_with("an unknown step (the init died)");
}

std::optional<ns_init> adopt_sandbox_init(pid_t pid, std::string const& memory_cgroup)
{
    auto member = [&] {
        std::istringstream in(read_small_file(memory_cgroup + "/cgroup.procs"));
        pid_t p;
        while (in >> p)
            if (p == pid) return true;
        return false;
    };
    if (pid <= 0 || memory_cgroup.empty() || !member()) return std::nullopt;
    ns_init init;
    init.pidfd = unique_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!init.pidfd || !member()) return std::nullopt;  // checked again: the pid may have been reused meanwhile
    init.pid = pid;
    init.adopted = true;
    return init;
}

std::vector<pid_t> sandbox_pids(ns_init const& init, std::vector<std::string> const& cgroup_dirs)
{
    if (cgroup_dirs.size() >= 2) return cgroup_pids(cgroup_dirs[1]);
    std::vector<pid_t> out;
    if (init.pid <= 0) return out;
    std::error_code ec;
    auto const ns = fs::read_symlink("/proc/" + std::to_string(init.pid) + "/ns/pid", ec);
    if (ec) return out;
    for (auto const& e : fs::directory_iterator("/proc", ec)) {
        auto const name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code lec;
        if (fs::read_symlink(e.path() / "ns/pid", lec) == ns && !lec) out.push_back(std::stoi(name));
    }
    return out;
}

void stop_sandbox_init(ns_init& init)
{
    if (init.pid <= 0) return;
    ::kill(init.pid, SIGKILL);
    if (!init.adopted) {
        ::waitpid(init.pid, nullptr, 0);
    } else if (init.pidfd) {
        pollfd p{init.pidfd.get(), POLLIN, 0};
        ::poll(&p, 1, 5000);
    }
    init = ns_init{};
}

std::string find_envd_agent()
{
    std::vector<std::string> candidates;
    if (char const* env = std::getenv("PRISM_E2B_ENVD"); env && *env) candidates.emplace_back(env);
    std::error_code ec;
    auto const self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) candidates.push_back((self.parent_path() / "prism-e2b-envd").string());
    candidates.emplace_back(prism_e2b_envd_build_path());
    for (auto const& c : candidates)
        if (::access(c.c_str(), X_OK) == 0) return c;
    return {};
}

result<void> probe_namespaces(fs::path const& probe_dir, std::string const& agent_path)
{
    bool const rootless = ::geteuid() != 0;
    std::error_code ec;
    fs::create_directories(probe_dir / "stage", ec);
    for (char const* d : {"home/user", "workspace", "tmp", "root"}) fs::create_directories(probe_dir / "root" / d, ec);
    if (ec || !write_boot_id(probe_dir / "boot_id"))
        return error(errc::server_error, "cannot prepare " + probe_dir.string(), {"start"});
    std::optional<uid_range> range;
    if (!rootless) {
        auto reserved = uid_range::reserve();
        if (!reserved) return reserved.error();
        range = std::move(*reserved);
    }
    ns_boot_spec spec;
    spec.sandbox_root = probe_dir / "root";
    spec.stage = probe_dir / "stage";
    spec.boot_id_file = probe_dir / "boot_id";
    spec.hostname = "probe";
    spec.new_network = true;
    spec.uid_base = range ? range->base() : 0;
    spec.rootless = rootless;
    spec.max_pids = 64;
    spec.agent_path = agent_path;
    auto const socket = probe_dir / "envd.sock";
    auto listening = listen_agent_socket(socket);
    if (!listening) return listening.error();
    spec.agent_listen_fd = listening->get();
    auto init = start_sandbox_init(spec);
    *listening = unique_fd();  // the agent holds the socket now
    // The agent must answer, not only start: a build whose agent cannot run in a sandbox fails here.
    std::optional<agent_reply> health;
    if (init) health = agent_get(socket, "/health", std::chrono::seconds(10));
    if (init) stop_sandbox_init(*init);
    fs::remove_all(probe_dir, ec);
    if (!init) return init.error();
    if (!health || health->status != 204)
        return error(errc::server_error, "prism-e2b-envd (" + agent_path + ") does not answer in a sandbox", {"start"});
    return result<void>{};
}

}  // namespace prism_e2b::local::detail
