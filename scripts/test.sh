#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs what CI runs (.ci/run):
#   1. the formatting check: clang-format --dry-run -Werror over src/ and tests/;
#   2. a build with warnings as errors (-DNMT_WERROR=ON) into build/;
#   3. the default test suite: every test but those labelled `slow` (the GoogleTest cases in
#      shards, scripts/dev/run_shards.sh, then the script checks through ctest).
# The slow ones (CmdBenchSlow: `nmt bench matmul` at its full sizes and `nmt bench train`, which
# time fp32 and bf16 matmul ceilings for minutes on a CPU without AVX512-BF16) are left out of CI
# to keep it within its time budget; `bench matmul` itself runs in the default suite at small
# sizes (CmdBench.MatmulTimesTheGivenSizes). Run them with:
#   ctest --test-dir build -L slow --output-on-failure
#   scripts/test.sh --sanitize   # then again under ASan + UBSan in build-asan (scripts/dev/sanitize.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=0
[[ ${1:-} == --sanitize ]] && sanitize=1
"$root/scripts/dev/check_format.sh"
"$root/scripts/setup.sh" -- -DNMT_WERROR=ON
# The GoogleTest cases in shards, one process each rather than one per test (run_shards.sh says
# why), then the checks that are scripts (ctest label `script`). `ctest --test-dir build -LE slow`
# runs the same suite test by test.
status=0
"$root/scripts/dev/run_shards.sh" "${BUILD_DIR:-$root/build}" '-*Slow.*' || status=1
ctest --test-dir "${BUILD_DIR:-$root/build}" -L script -LE slow --output-on-failure \
  -j"$(nproc)" || status=1
((status == 0)) || exit 1
if ((sanitize)); then "$root/scripts/dev/sanitize.sh"; fi
