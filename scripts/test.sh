#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the default test suite: every test but those labelled
# `slow`. Run the slow ones too with: ctest --test-dir build -L slow --output-on-failure
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
ctest --test-dir "${BUILD_DIR:-$root/build}" -LE slow --output-on-failure -j"$(nproc)"
