// The six attested isolation booleans of the sandbox contract.
#ifndef PRISM_E2B_CAPABILITIES_HPP
#define PRISM_E2B_CAPABILITIES_HPP

namespace prism_e2b {

/// What a sandbox backend attests about its isolation. Anything not attested
/// is false: a default-constructed value claims nothing.
struct sandbox_capabilities {
    bool workspace_coherent = false;   ///< shell, file and repo tools see one tree
    bool filesystem_isolated = false;  ///< cannot touch the host filesystem
    bool network_isolated = false;     ///< no reachable network
    bool process_isolated = false;     ///< own process namespace
    bool privilege_isolated = false;   ///< cannot gain host privileges
    bool egress_restricted = false;    ///< egress forced through a controlled proxy

    friend constexpr bool operator==(sandbox_capabilities const&,
                                     sandbox_capabilities const&) = default;  ///< field-wise equality
};

/// E2B's attestation: workspace coherent, filesystem and process isolated; E2B
/// sandboxes have internet, so network, egress and privilege isolation are false.
constexpr sandbox_capabilities e2b_default_capabilities() noexcept
{
    sandbox_capabilities c;
    c.workspace_coherent = true;
    c.filesystem_isolated = true;
    c.process_isolated = true;
    return c;
}

}  // namespace prism_e2b

#endif
