// The engine of prism-e2b-envd, the agent inside a namespaces or gvisor sandbox:
// it is in the sandbox already, so a command is started where it is asked to
// run, with nothing to bind or join.
#ifndef PRISM_E2B_EMULATOR_ENGINES_IN_SANDBOX_IN_SANDBOX_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_IN_SANDBOX_IN_SANDBOX_ENGINE_HPP

#include "emulator/engines/isolation_engine.hpp"

#include <memory>

namespace prism_e2b::local::detail {

std::unique_ptr<isolation_engine> make_in_sandbox_engine();

}  // namespace prism_e2b::local::detail

#endif
