// EntryInfo.symlinkTarget as E2B's envd reports it: the absolute path a link
// resolves to inside the sandbox ("/home/user/test_file.txt" for a link whose
// text is "test_file.txt"), not the link's text.
#ifndef PRISM_E2B_EMULATOR_LINK_TARGET_HPP
#define PRISM_E2B_EMULATOR_LINK_TARGET_HPP

#include <string>

namespace prism_e2b::local::detail {

/// The link at `link_path` (absolute, normalised) resolved inside the root `root_fd` with every
/// link on the way followed (RESOLVE_IN_ROOT); for a link that does not resolve (dangling, a loop),
/// its text `link_text` made absolute against the link's directory and normalised.
std::string resolved_link_target(int root_fd, std::string const& link_path, std::string const& link_text);

}  // namespace prism_e2b::local::detail

#endif
