// Sandbox metrics (openapi.yml's SandboxMetric), sampled when asked: memory from
// the sandbox's memory cgroup (namespaces engine; else the resident sets of its
// processes), CPU as the time its processes (and the children they reaped) used
// since the previous sample, disk as what its directory tree occupies.
// GET /sandboxes/{id}/metrics answers one sample (none when [start, end] excludes
// now); GET /sandboxes/metrics?sandbox_ids=a,b one per sandbox found.
#include "emulator/sandbox_tree.hpp"
#include "emulator/server_state.hpp"
#include "emulator/small_files.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <sstream>
#include <sys/statvfs.h>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

std::int64_t number_in(std::string const& path)
{
    auto const t = read_small_file(path);
    return t.empty() ? -1 : std::atoll(t.c_str());
}

/// A "key value" line of a cgroup stat file.
std::int64_t stat_field(std::string const& text, std::string_view key)
{
    std::istringstream in(text);
    std::string k;
    std::int64_t v = 0;
    while (in >> k >> v)
        if (k == key) return v;
    return 0;
}

/// utime + stime + cutime + cstime of a process, in clock ticks.
/// What the sandbox's files take: its disk's used blocks, as df inside reports them (a walk of
/// its tree when it has no disk of its own).
std::uint64_t disk_used(sandbox const& sb)
{
    struct statvfs s {};
    if (sb.disk_mb && is_mount_point(sb.root) && ::statvfs(sb.root.c_str(), &s) == 0)
        return static_cast<std::uint64_t>(s.f_blocks - s.f_bfree) * s.f_frsize;
    return tree_disk_usage(sb.root);
}

std::uint64_t cpu_ticks(pid_t pid)
{
    auto const fields = proc_stat_fields(pid);
    std::uint64_t total = 0;
    for (std::size_t n = 14; n <= 17 && n - 3 < fields.size(); ++n)  // utime, stime, cutime, cstime
        total += std::strtoull(fields[n - 3].c_str(), nullptr, 10);
    return total;
}

