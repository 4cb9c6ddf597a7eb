#!/usr/bin/env bash
# Runs the GoogleTest cases of BUILD_DIR/tests/nmt_tests matching FILTER as shards, one process
# each, rather than one process per test as ctest runs them: a process of nmt_tests takes about
# 0.7 s to start (2.5 s sanitized), which over 450 tests was a third of the suite's time. Four
# shards per core, taken from a queue, one more at a time than cores (the suite waits on child
# processes and timeouts much of the time), so that the shard which draws the longest tests does
# not finish alone (GoogleTest deals tests to shards by index, not by time). Each shard has a
# deadline, so nothing hangs CI. A failing shard's failures, sanitizer reports and first stack
# frames are printed; the exit status is 1 when any shard failed.
#
#   scripts/dev/run_shards.sh BUILD_DIR FILTER     # e.g. build '-*Slow.*'
set -euo pipefail
build_dir=$(cd "$1" && pwd)
export filter=$2
parallel=$(($(nproc) + 1))
export shards=$((4 * $(nproc)))
export build_dir
run_shard() {
  cd "$build_dir/tests" || return 1
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$1 timeout -k 10 2400 \
    ./nmt_tests --gtest_filter="$filter" > "$build_dir/shard$1.log" 2>&1
  echo $? > "$build_dir/shard$1.rc"
}
export -f run_shard
rm -f "$build_dir"/shard*.log "$build_dir"/shard*.rc
start=$(date +%s)
seq 0 $((shards - 1)) | xargs -P "$parallel" -I{} bash -c 'run_shard {}' || true
status=0
for ((i = 0; i < shards; ++i)); do
  if [[ $(cat "$build_dir/shard$i.rc" 2> /dev/null) != 0 ]]; then
    status=1
    echo "run_shards: shard $i failed ($build_dir/shard$i.log):"
    # The test that was running, each failed expectation with the lines that explain it, the
    # report's own lines and its first stack frames, so that CI's log names the code at fault.
    awk '/^\[ RUN/ { test = $0 } /^==[0-9]+==ERROR|runtime error/ { print test }
         /: Failure$/ { print test; explain = 6 } explain > 0 { print; --explain; next }
         /^\[  FAILED  \]|runtime error|^==[0-9]+==ERROR|^SUMMARY|^    #[0-9] / { print }' \
      "$build_dir/shard$i.log" | head -60
    tail -5 "$build_dir/shard$i.log"
  fi
done
passed=$(cat "$build_dir"/shard*.log | grep -c '^\[       OK \]' || true)
failed=$(cat "$build_dir"/shard*.log | grep -c '^\[  FAILED  \] .*(' || true)
echo "run_shards: $passed tests passed, $failed failed, in $shards shards, $(($(date +%s) - start)) s"
exit $status
