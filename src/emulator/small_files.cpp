// Whole-file reads and writes of small kernel and state files.
#include "emulator/small_files.hpp"

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace prism_e2b::local::detail {

int write_all(int fd, std::string_view data)
{
    std::size_t off = 0;
    while (off < data.size()) {
        ssize_t const n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        off += static_cast<std::size_t>(n);
    }
    return 0;
}

int copy_contents(int in, int out)
{
    char buf[1 << 16];
    for (;;) {
        ssize_t const n = ::read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return 0;
        if (int const e = write_all(out, std::string_view(buf, static_cast<std::size_t>(n))); e != 0) return e;
    }
}

bool write_small_file(std::string const& path, std::string const& text)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool const ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

std::string read_small_file(std::string const& path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<pid_t> cgroup_pids(std::string const& cgroup_dir)
{
    std::vector<pid_t> out;
    std::istringstream in(read_small_file(cgroup_dir + "/cgroup.procs"));
    pid_t p;
    while (in >> p) out.push_back(p);
    return out;
}

std::vector<std::string> proc_stat_fields(pid_t pid)
{
    auto const text = read_small_file("/proc/" + std::to_string(pid) + "/stat");
    auto const close = text.rfind(')');  // the command name before it may hold spaces and ')'
    std::vector<std::string> fields;
    if (close == std::string::npos) return fields;
    std::istringstream in(text.substr(close + 1));
    for (std::string f; in >> f;) fields.push_back(std::move(f));
    return fields;
}

}  // namespace prism_e2b::local::detail
