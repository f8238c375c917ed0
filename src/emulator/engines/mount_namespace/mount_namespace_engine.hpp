// The `mount-namespace` engine: each command of a sandbox runs in a mount
// namespace of its own where the sandbox's directories are bound over
// /workspace, /home/user and /tmp (and the server's passwd and group over
// /etc's). Its paths are the sandbox's; everything else (processes, users,
// network, the rest of the file system) is the host's. Needs root.
#ifndef PRISM_E2B_EMULATOR_ENGINES_MOUNT_NAMESPACE_MOUNT_NAMESPACE_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_MOUNT_NAMESPACE_MOUNT_NAMESPACE_ENGINE_HPP

#include "emulator/engines/isolation_engine.hpp"

#include <filesystem>
#include <memory>

namespace prism_e2b::local::detail {

/// Errors: invalid_argument when the server is not root or the machine cannot make the
/// mounts (tried for real in a throw-away child under `probe_dir`).
result<std::unique_ptr<isolation_engine>> start_mount_namespace_engine(std::filesystem::path const& probe_dir);

}  // namespace prism_e2b::local::detail

#endif
