// Atomic per-sandbox ledger files.
#include "emulator/ledger.hpp"

#include "emulator/server_state.hpp"
#include "emulator/small_files.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::int64_t ms_since_epoch(std::chrono::system_clock::time_point tp)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(tp.time_since_epoch()).count();
}

json::object string_map(std::map<std::string, std::string> const& m)
{
    json::object o;
    for (auto const& [k, v] : m) o[k] = v;
    return o;
}

}  // namespace

fs::path ledger_dir(fs::path const& state_dir)
{
    auto const dir = state_dir / "ledger";
    ::mkdir(dir.c_str(), 0700);
    ::chmod(dir.c_str(), 0700);
    return dir;
}

bool ledger_write(fs::path const& dir, sandbox const& sb)
{
    json::object o;
    o["sandboxID"] = sb.id;
    o["templateID"] = sb.template_id;
    o["accessToken"] = sb.access_token;
    o["metadata"] = string_map(sb.metadata);
    o["envVars"] = string_map(sb.env_vars);
    o["startedAtMs"] = ms_since_epoch(sb.started_at);
    o["autoPause"] = sb.auto_pause;
    o["autoPauseMemory"] = sb.auto_pause_memory;
    o["autoResume"] = sb.auto_resume;
    o["internet"] = sb.internet;
    o["isolation"] = sb.isolation;
    o["uidBase"] = sb.ids.base();
    o["seq"] = sb.seq;
    json::object limits;
    limits["cpuCount"] = sb.limits.cpu_count;
    limits["memoryMB"] = sb.limits.memory_mb;
    limits["maxPids"] = sb.limits.max_pids;
    o["limits"] = std::move(limits);
    o["diskSizeMB"] = sb.disk_mb;
    o["defaultUser"] = sb.default_user;
    o["startCmd"] = sb.start_cmd;
    json::array mounts;
    for (auto const& m : sb.volume_mounts)
        mounts.push_back(json::object{{"name", m.name}, {"volumeID", m.volume_id}, {"path", m.path}});
    o["volumeMounts"] = std::move(mounts);
    // Where a restarted server finds the sandbox's init, agent and frozen processes again.
    json::array cgroups;
    for (auto const& d : sb.limit_cgroups) cgroups.emplace_back(d);
    o["cgroups"] = std::move(cgroups);
    o["freezerCgroup"] = sb.cgroup_dir;
    {
        std::lock_guard lk(sb.mutex);
        if (sb.gone) return true;
        o["state"] = sb.state == sandbox_state::running ? "running" : "paused";
        o["pausedWithMemory"] = sb.paused_with_memory;
        o["endAtMs"] = ms_since_epoch(sb.end_at);
        o["freezeMethod"] = sb.freeze_method;
        o["initPid"] = sb.init.pid;
    }
    std::string const text = json::serialize(o);
    auto const final_path = dir / (sb.id + ".json");
    auto const tmp = dir / (sb.id + ".json.tmp-" + random_hex(4));
    int const fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    bool ok = write_all(fd, text) == 0 && ::fsync(fd) == 0;
    ok = ::close(fd) == 0 && ok;
    ok = ok && ::rename(tmp.c_str(), final_path.c_str()) == 0;
    if (!ok) {
        ::unlink(tmp.c_str());
        return false;
    }
    int const dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return true;
}

void ledger_remove(fs::path const& dir, std::string const& id)
{
    ::unlink((dir / (id + ".json")).c_str());
    int const dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

std::vector<json::object> ledger_read_all(fs::path const& dir)
{
    std::vector<json::object> out;
    std::error_code ec;
    for (auto const& e : fs::directory_iterator(dir, ec)) {
        auto const name = e.path().filename().string();
        if (name.size() < 6 || name.compare(name.size() - 5, 5, ".json") != 0) {
            if (name.find(".json.tmp-") != std::string::npos) fs::remove(e.path(), ec);  // a write cut short
            continue;
        }
        std::ifstream in(e.path());
        std::stringstream ss;
        ss << in.rdbuf();
        boost::system::error_code jec;
        auto v = json::parse(ss.str(), jec);
        if (!jec && v.is_object()) out.push_back(std::move(v.as_object()));
    }
    return out;
}

}  // namespace prism_e2b::local::detail
