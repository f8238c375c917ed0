// What keeps a sandbox apart from the host and from other sandboxes: one
// implementation per engine (engines/<name>/), chosen once at start by the
// factory (engine_factory.hpp), the only code that knows the engines by name.
// The server's lifecycle (server_state.cpp) asks the engine, never its name.
//
// Every sandbox operation below is called with sb.mutex held unless it says
// otherwise; an engine keeps what it needs of the server's (its cgroup roots,
// runsc, the agent program) and reads the rest from `server_state`.
#ifndef PRISM_E2B_EMULATOR_ENGINES_ISOLATION_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_ISOLATION_ENGINE_HPP

#include <prism_e2b/capabilities.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/local_server.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

struct server_state;
struct sandbox;
struct spawn_spec;
struct agent_config;
struct os_user;

/// What a sandbox left in the ledger that its engine may take back (restore_from_ledger).
struct sandbox_remains {
    bool was_running = false;
    bool paused_with_memory = false;   ///< as recorded
    std::string freeze_method;         ///< as recorded
    pid_t init_pid = 0;                ///< its init's pid (namespaces), 0: none recorded
    uid_t uid_base = 0;                ///< its uid range (namespaces run as root)
    std::vector<std::string> cgroups;  ///< its memory, pids and cpu cgroups, where they are now
    std::string freezer_cgroup;        ///< its freezer cgroup, where it is now; empty: none
};

/// How a pause with memory went: `method` names how the sandbox was held ("cgroup-freezer",
/// "sigstop", "checkpoint"); `lost` is set when the engine stopped the sandbox but lost its
/// memory (it is then paused as without memory and boots again on resume).
struct memory_pause {
    std::string method;
    std::optional<error> lost;
};

/// Where the memory of memory-paused sandboxes is (gvisor: frozen in RAM, then an image on
/// disk) and what was written between the tiers.
struct memory_tier_counts {
    std::size_t frozen = 0;                   ///< sandboxes frozen in RAM whose image is not written yet
    std::uint64_t frozen_bytes = 0;           ///< the RAM they hold
    std::uint64_t written = 0;                ///< images written since the server started
    std::uint64_t failed = 0;                 ///< writes that did not happen (it stayed in RAM or lost its memory)
    std::uint64_t written_under_cap = 0;      ///< of `written`, those the RAM cap sent to disk before their time
    std::chrono::milliseconds last_write{0};  ///< how long the last image took
};

/// The policy between the tiers and what it did (GET /admin/memory-tiers).
struct memory_tier_report {
    memory_tier_policy policy;
    memory_tier_counts counts;
};

/// What the sandbox info's isolationEnforced reports beside the cgroup limits (docs/local-server.md).
struct enforcement {
    bool rootless = false;        ///< one mapped id: the sandbox's users are the server's own host user
    bool distinct_users = false;  ///< root and "user" are different ids
    bool pids_limited = false;    ///< a pids limit without a pids cgroup (an rlimit)
};

class isolation_engine {
public:
    virtual ~isolation_engine() = default;

    /// --engine's value for it: the sandbox info's `isolation` and the ledger's.
    virtual std::string_view name() const noexcept = 0;
    /// What it attests (server::capabilities): only what its tests demonstrate.
    virtual sandbox_capabilities capabilities(bool allow_internet_access) const = 0;
    virtual enforcement enforced() const;
    /// Whether its sandboxes' code runs under host ids that must reach the sandboxes'
    /// directories (false: ids mapped onto a range of its own; the directories stay private).
    virtual bool host_ids_reach_sandbox_files() const noexcept { return true; }
    /// Whether commands get a mount namespace with the sandbox's /workspace, /home/user, /tmp.
    virtual bool own_mount_namespace() const noexcept { return false; }
    /// Whether a sandbox may reach the internet when its create asks to.
    virtual bool allows_internet() const noexcept { return true; }
    /// Whether its sandboxes get the template's cgroup limits (cpu, memory, pids).
    virtual bool limits_sandboxes() const noexcept { return false; }
    /// Whether a sandbox is a machine that boots and halts (its own init and envd agent);
    /// a filesystem pause halts it, a resume boots it again.
    virtual bool boots() const noexcept { return false; }
    /// Whether a pause with memory writes the memory to disk, where snapshots can take it.
    virtual bool checkpoints_memory() const noexcept { return false; }
    /// Why a sandbox cannot have volumes mounted; nullopt: it can.
    virtual std::optional<std::string> volume_mount_problem() const;

