// What the soak checks stays flat: this process's open fds, threads and RSS
// (client and in-process server together) and its live child processes.
#ifndef PRISM_E2B_SOAK_RESOURCES_HPP
#define PRISM_E2B_SOAK_RESOURCES_HPP

#include <dirent.h>
#include <fstream>
#include <string>
#include <unistd.h>

namespace prism_e2b::test {

struct soak_resources {
    long fds = 0;
    long threads = 0;
    long rss_kb = 0;
    long children = 0;

    static soak_resources sample()
    {
        soak_resources r;
        r.fds = count_entries("/proc/self/fd") - 1;  // the directory stream's own fd
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);) {
            if (line.rfind("Threads:", 0) == 0) r.threads = std::stol(line.substr(8));
            if (line.rfind("VmRSS:", 0) == 0) r.rss_kb = std::stol(line.substr(6));
        }
        r.children = count_children();
        return r;
    }

    /// Bounds: fds +8, threads +2, no extra child, RSS + `rss_slack_mb`.
    bool within(soak_resources const& base, std::size_t rss_slack_mb) const
    {
        return fds <= base.fds + 8 && threads <= base.threads + 2 && children <= base.children &&
               rss_kb <= base.rss_kb + static_cast<long>(rss_slack_mb) * 1024;
    }

    std::string to_string() const
    {
        return "fds " + std::to_string(fds) + ", threads " + std::to_string(threads) + ", children " +
               std::to_string(children) + ", rss " + std::to_string(rss_kb / 1024) + " MiB";
    }
    std::string delta_string(soak_resources const& base) const
    {
        return "fds " + std::to_string(fds - base.fds) + ", threads " + std::to_string(threads - base.threads) +
               ", children " + std::to_string(children - base.children) + ", rss " +
               std::to_string((rss_kb - base.rss_kb) / 1024) + " MiB";
    }

private:
    static long count_entries(char const* dir)
    {
        long n = 0;
        if (DIR* d = ::opendir(dir)) {
            while (auto* e = ::readdir(d))
                if (e->d_name[0] != '.') ++n;
            ::closedir(d);
        }
        return n;
    }

    /// Processes whose parent is this process (/proc/<pid>/stat field 4).
    static long count_children()
    {
        long n = 0;
        pid_t const self = ::getpid();
        DIR* d = ::opendir("/proc");
        if (!d) return 0;
        while (auto* e = ::readdir(d)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
            std::string text;
            std::getline(stat, text);
            auto const close = text.rfind(')');
            if (close == std::string::npos) continue;
            char state = 0;
            long ppid = 0;
            if (std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self && state != 'Z')
                ++n;
        }
        ::closedir(d);
        return n;
    }
};

}  // namespace prism_e2b::test

#endif
