// prism-e2b bench: the benchmarks of bench/ (same code as the
// prism_e2b_bench_<name> executables).
#include "cli/commands.hpp"

#ifdef PRISM_E2B_HAVE_BENCH
#include "driver.hpp"
#endif

#include <iostream>

namespace prism_e2b::cli {
namespace {

int bench(std::vector<std::string> const& args)
{
#ifdef PRISM_E2B_HAVE_BENCH
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    return prism_e2b::bench::run_cli("", static_cast<int>(copy.size()), argv.data());
#else
    (void)args;
    return fail(exit_config, "bench: this build has no benchmarks (configure with PRISM_E2B_BUILD_BENCH=ON)");
#endif
}

bool const registered = register_command({
    "bench",
    "bench <pause_resume|fan_out|unary_floor|all> [--n N] [--json FILE] [--svg FILE] [--js] ...",
    "measure pause/resume, exec fan-out and the unary floor, side by side with the official JS SDK",
    bench,
});

}  // namespace
}  // namespace prism_e2b::cli
