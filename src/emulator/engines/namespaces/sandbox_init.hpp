// The `namespaces` isolation engine. Each sandbox gets an init process, pid 1
// of its own pid namespace, in its own user namespace (its root and "user" map
// to an unprivileged host uid range of its own), mount namespace (a root
// assembled from the host's system directories read-only plus the sandbox's own
// writable /home/user, /workspace, /tmp, /root), uts, ipc and, when the sandbox
// has no internet access, an empty network namespace; the init and everything
// it runs sit in the sandbox's cgroup-v1 memory, pids and cpu cgroups.
// Commands join those namespaces (process_runner's spawn_spec::join_pidfd).
#ifndef PRISM_E2B_EMULATOR_ENGINES_NAMESPACES_SANDBOX_INIT_HPP
#define PRISM_E2B_EMULATOR_ENGINES_NAMESPACES_SANDBOX_INIT_HPP

#include <prism_e2b/error.hpp>

#include "emulator/cgroups.hpp"
#include "emulator/sandbox_fs.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

/// Size of each sandbox's host uid/gid range: ids 0..65535 inside.
inline constexpr uid_t ns_range_size = 65536;

/// The id a sandbox sees for a host id: ids of a sandbox range map to 0..65535,
/// host ids below the first range are unchanged.
uid_t sandbox_view_id(uid_t host_id);

/// A machine-wide reservation of the host uid/gid range 100000 + 65536*k, held
/// by an flock on /run/prism-e2b/uid-ranges/<k>.lock for as long as this lives,
/// so two sandboxes (of this or another server) never share host ids.
class uid_range {
public:
    /// Errors: service_busy when every range is taken, server_error otherwise.
    static result<uid_range> reserve();
    /// The range starting at `base` (a restarted server taking back a sandbox's range).
    /// Errors: conflict when it is held, invalid_argument for a base that is no range's.
    static result<uid_range> reserve_exact(uid_t base);
    uid_range() = default;
    uid_t base() const noexcept { return base_; }

private:
    unique_fd lock_;
    uid_t base_ = 0;
};

/// A volume's directory and where a sandbox sees it (volumes.hpp).
struct volume_bind {
    std::filesystem::path source;  ///< the volume's data directory (owners as ids inside a sandbox)
    std::string path;              ///< absolute, normalised, checked by volume_mount_path_problem
};

/// What the init needs to assemble the sandbox.
struct ns_boot_spec {
    std::filesystem::path sandbox_root;   ///< host dir with workspace, home/user, tmp, root
    std::filesystem::path stage;          ///< empty host dir the new root is mounted on
    std::filesystem::path boot_id_file;   ///< host file bound over /proc/sys/kernel/random/boot_id
    std::string passwd_file, group_file;  ///< bound over /etc/passwd and /etc/group
    std::string hostname;
    bool new_network = false;  ///< a network namespace of its own (loopback up; empty unless user_network)
    /// slirp4netns, when the sandbox may reach the internet from its own network namespace
    /// (sandbox_network.hpp); empty: no route out.
    std::string user_network;
    uid_t uid_base = 0;
    /// A server that is not root: the sandbox maps one id, the server's own, as its uid/gid
    /// 1000 (root and "user" alike, no capabilities once the agent runs); no uid range.
    bool rootless = false;
    /// Rootless: RLIMIT_NPROC of the sandbox (counted per user namespace), for want of a pids cgroup.
    std::uint32_t max_pids = 0;
    std::vector<std::string> cgroup_dirs;  ///< the init joins each (cgroup.procs) before it starts
    std::string agent_path;                ///< prism-e2b-envd, the program the init runs (envd_agent.hpp)
    int agent_listen_fd = -1;              ///< the listening socket the agent serves on
    std::string agent_config;              ///< JSON the agent reads on its descriptor 0
    /// Mounted read-write, nosuid, nodev, through an idmapped mount onto the sandbox's range
    /// (needs a server run as root: the server makes the mounts before the clone).
    std::vector<volume_bind> volumes;
    /// The sandbox's writable system (system_layer.hpp), prepared by the server: the system
    /// directories become overlays of an idmapped host lower layer and this dir's upper
    /// layers (a server run as root). Empty: they are the host's, read-only.
    std::filesystem::path system_layer;
    std::filesystem::path system_etc;  ///< with system_layer: /etc's lower layer (etc_snapshot)
};

/// A running sandbox init.
struct ns_init {
    pid_t pid = -1;
    unique_fd pidfd;
    bool adopted = false;  ///< started by a server that died: not our child, waited for through the pidfd
};

/// The prism-e2b-envd program: $PRISM_E2B_ENVD, else next to this executable, else the
/// one this build made. Empty when none is executable.
std::string find_envd_agent();

/// A detached clone of the directory `src` with `mount_attrs` (MOUNT_ATTR_*) whose ids are seen shifted onto the
/// range at `base`: a volume's file of uid 1000 on disk is the sandbox's uid 1000 (host
/// base + 1000) and what the sandbox writes lands on disk with the ids it has inside; the
/// host's /usr, owned by host root, is its root's. An idmapped mount needs CAP_SYS_ADMIN in
/// the initial user namespace, so the server makes it, with a helper user namespace of the
/// sandbox's map; the init inherits the descriptor. `what` names it in errors.
result<unique_fd> idmapped_tree(std::string const& src, uid_t base, std::uint64_t mount_attrs, std::string const& what);

/// Clones the init into new namespaces, maps its ids, lets it assemble the
/// root and waits until it is ready. Errors: server_error naming the step that failed.
result<ns_init> start_sandbox_init(ns_boot_spec const& spec);

/// The init a server that died left running, if pid `pid` still is in `memory_cgroup`.
std::optional<ns_init> adopt_sandbox_init(pid_t pid, std::string const& memory_cgroup);

/// Every process of a sandbox: the members of its pids cgroup (`cgroup_dirs`, memory, pids and
/// cpu order), or, rootless (no cgroups), every process in the pid namespace of its init.
std::vector<pid_t> sandbox_pids(ns_init const& init, std::vector<std::string> const& cgroup_dirs);

/// SIGKILLs the init (the kernel then kills every process of its pid namespace) and reaps it
/// (an adopted one: waits, at most a few seconds, for its pidfd to report the exit).
void stop_sandbox_init(ns_init& init);

/// Can this machine run the engine (rootless when the server is not root)? Tried for real
/// with a throw-away sandbox whose agent must answer /health; the error says what failed.
result<void> probe_namespaces(std::filesystem::path const& probe_dir, std::string const& agent_path);

/// A fresh random boot id ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx") written to `file` (0444).
bool write_boot_id(std::filesystem::path const& file);

}  // namespace prism_e2b::local::detail

#endif
