// Lexical path resolution for the files() capability. Lexical on purpose: it
// runs before any vendor call, and the sandbox, not this check, is the
// isolation boundary (a symlink inside the workspace is followed by envd).
#include "adapter/workspace_path.hpp"

#include "core/utf8.hpp"

#include <algorithm>

namespace prism_e2b::detail {

namespace {

constexpr std::size_t max_path_bytes = 4096;

/// True when `p` is `root` or below it (both normalised).
bool within(std::string const& p, std::string const& root)
{
    if (root == "/") return true;
    return p == root || (p.size() > root.size() && p.compare(0, root.size(), root) == 0 && p[root.size()] == '/');
}

/// Appends the components of `rel` to `parts`; false when a `..` pops below `floor` components.
bool append_components(std::vector<std::string_view>& parts, std::string_view rel, std::size_t floor)
{
    while (!rel.empty()) {
        auto const slash = rel.find('/');
        auto const part = rel.substr(0, slash);
        rel = slash == std::string_view::npos ? std::string_view() : rel.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (parts.size() <= floor) return false;
            parts.pop_back();
        } else {
            parts.push_back(part);
        }
    }
    return true;
}

std::string join(std::vector<std::string_view> const& parts)
{
    std::string out;
    for (auto p : parts) {
        out += '/';
        out += p;
    }
    return out.empty() ? "/" : out;
}

}  // namespace

result<std::string> normalize_absolute(std::string_view path)
{
    if (path.empty() || path.front() != '/' || path.find('\0') != std::string_view::npos)
        return error(errc::invalid_argument, "an absolute path without NUL is required", {"options"});
    std::vector<std::string_view> parts;
    (void)append_components(parts, path, 0);  // ".." above "/" stays at "/", as the kernel does
    return join(parts);
}

result<std::string> resolve_workspace_path(std::string_view path, std::string const& workdir,
                                           std::vector<std::string> const& roots, char const* operation)
{
    if (path.size() > max_path_bytes)
        return error(errc::invalid_argument, "path is longer than 4096 bytes", {operation});
    if (has_control_char(path))
        return error(errc::invalid_argument, "path contains NUL or another control character", {operation});
    std::vector<std::string_view> parts;
    if (path.empty() || path.front() != '/') {
        (void)append_components(parts, workdir, 0);
        if (!append_components(parts, path, parts.size()))
            return error(errc::permission_denied, "path '" + std::string(path) + "' leaves the workspace", {operation});
        return join(parts);
    }
    std::vector<std::string_view> abs;
    (void)append_components(abs, path, 0);
    auto resolved = join(abs);
    if (within(resolved, workdir) ||
        std::any_of(roots.begin(), roots.end(), [&](auto const& r) { return within(resolved, r); }))
        return resolved;
    return error(errc::permission_denied,
                 "path '" + std::string(path) + "' is outside the workspace and the allowed roots", {operation});
}

}  // namespace prism_e2b::detail
