#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format (14, the
# repository's .clang-format) would write. Check only: fix with
#   git ls-files '*.cpp' '*.hpp' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format)}
git ls-files -z '*.cpp' '*.hpp' | xargs -0 "$clang_format" --dry-run -Werror
echo "check_format: $(git ls-files '*.cpp' '*.hpp' | wc -l) files formatted"
