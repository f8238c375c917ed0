#include "emulator/cgroups.hpp"

#include "emulator/random_ids.hpp"
#include "emulator/small_files.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

/// This process's cgroup path in a v1 hierarchy ("/" when not listed).
std::string own_cgroup(std::string const& controller)
{
    std::istringstream in(read_small_file("/proc/self/cgroup"));
    std::string line;
    while (std::getline(in, line)) {
        auto const a = line.find(':');
        auto const b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        std::istringstream list(line.substr(a + 1, b - a - 1));
        std::string c;
        while (std::getline(list, c, ','))
            if (c == controller) return line.substr(b + 1);
    }
    return "/";
}

std::string make_root(std::string const& controller, std::string const& state_dir)
{
    std::string parent = "/sys/fs/cgroup/" + controller + own_cgroup(controller);
    if (parent.back() == '/') parent.pop_back();
    return create_server_cgroup(parent, "prism-e2b-ns-", remove_cgroup_tree, state_dir);
}

}  // namespace

namespace {

/// Which state dir a server's cgroup root belongs to, for the servers that clean up after dead ones.
fs::path const cgroup_owners = "/run/prism-e2b/cgroup-owners";

/// What /run/prism-e2b/cgroup-owners/<root> records: the server's state dir and start time.
struct cgroup_owner {
    std::string state_dir;
    std::uint64_t start_ticks = 0;  // 0: not recorded
};

cgroup_owner read_cgroup_owner(std::string const& root_name)
{
    std::istringstream in(read_small_file((cgroup_owners / root_name).string()));
    cgroup_owner owner;
    std::getline(in, owner.state_dir);
    in >> owner.start_ticks;
    return owner;
}

/// Whether the server that created root `root_name` (pid `pid`) still runs. A pid alone is not
/// enough: after a crash it is soon reused, and that root would then never be swept.
bool owner_runs(std::string const& root_name, pid_t pid)
{
    if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
    auto const recorded = read_cgroup_owner(root_name).start_ticks;
    return recorded == 0 || recorded == process_start_ticks(pid);
}

/// A dead server's root that a later server on its state dir will take back (its ledger holds sandboxes).
bool claimed_by_a_ledger(std::string const& root_name)
{
    auto const state_dir = read_cgroup_owner(root_name).state_dir;
    if (state_dir.empty()) return false;
    std::error_code ec;
    auto const ledger = fs::path(state_dir) / "ledger";
    return fs::is_directory(ledger, ec) && !fs::is_empty(ledger, ec);
}

void record_cgroup_owner(std::string const& root_name, std::string const& state_dir)
{
    std::error_code ec;
    fs::create_directories(cgroup_owners, ec);
    std::ofstream(cgroup_owners / root_name, std::ios::trunc) << state_dir << '\n'
                                                              << process_start_ticks(::getpid()) << '\n';
}

}  // namespace

std::uint64_t process_start_ticks(pid_t pid)
{
    auto const fields = proc_stat_fields(pid);
    return fields.size() > 19 ? std::strtoull(fields[19].c_str(), nullptr, 10) : 0;  // field 22
}

