// A sandbox's network when it may reach the internet: its own network
// namespace behind slirp4netns (user-mode NAT on a tap device), so it reaches
// outside addresses but none of the host's loopback services, and its own
// loopback is its own.
#ifndef PRISM_E2B_EMULATOR_SANDBOX_NETWORK_HPP
#define PRISM_E2B_EMULATOR_SANDBOX_NETWORK_HPP

#include <prism_e2b/error.hpp>

#include <string>
#include <sys/types.h>

namespace prism_e2b::local::detail {

/// slirp4netns on PATH (or $PRISM_E2B_SLIRP4NETNS); empty when none is executable.
std::string find_slirp4netns();

/// Gives the network namespace of `init_pid` a tap0 with NAT to the outside
/// (10.0.2.100/24, gateway 10.0.2.2, DNS 10.0.2.3) and the host's loopback
/// cut off (--disable-host-loopback). slirp4netns runs sandboxed (its own
/// mount namespace, capabilities dropped, seccomp) and detached from the
/// server: it exits when `init_pidfd` reports the init's exit, so it outlives
/// a crash of the server and never outlives the sandbox. Returns once the
/// device is configured. Errors: server_error saying what failed.
result<void> attach_user_network(std::string const& slirp4netns, pid_t init_pid, int init_pidfd);

}  // namespace prism_e2b::local::detail

#endif
