// Snapshots of a sandbox (openapi.yml: POST /sandboxes/{id}/snapshots,
// GET /snapshots, DELETE /templates/{id}): plain data. A snapshot is a
// template: create_sandbox with template_id = a snapshot id starts from it.
#ifndef PRISM_E2B_E2B_SNAPSHOTS_HPP
#define PRISM_E2B_E2B_SNAPSHOTS_HPP

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b::e2b {

/// SnapshotInfo.
struct snapshot_info {
    std::string snapshot_id;         ///< the template id with its tag ("abc123:default")
    std::vector<std::string> names;  ///< full names incl. namespace and tag
};

/// SandboxSnapshotRequest.
struct create_snapshot_params {
    std::optional<std::string> name;  ///< a name for the snapshot template; an existing one gets a new build
};

/// GET /snapshots query.
struct snapshot_list_params {
    std::optional<std::string> sandbox_id;  ///< only snapshots of this sandbox
    std::optional<std::string> name;        ///< by name or id, optionally tag-qualified
    std::optional<std::uint32_t> limit;     ///< page size; the server's default when absent
    std::optional<std::string> next_token;  ///< continuation token from the previous page
};

/// SandboxForkRequest (POST /sandboxes/{id}/fork): unset fields are the server's defaults
/// (E2B: one fork, 15 s).
struct fork_params {
    std::optional<std::uint32_t> count;           ///< forks to start from one snapshot of the source
    std::optional<std::chrono::seconds> timeout;  ///< each fork's life, whole seconds on the wire
};

/// One page of GET /snapshots.
struct snapshot_page {
    std::vector<snapshot_info> snapshots;   ///< this page
    std::optional<std::string> next_token;  ///< from X-Next-Token; absent: last page
};

}  // namespace prism_e2b::e2b

#endif