void remove_cgroup_tree(fs::path const& dir)
{
    std::error_code ec;
    for (int attempt = 0; attempt < 50; ++attempt) {
        bool busy = false;
        for (auto const& sub : fs::directory_iterator(dir, ec)) {
            if (!sub.is_directory(ec)) continue;
            std::istringstream procs(read_small_file((sub.path() / "cgroup.procs").string()));
            pid_t p;
            while (procs >> p) ::kill(p, SIGKILL);
            write_small_file((sub.path() / "freezer.state").string(), "THAWED");  // SIGKILL lands once thawed
            if (::rmdir(sub.path().c_str()) != 0) busy = true;
        }
        if (!busy && (::rmdir(dir.c_str()) == 0 || errno == ENOENT)) {
            ::unlink((cgroup_owners / dir.filename()).c_str());  // a server's root: its owner record
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

std::string create_server_cgroup(std::string const& parent, std::string const& prefix,
                                 void (*remove_tree)(fs::path const&), std::string const& state_dir)
{
    struct stat st {};
    if (::stat((parent + "/cgroup.procs").c_str(), &st) != 0) return {};
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(parent, ec)) {
        auto const name = e.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        pid_t const owner = static_cast<pid_t>(std::atol(name.c_str() + prefix.size()));
        if (owner > 0 && !owner_runs(name, owner) && !claimed_by_a_ledger(name)) {
            remove_tree(e.path());  // and its owner record
        }
    }
    std::string const name = prefix + std::to_string(::getpid()) + "-" + random_id(6);
    std::string const dir = parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) return {};
    record_cgroup_owner(name, state_dir);
    return dir;
}

std::string take_over_cgroup_root(std::string const& root)
{
    fs::path const path(root);
    auto const name = path.filename().string();
    auto const digits = name.find_first_of("0123456789");
    auto const dash = name.rfind('-');
    if (digits == std::string::npos || dash == std::string::npos || dash < digits) return root;
    pid_t const owner = static_cast<pid_t>(std::atol(name.c_str() + digits));
    if (owner == ::getpid() || owner <= 0 || owner_runs(name, owner)) return root;
    auto const new_name = name.substr(0, digits) + std::to_string(::getpid()) + name.substr(dash);
    auto const new_path = path.parent_path() / new_name;
    if (::rename(path.c_str(), new_path.c_str()) != 0) return root;
    auto const state_dir = read_cgroup_owner(name).state_dir;
    std::error_code ec;
    fs::remove(cgroup_owners / name, ec);
    record_cgroup_owner(new_name, state_dir);
    return new_path.string();
}

bool cgroup_roots::create(std::string const& state_dir)
{
    memory = make_root("memory", state_dir);
    pids = make_root("pids", state_dir);
    cpu = make_root("cpu", state_dir);
    return !memory.empty() && !pids.empty() && !cpu.empty();
}

std::vector<std::string> cgroup_roots::all() const
{
    std::vector<std::string> out;
    for (auto const* d : {&memory, &pids, &cpu})
        if (!d->empty()) out.push_back(*d);
    return out;
}

result<std::vector<std::string>> create_sandbox_cgroups(cgroup_roots const& roots, std::string const& id,
                                                        cgroup_limits const& limits)
{
    std::vector<std::string> dirs;
    auto fail = [&](std::string const& what) {
        for (auto const& d : dirs) ::rmdir(d.c_str());
        return error(errc::server_error, "cannot set up the sandbox's cgroups: " + what, {"create"});
    };
    for (auto const* root : {&roots.memory, &roots.pids, &roots.cpu}) {
        std::string const d = *root + "/" + id;
        if (::mkdir(d.c_str(), 0755) != 0) return fail(d);
        dirs.push_back(d);
    }
    if (!write_small_file(dirs[0] + "/memory.limit_in_bytes", std::to_string(std::uint64_t{limits.memory_mb} << 20)))
        return fail("memory.limit_in_bytes");
    if (!write_small_file(dirs[1] + "/pids.max", std::to_string(limits.max_pids))) return fail("pids.max");
    if (!write_small_file(dirs[2] + "/cpu.cfs_period_us", "100000") ||
        !write_small_file(dirs[2] + "/cpu.cfs_quota_us", std::to_string(100000ull * limits.cpu_count)))
        return fail("cpu.cfs_quota_us");
    return dirs;
}

cgroup_limits read_sandbox_limits(std::vector<std::string> const& dirs)
{
    cgroup_limits l{0, 0, 0};
    if (dirs.size() != 3) return l;
    auto num = [](std::string const& path) -> std::int64_t {
        auto const t = read_small_file(path);
        return t.empty() ? -1 : std::atoll(t.c_str());
    };
    if (auto m = num(dirs[0] + "/memory.limit_in_bytes"); m > 0) l.memory_mb = static_cast<std::uint32_t>(m >> 20);
    if (auto p = num(dirs[1] + "/pids.max"); p > 0) l.max_pids = static_cast<std::uint32_t>(p);
    auto const quota = num(dirs[2] + "/cpu.cfs_quota_us");
    auto const period = num(dirs[2] + "/cpu.cfs_period_us");
    if (quota > 0 && period > 0) l.cpu_count = static_cast<unsigned>((quota + period - 1) / period);
    return l;
}

// ---------------------------------------------------------------- freezer

namespace {

/// The tasks of `dir` (a freezer cgroup) that are not frozen: "tid comm state wchan;" each,
/// at most about 400 characters.
std::string unfrozen_tasks(std::string const& dir)
{
    std::string out;
    std::istringstream tasks(read_small_file(dir + "/tasks"));
    for (std::string tid; tasks >> tid && out.size() < 400;) {
        auto const task = "/proc/" + tid;
        auto const wchan = read_small_file(task + "/wchan");
        if (wchan == "__refrigerator") continue;
        auto const fields = proc_stat_fields(static_cast<pid_t>(std::atoi(tid.c_str())));
        auto comm = read_small_file(task + "/comm");
        if (!comm.empty() && comm.back() == '\n') comm.pop_back();
        out += tid + " " + comm + " " + (fields.empty() ? "?" : fields[0]) + " " + wchan + "; ";
    }
    return out;
}

}  // namespace

std::uint64_t memory_usage_bytes(std::string const& memory_cgroup)
{
    return std::strtoull(read_small_file(memory_cgroup + "/memory.usage_in_bytes").c_str(), nullptr, 10);
}

bool freeze_cgroup(std::string const& dir, std::string* unfrozen)
{
    if (!write_small_file(dir + "/freezer.state", "FROZEN")) return false;
    for (int i = 0; i < 2000; ++i) {
        auto s = read_small_file(dir + "/freezer.state");
        if (s.rfind("FROZEN", 0) == 0) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (unfrozen) *unfrozen = unfrozen_tasks(dir);
    write_small_file(dir + "/freezer.state", "THAWED");
    return false;
}

void thaw_cgroup(std::string const& dir) { write_small_file(dir + "/freezer.state", "THAWED"); }

}  // namespace prism_e2b::local::detail
