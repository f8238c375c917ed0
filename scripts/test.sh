#!/usr/bin/env bash
# The whole test suite, as CI runs it, in legs (each prints its wall time), the
# cheap ones first so that a mistake fails in minutes:
#   format  clang-format --dry-run -Werror over every tracked C++ file
#   clang   clang++ 14, -Werror, a shared libprism_e2b: the library, the unit
#           tests, the packaging tests (exported symbols, consumers built with
#           clang++ and g++) and the Doxygen API reference (`docs`, warnings
#           are errors)
#   tidy    clang-tidy (.clang-tidy) over src/, each file compiled alone
#   asan    every test (unit, integration with the local server in-process,
#           conformance with the official JS SDK, examples, the demo, the bench
#           smoke tests, packaging: install, find_package and pkg-config
#           consumers, the Conan/vcpkg checks) and every libFuzzer target
#           (tests/fuzz: its committed corpus and a fixed-seed bounded mutation
#           run) with clang++ 14, -Werror, AddressSanitizer +
#           UndefinedBehaviorSanitizer
#   tsan    the concurrent parts (core, wire, adapter and integration tests)
#           under ThreadSanitizer, with g++ 12, -Werror (which also compiles
#           the local server, the CLI and the examples)
# The asan leg includes the fault-injection soak (tests/soak, ctest label soak).
#
#   ./scripts/test.sh                   every leg, in that order
#   ./scripts/test.sh clang tidy        only those legs
#   ./scripts/test.sh --repeat 10 tsan  every ctest of the leg 10 times (stops at the first failure)
#
# When a leg fails, the last line names the leg and the failing step or ctests.
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
# Every leg's objects fit (-g1: about 6 GB in all); ccache's default 5 GB did
# not, so a "warm" run could still compile most of a leg.
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}