    // -- a sandbox's life --------------------------------------------------------
    /// At create, before its files exist (sb.mutex not held): its host ids.
    virtual result<void> reserve_ids(sandbox& sb);
    /// At create and restore: where its boot id, agent socket and stage are (sb.mutex not held).
    virtual void attach(sandbox& sb) const;
    /// At create, and restore unless adopted: its cgroups with the template's limits.
    virtual result<void> limit(sandbox& sb) const;
    /// A cold boot (new boot id, new init or container).
    virtual result<void> boot(server_state& st, sandbox& sb);
    /// Ends its machine: the init is killed (and returned, for the caller to reap) or the
    /// container deleted. -1: nothing to reap.
    virtual pid_t halt(sandbox& sb);
    virtual result<memory_pause> pause_with_memory(server_state& st, sandbox& sb);
    virtual result<void> resume_with_memory(server_state& st, sandbox& sb);
    /// What a command of the sandbox is run with (cwd: normalised, as the sandbox sees it).
    virtual void place(server_state const& st, sandbox const& sb, spawn_spec& spec, std::string const& cwd,
                       os_user const& user) const;
    /// Called with sb.mutex held, just before the fork: what only the running sandbox has (its init).
    virtual void join(sandbox const& sb, spawn_spec& spec) const;
    /// Starts the template's start command after a cold boot (sb.mutex not held).
    virtual result<void> start_command(server_state& st, std::shared_ptr<sandbox> const& sb, os_user const& user);
    virtual void configure_agent(agent_config& cfg) const;
    /// A snapshot of the sandbox into `to`: its files (to/root) and, with checkpoints_memory(),
    /// its memory. True when the memory is in it. `paused_now` is set when it leaves the sandbox paused.
    virtual result<bool> capture(server_state& st, sandbox& sb, std::filesystem::path const& to, bool& paused_now);
    /// A new sandbox, its files seeded, restored from the memory image in `snapshot_dir`.
    virtual result<void> restore_memory(server_state& st, sandbox& sb, std::filesystem::path const& snapshot_dir);
    /// The size of its memory image on disk while paused with one.
    virtual std::optional<std::uint64_t> memory_image_bytes(sandbox const& sb) const;
    /// At restore: takes the sandbox back as it was left (running with its processes, or paused
    /// with its memory). False: it is not there any more, it boots again or stays paused on disk.
    /// Errors: it cannot be taken back at all (skipped).
    virtual result<bool> adopt(server_state& st, sandbox& sb, sandbox_remains const& left);
    /// At restore, once the sandbox (adopted or not) is the server's again: what it was left to
    /// finish (sb.mutex not held).
    virtual void took_back(server_state& st, sandbox& sb);
    /// Where memory-paused sandboxes' memory is (GET /admin/memory-tiers); nullopt: in RAM only,
    /// or on disk only, no policy between.
    virtual std::optional<memory_tier_report> memory_tiers() const { return std::nullopt; }
    /// The server stops: its own cgroup roots go, nothing of its own runs afterwards.
    virtual void stop();

protected:
    /// Freezes the sandbox's freezer cgroup, if it has one; false: it has none, or it did not freeze.
    static bool freeze_cgroup_of(sandbox& sb);
};

/// Copies the sandbox's files (owners as the ids inside) into `to` with its processes held still:
/// frozen for the copy when it runs.
result<void> copy_files_held_still(sandbox& sb, std::filesystem::path const& to);

}  // namespace prism_e2b::local::detail

#endif
