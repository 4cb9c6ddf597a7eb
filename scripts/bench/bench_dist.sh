#!/usr/bin/env bash
# Compares, on this machine's cores, three ways of training the same steps of the default model
# (configs/multi30k_en_de.json, fp32, two 2048-token batches per optimizer step):
#   1. one process, 2 intra-op threads (train.threads 2, cpu_workers 1: workers off; 0 would be
#      automatic, which is 2 workers in fp32, the same as 2.), accum_steps 2;
#   2. one process, 2 in-process data-parallel workers (cpu_workers 2), accum_steps 2;
#   3. two ranks over c10d/Gloo on 127.0.0.1 (a shell loop), 1 thread each, accum_steps 1.
# Prints a markdown table of target tokens/s (all ranks' tokens) and, for the ranks, the time per
# step spent in collectives, read from each run's own train.log (docs/distributed.md).
# (The final validation is the teacher-forced loss only: it is not part of the timed steps.)
#   scripts/bench/bench_dist.sh [STEPS] [WORK_DIR]      (needs data/multi30k: scripts/get_multi30k.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
steps=${1:-40}
work=${2:-$(mktemp -d /tmp/nmt_bench_dist.XXXXXX)}
mkdir -p "$work"
nmt=${NMT:-$root/build/nmt}
port=$((20000 + $$ % 20000))
common=(--config configs/multi30k_en_de.json --set train.max_steps="$steps"
  --set train.max_minutes=0 --set train.log_every=10 --set train.precision=fp32
  --set train.validate_every=0 --set train.keep_checkpoints=0 --set train.average_snapshots=0 --set train.valid_bleu=false --set train.metric=loss)

# One tokenizer for all runs, so that they encode the same pieces and none trains its own.
[[ -f $work/prep/spm.model ]] ||
  "$nmt" prepare "${common[@]}" --set train.run_dir="$work/prep" > "$work/prep.log"
common+=(--set data.spm_model="$work/prep/spm.model")

run_one() {  # name, then extra arguments
  local name=$1
  shift
  rm -rf "${work:?}/$name"
  "$nmt" train "${common[@]}" --set train.run_dir="$work/$name" "$@" > "$work/$name.out" 2>&1
}
run_one threads --set train.threads=2 --set train.cpu_workers=1 --set train.accum_steps=2
run_one workers --set train.threads=2 --set train.cpu_workers=2 --set train.accum_steps=2
rm -rf "${work:?}/ranks"
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    OMP_NUM_THREADS=1 "$nmt" train "${common[@]}" --set train.run_dir="$work/ranks" \
    --set train.accum_steps=1 > "$work/ranks$r.out" 2>&1 &
done
wait

echo "| run | target tokens/s | ms per step in collectives |"
echo "| --- | ---: | ---: |"
for name in threads workers ranks; do
  line=$(grep 'throughput:' "$work/$name/train.log" | tail -1)
  tps=$(sed -E 's/.*throughput: ([0-9]+) target tokens\/s.*/\1/' <<< "$line")
  comm=$(grep -oE '[0-9.]+ ms per step in collectives' <<< "$line" | cut -d' ' -f1 || true)
  case $name in
    threads) label="1 process, 2 threads (cpu_workers 1), accum_steps 2" ;;
    workers) label="1 process, 2 in-process workers (cpu_workers 2), accum_steps 2" ;;
    ranks) label="2 ranks × 1 thread (Gloo, 127.0.0.1), accum_steps 1" ;;
  esac
  echo "| $label | $tps | ${comm:--} |"
done
echo "($steps steps each; logs in $work)"
