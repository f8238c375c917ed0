// prism-e2b-bench (the scenario is the first argument; `prism-e2b bench` runs
// this program) and one executable per scenario (PRISM_E2B_BENCH_SCENARIO).
#include "driver.hpp"

#ifndef PRISM_E2B_BENCH_SCENARIO
#define PRISM_E2B_BENCH_SCENARIO ""
#endif

int main(int argc, char** argv) { return prism_e2b::bench::run_cli(PRISM_E2B_BENCH_SCENARIO, argc - 1, argv + 1); }
