// Latency samples and their summary (mean, p50/p90/p99). Plain data; no timing here.
#ifndef PRISM_E2B_BENCH_STATS_HPP
#define PRISM_E2B_BENCH_STATS_HPP

#include <chrono>
#include <cstddef>
#include <vector>

namespace prism_e2b::bench {

/// Summary of one operation's latencies, in milliseconds.
struct latency_summary {
    std::size_t count = 0;
    double mean = 0, p50 = 0, p90 = 0, p99 = 0, min = 0, max = 0;
};

/// Percentile by linear interpolation between closest ranks (numpy's default),
/// so p50 of {1,2} is 1.5. `sorted` must be ascending; empty gives 0.
double percentile(std::vector<double> const& sorted, double p);

latency_summary summarize(std::vector<double> samples_ms);

inline double to_ms(std::chrono::steady_clock::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace prism_e2b::bench

#endif
