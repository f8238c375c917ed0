// Percentiles and summaries of latency samples.
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace prism_e2b::bench {

double percentile(std::vector<double> const& sorted, double p)
{
    if (sorted.empty()) return 0;
    double const rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
    auto const lo = static_cast<std::size_t>(std::floor(rank));
    auto const hi = std::min(lo + 1, sorted.size() - 1);
    double const frac = rank - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

latency_summary summarize(std::vector<double> samples_ms)
{
    latency_summary s;
    s.count = samples_ms.size();
    if (samples_ms.empty()) return s;
    std::sort(samples_ms.begin(), samples_ms.end());
    s.mean = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(s.count);
    s.p50 = percentile(samples_ms, 50);
    s.p90 = percentile(samples_ms, 90);
    s.p99 = percentile(samples_ms, 99);
    s.min = samples_ms.front();
    s.max = samples_ms.back();
    return s;
}

}  // namespace prism_e2b::bench
