#!/usr/bin/env bash
# The main job: build prism-e2b, then run the end-to-end demo. Without
# E2B_API_KEY the demo embeds prism-e2b-local (real processes on this machine);
# with it (or with --remote) it runs the same scenario against real E2B.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release --target prism_e2b_cli
exec ./build/release/prism-e2b demo "$@"