all_legs=(format clang tidy asan tsan)
# Tests run side by side: most of their time is spent waiting on sandboxes and
# servers, not on the CPU. PRISM_E2B_TEST_JOBS=1 runs them one at a time.
jobs=${PRISM_E2B_TEST_JOBS:-3}
repeat=1
# Line tables only in the sanitizer builds: a sanitizer's report still names
# file and line, and compiling, caching and linking take far less (the ASan
# build directory was about 13 GB with -g).
debug_flags=(-DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
# Every build compiles its sources in batches (cmake/unity.cmake): Asio, Beast
# and Boost.JSON parsed and instantiated once per batch (the clang leg's build:
# 77 s against 131 s file by file, cold). clang-tidy reads per-file commands
# from a directory that is only configured, and so compiles each file of src/
# alone; no leg compiles the tests, the local server, the CLI or the bench file
# by file, so a file of theirs that misses an include can pass CI and fail a
# default (file-by-file) build.
unity=(-DPRISM_E2B_UNITY_BUILD=ON)

# What the leg is doing, for the last line when it fails.
current_leg=
current_step=
failed_tests_dir=
step() {  # step <name>: what the running leg does next
  current_step=$1
  failed_tests_dir=
}
run_ctest() {  # run_ctest <build dir> <ctest args...>
  local dir=$1; shift
  step "ctest in $dir"
  failed_tests_dir=$dir
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --repeat "until-fail:$repeat" "$@"
}
report_failure() {
  local rc=$?
  [ "$rc" -ne 0 ] && [ -n "$current_leg" ] || return 0
  local what="step '$current_step'"
  local log=$failed_tests_dir/Testing/Temporary/LastTestsFailed.log
  if [ -n "$failed_tests_dir" ] && [ -s "$log" ]; then
    what="ctest $(cut -d: -f2 "$log" | tr '\n' ' ')"
    # The failing checks themselves, so the log's tail says why, not only where: Boost.Test's
    # failed checks and sanitizer reports, else (a script's or a compiler's test) any error
    # line. No line found must not end the report before its last line (grep's 1 under
    # pipefail), hence the `|| true`s.
    local logs=("$failed_tests_dir"/Testing/Temporary/LastTest*.log) checks
    checks=$(grep -hE 'error: in "|ThreadSanitizer: |AddressSanitizer: |runtime error: ' "${logs[@]}" 2>/dev/null || true)
    [ -n "$checks" ] || checks=$(grep -hE 'error: ' "${logs[@]}" 2>/dev/null || true)
    if [ -n "$checks" ]; then
      printf '%s\n' "$checks" | sed 's/\x1b\[[0-9;]*m//g' | head -n 20 | sed 's/^/== failed check: /' || true
    fi
  fi
  echo "== leg $current_leg FAILED (exit $rc) in $what"
}
trap report_failure EXIT

configure() {  # configure <build dir> <cmake args...>
  local dir=$1; shift
  step "configure $dir"
  cmake -S "$root" -B "$dir" -G Ninja -DPRISM_E2B_WERROR=ON "$@" >/dev/null
}
build() {  # build <build dir> [cmake --build args...]
  step "build $*"
  cmake --build "$@"
}

leg_format() {
  step "clang-format check"
  ./scripts/check_format.sh
}

leg_clang() {
  # No local server, CLI, examples or bench: the library and its unit tests
  # as a shared library are what a clang user compiles; the asan leg builds
  # everything with clang, the tsan leg the server, the CLI and the examples
  # with g++.
  configure build/clang -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 -DBUILD_SHARED_LIBS=ON \
    -DPRISM_E2B_BUILD_LOCAL_SERVER=OFF -DPRISM_E2B_BUILD_CLI=OFF -DPRISM_E2B_BUILD_EXAMPLES=OFF \
    -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_DOCS=ON "${debug_flags[@]}" "${unity[@]}"
  build build/clang
  build build/clang --target docs
  run_ctest build/clang
}

leg_tidy() {
  # The clang leg's configuration, file by file, configured only: clang-tidy
  # compiles each file itself.
  configure build/tidy -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 -DBUILD_SHARED_LIBS=ON \
    -DPRISM_E2B_BUILD_LOCAL_SERVER=OFF -DPRISM_E2B_BUILD_CLI=OFF -DPRISM_E2B_BUILD_EXAMPLES=OFF \
    -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_DOCS=OFF "${debug_flags[@]}"
  step "clang-tidy"
  ./scripts/check_tidy.sh build/tidy
}

leg_asan() {
  step "npm ci"
  for dir in tests/conformance bench/js; do
    if [ -f "$dir/package-lock.json" ]; then
      npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
    fi
  done
  # clang, not g++: the same build then holds the fuzz targets (libFuzzer is
  # clang's), and clang compiles this code with ASan about 1.6 times faster
  # (the local server cold: 95 s of CPU against 153 s, 2026-12-07). g++
  # compiles the library, the server, the CLI and the examples in the tsan leg.
  # The fuzz targets need the library areas instrumented for coverage
  # (tests/fuzz/CMakeLists.txt), so every test here runs on that build.
  CC=clang-14 CXX=clang++-14 configure build/asan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=address,undefined \
    -DPRISM_E2B_BUILD_FUZZERS=ON -DPRISM_E2B_CONFORMANCE_TESTS=ON -DPRISM_E2B_BUILD_DOCS=OFF \
    "${debug_flags[@]}" "${unity[@]}"
  build build/asan
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run_ctest build/asan
}

leg_tsan() {
  # The examples are only compiled here: g++ -Werror sees what a user builds.
  configure build/tsan -DCMAKE_BUILD_TYPE=Debug -DPRISM_E2B_SANITIZE=thread \
    -DPRISM_E2B_BUILD_EXAMPLES=ON -DPRISM_E2B_BUILD_BENCH=OFF -DPRISM_E2B_BUILD_DOCS=OFF "${debug_flags[@]}" "${unity[@]}"
  build build/tsan --target prism_e2b_core_tests prism_e2b_wire_tests prism_e2b_adapter_tests \
    prism_e2b_integration_tests prism_e2b_async_model_tests prism_e2b_examples
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    run_ctest build/tsan -R '^prism_e2b_(core|wire|adapter|integration_[a-z]+|async_model)_tests$'
}

args=("$@")
legs=()
while ((${#args[@]})); do
  case ${args[0]} in
    --repeat) repeat=${args[1]:?--repeat wants a count}; args=("${args[@]:2}") ;;
    *) legs+=("${args[0]}"); args=("${args[@]:1}") ;;
  esac
done
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
    clang) rm -rf build/clang ;;
    tidy) rm -rf build/tidy ;;
    asan) rm -rf build/asan ;;
    tsan) rm -rf build/tsan ;;
  esac
}

./scripts/bootstrap.sh
command -v ccache >/dev/null && ccache -z >/dev/null
summary=()
for leg in "${legs[@]}"; do
  echo "== leg $leg"
  current_leg=$leg
  start=$SECONDS
  "leg_$leg"
  summary+=("$leg $((SECONDS - start))s")
  echo "== leg $leg passed in $((SECONDS - start)) s"
  if command -v ccache >/dev/null; then
    echo "== ccache after leg $leg: $(ccache --print-stats | awk -F'\t' '
      $1=="direct_cache_hit"||$1=="preprocessed_cache_hit"{h+=$2} $1=="cache_miss"{m=$2} END{print h+0 " hits, " m+0 " misses"}')"
    ccache -z >/dev/null
  fi
  current_leg=
  prune "$leg"
done
echo "== all legs passed: ${summary[*]}"
