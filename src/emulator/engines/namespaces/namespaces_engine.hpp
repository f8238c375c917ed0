// The `namespaces` engine: each sandbox a machine of its own, an init in new
// user, pid, mount, uts, ipc (and, without internet, network) namespaces running
// the sandbox's envd agent, limited by cgroups of its own (sandbox_init.hpp says
// how it is assembled). A server that is not root runs it rootless: one mapped
// id, no cgroups, no privilege isolation.
#ifndef PRISM_E2B_EMULATOR_ENGINES_NAMESPACES_NAMESPACES_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_NAMESPACES_NAMESPACES_ENGINE_HPP

#include "emulator/engines/isolation_engine.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace prism_e2b::local::detail {

/// Tried for real (a throw-away sandbox under `probe_dir` whose agent must answer); its cgroup
/// roots are made for `owner` (the state dir that outlives the server; empty: none).
/// Errors: unsupported, saying what this machine lacks.
result<std::unique_ptr<isolation_engine>> start_namespaces_engine(std::filesystem::path const& probe_dir,
                                                                  std::string const& owner);

/// The capabilities it attests, root or rootless (what its tests demonstrate).
sandbox_capabilities namespaces_capabilities(bool rootless, bool allow_internet_access);

}  // namespace prism_e2b::local::detail

#endif
