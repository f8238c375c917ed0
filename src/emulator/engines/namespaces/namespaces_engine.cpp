// The `namespaces` engine (namespaces_engine.hpp): a sandbox's life on top of its
// init (sandbox_init.hpp), its cgroups (cgroups.hpp) and its network (sandbox_network.hpp).
#include "emulator/engines/namespaces/namespaces_engine.hpp"

#include "emulator/engines/cgroup_limited_engine.hpp"
#include "emulator/engines/namespaces/sandbox_init.hpp"
#include "emulator/envd_proxy.hpp"
#include "emulator/sandbox_network.hpp"
#include "emulator/server_state.hpp"

#include <boost/json/serialize.hpp>

#include <csignal>
#include <sched.h>
#include <tuple>
#include <unistd.h>

namespace prism_e2b::local::detail {

namespace fs = std::filesystem;

namespace {

class namespaces_engine final : public cgroup_limited_engine {
public:
    namespaces_engine(bool rootless, cgroup_roots roots, std::string agent, std::string slirp4netns)
        : cgroup_limited_engine(std::move(roots)),
          rootless_(rootless),
          agent_(std::move(agent)),
          slirp4netns_(std::move(slirp4netns))
    {
    }

    std::string_view name() const noexcept override { return "namespaces"; }
    sandbox_capabilities capabilities(bool allow_internet_access) const override
    {
        return namespaces_capabilities(rootless_, allow_internet_access);
    }
    enforcement enforced() const override { return {rootless_, !rootless_, rootless_}; }
    bool host_ids_reach_sandbox_files() const noexcept override { return false; }
    bool own_mount_namespace() const noexcept override { return true; }
    bool boots() const noexcept override { return true; }
    std::optional<std::string> volume_mount_problem() const override
    {
        if (!rootless_) return std::nullopt;  // idmapped mounts need a server run as root
        return std::string(
            "the namespaces engine of a server not run as root cannot mount volumes (the namespaces "
            "engine run as root and gvisor can)");
    }

    result<void> reserve_ids(sandbox& sb) override
    {
        if (rootless_) return result<void>{};  // one mapped id: the server's own
        auto ids = uid_range::reserve();
        if (!ids) return ids.error();
        sb.ids = std::move(*ids);
        return result<void>{};
    }

    void attach(sandbox& sb) const override
    {
        sb.boot_id_file = sb.dir / "boot_id";
        sb.agent = std::make_shared<agent_pool>(sb.dir / "envd.sock");
        sb.stage = sb.dir / "stage";
        std::error_code ec;
        fs::create_directories(sb.stage, ec);
    }

    result<void> limit(sandbox& sb) const override
    {
        if (rootless_) return result<void>{};  // no cgroups of its own: the pids limit is an rlimit
        return cgroup_limited_engine::limit(sb);
    }

    result<void> boot(server_state& st, sandbox& sb) override
    {
        if (!write_boot_id(sb.boot_id_file))
            return error(errc::server_error, "cannot write the sandbox's boot id", {"create"});
        ns_boot_spec spec;
        spec.sandbox_root = sb.root;
        spec.stage = sb.stage;
        spec.boot_id_file = sb.boot_id_file;
        spec.passwd_file = st.passwd_file;
        spec.group_file = st.group_file;
        spec.hostname = "e2b-" + sb.id.substr(0, 8);
        // With internet access: its own network namespace behind slirp4netns when this machine
        // has it (no host loopback), else the host's network.
        spec.new_network = !sb.internet || !slirp4netns_.empty();
        if (sb.internet) spec.user_network = slirp4netns_;
        spec.uid_base = sb.ids.base();
        spec.rootless = rootless_;
        spec.max_pids = sb.limits.max_pids;
        spec.cgroup_dirs = sb.limit_cgroups;
        if (!sb.cgroup_dir.empty()) spec.cgroup_dirs.push_back(sb.cgroup_dir);
        spec.agent_path = agent_;
        spec.agent_config = boost::json::serialize(st.agent_config_for(sb).to_json());
        for (auto const& m : sb.volume_mounts) spec.volumes.push_back({st.volumes.data_dir(m.volume_id), m.path});
        if (!rootless_) {  // its own writable system (idmapped mounts need a server run as root)
            auto layer = st.system_layer_for(sb, spec.hostname);
            if (!layer) return layer.error();
            std::tie(spec.system_layer, spec.system_etc) = std::move(*layer);
        }
        // Bound before the init exists, so the server can connect at once (the backlog holds
        // connections until the agent accepts) and again after a restart of its own.
        auto listening = listen_agent_socket(sb.agent->socket_path());
        if (!listening) return listening.error();
        spec.agent_listen_fd = listening->get();
        auto init = start_sandbox_init(spec);
        if (!init) return init.error();
        sb.agent->reset();
        sb.init = std::move(*init);
        return result<void>{};
    }

