#!/usr/bin/env bash
# clang-tidy (14) over the sources of src/ with the checks of .clang-tidy, in
# parallel, check only. Needs a compile_commands.json from a clang build:
#   scripts/check_tidy.sh <build dir>
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: check_tidy.sh <build dir with compile_commands.json>}
run_tidy=${RUN_CLANG_TIDY:-$(command -v run-clang-tidy-14 || command -v run-clang-tidy)}
tidy=${CLANG_TIDY:-$(command -v clang-tidy-14 || command -v clang-tidy)}
# Every translation unit of src/ the build compiled (the areas it was configured with).
mapfile -t files < <(python3 -c '
import json, os, sys
root = os.getcwd() + "/src/"
print("\n".join(sorted({e["file"] for e in json.load(open(sys.argv[1])) if e["file"].startswith(root)})))
' "$build/compile_commands.json")
# A file whose key (tidy_keys.py: tidy's version, the config, the command, the preprocessed
# source) passed before is not checked again: a warm run checks only what changed.
cache=${PRISM_E2B_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prism-e2b/tidy}
mkdir -p "$cache"
python3 scripts/tidy_keys.py "$build" "$tidy" "${files[@]}" > "$build/tidy-keys.txt"
mapfile -t keyed < "$build/tidy-keys.txt"
((${#keyed[@]} == ${#files[@]})) || { echo "check_tidy: no key for some files" >&2; exit 1; }
todo=()
keys=()
for line in "${keyed[@]}"; do
  key=${line%% *}
  [ -e "$cache/$key" ] && continue
  todo+=("${line#* }")
  keys+=("$key")
done
echo "check_tidy: ${#files[@]} files, ${#todo[@]} not checked before"
if ((${#todo[@]})); then
  "$run_tidy" -quiet -clang-tidy-binary "$tidy" -p "$build" -j "${TIDY_JOBS:-2}" "${todo[@]}" > "$build/clang-tidy.log" 2>&1 || {
    grep -E 'warning:|error:' "$build/clang-tidy.log" | sort -u | head -100
    echo "check_tidy: clang-tidy reported problems (full log: $build/clang-tidy.log)"
    exit 1
  }
  for key in "${keys[@]}"; do : > "$cache/$key"; done
fi
echo "check_tidy: clean"
