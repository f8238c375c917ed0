// What each isolation engine attests to the adapter (server::capabilities): only what
// tests/integration/emulator_namespaces.cpp, emulator_rootless.cpp and emulator_gvisor.cpp
// demonstrate.
#ifndef PRISM_E2B_EMULATOR_ENGINE_CAPABILITIES_HPP
#define PRISM_E2B_EMULATOR_ENGINE_CAPABILITIES_HPP

#include <prism_e2b/capabilities.hpp>

#include <string_view>

namespace prism_e2b::local::detail {

/// `rootless`: the namespaces engine of a server that is not root (one mapped id: the
/// sandbox's processes are the server's own host user, so no privilege isolation).
inline sandbox_capabilities engine_capabilities(std::string_view engine, bool rootless, bool allow_internet_access)
{
    sandbox_capabilities c;
    c.workspace_coherent = true;
    if (engine == "namespaces") {
        c.filesystem_isolated = true;
        c.process_isolated = true;
        c.privilege_isolated = !rootless;
        c.network_isolated = !allow_internet_access;
    } else if (engine == "gvisor") {  // no network whatever is asked for
        c.filesystem_isolated = true;
        c.process_isolated = true;
        c.privilege_isolated = true;
        c.network_isolated = true;
    }
    return c;
}

}  // namespace prism_e2b::local::detail

#endif