std::uint64_t rss_bytes(pid_t pid)
{
    std::istringstream in(read_small_file("/proc/" + std::to_string(pid) + "/statm"));
    std::uint64_t size = 0, resident = 0;
    in >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

json::object sample(server_state const& st, sandbox& sb)
{
    // Which processes: the memory cgroup (namespaces: the init and all it runs), the freezer's, or the ones started.
    std::vector<pid_t> pids;
    if (!sb.limit_cgroups.empty())
        pids = cgroup_pids(sb.limit_cgroups[0]);
    else if (sb.init.pid > 0)  // rootless namespaces: its pid namespace
        pids = sandbox_pids(sb.init, sb.limit_cgroups);
    else if (!sb.cgroup_dir.empty())
        pids = cgroup_pids(sb.cgroup_dir);
    else {
        std::lock_guard lk(sb.mutex);
        for (auto const& [pid, p] : sb.processes) pids.push_back(static_cast<pid_t>(pid));
    }
    std::uint64_t ticks = 0, rss = 0;
    for (pid_t p : pids) {
        ticks += cpu_ticks(p);
        rss += rss_bytes(p);
    }
    std::int64_t mem_used = 0, mem_total = 0, mem_cache = 0;
    unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    if (!sb.limit_cgroups.empty()) {
        auto const& mem = sb.limit_cgroups[0];
        mem_used = static_cast<std::int64_t>(memory_usage_bytes(mem));
        mem_total = std::max<std::int64_t>(0, number_in(mem + "/memory.limit_in_bytes"));
        mem_cache = stat_field(read_small_file(mem + "/memory.stat"), "total_cache");
        cpus = std::max(1u, read_sandbox_limits(sb.limit_cgroups).cpu_count);
    } else {
        mem_used = static_cast<std::int64_t>(rss);
        mem_total = static_cast<std::int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
    }
    auto const now = std::chrono::steady_clock::now();
    double pct = 0;
    {
        std::lock_guard lk(sb.mutex);
        auto const since = sb.sampled_at == std::chrono::steady_clock::time_point{}
                               ? std::chrono::system_clock::now() - sb.started_at
                               : std::chrono::duration_cast<std::chrono::system_clock::duration>(now - sb.sampled_at);
        auto const prev = sb.sampled_cpu_ticks;
        double const wall = std::chrono::duration<double>(since).count();
        // A process that ended takes its ticks along: never a negative share.
        if (wall > 0 && ticks > prev)
            pct = std::min(100.0, 100.0 * static_cast<double>(ticks - prev) /
                                      static_cast<double>(::sysconf(_SC_CLK_TCK)) / wall / cpus);
        sb.sampled_cpu_ticks = ticks;
        sb.sampled_at = now;
    }
    std::int64_t disk_total = static_cast<std::int64_t>(sb.disk_mb) << 20;
    if (disk_total == 0) {
        struct statvfs s {};
        if (::statvfs(st.state_dir.c_str(), &s) == 0)
            disk_total = static_cast<std::int64_t>(s.f_blocks) * static_cast<std::int64_t>(s.f_frsize);
    }
    auto const wall_now = std::chrono::system_clock::now();
    json::object o;
    o["timestamp"] = rfc3339(wall_now);
    o["timestampUnix"] = std::chrono::duration_cast<std::chrono::seconds>(wall_now.time_since_epoch()).count();
    o["cpuCount"] = cpus;
    o["cpuUsedPct"] = std::round(pct * 100) / 100;
    o["memUsed"] = mem_used;
    o["memTotal"] = mem_total;
    o["memCache"] = mem_cache;
    o["diskUsed"] = static_cast<std::int64_t>(disk_used(sb));
    o["diskTotal"] = disk_total;
    return o;
}

std::optional<std::int64_t> seconds_param(std::string const& v)
{
    char* endp = nullptr;
    long long const n = std::strtoll(v.c_str(), &endp, 10);
    if (v.empty() || *endp != '\0' || n < 0) return std::nullopt;
    return n;
}

http_response one(server_state const& st, std::string const& id, std::string const& query)
{
    std::optional<std::int64_t> start, end;
    for (auto const& [k, v] : parse_query(query)) {
        if (k != "start" && k != "end") continue;
        auto n = seconds_param(v);
        if (!n) return rest_error(400, k + " must be a non-negative Unix time in seconds");
        (k == "start" ? start : end) = n;
    }
    auto sb = st.find(id);
    if (!sb) return rest_error(404, "sandbox \"" + id + "\" doesn't exist or you don't have access to it");
    auto const now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    json::array out;
    if ((!start || *start <= now) && (!end || *end >= now)) out.push_back(sample(st, *sb));
    return json_response(200, out);
}

http_response batch(server_state const& st, std::string const& query)
{
    std::vector<std::string> ids;
    for (auto const& [k, v] : parse_query(query)) {
        if (k != "sandbox_ids") continue;
        std::size_t i = 0;
        while (i <= v.size()) {
            auto j = v.find(',', i);
            if (j == std::string::npos) j = v.size();
            if (j > i) ids.push_back(v.substr(i, j - i));
            i = j + 1;
        }
    }
    if (ids.empty()) return rest_error(400, "sandbox_ids is required");
    if (ids.size() > 100) return rest_error(400, "at most 100 sandbox_ids");
    json::object sandboxes;
    for (auto const& id : ids)
        if (auto sb = st.find(id)) sandboxes[id] = sample(st, *sb);
    json::object o;
    o["sandboxes"] = std::move(sandboxes);
    return json_response(200, o);
}

}  // namespace

asio::awaitable<bool> handle_metrics_routes(std::shared_ptr<server_state> st, http_request const& req,
                                            response_sink& sink)
{
    std::string_view path(req.path);
    std::optional<http_response> r;
    if (path == "/sandboxes/metrics") {
        r = req.method == "GET" ? batch(*st, req.query) : rest_error(405, "method not allowed");
    } else if (auto id = sandbox_route_id(path, "/metrics"); id && req.method == "GET") {
        r = one(*st, *id, req.query);
    }
    if (!r) co_return false;
    co_await sink.send(std::move(*r));
    co_return true;
}

}  // namespace prism_e2b::local::detail
