// Running a host program (tar, mkfs.ext4) to completion from the server, with its
// output discarded: a few short synchronous steps of creating a sandbox.
#ifndef PRISM_E2B_EMULATOR_HOST_TOOL_HPP
#define PRISM_E2B_EMULATOR_HOST_TOOL_HPP

#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::local::detail {

/// The program's path on $PATH (or /usr/sbin, /sbin), empty when there is none.
std::string find_host_tool(std::string_view name);

/// Runs argv (argv[0] looked up as find_host_tool does) with stdin/stdout/stderr on
/// /dev/null. Errors: server_error saying `what` failed, or could not start.
result<void> run_host_tool(std::vector<std::string> const& argv, std::string_view what);

}  // namespace prism_e2b::local::detail

#endif
