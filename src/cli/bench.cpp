// prism-e2b bench: runs prism-e2b-bench (bench/), which holds the benchmark
// code, so the shipped CLI carries none of it. The bench program is looked up
// next to this executable (the build tree and an install put them side by
// side), then on PATH; it replaces this process, so its output and exit code
// are the command's.
#include "cli/commands.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace prism_e2b::cli {
namespace {

int bench(std::vector<std::string> const& args)
{
    namespace fs = std::filesystem;
    std::string program = "prism-e2b-bench";
    std::error_code ec;
    fs::path const self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && fs::exists(self.parent_path() / program, ec)) program = (self.parent_path() / program).string();

    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    argv.push_back(program.data());
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(program.c_str(), argv.data());  // returns only on failure
    return fail(exit_config, "bench: cannot run prism-e2b-bench (" + std::string(std::strerror(errno)) +
                                 "); build it with PRISM_E2B_BUILD_BENCH=ON");
}

bool const registered = register_command({
    "bench",
    "bench <pause_resume|fan_out|unary_floor|all> [--n N] [--json FILE] [--svg FILE] [--js] ...",
    "measure pause/resume, exec fan-out and the unary floor, side by side with the official JS SDK",
    bench,
});

}  // namespace
}  // namespace prism_e2b::cli
