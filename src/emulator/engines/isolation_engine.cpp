// The defaults of isolation_engine: a sandbox that is a directory on the host and the
// processes the server started in it (what the `none` and `mount-namespace` engines are).
#include "emulator/engines/isolation_engine.hpp"

#include "emulator/cgroups.hpp"
#include "emulator/sandbox_tree.hpp"
#include "emulator/server_state.hpp"
#include "emulator/small_files.hpp"

#include <chrono>
#include <csignal>
#include <thread>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace {

/// The state letter of /proc/<pid>/stat ('R', 'S', 'T', ...), '?' when unknown.
char process_state_letter(pid_t pid)
{
    auto const fields = proc_stat_fields(pid);
    return fields.empty() || fields[0].empty() ? '?' : fields[0][0];
}

}  // namespace

enforcement isolation_engine::enforced() const
{
    enforcement e;
    e.distinct_users = ::geteuid() == 0;  // the server sets the user's ids only when it can
    return e;
}

std::optional<std::string> isolation_engine::volume_mount_problem() const
{
    return "the " + std::string(name()) +
           " engine cannot mount volumes (the namespaces engine run as root and gvisor can)";
}

result<void> isolation_engine::reserve_ids(sandbox&) { return result<void>{}; }

void isolation_engine::attach(sandbox&) const {}

result<void> isolation_engine::limit(sandbox&) const { return result<void>{}; }

result<void> isolation_engine::boot(server_state&, sandbox&) { return result<void>{}; }

pid_t isolation_engine::halt(sandbox&) { return -1; }

bool isolation_engine::freeze_cgroup_of(sandbox& sb) { return !sb.cgroup_dir.empty() && freeze_cgroup(sb.cgroup_dir); }

result<memory_pause> isolation_engine::pause_with_memory(server_state&, sandbox& sb)
{
    if (freeze_cgroup_of(sb)) return memory_pause{"cgroup-freezer", std::nullopt};
    for (auto& [pid, p] : sb.processes) p->signal(SIGSTOP);
    // A stop lands asynchronously: answer once the group leaders report it.
    for (auto& [pid, p] : sb.processes)
        for (int i = 0; i < 200 && !p->ended() && process_state_letter(static_cast<pid_t>(pid)) != 'T'; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return memory_pause{"sigstop", std::nullopt};
}

result<void> isolation_engine::resume_with_memory(server_state&, sandbox& sb)
{
    if (sb.freeze_method == "cgroup-freezer")
        thaw_cgroup(sb.cgroup_dir);
    else
        for (auto& [pid, p] : sb.processes) p->signal(SIGCONT);
    return result<void>{};
}

void isolation_engine::place(server_state const& st, sandbox const& sb, spawn_spec& spec, std::string const& cwd,
                             os_user const& user) const
{
    spec.chdir_to = st.host_path_for_cwd(sb, cwd);
    if (::geteuid() == 0) {  // otherwise every command runs as the server's own user
        spec.uid = user.uid;
        spec.gid = user.gid;
    }
}

void isolation_engine::join(sandbox const&, spawn_spec&) const {}

result<void> isolation_engine::start_command(server_state& st, std::shared_ptr<sandbox> const& sb, os_user const& user)
{
    process_config cfg;
    cfg.cmd = "/bin/bash";
    cfg.args = {"-lc", sb->start_cmd};
    cfg.tag = "start-command";
    if (auto p = st.spawn(sb, std::move(cfg), false, user); !p) return p.error();
    return result<void>{};
}

void isolation_engine::configure_agent(agent_config&) const {}

result<void> copy_files_held_still(sandbox& sb, std::filesystem::path const& to)
{
    bool const running = sb.state == sandbox_state::running;
    bool frozen = false;
    if (running && !sb.cgroup_dir.empty()) frozen = freeze_cgroup(sb.cgroup_dir);
    if (running && !frozen)
        for (auto& [pid, p] : sb.processes) p->signal(SIGSTOP);
    auto copied = copy_tree(sb.root, to, 0);  // owners as the ids inside: a snapshot belongs to no uid range
    if (frozen)
        thaw_cgroup(sb.cgroup_dir);
    else if (running)
        for (auto& [pid, p] : sb.processes) p->signal(SIGCONT);
    return copied;
}

result<bool> isolation_engine::capture(server_state&, sandbox& sb, std::filesystem::path const& to, bool&)
{
    if (auto copied = copy_files_held_still(sb, to / "root"); !copied) return copied.error();
    return false;
}

result<void> isolation_engine::restore_memory(server_state&, sandbox&, std::filesystem::path const&)
{
    return error(errc::unsupported, "the " + std::string(name()) + " engine keeps no memory images", {"restore"});
}

std::optional<std::uint64_t> isolation_engine::memory_image_bytes(sandbox const&) const { return std::nullopt; }

result<bool> isolation_engine::adopt(server_state&, sandbox&, sandbox_remains const&) { return false; }

void isolation_engine::took_back(server_state&, sandbox&) {}

void isolation_engine::stop() {}

}  // namespace prism_e2b::local::detail