    pid_t halt(sandbox& sb) override
    {
        if (sb.init.pid <= 0) return -1;
        pid_t const pid = sb.init.pid;
        ::kill(pid, SIGKILL);  // the kernel kills every process of its pid namespace
        sb.init = ns_init{};
        if (sb.agent) sb.agent->reset();
        return pid;
    }

    result<memory_pause> pause_with_memory(server_state&, sandbox& sb) override
    {
        if (freeze_cgroup_of(sb)) return memory_pause{"cgroup-freezer", std::nullopt};
        for (pid_t p : sandbox_pids(sb.init, sb.limit_cgroups)) ::kill(p, SIGSTOP);  // its init, agent, processes
        return memory_pause{"sigstop", std::nullopt};
    }

    result<void> resume_with_memory(server_state&, sandbox& sb) override
    {
        if (sb.freeze_method == "cgroup-freezer")
            thaw_cgroup(sb.cgroup_dir);
        else
            for (pid_t p : sandbox_pids(sb.init, sb.limit_cgroups)) ::kill(p, SIGCONT);
        return result<void>{};
    }

    void place(server_state const&, sandbox const& sb, spawn_spec& spec, std::string const& cwd,
               os_user const& user) const override
    {
        spec.chdir_to = cwd;
        spec.join_namespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC;
        if (!sb.internet || !slirp4netns_.empty()) spec.join_namespaces |= CLONE_NEWNET;
        for (auto const& d : sb.limit_cgroups) spec.cgroup_procs.push_back(d + "/cgroup.procs");
        spec.uid = user.uid;  // the ids inside the sandbox, always switched to
        spec.gid = user.gid;
    }

    void join(sandbox const& sb, spawn_spec& spec) const override { spec.join_pidfd = sb.init.pidfd.get(); }

    result<bool> adopt(server_state& st, sandbox& sb, sandbox_remains const& left) override
    {
        if (!rootless_) {
            auto ids = uid_range::reserve_exact(left.uid_base);
            if (!ids) return ids.error();
            sb.ids = std::move(*ids);
        }
        // The init and its agent outlived the server: running with their processes, or frozen.
        bool adopted = false;
        if (left.cgroups.size() == 3) {
            if (auto init = adopt_sandbox_init(left.init_pid, left.cgroups[0])) {
                bool const answers =
                    !left.was_running || agent_get(sb.agent->socket_path(), "/health", std::chrono::seconds(5));
                if (answers) {
                    sb.init = std::move(*init);
                    sb.limit_cgroups = left.cgroups;
                    sb.cgroup_dir = left.freezer_cgroup;
                    sb.paused_with_memory = !left.was_running && left.paused_with_memory;
                    sb.freeze_method = left.freeze_method;
                    adopted = true;
                } else {
                    st.log(log_level::warning,
                           "prism-e2b-local: the envd of sandbox " + sb.id + " does not answer: it boots again");
                }
            } else if (left.was_running && left.init_pid > 0) {
                st.log(log_level::warning, "prism-e2b-local: the init of sandbox " + sb.id +
                                               " is gone (killed with its cgroups?): it boots again");
            }
        }
        if (!adopted) remove_left_cgroups(left);  // it boots again (running) or stays paused on disk
        return adopted;
    }

private:
    bool rootless_;
    std::string agent_;
    std::string slirp4netns_;
};

}  // namespace

sandbox_capabilities namespaces_capabilities(bool rootless, bool allow_internet_access)
{
    sandbox_capabilities c;
    c.workspace_coherent = true;
    c.filesystem_isolated = true;
    c.process_isolated = true;
    // Rootless: the same namespaces, but the sandbox's processes are the server's own host user.
    c.privilege_isolated = !rootless;
    c.network_isolated = !allow_internet_access;
    return c;
}

result<std::unique_ptr<isolation_engine>> start_namespaces_engine(fs::path const& probe_dir, std::string const& owner)
{
    // Not root: rootless, one mapped id and no cgroups (sandbox_init.hpp says what that gives up).
    bool const rootless = ::geteuid() != 0;
    cgroup_roots roots;
    std::string problem;
    auto const agent = find_envd_agent();
    if (agent.empty())
        problem = "prism-e2b-envd was not found (next to the executable, or set PRISM_E2B_ENVD)";
    else if (!rootless && !roots.create(owner))
        problem = "the cgroup-v1 memory, pids and cpu controllers are not all available";
    else if (auto probed = probe_namespaces(probe_dir, agent); !probed)
        problem = probed.error().message();
    if (!problem.empty()) {
        for (auto const& d : roots.all()) ::rmdir(d.c_str());
        return error(errc::unsupported, "the namespaces engine is not available: " + problem, {"start"});
    }
    return std::unique_ptr<isolation_engine>(
        std::make_unique<namespaces_engine>(rootless, std::move(roots), agent, find_slirp4netns()));
}

}  // namespace prism_e2b::local::detail
