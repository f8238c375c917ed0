// The `none` engine: no isolation at all. A sandbox is a directory of the host
// and its commands are the server's own processes in it, under the server's
// users (--no-isolation; tests and trusted code only).
#ifndef PRISM_E2B_EMULATOR_ENGINES_NONE_NONE_ENGINE_HPP
#define PRISM_E2B_EMULATOR_ENGINES_NONE_NONE_ENGINE_HPP

#include "emulator/engines/isolation_engine.hpp"

#include <memory>

namespace prism_e2b::local::detail {

std::unique_ptr<isolation_engine> make_none_engine();

}  // namespace prism_e2b::local::detail

#endif
