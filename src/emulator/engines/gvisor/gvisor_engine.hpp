// The `gvisor` engine: each sandbox a runsc container (runsc.hpp says what it is
// made of) whose init is the sandbox's envd agent, in cgroups of its own, with no
// network; a pause with memory freezes it in RAM and writes its memory image to disk
// behind the answer (image_writer.hpp), an image snapshots can take.
#ifndef PRISM_E2B_EMULATOR_ENGINES_GVISOR_GVISOR_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_GVISOR_GVISOR_ENGINE_HPP

#include "emulator/engines/isolation_engine.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace prism_e2b::local::detail {

/// Tried for real (a throw-away container under state_dir/probe-gv whose agent must answer);
/// runsc keeps its state in state_dir/runsc; the cgroup roots are made for `owner`.
/// Errors: invalid_argument, saying what this machine lacks.
/// `tiers`: where a memory-paused sandbox's memory is kept (image_writer.hpp).
result<std::unique_ptr<isolation_engine>> start_gvisor_engine(std::filesystem::path const& state_dir,
                                                              std::string const& owner,
                                                              memory_tier_policy const& tiers);

}  // namespace prism_e2b::local::detail

#endif
