#!/usr/bin/env bash
# Builds nmt with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan (or $ASAN_BUILD_DIR)
# and runs the default test suite there (every test but those labelled `slow`). Called by
# `scripts/test.sh --sanitize` (and so by .ci/run); see docs/fault_tolerance.md for the options
# below and what the run costs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${ASAN_BUILD_DIR:-$root/build-asan}
start=$(date +%s)
# -O1 -g1: a third quicker to compile than -O2 and line numbers in the reports.
# -Wno-maybe-uninitialized: GCC 12 warns falsely in <regex> under -fsanitize=address.
# NMT_TEST_OPT_FLAGS=-O0: the instrumented test files compile in about half the time unoptimised
#   (the code under test, nmt_core and nmt, stays at -O1).
BUILD_DIR=$build_dir "$root/scripts/setup.sh" -- -DNMT_SANITIZE=address,undefined -DNMT_WERROR=ON \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1 -DNDEBUG -Wno-maybe-uninitialized" -DNMT_TEST_OPT_FLAGS=-O0
built=$(date +%s)
# detect_leaks=0: LibTorch 1.13, OpenMP and protobuf keep process-lifetime allocations that
#   LeakSanitizer reports at exit (none of them ours; see docs/fault_tolerance.md).
# halt_on_error / abort_on_error: the first report fails the test that caused it; the spawned
#   `nmt` children inherit these, and the tests that spawn them fail on a sanitizer report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# malloc_context_size=8: allocation stacks of 8 frames (default 30) make LibTorch's many small
#   allocations about a third cheaper; reports still name our frames.
export ASAN_OPTIONS="$ASAN_OPTIONS:malloc_context_size=8"
# The default suite's GoogleTest cases run as shards (scripts/dev/run_shards.sh: a sanitized
# nmt_tests takes about 2.5 s to start). FaultCampaign (scripts/bench/fault_campaign.sh: SIGKILLs and
# resumes of real runs) runs in the ordinary suite only: under ASan it took 150-270 s, the longest
# test, and what it reaches (the resume after a kill, a stale temporary file) the Resume and
# RunDirLock tests reach here too.
status=0
"$root/scripts/dev/run_shards.sh" "$build_dir" '-*Slow.*:FaultCampaign.*' || status=1
# The suite's checks outside nmt_tests (scripts run by ctest against this build).
ctest --test-dir "$build_dir" -LE slow -R '^(ResultsTables|Layers|ConfigReference)\.' \
  --output-on-failure || status=1
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
exit $status
