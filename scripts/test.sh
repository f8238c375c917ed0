#!/usr/bin/env bash
# The whole test suite, as CI runs it, in legs (each prints its wall time):
#   format  clang-format --dry-run -Werror over every tracked C++ file
#   asan    every test (unit, integration with the local server in-process,
#           conformance with the official JS SDK, examples, the demo, the bench
#           smoke tests, packaging: install, find_package and pkg-config
#           consumers, the Conan/vcpkg checks) with g++, -Werror,
#           AddressSanitizer + UndefinedBehaviorSanitizer
#   tsan    the concurrent parts (core, wire, adapter and integration tests)
#           under ThreadSanitizer
#   clang   clang++ 14, -Werror, a shared libprism_e2b: the library, the unit
#           tests, the packaging tests (exported symbols, consumers built with
#           clang++ and g++) and the Doxygen API reference (`docs`, warnings
#           are errors); then the async-model test (its own executable) with
#           clang + ASan against the local server
#   tidy    clang-tidy (.clang-tidy) over src/, on the clang leg's build
#   fuzz    every libFuzzer target (tests/fuzz) replays its committed corpus for a
#           bounded number of runs, clang + -fsanitize=fuzzer,address,undefined
# The asan leg includes the fault-injection soak (tests/soak, ctest label soak).
#
#   ./scripts/test.sh              every leg, in that order
#   ./scripts/test.sh clang tidy   only those legs
#
# A new leg is a function leg_<name> below plus its name in all_legs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# With both, a clean clone in any directory reuses what an earlier run compiled:
# paths under the root are hashed relative, and -g builds leave the working
# directory out of the hash (a cache hit's debug info names the directory of the
# build that filled the cache).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

all_legs=(format asan tsan clang tidy fuzz)
# Tests run side by side: most of their time is spent waiting on sandboxes and
# servers, not on the CPU. PRISM_E2B_TEST_JOBS=1 runs them one at a time.
jobs=${PRISM_E2B_TEST_JOBS:-3}

configure() {  # configure <build dir> <cmake args...>
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -G Ninja -DPRISM_E2B_WERROR=ON "$@" >/dev/null
}

leg_format() {
  ./scripts/check_format.sh
}

leg_asan() {
  for dir in tests/conformance bench/js; do
    if [ -f "$dir/package-lock.json" ]; then
      npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
    fi
  done
  configure build/asan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=address,undefined \
    -DPRISM_E2B_CONFORMANCE_TESTS=ON -DPRISM_E2B_BUILD_DOCS=OFF
  cmake --build build/asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build/asan -j "$jobs" --output-on-failure
}

leg_tsan() {
  configure build/tsan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=thread \
    -DPRISM_E2B_BUILD_EXAMPLES=OFF -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_DOCS=OFF
  cmake --build build/tsan --target prism_e2b_core_tests prism_e2b_wire_tests prism_e2b_adapter_tests \
    prism_e2b_integration_tests prism_e2b_async_model_tests
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build/tsan -j "$jobs" -R '^prism_e2b_(core|wire|adapter|integration_[a-z]+|async_model)_tests$' \
    --output-on-failure
}

leg_clang() {
  # No local server, CLI, examples or bench: the library and its unit tests
  # are what a clang user compiles; g++ covers the rest.
  configure build/clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 -DBUILD_SHARED_LIBS=ON \
    -DPRISM_E2B_BUILD_LOCAL_SERVER=OFF -DPRISM_E2B_BUILD_CLI=OFF -DPRISM_E2B_BUILD_EXAMPLES=OFF \
    -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_DOCS=ON
  cmake --build build/clang
  cmake --build build/clang --target docs
  ctest --test-dir build/clang -j "$jobs" --output-on-failure
  # The async model's test (every completion token, requests built inline in
  # co_await, designated temporaries included) against the local server, with
  # clang + AddressSanitizer: g++ 12 cannot run the designated forms (a g++ 12
  # bug in the caller's frame). ASan only: clang 14's -fsanitize=function (part
  # of "undefined") fails to assemble coroutines ("Cannot represent a
  # difference across sections").
  configure build/clang-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 \
    -DPRISM_E2B_SANITIZE=address -DPRISM_E2B_BUILD_CLI=OFF -DPRISM_E2B_BUILD_EXAMPLES=OFF \
    -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_DOCS=OFF
  cmake --build build/clang-asan --target prism_e2b_async_model_tests
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ctest --test-dir build/clang-asan -R '^prism_e2b_async_model_tests$' \
    --output-on-failure
}

leg_tidy() {
  [ -f build/clang/compile_commands.json ] || leg_clang
  ./scripts/check_tidy.sh build/clang
}

leg_fuzz() {
  CC=clang-14 CXX=clang++-14 configure build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPRISM_E2B_SANITIZE=address,undefined -DPRISM_E2B_BUILD_FUZZERS=ON -DPRISM_E2B_BUILD_EXAMPLES=OFF \
    -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_CLI=OFF -DPRISM_E2B_BUILD_DOCS=OFF
  cmake --build build/fuzz --target prism_e2b_fuzzers
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir build/fuzz -j "$jobs" -L fuzz --output-on-failure
}

legs=("$@")
((${#legs[@]})) || legs=("${all_legs[@]}")
for leg in "${legs[@]}"; do
  declare -F "leg_$leg" >/dev/null || { echo "test.sh: no leg '$leg' (legs: ${all_legs[*]})" >&2; exit 2; }
done

# PRISM_E2B_PRUNE_BUILDS=1 (set by .ci/run): a leg's build directories are
# removed once it passed, so the whole run never needs the disk of all five
# builds at once (the ASan build alone is about 13 GB).
prune() {  # prune <leg>
  [ "${PRISM_E2B_PRUNE_BUILDS:-0}" = 1 ] || return 0
  case $1 in
    asan) rm -rf build/asan ;;
    tsan) rm -rf build/tsan ;;
    clang) rm -rf build/clang-asan ;;  # build/clang stays for tidy
    tidy) rm -rf build/clang ;;
    fuzz) rm -rf build/fuzz ;;
  esac
}

./scripts/bootstrap.sh
summary=()
for leg in "${legs[@]}"; do
  echo "== leg $leg"
  start=$SECONDS
  "leg_$leg"
  summary+=("$leg $((SECONDS - start))s")
  echo "== leg $leg passed in $((SECONDS - start)) s"
  prune "$leg"
done
echo "== all legs passed: ${summary[*]}"
