#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the default test suite: every test but those labelled
# `slow`. Run the slow ones too with: ctest --test-dir build -L slow --output-on-failure
#   scripts/test.sh --sanitize   # then again under ASan + UBSan in build-asan (scripts/sanitize.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=0
[[ ${1:-} == --sanitize ]] && sanitize=1
"$root/scripts/setup.sh"
ctest --test-dir "${BUILD_DIR:-$root/build}" -LE slow --output-on-failure -j"$(nproc)"
if ((sanitize)); then "$root/scripts/sanitize.sh"; fi
