// The gvisor engine: OCI bundles, runsc calls, checkpoint and restore (gvisor_engine.hpp).
#include "emulator/engines/gvisor/runsc.hpp"

#include "emulator/envd_agent.hpp"
#include "emulator/envd_agent_socket.hpp"
#include "emulator/envd_proxy.hpp"
#include "emulator/random_ids.hpp"
#include "emulator/small_files.hpp"
#include "emulator/system_layer.hpp"

#include <boost/json.hpp>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <linux/close_range.h>
#include <optional>
#include <poll.h>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

/// Where things are inside the container.
constexpr char const* agent_in_container = "/.prism-e2b-envd";
constexpr char const* socket_dir_in_container = "/.prism-e2b";  // gvisor_socket_in_container's directory

constexpr auto runsc_quick = std::chrono::seconds(30);
constexpr auto runsc_slow = std::chrono::minutes(10);  // checkpoint and restore grow with memory
// How long the agent may take to answer a release and to close its connections. Generous: under
// gVisor's ptrace platform on a loaded machine its sessions took over 15 s to notice (CI,
// 2026-12-06); the agent's own wait (agent_socket::remove_when_closed) is as long.
constexpr auto agent_release_patience = std::chrono::seconds(45);
// How long a booted or restored agent may take to answer: a restore reads the whole memory image,
// and with two gVisor test suites and a build beside it a restore took over 60 s here.
constexpr auto agent_start_patience = std::chrono::seconds(150);

