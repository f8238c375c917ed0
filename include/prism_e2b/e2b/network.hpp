// A running sandbox's egress rules (openapi.yml: PUT /sandboxes/{id}/network,
// SandboxNetworkUpdateConfig): plain data. The update replaces the rules; an
// omitted field clears it.
#ifndef PRISM_E2B_E2B_NETWORK_HPP
#define PRISM_E2B_E2B_NETWORK_HPP

#include <optional>
#include <string>
#include <vector>

namespace prism_e2b::e2b {

/// SandboxNetworkUpdateConfig (without egress proxy and transform rules).
struct network_update {
    std::vector<std::string> allow_out;         ///< allowed CIDRs, IPs or domains (take precedence)
    std::vector<std::string> deny_out;          ///< denied CIDRs or IPs
    std::optional<bool> allow_internet_access;  ///< false: as deny_out 0.0.0.0/0
};

}  // namespace prism_e2b::e2b

#endif
