// The temporary state directories of servers started without --state-dir
// (<tmp>/prism-e2b-local-XXXXXX): made at start, removed at a clean stop, and
// swept at the next start when a killed server left one behind.
#ifndef PRISM_E2B_EMULATOR_TEMP_STATE_DIRS_HPP
#define PRISM_E2B_EMULATOR_TEMP_STATE_DIRS_HPP

#include <chrono>
#include <cstddef>
#include <filesystem>

namespace prism_e2b::local::detail {

/// The name prefix of a temporary state directory.
inline constexpr char const temp_state_dir_prefix[] = "prism-e2b-local-";

/// Removes the temporary state directories under `parent` that a dead server
/// left empty. One goes only when all of these hold:
///  - it is ours (our uid) and a real directory, not a symlink;
///  - it holds nothing but `server.lock` and an empty `sandboxes/`, so there is
///    no sandbox, disk image or mount in it to lose;
///  - nobody holds the flock on its `server.lock` (a live server holds it for its
///    whole life), and we hold it while removing;
///  - it was last changed more than `min_age` ago, so a server between mkdtemp
///    and taking its lock is left alone.
/// Removal is by unlink and rmdir, never recursive. Returns how many went.
std::size_t sweep_stale_temp_state_dirs(std::filesystem::path const& parent, std::chrono::seconds min_age);

}  // namespace prism_e2b::local::detail

#endif
