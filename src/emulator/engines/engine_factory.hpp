// The only code that knows the engines by name: --engine (server_options::engine)
// parsed, and the engine started. Adding an engine is a folder under engines/ and
// one line in engine_factory.cpp.
#ifndef PRISM_E2B_EMULATOR_ENGINES_ENGINE_FACTORY_HPP
#define PRISM_E2B_EMULATOR_ENGINES_ENGINE_FACTORY_HPP

#include <prism_e2b/local_server.hpp>

#include "emulator/engines/isolation_engine.hpp"

#include <filesystem>
#include <memory>
#include <string>

namespace prism_e2b::local::detail {

struct engine_request {
    std::string wanted;   ///< --engine; empty: the default (namespaces)
    bool isolate = true;  ///< false: --no-isolation, the same as --engine none
    std::filesystem::path state_dir;
    std::string owner;  ///< a state dir that outlives the server (cgroup roots' owner record); empty: none
    memory_tier_policy memory_tiers;  ///< gvisor: where a memory-paused sandbox's memory is kept
};

/// The engine asked for, started. Never a weaker engine than the default behind the
/// operator's back: when the one asked for (or the default) cannot run here, the server
/// does not start, and the default's error says how to name a weaker one.
/// Errors: invalid_argument (an unknown name, an engine this machine cannot run),
/// unsupported (the default, namespaces, cannot run here).
result<std::unique_ptr<isolation_engine>> start_isolation_engine(engine_request const& req);

/// The engine of prism-e2b-envd, the agent inside a sandbox (engines/in_sandbox/).
std::unique_ptr<isolation_engine> engine_inside_sandbox();

}  // namespace prism_e2b::local::detail

#endif
