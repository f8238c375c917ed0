// A sandbox's resource metrics: GET /sandboxes/{id}/metrics (e2b-spec's
// SandboxMetric), as the official SDK's `getMetrics`. Completes with
// void(result<std::vector<sandbox_metric>>) on any completion token.
#ifndef PRISM_E2B_E2B_METRICS_HPP
#define PRISM_E2B_E2B_METRICS_HPP

#include <prism_e2b/e2b/client.hpp>
#include <prism_e2b/error.hpp>
#include <prism_e2b/export.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

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

namespace detail {
/// The compiled operation behind async_get_sandbox_metrics; needs the client of
/// make_client() (another client completes with errc::unsupported).
PRISM_E2B_API void get_sandbox_metrics(
    client& c, std::string sandbox_id, metrics_params params,
    boost::asio::any_completion_handler<void(result<std::vector<sandbox_metric>>)> handler);
}  // namespace detail

/// The sandbox's metrics, oldest first; an empty series before the first
/// sample. errc::not_found for an unknown sandbox. `c` must outlive the operation.
template <class CompletionToken = boost::asio::use_awaitable_t<>>
auto async_get_sandbox_metrics(client& c, std::string sandbox_id, metrics_params params = {},
                               CompletionToken&& token = {})
{
    return boost::asio::async_initiate<CompletionToken, void(result<std::vector<sandbox_metric>>)>(
        [](auto handler, client* cl, std::string id, metrics_params p) {
            detail::get_sandbox_metrics(*cl, std::move(id), p, std::move(handler));
        },
        token, &c, std::move(sandbox_id), params);
}

}  // namespace prism_e2b::e2b

#endif
