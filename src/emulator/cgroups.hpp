// The sandboxes' cgroup-v1 hierarchy: per-server roots (memory, pids, cpu) that
// survive a crash of their server and are taken back by the next one on its
// state dir, a sandbox's cgroups with their limits, and the freezer. Used by
// the namespaces and gvisor engines and by memory pause.
#ifndef PRISM_E2B_EMULATOR_CGROUPS_HPP
#define PRISM_E2B_EMULATOR_CGROUPS_HPP

#include <prism_e2b/error.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

/// The cgroup-v1 limits of a sandbox ("template" defaults from server_options).
struct cgroup_limits {
    unsigned cpu_count = 2;
    std::uint32_t memory_mb = 1024;
    std::uint32_t max_pids = 1024;
};

/// When `pid` started, in clock ticks after boot (field 22 of /proc/<pid>/stat); 0 if it is gone.
/// With the pid it names one process for good: a crashed server's pid is soon reused.
std::uint64_t process_start_ticks(pid_t pid);

/// Kills what is left in `dir`'s sub-cgroups (thawing frozen ones) and removes them and `dir`.
void remove_cgroup_tree(std::filesystem::path const& dir);

/// `parent`/<prefix><pid>-<random>: a cgroup of this server, recorded as belonging to
/// `state_dir` (empty: a temporary one). First removes (with `remove_tree`) the ones of
/// servers that died without stop() (their pid gone or now another process's), except those whose state dir's ledger
/// still holds sandboxes: their sandboxes outlived the server and a server on that state dir adopts them. Empty on
/// failure.
std::string create_server_cgroup(std::string const& parent, std::string const& prefix,
                                 void (*remove_tree)(std::filesystem::path const&), std::string const& state_dir = {});

/// Makes the root of a server that died this server's (renamed to carry its pid, the
/// owner record moved), so no server cleaning up after dead ones removes it while this one
/// runs the sandboxes in it. Returns its path now (`root` when it is not a dead server's).
std::string take_over_cgroup_root(std::string const& root);

/// Per-server cgroup roots (memory, pids, cpu) under the server's own cgroups,
/// named prism-e2b-<pid>-<random>. Empty strings for controllers not available.
struct cgroup_roots {
    std::string memory, pids, cpu;
    /// Creates them for `state_dir` (see create_server_cgroup). Returns false when one is missing.
    bool create(std::string const& state_dir = {});
    std::vector<std::string> all() const;
};

/// Creates the sandbox's cgroups under the roots and writes the limits.
/// Returns the directories created (memory, pids, cpu order), or an error.
result<std::vector<std::string>> create_sandbox_cgroups(cgroup_roots const& roots, std::string const& id,
                                                        cgroup_limits const& limits);

/// The limits as the kernel has them (read back from the cgroup files); 0 when unreadable.
cgroup_limits read_sandbox_limits(std::vector<std::string> const& cgroup_dirs);

/// The bytes a sandbox's memory cgroup (create_sandbox_cgroups' first) is charged now; 0 when unreadable.
std::uint64_t memory_usage_bytes(std::string const& memory_cgroup);

/// cgroup-v1 freezer: writes FROZEN to `dir`'s freezer.state and waits (up to about 2 s) until
/// the kernel reports every task frozen; on a timeout it thaws again and answers false (with
/// `unfrozen`, what unfrozen_tasks() said before the thaw).
bool freeze_cgroup(std::string const& dir, std::string* unfrozen = nullptr);
/// Writes THAWED to `dir`'s freezer.state.
void thaw_cgroup(std::string const& dir);

}  // namespace prism_e2b::local::detail

#endif
