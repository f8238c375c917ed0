// Client-side cost of a run: CPU seconds (user+system, every thread of this
// process, not children) and peak resident set size, from getrusage(RUSAGE_SELF).
#ifndef PRISM_E2B_BENCH_RESOURCE_USAGE_HPP
#define PRISM_E2B_BENCH_RESOURCE_USAGE_HPP

#include <cstddef>

namespace prism_e2b::bench {

struct resource_sample {
    double user_seconds = 0;
    double system_seconds = 0;
    long peak_rss_kib = 0;  ///< ru_maxrss: the process's lifetime peak (KiB on Linux)

    double cpu_seconds() const noexcept { return user_seconds + system_seconds; }
};

/// This process (RUSAGE_SELF); the local server and node run as children and
/// are not counted.
resource_sample sample_self();

/// This process's resident set now (VmRSS, KiB), not its lifetime peak: a
/// scenario's second side is measured from its own baseline.
long current_rss_kib();

/// Descriptors of this process that are sockets (its TCP connections, here).
std::size_t open_sockets();

/// utime+stime+cutime+cstime of another process from /proc/<pid>/stat: its own
/// CPU and that of its reaped children (0 when unreadable).
double process_cpu_seconds(int pid);

}  // namespace prism_e2b::bench

#endif
