// `prism-e2b bench <scenario>` and the prism_e2b_bench_<name> executables:
// argument parsing, the local server subprocess, the JS side, and the outputs.
#ifndef PRISM_E2B_BENCH_DRIVER_HPP
#define PRISM_E2B_BENCH_DRIVER_HPP

#include <string>

namespace prism_e2b::bench {

/// `scenario` is pause_resume, fan_out, unary_floor or all (empty: taken from
/// the first argument). Returns the process exit code.
int run_cli(std::string scenario, int argc, char** argv);

/// The usage text.
std::string usage();

}  // namespace prism_e2b::bench

#endif
