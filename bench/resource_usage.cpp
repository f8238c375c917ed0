// getrusage(RUSAGE_SELF) as seconds and KiB.
#include "resource_usage.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

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

long current_rss_kib()
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    return 0;
}

std::size_t open_sockets()
{
    std::size_t n = 0;
    std::error_code ec;
    for (auto const& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        std::error_code lec;
        if (std::filesystem::read_symlink(e.path(), lec).string().rfind("socket:", 0) == 0) ++n;
    }
    return n;
}

double process_cpu_seconds(int pid)
{
    if (pid <= 0) return 0;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return 0;
    // Fields after the ")" that ends the command name: state is field 3,
    // utime 14, stime 15, cutime 16, cstime 17 (reaped children: the commands
    // the server ran count as server work).
    auto const close = line.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 17 && (rest >> field); ++i)
        if (i >= 14) ticks += std::stod(field);
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

}  // namespace prism_e2b::bench
