#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. every test — unit, integration (the local server in-process), conformance
#      (the official JS SDK against prism-e2b-local), examples, the demo, the bench
#      smoke tests, the install/consumer check — built with AddressSanitizer +
#      UndefinedBehaviorSanitizer;
#   2. the concurrent parts (core, wire and adapter unit tests, and the integration
#      tests) again under ThreadSanitizer;
#   3. the fuzz targets' corpus replay (clang + libFuzzer) and a short fault-injection
#      soak under ASan/UBSan (the block at the end).
# Benchmarks and the demo script use a separate optimised build (build/release).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

./scripts/bootstrap.sh
for dir in tests/conformance bench/js; do
  if [ -f "$dir/package-lock.json" ]; then
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  fi
done

configure() {  # configure <build dir> <cmake args...>
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -G Ninja "$@" >/dev/null
}

echo "== every test under AddressSanitizer + UndefinedBehaviorSanitizer"
configure build/asan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=address,undefined -DPRISM_E2B_CONFORMANCE_TESTS=ON
cmake --build build/asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -LE soak

echo "== the concurrent parts under ThreadSanitizer"
configure build/tsan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=thread \
  -DPRISM_E2B_BUILD_EXAMPLES=OFF -DPRISM_E2B_BUILD_BENCH=OFF
cmake --build build/tsan --target prism_e2b_core_tests prism_e2b_wire_tests prism_e2b_adapter_tests \
  prism_e2b_integration_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan -R '^prism_e2b_(core|wire|adapter|integration)_tests$' --output-on-failure

# ---- fuzzing and the fault-injection soak (issue 15) ------------------------
# Every fuzz target replays its committed corpus for a bounded number of runs
# (tests/fuzz/README.md), built with clang + libFuzzer + ASan + UBSan; then a
# short soak of the adapter against the local server under random faults, in
# the ASan/UBSan build above (tests/soak/soak.cpp).
echo "== fuzz corpus replay (clang, -fsanitize=fuzzer,address,undefined)"
CC=clang CXX=clang++ configure build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRISM_E2B_SANITIZE=address,undefined \
  -DPRISM_E2B_BUILD_FUZZERS=ON -DPRISM_E2B_BUILD_EXAMPLES=OFF -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_CLI=OFF
cmake --build build/fuzz --target prism_e2b_fuzzers
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir build/fuzz -L fuzz --output-on-failure

echo "== fault-injection soak under AddressSanitizer + UndefinedBehaviorSanitizer"
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir build/asan -L soak --output-on-failure
# ---- end of fuzzing and soak -------------------------------------------------
