// Whole-file reads and writes of small kernel and state files (cgroup, /proc).
#ifndef PRISM_E2B_EMULATOR_SMALL_FILES_HPP
#define PRISM_E2B_EMULATOR_SMALL_FILES_HPP

#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

/// Writes all of `data` to `fd`, retrying short writes and EINTR: 0, or the errno that
/// stopped it (EIO when write(2) wrote nothing).
int write_all(int fd, std::string_view data);
/// Copies what `in` holds from its offset to its end into `out` (EINTR retried): 0, or the
/// errno that stopped it.
int copy_contents(int in, int out);
/// Writes `text` in one write(2) to an existing file (cgroup files want that). False on any error.
bool write_small_file(std::string const& path, std::string const& text);
/// The file's contents; empty when it cannot be read.
std::string read_small_file(std::string const& path);
/// The processes of a cgroup-v1 directory (its cgroup.procs); empty when unreadable.
std::vector<pid_t> cgroup_pids(std::string const& cgroup_dir);
/// The fields of /proc/<pid>/stat after the command name, so [0] is field 3 (the state) and
/// [n] is field n + 3 (man proc); empty when the process is gone.
std::vector<std::string> proc_stat_fields(pid_t pid);

}  // namespace prism_e2b::local::detail

#endif
