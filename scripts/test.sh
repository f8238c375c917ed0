#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. an optimised build with every test: unit, integration (the local server
#      in-process), conformance (the official JS SDK against prism-e2b-local),
#      examples and the bench smoke test;
#   2. the unit and integration tests again under AddressSanitizer + UBSan;
#   3. the concurrent parts (core, wire, adapter unit tests) under ThreadSanitizer.
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

echo "== build and test (RelWithDebInfo)"
configure build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPRISM_E2B_CONFORMANCE_TESTS=ON
cmake --build build/release
ctest --test-dir build/release --output-on-failure

unit_and_integration='^prism_e2b_(core|wire|adapter|integration)_tests$'
echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
configure build/asan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=address,undefined \
  -DPRISM_E2B_BUILD_EXAMPLES=OFF -DPRISM_E2B_BUILD_BENCH=OFF
cmake --build build/asan --target prism_e2b_core_tests prism_e2b_wire_tests prism_e2b_adapter_tests \
  prism_e2b_integration_tests
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -R "$unit_and_integration" --output-on-failure

echo "== ThreadSanitizer (concurrent parts)"
configure build/tsan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=thread \
  -DPRISM_E2B_BUILD_EXAMPLES=OFF -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_LOCAL_SERVER=OFF -DPRISM_E2B_BUILD_CLI=OFF
cmake --build build/tsan --target prism_e2b_core_tests prism_e2b_wire_tests prism_e2b_adapter_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan -R '^prism_e2b_(core|wire|adapter)_tests$' --output-on-failure
