#!/usr/bin/env bash
# Builds nmt with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan (or $ASAN_BUILD_DIR)
# and runs the default test suite there (every test but those labelled `slow`). Called by
# `scripts/test.sh --sanitize` (and so by .ci/run); see docs/fault_tolerance.md for the options
# below and what the run costs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${ASAN_BUILD_DIR:-$root/build-asan}
start=$(date +%s)
# -O1 -g1: a third quicker to compile than -O2 and line numbers in the reports.
# -Wno-maybe-uninitialized: GCC 12 warns falsely in <regex> under -fsanitize=address.
BUILD_DIR=$build_dir "$root/scripts/setup.sh" -- -DNMT_SANITIZE=address,undefined \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1 -DNDEBUG -Wno-maybe-uninitialized"
built=$(date +%s)
# detect_leaks=0: LibTorch 1.13, OpenMP and protobuf keep process-lifetime allocations that
#   LeakSanitizer reports at exit (none of them ours; see docs/fault_tolerance.md).
# halt_on_error / abort_on_error: the first report fails the test that caused it; the spawned
#   `nmt` children inherit these, and the tests that spawn them fail on a sanitizer report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build_dir" -LE slow --output-on-failure -j"$(nproc)" --timeout 900
echo "sanitize: build $((built - start)) s, tests $(($(date +%s) - built)) s"