struct tool_run {
    int status = -1;     ///< the wait status
    std::string output;  ///< stdout and stderr together
    bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

/// A memory image written so that a server killed meanwhile leaves either a whole image or
/// none: runsc writes into `partial`, and a shell that outlives the server renames it to `whole`
/// once runsc succeeded; the shell holds a lock on `lock` while it runs (gvisor_settle_image_write).
struct image_commit {
    fs::path partial, whole, lock;
};

fs::path image_lock(fs::path const& dir) { return dir / "memory.lock"; }
fs::path partial_image(fs::path const& dir) { return dir / "memory.partial"; }

/// Runs runsc with the engine's flags and `args`, stdin from `stdin_path` (/dev/null when
/// empty), stdout and stderr into a file read back afterwards (a container started by the call
/// inherits them: a pipe would never see EOF). The child first joins `cgroups` (writing "0" to
/// cgroup.procs moves the writer), so what runsc starts is limited there. Killed past `timeout`.
result<tool_run> run_runsc(runsc_config const& rc, std::vector<std::string> const& args,
                           std::chrono::milliseconds timeout, std::vector<std::string> const& cgroups = {},
                           std::string const& stdin_path = {}, image_commit const* commit = nullptr)
{
    std::vector<std::string> argv = {rc.program,       "--root=" + rc.root.string(), "--platform=ptrace",
                                     "--network=none", "--host-uds=create",          "--ignore-cgroups"};
    if (commit)  // sh -c SCRIPT partial whole runsc...: $0 and $1 are the two paths
        argv.insert(argv.begin(), {"/bin/sh", "-c", "p=$0 w=$1; shift; \"$@\" && mv -T -- \"$p\" \"$w\"",
                                   commit->partial.string(), commit->whole.string()});
    if (char const* dbg = std::getenv("PRISM_E2B_RUNSC_DEBUG_LOG"); dbg && *dbg) {
        argv.emplace_back("--debug");
        if (std::getenv("PRISM_E2B_RUNSC_STRACE")) argv.emplace_back("--strace");
        argv.push_back(std::string("--debug-log=") + dbg + "/");
    }
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char const*> cargv;
    for (auto const& a : argv) cargv.push_back(a.c_str());
    cargv.push_back(nullptr);
    char const* envp[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", nullptr};
    std::vector<std::string> procs;
    for (auto const& d : cgroups) procs.push_back(d + "/cgroup.procs");

    auto const log_path = rc.root / ("call-" + random_hex(6) + ".log");
    unique_fd log(::open(log_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    unique_fd in(::open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY | O_CLOEXEC));
    unique_fd lock(commit ? ::open(commit->lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1);
    if (!log || !in || (commit && !lock)) return error(errc::server_error, "cannot prepare a runsc call", {"gvisor"});
    ::unlink(log_path.c_str());  // read through the descriptor; nothing stays behind

    pid_t const pid = ::fork();
    if (pid < 0) return error(errc::server_error, "cannot start runsc", {"gvisor"});
    if (pid == 0) {
        // Only async-signal-safe calls: the server has many threads.
        for (auto const& p : procs) {
            int const fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
            if (fd < 0 || ::write(fd, "0", 1) != 1) ::syscall(SYS_exit_group, 126);
            ::close(fd);
        }
        if (::dup2(in.get(), 0) < 0 || ::dup2(log.get(), 1) < 0 || ::dup2(log.get(), 2) < 0)
            ::syscall(SYS_exit_group, 126);
        ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
        // The lock lives as long as the shell and runsc: its own open file, kept across exec.
        if (lock && (::flock(lock.get(), LOCK_EX) != 0 || ::fcntl(lock.get(), F_SETFD, 0) != 0))
            ::syscall(SYS_exit_group, 126);
        ::execve(cargv[0], const_cast<char* const*>(cargv.data()), const_cast<char* const*>(envp));
        ::syscall(SYS_exit_group, 127);
    }
    unique_fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    tool_run out;
    bool timed_out = false;
    if (pidfd) {
        pollfd p{pidfd.get(), POLLIN, 0};
        int r;
        do {
            r = ::poll(&p, 1, static_cast<int>(timeout.count()));
        } while (r < 0 && errno == EINTR);
        timed_out = r == 0;
    }
    if (timed_out) ::kill(pid, SIGKILL);
    while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
    }
    std::array<char, 4096> buf{};
    ssize_t n;
    ::lseek(log.get(), 0, SEEK_SET);
    while ((n = ::read(log.get(), buf.data(), buf.size())) > 0 && out.output.size() < (1u << 20))
        out.output.append(buf.data(), static_cast<std::size_t>(n));
    if (timed_out)
        return error(errc::timed_out, "runsc " + (args.empty() ? std::string() : args[0]) + " did not finish",
                     {"gvisor"});
    return out;
}

/// runsc's complaint, short enough for an error message.
std::string runsc_message(tool_run const& r)
{
    auto text = r.output;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    // Go's errors put the cause last, after the object they failed on (which may print long).
    if (text.size() > 700) text = text.substr(0, 200) + " [...] " + text.substr(text.size() - 500);
    if (text.empty()) text = "exit status " + std::to_string(WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1);
    return text;
}

result<void> runsc_step(runsc_config const& rc, std::vector<std::string> const& args, std::chrono::milliseconds timeout,
                        std::vector<std::string> const& cgroups = {}, std::string const& stdin_path = {})
{
    auto r = run_runsc(rc, args, timeout, cgroups, stdin_path);
    if (!r) return r.error();
    if (!r->ok()) return error(errc::server_error, "runsc " + args[0] + " failed: " + runsc_message(*r), {"gvisor"});
    return result<void>{};
}

fs::path memory_image(fs::path const& dir) { return dir / "memory"; }

/// Writes a new file of the server's (0600) whole; false on an I/O error.
bool write_private_file(fs::path const& path, std::string const& text)
{
    std::error_code ec;
    fs::remove(path, ec);
    unique_fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!fd) return false;
    return write_all(fd.get(), text) == 0;
}

/// Waits (until `deadline`) for the agent to answer /health; `nudge` runs about once a second meanwhile.
bool wait_for_agent(fs::path const& socket, std::chrono::steady_clock::time_point deadline,
                    std::function<void()> const& nudge = {})
{
    auto next_nudge = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < deadline) {
        if (auto r = agent_get(socket, "/health", std::chrono::seconds(2)); r && r->status == 204) return true;
        if (nudge && std::chrono::steady_clock::now() >= next_nudge) {
            nudge();
            next_nudge = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

/// `runsc state` of container `id` (empty when runsc does not know it).
json::object runsc_state(runsc_config const& rc, std::string const& id)
{
    auto r = run_runsc(rc, {"state", id}, runsc_quick);
    if (!r || !r->ok()) return {};
    boost::system::error_code jec;
    auto v = json::parse(r->output, jec);
    return !jec && v.is_object() ? std::move(v.as_object()) : json::object();
}

/// Asks the agent at `socket` to let go of its socket (agent_release_path): the connection once it
/// answered 204, else an invalid one. Not agent_get(): the agent closes every connection as it lets
/// go, this one's included. The caller keeps the connection open until the checkpoint is taken: a
/// connection whose host end was just closed, while the agent has not yet read that, is a socket
/// runsc cannot save, and a failed checkpoint has already stopped the sandbox.
unique_fd ask_agent_to_release(fs::path const& socket, std::chrono::milliseconds timeout)
{
    auto fd = connect_unix(socket);
    if (!fd) return {};
    std::string const req = std::string("GET ") + agent_release_path + " HTTP/1.1\r\nHost: envd\r\n\r\n";
    if (::send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) return {};
    auto const deadline = std::chrono::steady_clock::now() + timeout;
    std::string in;
    while (in.find("\r\n\r\n") == std::string::npos) {
        auto const left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return {};
        pollfd p{fd.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[1024];
        ssize_t const n = ::recv(fd.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return {};
        in.append(buf, static_cast<std::size_t>(n));
    }
    if (in.rfind("HTTP/1.1 204", 0) != 0) return {};
    return fd;
}

/// Makes the agent of container `id`, which let go of its socket, bind it again: the stale socket
/// file goes first (the agent cannot remove it under gVisor), then SIGUSR1 (the init forwards it).
void ask_agent_to_listen(runsc_config const& rc, std::string const& id, fs::path const& socket)
{
    if (!agent_get(socket, "/health", std::chrono::seconds(2))) ::unlink(socket.c_str());
    (void)run_runsc(rc, {"kill", id, "USR1"}, runsc_quick);
}

/// A Unix socket someone listens on under `root` (a process of the sandbox bound it on the
/// host, through a shared directory): runsc cannot checkpoint the sandbox then.
std::optional<fs::path> listening_host_socket(fs::path const& root)
{
    std::error_code ec;
    std::size_t seen = 0;
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator() && ++seen < 200000; it.increment(ec)) {
        if (!it->is_socket(ec)) continue;
        if (connect_unix(it->path())) return it->path();
    }
    return std::nullopt;
}

json::object bind_mount(std::string const& dst, std::string const& src, bool writable)
{
    json::object m;
    m["destination"] = dst;
    m["type"] = "bind";
    m["source"] = src;
    m["options"] = json::array{"rbind", writable ? "rw" : "ro"};
    return m;
}

json::object fs_mount(std::string const& dst, std::string const& type, json::array options = {})
{
    json::object m;
    m["destination"] = dst;
    m["type"] = type;
    m["source"] = type;
    if (!options.empty()) m["options"] = std::move(options);
    return m;
}

/// The volumes' mount points (in the sandbox's own files when the path is inside them, made
/// under its root so its symlinks lead nowhere else; otherwise in the skeleton) and binds.
result<void> bind_volumes(gvisor_boot_spec const& spec, fs::path const& rootfs, json::array& mounts)
{
    for (auto const& v : spec.volumes) {
        std::string const first = v.path.substr(1, v.path.find('/', 1) - 1);
        bool const own = first == "home" || first == "workspace" || first == "tmp" || first == "root";
        int err = 0;
        if (own) {
            unique_fd root(::open(spec.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
            err = root ? make_dirs_in_root(root.get(), v.path) : errno;
        } else {
            std::error_code ec;
            fs::create_directories(rootfs / v.path.substr(1), ec);
            err = ec.value();
        }
        if (err != 0)
            return error(errc::server_error, "cannot make the mount point of a volume at " + v.path, {"create"});
        auto m = bind_mount(v.path, v.source.string(), true);
        m["options"].as_array().emplace_back("nosuid");
        m["options"].as_array().emplace_back("nodev");
        mounts.push_back(std::move(m));
    }
    return result<void>{};
}

/// Mounts the sandbox's system overlays, when it has a writable system, before runsc binds them.
result<void> attach_system(gvisor_boot_spec const& spec)
{
    if (spec.system_layer.empty()) return result<void>{};
    auto mounted = mount_system_overlays(spec.system_layer, spec.system_etc, gvisor_system_mounts(spec.dir));
    if (!mounted) return mounted.error();
    return result<void>{};
}

/// The OCI bundle in dir/bundle: a read-only skeleton root (mount points and the host's
/// symlinked system directories) and config.json.
result<fs::path> write_bundle(gvisor_boot_spec const& spec)
{
    auto const bundle = spec.dir / "bundle";
    auto const rootfs = bundle / "rootfs";
    auto const chan = gvisor_agent_socket(spec.dir).parent_path();
    std::error_code ec;
    fs::create_directories(rootfs, ec);
    fs::create_directories(chan, ec);
    if (ec) return error(errc::server_error, "cannot create the sandbox's bundle: " + ec.message(), {"create"});
    ::chmod(chan.c_str(), 0700);
    json::array mounts;
    mounts.push_back(fs_mount("/proc", "proc"));
    mounts.push_back(fs_mount("/dev", "tmpfs"));
    mounts.push_back(fs_mount("/sys", "sysfs", json::array{"nosuid", "noexec", "nodev", "ro"}));
    bool const writable_system = !spec.system_layer.empty();
    for (char const* d : system_dirs) {
        auto const host = fs::path("/") / d;
        auto const inside = rootfs / d;
        if (fs::is_symlink(host, ec)) {
            auto const target = fs::read_symlink(host, ec);
            if (!ec && !fs::is_symlink(inside, ec)) fs::create_symlink(target, inside, ec);
        } else if (fs::is_directory(host, ec)) {
            fs::create_directories(inside, ec);
            mounts.push_back(writable_system
                                 ? bind_mount(host.string(), (gvisor_system_mounts(spec.dir) / d).string(), true)
                                 : bind_mount(host.string(), host.string(), false));
        }
    }
    // A writable system has its own accounts and no secret of the host's (system_layer.hpp);
    // else accounts that know "user" and the host's shadow files masked by an empty file.
    if (!writable_system && !spec.passwd_file.empty()) {
        mounts.push_back(bind_mount("/etc/passwd", spec.passwd_file, false));
        mounts.push_back(bind_mount("/etc/group", spec.group_file, false));
    }
    auto const empty = bundle / "empty";
    {
        std::ofstream touch(empty, std::ios::trunc);
    }
    ::chmod(empty.c_str(), 0444);
    for (char const* secret : {"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-"})
        if (!writable_system && ::access(secret, F_OK) == 0)
            mounts.push_back(bind_mount(secret, empty.string(), false));
    // The sandbox's own writable directories, a private /run and /var.
    for (char const* d : {"home/user", "workspace", "tmp", "root"}) {
        fs::create_directories(rootfs / d, ec);
        mounts.push_back(bind_mount(std::string("/") + d, (spec.root / d).string(), true));
    }
    for (char const* d : {"proc", "dev", "sys", "run", "var", "mnt"}) fs::create_directories(rootfs / d, ec);
    if (auto bound = bind_volumes(spec, rootfs, mounts); !bound) return bound.error();
    mounts.push_back(fs_mount("/run", "tmpfs"));
    mounts.push_back(fs_mount("/var", "tmpfs"));
    mounts.push_back(fs_mount("/var/tmp", "tmpfs"));
    // The agent (read-only), its socket directory, the boot id.
    fs::create_directories(rootfs / fs::path(socket_dir_in_container).relative_path(), ec);
    {
        std::ofstream touch(rootfs / fs::path(agent_in_container).relative_path(), std::ios::app);
    }
    mounts.push_back(bind_mount(agent_in_container, spec.agent_path, false));
    mounts.push_back(bind_mount(socket_dir_in_container, chan.string(), true));
    mounts.push_back(bind_mount("/proc/sys/kernel/random/boot_id", spec.boot_id_file.string(), false));
    // (A mount point that could not be made shows in runsc create's own error.)

    json::array caps;
    for (char const* c : {"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID",
                          "CAP_SETUID", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW", "CAP_SYS_CHROOT",
                          "CAP_MKNOD", "CAP_AUDIT_WRITE", "CAP_SETFCAP", "CAP_SYS_PTRACE"})
        caps.emplace_back(c);
    json::object capabilities;
    for (char const* set : {"bounding", "effective", "inheritable", "permitted"}) capabilities[set] = caps;
    json::object process;
    process["terminal"] = false;
    process["user"] = json::object{{"uid", 0}, {"gid", 0}};
    process["args"] = json::array{agent_in_container, "init"};
    process["env"] = json::array{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
    process["cwd"] = "/";
    process["capabilities"] = std::move(capabilities);
    process["rlimits"] = json::array{json::object{{"type", "RLIMIT_NOFILE"}, {"hard", 65536}, {"soft", 65536}}};
    json::object resources;
    resources["memory"] = json::object{{"limit", std::uint64_t{spec.limits.memory_mb} << 20}};
    resources["cpu"] =
        json::object{{"quota", 100000 * static_cast<std::int64_t>(spec.limits.cpu_count)}, {"period", 100000}};
    resources["pids"] = json::object{{"limit", spec.limits.max_pids}};
    json::array namespaces;
    for (char const* n : {"pid", "network", "ipc", "uts", "mount"}) namespaces.push_back(json::object{{"type", n}});
    json::object linux;
    linux["namespaces"] = std::move(namespaces);
    linux["resources"] = std::move(resources);
    json::object config;
    config["ociVersion"] = "1.0.0";
    config["process"] = std::move(process);
    config["root"] = json::object{{"path", "rootfs"}, {"readonly", true}};
    config["hostname"] = spec.hostname;
    config["mounts"] = std::move(mounts);
    config["linux"] = std::move(linux);
    if (!write_private_file(bundle / "config.json", json::serialize(config)))
        return error(errc::server_error, "cannot write the sandbox's config.json", {"create"});
    return bundle;
}

}  // namespace

std::string find_runsc()
{
    std::vector<std::string> candidates;
    if (char const* env = std::getenv("PRISM_E2B_RUNSC"); env && *env) candidates.emplace_back(env);
    for (char const* p : {"/usr/bin/runsc", "/usr/local/bin/runsc", "/usr/sbin/runsc"}) candidates.emplace_back(p);
    for (auto const& c : candidates)
        if (::access(c.c_str(), X_OK) == 0) return c;
    return {};
}

fs::path gvisor_agent_socket(fs::path const& sandbox_dir) { return sandbox_dir / "chan" / "envd.sock"; }

fs::path gvisor_system_mounts(fs::path const& sandbox_dir) { return sandbox_dir / "system"; }

result<void> gvisor_boot(runsc_config const& rc, gvisor_boot_spec const& spec)
{
    if (auto attached = attach_system(spec); !attached) return attached;
    auto bundle = write_bundle(spec);
    if (!bundle) return bundle.error();
    // The agent reads its config on its stdin, which is runsc create's: a file only root reads.
    auto const config = *bundle / "agent.json";
    if (!write_private_file(config, spec.agent_config))
        return error(errc::server_error, "cannot write the agent's config", {"create"});
    auto const socket = gvisor_agent_socket(spec.dir);
    ::unlink(socket.c_str());
    std::vector<std::string> const create = {"create", "--bundle", bundle->string(), spec.id};
    auto made = runsc_step(rc, create, runsc_quick, spec.cgroup_dirs, config.string());
    if (!made && !gvisor_status(rc, spec.id).empty()) {  // a container of that id left over: replace it
        gvisor_destroy(rc, spec.id, spec.dir, false);
        made = runsc_step(rc, create, runsc_quick, spec.cgroup_dirs, config.string());
    }
    if (!made) return made.error();
    if (auto started = runsc_step(rc, {"start", spec.id}, runsc_quick); !started) {
        gvisor_destroy(rc, spec.id, spec.dir, false);
        return started.error();
    }
    bool const answers = wait_for_agent(socket, std::chrono::steady_clock::now() + agent_start_patience);
    ::unlink(config.c_str());  // read by now (or never will be): it holds the sandbox's env vars
    if (!answers) {
        gvisor_destroy(rc, spec.id, spec.dir, false);
        return error(errc::server_error, "the envd agent of gVisor sandbox " + spec.id + " does not answer",
                     {"create"});
    }
    return result<void>{};
}

std::optional<error> gvisor_checkpoint_refusal(fs::path const& dir)
{
    auto bound = listening_host_socket(dir / "root");
    if (!bound) return std::nullopt;
    return error(errc::conflict,
                 "cannot snapshot the sandbox's memory: a process in it listens on the Unix socket " +
                     bound->string().substr((dir / "root").string().size()) +
                     ", which runsc cannot checkpoint (pause without memory works)",
                 {"pause"});
}

result<void> gvisor_checkpoint(runsc_config const& rc, std::string const& id, fs::path const& dir, bool& lost_memory)
{
    lost_memory = false;
    if (auto refused = gvisor_checkpoint_refusal(dir)) return *refused;
    auto const socket = gvisor_agent_socket(dir);
    auto const marker = released_marker(socket);
    auto const relisten = [&] { ask_agent_to_listen(rc, id, socket); };
    ::unlink(marker.c_str());
    auto const release = ask_agent_to_release(socket, agent_release_patience);
    if (!release) {
        relisten();
        return error(errc::server_error, "the envd agent of sandbox " + id + " did not let go of its socket",
                     {"pause"});
    }
    // The agent creates the marker once it holds no socket any more.
    auto const deadline = std::chrono::steady_clock::now() + agent_release_patience;
    std::error_code ec;
    while (!fs::exists(marker, ec) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (!fs::exists(marker, ec)) {
        relisten();
        return error(errc::server_error, "the envd agent of sandbox " + id + " kept connections open", {"pause"});
    }
    // The agent closed its ends of every connection, which should free the Sentry's host sockets.
    // Made sure of before runsc is asked: a checkpoint that met one anyway (an "encoding error at
    // object transport.connectionedEndpoint", CI 2026-12-06, 1 in about 15 runs under load) failed
    // and lost the sandbox's memory; a refusal here loses nothing.
    pid_t const sentry_pid = gvisor_sentry_pid(rc, id);
    std::size_t held = 0;
    while (sentry_pid > 0 && (held = sentry_agent_connections(sentry_pid)) > 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (held > 0) {
        auto const holders = gvisor_socket_holders(rc, id);
        relisten();
        return error(errc::server_error,
                     "the gVisor kernel of sandbox " + id + " still holds " + std::to_string(held) +
                         " connections of its envd agent, which runsc cannot save (the sandbox runs on); "
                         "its processes' sockets: " +
                         (holders.empty() ? std::string("(runsc exec could not list them)") : holders),
                     {"pause"});
    }
    ::unlink(socket.c_str());
    image_commit const commit{partial_image(dir), memory_image(dir), image_lock(dir)};
    fs::remove_all(commit.whole, ec);
    fs::remove_all(commit.partial, ec);
    fs::create_directories(commit.partial, ec);
    ::chmod(commit.partial.c_str(), 0700);
    auto saved =
        run_runsc(rc, {"checkpoint", "--image-path", commit.partial.string(), id}, runsc_slow, {}, {}, &commit);
    if (saved && saved->ok()) {
        (void)run_runsc(rc, {"delete", id}, runsc_quick);    // stopped by the checkpoint; restore re-creates it
        unmount_system_overlays(gvisor_system_mounts(dir));  // and mounts them again
        return result<void>{};
    }
    std::string const why = saved ? runsc_message(*saved) : saved.error().message();
    fs::remove_all(commit.partial, ec);
    fs::remove_all(commit.whole, ec);
    if (gvisor_status(rc, id) == "running") {  // refused before it stopped anything
        relisten();
        return error(errc::server_error, "runsc checkpoint failed (the sandbox runs on): " + why, {"pause"});
    }
    lost_memory = true;
    gvisor_destroy(rc, id, dir, true);
    return error(errc::server_error,
                 "runsc checkpoint failed, the sandbox's memory is lost (its files are kept): " + why, {"pause"});
}

result<void> gvisor_restore(runsc_config const& rc, gvisor_boot_spec const& spec)
{
    auto const image = memory_image(spec.dir);
    if (!gvisor_has_memory_image(spec.dir))
        return error(errc::server_error, "sandbox " + spec.id + " has no memory image to restore", {"resume"});
    if (!gvisor_status(rc, spec.id).empty()) gvisor_destroy(rc, spec.id, spec.dir, false);
    if (auto attached = attach_system(spec); !attached) return attached;
    auto bundle = write_bundle(spec);
    if (!bundle) return bundle.error();
    auto const socket = gvisor_agent_socket(spec.dir);
    auto const reconfigure = agent_reconfigure_file(socket);
    ::unlink(socket.c_str());
    ::unlink(released_marker(socket).c_str());
    if (!write_private_file(reconfigure, spec.agent_config))
        return error(errc::server_error, "cannot write the agent's config", {"resume"});
    auto fail = [&](error e) {
        ::unlink(reconfigure.c_str());  // it holds the sandbox's env vars
        return e;
    };
    if (auto restored = runsc_step(
            rc, {"restore", "--detach", "--bundle", bundle->string(), "--image-path", image.string(), spec.id},
            runsc_slow, spec.cgroup_dirs);
        !restored)
        return fail(restored.error());
    // The restored agent binds its socket again when told (a lost signal is sent again).
    auto const relisten = [&] { ask_agent_to_listen(rc, spec.id, socket); };
    relisten();
    if (!wait_for_agent(socket, std::chrono::steady_clock::now() + agent_start_patience, relisten))
        return fail(error(errc::server_error, "the envd agent of restored sandbox " + spec.id + " does not answer",
                          {"resume"}));
    ::unlink(reconfigure.c_str());  // taken by the agent before it bound its socket
    std::error_code ec;
    fs::remove_all(image, ec);  // consumed: the sandbox runs from it now
    return result<void>{};
}

result<void> gvisor_copy_memory_image(fs::path const& from, fs::path const& to)
{
    auto const dst = memory_image(to);
    std::error_code ec;
    fs::remove_all(dst, ec);
    fs::create_directories(dst, ec);
    ::chmod(dst.c_str(), 0700);
    auto put = [&](fs::path const& src, fs::path const& target) {
        std::error_code e;
        fs::create_hard_link(src, target, e);
        if (e) fs::copy_file(src, target, fs::copy_options::overwrite_existing, e);
        return !e;
    };
    bool ok = !ec && gvisor_has_memory_image(from);
    for (auto const& e : fs::directory_iterator(memory_image(from), ec))
        if (ok && e.is_regular_file(ec)) ok = put(e.path(), dst / e.path().filename());
    if (ok && fs::exists(from / "boot_id", ec)) {
        fs::remove(to / "boot_id", ec);
        ok = put(from / "boot_id", to / "boot_id");
    }
    if (!ok || ec) {
        fs::remove_all(dst, ec);
        return error(errc::server_error, "cannot copy the memory image of " + from.filename().string(), {"snapshot"});
    }
    return result<void>{};
}

bool gvisor_has_memory_image(fs::path const& dir)
{
    std::error_code ec;
    return fs::is_regular_file(memory_image(dir) / "checkpoint.img", ec);
}

std::uint64_t gvisor_memory_image_bytes(fs::path const& dir)
{
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(memory_image(dir), ec))
        if (e.is_regular_file(ec)) total += e.file_size(ec);
    return total;
}

void gvisor_destroy(runsc_config const& rc, std::string const& id, fs::path const& dir, bool drop_image)
{
    (void)run_runsc(rc, {"delete", "--force", id}, runsc_quick);
    unmount_system_overlays(gvisor_system_mounts(dir));
    std::error_code ec;
    if (drop_image) fs::remove_all(memory_image(dir), ec);
    fs::remove_all(partial_image(dir), ec);
}

void gvisor_settle_image_write(fs::path const& dir)
{
    unique_fd lock(::open(image_lock(dir).c_str(), O_RDWR | O_CLOEXEC));
    if (lock) {  // the lock goes when the shell that renames the image exits
        auto const deadline = std::chrono::steady_clock::now() + runsc_slow;
        while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::error_code ec;
    fs::remove_all(partial_image(dir), ec);
}

result<void> gvisor_agent_listens(runsc_config const& rc, std::string const& id, fs::path const& dir)
{
    auto const socket = gvisor_agent_socket(dir);
    std::error_code ec;
    // It let go of its socket only on the way to a checkpoint that did not happen.
    if (!fs::exists(released_marker(socket), ec) && fs::exists(socket, ec)) return result<void>{};
    auto const relisten = [&] { ask_agent_to_listen(rc, id, socket); };
    relisten();
    if (!wait_for_agent(socket, std::chrono::steady_clock::now() + agent_start_patience, relisten))
        return error(errc::server_error, "the envd agent of sandbox " + id + " does not answer", {"resume"});
    return result<void>{};
}

pid_t gvisor_sentry_pid(runsc_config const& rc, std::string const& id)
{
    auto const state = runsc_state(rc, id);
    auto const* pid = state.if_contains("pid");
    return pid && pid->is_int64() ? static_cast<pid_t>(pid->as_int64()) : 0;
}

std::size_t sentry_agent_connections(pid_t sentry)
{
    std::set<std::string> inodes;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator("/proc/" + std::to_string(sentry) + "/fd", ec)) {
        auto const target = fs::read_symlink(e.path(), ec).native();
        if (!ec && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
    }
    if (inodes.empty()) return 0;
    // The gofer binds the agent's socket on the host, in this network namespace (runsc makes the
    // Sentry one of its own): "Num RefCount Protocol Flags Type St Inode Path" per socket.
    std::ifstream table("/proc/self/net/unix");
    std::string line;
    std::getline(table, line);
    std::size_t held = 0;
    while (std::getline(table, line)) {
        std::istringstream fields(line);
        std::string num, refs, protocol, flags, type, state, inode, path;
        fields >> num >> refs >> protocol >> flags >> type >> state >> inode >> path;
        if (type == "0001" && state == "03" && path == gvisor_socket_in_container && inodes.count(inode)) ++held;
    }
    return held;
}

std::string gvisor_socket_holders(runsc_config const& rc, std::string const& id)
{
    auto r = run_runsc(rc,
                       {"exec", "--user", "0:0", id, "/bin/sh", "-c",
                        "for p in /proc/[0-9]*; do for f in $p/fd/*; do case $(readlink $f) in socket:*) "
                        "echo \"${p#/proc/} $(tr '\\0' ' ' < $p/cmdline | cut -c1-40)fd ${f##*/}\";; esac; "
                        "done; done 2>/dev/null | tr '\\n' ';'"},
                       runsc_quick);
    if (!r || !r->ok()) return {};
    auto text = r->output;
    if (text.size() > 400) text = text.substr(0, 400) + "...";
    return text;
}

std::string gvisor_status(runsc_config const& rc, std::string const& id)
{
    auto const state = runsc_state(rc, id);
    auto const* s = state.if_contains("status");
    return s && s->is_string() ? std::string(s->as_string()) : std::string();
}

result<void> gvisor_exec_detached(runsc_config const& rc, std::string const& id, unsigned uid, std::string const& cwd,
                                  std::vector<std::string> const& env, std::vector<std::string> const& argv)
{
    std::vector<std::string> args = {"exec",  "--detach", "--user", std::to_string(uid) + ":" + std::to_string(uid),
                                     "--cwd", cwd};
    for (auto const& e : env) {
        args.emplace_back("--env");
        args.push_back(e);
    }
    args.push_back(id);
    args.insert(args.end(), argv.begin(), argv.end());
    return runsc_step(rc, args, runsc_quick);
}

result<void> probe_gvisor(runsc_config const& rc, fs::path const& probe_dir, std::string const& agent_path)
{
    if (::geteuid() != 0) return error(errc::unsupported, "the gvisor engine needs root", {"start"});
    std::error_code ec;
    fs::create_directories(rc.root, ec);
    ::chmod(rc.root.c_str(), 0700);
    for (char const* d : {"home/user", "workspace", "tmp", "root"}) fs::create_directories(probe_dir / "root" / d, ec);
    if (ec || !write_boot_id(probe_dir / "boot_id"))
        return error(errc::server_error, "cannot prepare " + probe_dir.string(), {"start"});
    gvisor_boot_spec spec;
    spec.id = "prism-e2b-probe-" + random_id(8);
    spec.dir = probe_dir;
    spec.root = probe_dir / "root";
    spec.boot_id_file = probe_dir / "boot_id";
    spec.hostname = "probe";
    spec.agent_path = agent_path;
    agent_config cfg;
    cfg.sandbox_id = spec.id;
    cfg.listen_path = gvisor_socket_in_container;
    spec.agent_config = json::serialize(cfg.to_json());
    auto booted = gvisor_boot(rc, spec);
    if (booted) gvisor_destroy(rc, spec.id, probe_dir, true);
    remove_tree(probe_dir.string());
    return booted;
}

}  // namespace prism_e2b::local::detail
