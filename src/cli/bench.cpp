// prism-e2b bench: runs prism-e2b-bench (bench/), which holds the benchmark
// code, so the shipped CLI carries none of it. The bench program is looked up
// next to this executable (the build tree and an install put them side by
// side), then on PATH; it replaces this process, so its output and exit code
// are the command's. For --js it is told where the official JS SDK side is
// (PRISM_E2B_BENCH_JS_DIR): --js-dir, else that variable, else the installed
// <prefix>/share/prism-e2b/bench/js, else the source tree it was built from.
#include "cli/commands.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;

namespace prism_e2b::cli {
namespace {

/// The installed JS side, relative to this executable (<prefix>/bin/prism-e2b).
std::optional<fs::path> installed_js_dir(fs::path const& self)
{
    std::error_code ec;
    auto dir = self.parent_path().parent_path() / "share" / "prism-e2b" / "bench" / "js";
    if (fs::exists(dir / "node_modules" / "e2b", ec)) return dir;
    return std::nullopt;
}

int bench(std::vector<std::string> args)
{
    if (auto rc = run_bench_pause_resume_memory(args)) return *rc;  // bench_pause_resume.cpp, in-process
    std::optional<std::string> js_dir;
    for (auto it = args.begin(); it != args.end();) {
        if (*it == "--js-dir" && it + 1 != args.end()) {
            js_dir = *(it + 1);
            it = args.erase(it, it + 2);
        } else if (it->rfind("--js-dir=", 0) == 0) {
            js_dir = it->substr(9);
            it = args.erase(it);
        } else {
            ++it;
        }
    }
    std::string program = "prism-e2b-bench";
    std::error_code ec;
    fs::path const self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && fs::exists(self.parent_path() / program, ec)) program = (self.parent_path() / program).string();
    char const* env_dir = std::getenv("PRISM_E2B_BENCH_JS_DIR");
    if (!js_dir && !(env_dir && *env_dir) && !self.empty())
        if (auto d = installed_js_dir(self)) js_dir = d->string();
    if (js_dir) {
        if (!fs::exists(fs::path(*js_dir) / "node_modules" / "e2b", ec))
            return fail(exit_config, "bench: no JS SDK in " + *js_dir + " (run `npm ci --prefix " + *js_dir + "`)");
        ::setenv("PRISM_E2B_BENCH_JS_DIR", js_dir->c_str(), 1);
    }

    std::vector<char*> argv;
    argv.push_back(program.data());
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(program.c_str(), argv.data());  // returns only on failure
    return fail(exit_config, "bench: cannot run prism-e2b-bench (" + std::string(std::strerror(errno)) +
                                 "); build it with PRISM_E2B_BUILD_BENCH=ON");
}

}  // namespace

void add_bench_command(CLI::App& app, run_state& st)
{
    auto* cmd = app.add_subcommand(
        "bench", "measure pause/resume, exec fan-out and the unary floor, side by side with the official JS SDK");
    cmd->prefix_command();  // everything is prism-e2b-bench's (see `prism-e2b bench all --help`)
    cmd->footer(
        "usage: prism-e2b bench <pause_resume|fan_out|unary_floor|all> [--n N] [--json FILE] [--svg FILE]\n"
        "       prism-e2b bench pause_resume_memory [--engines namespaces,gvisor-ram,gvisor-disk,gvisor-sync]\n"
        "                                           [--sizes 64,256 | --max-mib N]\n"
        "                       [--n CYCLES]  (pause/resume latency against the memory a sandbox holds)\n"
        "                       [--js [--js-dir DIR]] ...\n"
        "--js also runs the official JS SDK (node). Its directory (bench/js with node_modules) is, in order:\n"
        "  --js-dir DIR, $PRISM_E2B_BENCH_JS_DIR, <prefix>/share/prism-e2b/bench/js next to an installed\n"
        "  prism-e2b (run `npm ci --prefix <prefix>/share/prism-e2b/bench/js` once), else the source tree's\n"
        "  bench/js.\n\n" +
        exit_codes_help());
    cmd->callback([cmd, &st] { st.exit = bench(cmd->remaining()); });
}

}  // namespace prism_e2b::cli
