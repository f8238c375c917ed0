// The workspace rules of the files() capability (README "Files, terminals and users"): where
// a caller's path may lead, decided lexically before any vendor call.
#ifndef PRISM_E2B_ADAPTER_WORKSPACE_PATH_HPP
#define PRISM_E2B_ADAPTER_WORKSPACE_PATH_HPP

#include <prism_e2b/error.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace prism_e2b::detail {

/// `path` lexically normalised ("/a/./b//c/../d" -> "/a/b/d"); "/" stays "/".
/// Errors: invalid_argument when it is not absolute or has NUL.
result<std::string> normalize_absolute(std::string_view path);

/// Where `path` leads under the workspace rules: a relative path (incl. "" and
/// ".") resolves under `workdir` and may not leave it through `..`; an absolute
/// path must lie within `workdir` or one of `roots` (all normalised).
/// Errors: invalid_argument (NUL or another control character, longer than
/// 4096 bytes), permission_denied (outside the workspace), both naming
/// `operation` and never a secret (the message is redacted).
result<std::string> resolve_workspace_path(std::string_view path, std::string const& workdir,
                                           std::vector<std::string> const& roots, char const* operation);

}  // namespace prism_e2b::detail

#endif
