// getrusage(RUSAGE_SELF) as seconds and KiB.
#include "resource_usage.hpp"

#include <sys/resource.h>

namespace prism_e2b::bench {

namespace {
double seconds(timeval tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }
}  // namespace

resource_sample sample_self()
{
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    resource_sample s;
    s.user_seconds = seconds(ru.ru_utime);
    s.system_seconds = seconds(ru.ru_stime);
    s.peak_rss_kib = ru.ru_maxrss;
    return s;
}

}  // namespace prism_e2b::bench
