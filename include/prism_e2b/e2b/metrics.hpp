// The data of a sandbox's resource metrics: GET /sandboxes/{id}/metrics
// (e2b-spec's SandboxMetric), as the official SDK's `getMetrics`; the
// operation is e2b::client::async_get_sandbox_metrics.
#ifndef PRISM_E2B_E2B_METRICS_HPP
#define PRISM_E2B_E2B_METRICS_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace prism_e2b::e2b {

/// One sample of a sandbox's resources (SandboxMetric).
struct sandbox_metric {
    std::int64_t timestamp_unix = 0;  ///< when, in seconds since the epoch
    std::int32_t cpu_count = 0;       ///< CPU cores
    double cpu_used_pct = 0;          ///< CPU usage, percent
    std::int64_t mem_used = 0;        ///< memory used, bytes
    std::int64_t mem_total = 0;       ///< memory in total, bytes
    std::int64_t mem_cache = 0;       ///< page cache, bytes
    std::int64_t disk_used = 0;       ///< disk used, bytes
    std::int64_t disk_total = 0;      ///< disk in total, bytes
};

/// The interval asked for, Unix seconds; absent: the server's default.
struct metrics_params {
    std::optional<std::int64_t> start;  ///< from (query `start`)
    std::optional<std::int64_t> end;    ///< to (query `end`)
};

}  // namespace prism_e2b::e2b

#endif
