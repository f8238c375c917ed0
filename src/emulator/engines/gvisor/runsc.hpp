// The `gvisor` isolation engine: each sandbox is a runsc (gVisor) container on
// the ptrace platform with no network (--network=none: loopback only inside),
// its own kernel surface (gVisor's Sentry answers every syscall: `uname -r` is
// gVisor's, /proc, pids and mounts are the container's own), a read-only root
// holding the host's system directories (/usr, /etc, /opt: each an overlay the
// server mounts on the host, the sandbox's own writable layer over them, as the
// namespaces engine's; system_layer.hpp) plus its own writable /home/user, /workspace, /tmp and
// /root, and its own boot id bound over /proc/sys/kernel/random/boot_id. The
// container's init is prism-e2b-envd (envd_agent.hpp), which binds its socket in
// a directory the server shares with the container (runsc --host-uds=create), so
// the server proxies envd to it as with the namespaces engine. runsc create and
// restore run inside the sandbox's cgroups (memory, pids, cpu, freezer), so the
// Sentry and its gofer are limited and accounted there (--ignore-cgroups).
//
// The disk tier of a pause with memory is `runsc checkpoint` into the sandbox's
// directory (a real memory snapshot: disk, not RAM; it survives a server restart),
// resume from it is `runsc restore` (processes continue); the RAM tier before it
// is the gvisor engine's (a cgroup freeze, image_writer.hpp). runsc cannot save a socket bound on the
// host, so the agent lets go of its socket first (every envd connection and
// stream is cut, processes keep running) and binds it again after the restore.
#ifndef PRISM_E2B_EMULATOR_ENGINES_GVISOR_RUNSC_HPP
#define PRISM_E2B_EMULATOR_ENGINES_GVISOR_RUNSC_HPP

#include <prism_e2b/error.hpp>

#include "emulator/engines/namespaces/sandbox_init.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

/// How the server runs runsc (the same flags on every call).
struct runsc_config {
    std::string program;         ///< runsc's path
    std::filesystem::path root;  ///< runsc --root: its container state (state_dir/runsc, kept across restarts)
};

/// runsc: $PRISM_E2B_RUNSC, else /usr/bin, /usr/local/bin or /usr/sbin. Empty when none is executable.
std::string find_runsc();

/// Where the agent binds its socket inside the container (agent_config::listen_path).
inline constexpr char const* gvisor_socket_in_container = "/.prism-e2b/envd.sock";

/// Where a sandbox's agent socket is on the host (the directory shared with its container).
std::filesystem::path gvisor_agent_socket(std::filesystem::path const& sandbox_dir);

/// Where the server mounts a sandbox's system overlays on the host (outside its container).
std::filesystem::path gvisor_system_mounts(std::filesystem::path const& sandbox_dir);

/// What a sandbox's container is made of (host paths).
struct gvisor_boot_spec {
    std::string id;                       ///< the container id: the sandbox id
    std::filesystem::path dir;            ///< state_dir/sandboxes/<id>: bundle, socket dir, memory image
    std::filesystem::path root;           ///< dir/root: workspace, home/user, tmp, root
    std::filesystem::path boot_id_file;   ///< bound over /proc/sys/kernel/random/boot_id
    std::string passwd_file, group_file;  ///< bound over /etc/passwd and /etc/group
    std::string hostname;
    std::string agent_path;                ///< prism-e2b-envd on the host, bound read-only into the container
    std::string agent_config;              ///< the agent's JSON config (agent_config, with listen_path set)
    std::vector<std::string> cgroup_dirs;  ///< runsc create/restore (and so the Sentry) run in these
    cgroup_limits limits;                  ///< written into the OCI spec too (what runsc would apply)
    std::vector<volume_bind> volumes;      ///< bound read-write (ids inside are the host's under gVisor)
    /// Its writable system (system_layer.hpp): the layer of upper directories and the copy of
    /// /etc, overlaid on the host at dir/system before a boot or restore, unmounted when the
    /// container goes. Empty: the host's system directories bound read-only.
    std::filesystem::path system_layer, system_etc;
};

/// Writes the bundle and runs `runsc create` + `start`; returns once the agent answers /health.
/// Errors: server_error with runsc's own message.
result<void> gvisor_boot(runsc_config const& rc, gvisor_boot_spec const& spec);

