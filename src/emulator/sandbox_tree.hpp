// Whole-tree operations on a sandbox's files, for templates, snapshots and
// metrics: a copy that translates owners between uid ranges and a disk-usage
// sum. Both walk with openat(O_NOFOLLOW) from directory descriptors, so a
// symlink (or a directory swapped for one meanwhile) is never followed.
#ifndef PRISM_E2B_EMULATOR_SANDBOX_TREE_HPP
#define PRISM_E2B_EMULATOR_SANDBOX_TREE_HPP

#include <prism_e2b/error.hpp>

#include <cstdint>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism_e2b::local::detail {

/// How a tree walk opens a directory: never through a symlink, never inherited by a child.
inline constexpr int tree_dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

/// Directories deeper than this below the copied root make copy_tree fail (one descriptor per level).
inline constexpr int max_tree_depth = 128;

/// Copies the tree under `from` into the directory `to` (created if missing, merged otherwise):
/// directories, regular files and symlinks with their modes minus set-uid/set-gid bits;
/// FIFOs, sockets and devices are skipped. Under the writable system's directory
/// (system_layer.hpp) set-id bits, whiteouts and user.overlay.* attributes are kept. Owners become `to_base +
/// sandbox_view_id(owner)` (ids inside a sandbox kept, host range swapped), when the server is root. When `only` is not
/// empty, just those relative paths of `from` ("home/user", ...) are copied, each if it exists and is a real directory.
/// Errors: server_error naming the path that failed. `owner_inside`, when set, replaces every owner (uid and gid)
/// before the translation.
result<void> copy_tree(std::filesystem::path const& from, std::filesystem::path const& to, uid_t to_base,
                       std::vector<std::string> const& only = {}, std::optional<uid_t> owner_inside = std::nullopt);

/// Bytes the tree under `root` occupies on disk (st_blocks * 512, hard links counted once
/// per directory entry); 0 when it cannot be read.
std::uint64_t tree_disk_usage(std::filesystem::path const& root);

}  // namespace prism_e2b::local::detail

#endif
