#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs what CI runs (.ci/run):
#   1. the formatting check: clang-format --dry-run -Werror over src/ and tests/;
#   2. a build with warnings as errors (-DNMT_WERROR=ON) into build/;
#   3. the default test suite: every test but those labelled `slow`.
# The slow ones (CmdBenchSlow: `nmt bench matmul` at its full sizes and `nmt bench train`, which
# time fp32 and bf16 matmul ceilings for minutes on a CPU without AVX512-BF16) are left out of CI
# to keep it within its time budget; `bench matmul` itself runs in the default suite at small
# sizes (CmdBench.MatmulTimesTheGivenSizes). Run them with:
#   ctest --test-dir build -L slow --output-on-failure
#   scripts/test.sh --sanitize   # then again under ASan + UBSan in build-asan (scripts/sanitize.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=0
[[ ${1:-} == --sanitize ]] && sanitize=1
"$root/scripts/check_format.sh"
"$root/scripts/setup.sh" -- -DNMT_WERROR=ON
ctest --test-dir "${BUILD_DIR:-$root/build}" -LE slow --output-on-failure -j"$(nproc)"
if ((sanitize)); then "$root/scripts/sanitize.sh"; fi