/// Why runsc could not checkpoint the sandbox in `dir` now (conflict: a process of it listens on
/// a Unix socket in its directories, a host socket); nullopt: nothing known stands in the way.
std::optional<error> gvisor_checkpoint_refusal(std::filesystem::path const& dir);

/// Pause with memory: the agent lets go of its socket, `runsc checkpoint` writes the memory
/// image into dir/memory (whole or not at all, even when the server is killed meanwhile:
/// gvisor_settle_image_write), the stopped container is deleted. Errors: server_error; when the
/// checkpoint itself failed the container is gone (its files are kept): `lost_memory` is then set.
result<void> gvisor_checkpoint(runsc_config const& rc, std::string const& id, std::filesystem::path const& dir,
                               bool& lost_memory);

/// Waits until no image write of the sandbox in `dir` runs any more (one a killed server left
/// behind finishes on its own: dir/memory is then whole), and removes what an interrupted one left.
void gvisor_settle_image_write(std::filesystem::path const& dir);

/// Makes sure the agent of a thawed sandbox listens: it let go of its socket only for a
/// checkpoint that did not happen (a server killed meanwhile). Errors: server_error.
result<void> gvisor_agent_listens(runsc_config const& rc, std::string const& id, std::filesystem::path const& dir);

/// Resume after gvisor_checkpoint, or start a new sandbox from a snapshot's image put into its
/// dir/memory (gvisor_copy_memory_image): the bundle is written for `spec` (a snapshot's image
/// restores into other host paths: runsc reopens files by their paths inside), `runsc restore`
/// runs in spec.cgroup_dirs, the agent takes spec.agent_config (agent_reconfigure_file) and binds
/// its socket again, and the image is removed once the agent answers. Processes keep what the
/// image holds: their environment and the hostname. Errors: server_error.
result<void> gvisor_restore(runsc_config const& rc, gvisor_boot_spec const& spec);

/// Puts the memory image in from/memory, and from/boot_id (the boot the image's kernel had),
/// into `to` the same way: hard links where both are on one file system, else copies. `from` and
/// `to` are sandbox or snapshot directories. Errors: server_error.
result<void> gvisor_copy_memory_image(std::filesystem::path const& from, std::filesystem::path const& to);

/// True when the sandbox has a memory image to restore (dir/memory).
bool gvisor_has_memory_image(std::filesystem::path const& dir);

/// Bytes of the memory image on disk (0 when there is none).
std::uint64_t gvisor_memory_image_bytes(std::filesystem::path const& dir);

/// Ends the container and removes runsc's record of it (nothing is left running).
/// With `drop_image` the memory image goes too.
void gvisor_destroy(runsc_config const& rc, std::string const& id, std::filesystem::path const& dir, bool drop_image);

/// runsc's status of the container ("running", "stopped", "paused", "created"); empty when runsc knows none.
std::string gvisor_status(runsc_config const& rc, std::string const& id);

/// The host pid of container `id`'s Sentry (its gVisor kernel); 0 when runsc knows none.
pid_t gvisor_sentry_pid(runsc_config const& rc, std::string const& id);

/// Connections to the agent's socket (accepted from the host) that the Sentry `sentry` holds:
/// host sockets, which runsc cannot save, so a checkpoint waits for none.
std::size_t sentry_agent_connections(pid_t sentry);

/// Which processes of container `id` hold sockets, as seen inside it ("pid command fd N;" each,
/// at most about 400 characters): named when a checkpoint is refused for a held connection.
/// Empty when runsc cannot say.
std::string gvisor_socket_holders(runsc_config const& rc, std::string const& id);

/// Starts `argv` in the container as `uid` in `cwd` with `env` and does not wait for it (runsc exec --detach).
result<void> gvisor_exec_detached(runsc_config const& rc, std::string const& id, unsigned uid, std::string const& cwd,
                                  std::vector<std::string> const& env, std::vector<std::string> const& argv);

/// Can this machine run the engine? A throw-away container whose agent must answer /health.
result<void> probe_gvisor(runsc_config const& rc, std::filesystem::path const& probe_dir,
                          std::string const& agent_path);

}  // namespace prism_e2b::local::detail

#endif
