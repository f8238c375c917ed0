// One benchmark scenario as its own executable; `prism-e2b bench` runs the same code.
#include "driver.hpp"

int main(int argc, char** argv) { return prism_e2b::bench::run_cli(PRISM_E2B_BENCH_SCENARIO, argc - 1, argv + 1); }
