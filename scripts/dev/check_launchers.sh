#!/usr/bin/env bash
# Starts one small 2-rank training run three ways on this machine and checks that the final
# weights are bitwise identical (docs/distributed.md):
#   1. torchrun's multi-node path: two torchrun agents as two "nodes" (--nnodes=2, the c10d
#      rendezvous backend at --rdzv_endpoint), one rank each;
#   2. a plain shell loop setting RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
#   3. scripts/srun_nmt.sh given the variables srun sets (MASTER_ADDR set, so no scontrol).
# Needs torchrun (Debian: apt-get install python3-torch; 1.13 spells options with underscores).
#   scripts/dev/check_launchers.sh [WORK_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=${1:-$(mktemp -d /tmp/nmt_launchers.XXXXXX)}
mkdir -p "$work"
nmt=${NMT:-$root/build/nmt}
port=$((20000 + $$ % 20000))
common=(--config configs/tiny.json --set data.dir=tests/fixtures --set data.train=tiny
  --set data.valid=tiny_val --set data.vocab_size=300 --set data.batch_tokens=600
  --set train.max_epochs=0 --set train.max_minutes=0 --set train.log_every=5
  --set train.warmup=50 --set train.max_steps=20 --set train.validate_every=10
  --set train.dist_timeout=60)
export OMP_NUM_THREADS=1
command -v torchrun > /dev/null || { echo "torchrun not found (apt-get install python3-torch)"; exit 2; }

for node in 0 1; do
  timeout 300 torchrun --nnodes=2 --nproc_per_node=1 --rdzv_backend=c10d \
    --rdzv_endpoint=127.0.0.1:$port --rdzv_id=check --redirects 2 --tee 2 --no_python \
    "$nmt" train "${common[@]}" --set train.run_dir="$work/torchrun" > "$work/node$node.log" 2>&1 &
done
wait
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$((port + 1)) timeout 300 "$nmt" train "${common[@]}" \
    --set train.run_dir="$work/loop" > "$work/loop$r.log" 2>&1 &
done
wait
for r in 0 1; do
  SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r SLURM_NTASKS_PER_NODE='2(x1)' SLURM_NNODES=1 \
    SLURM_JOB_ID=4242 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((port + 2)) NMT=$nmt \
    timeout 300 scripts/srun_nmt.sh train "${common[@]}" --set train.run_dir="$work/srun" \
    > "$work/srun$r.log" 2>&1 &
done
wait
sums=()
for launcher in torchrun loop srun; do
  "$nmt" inspect "$work/$launcher/last.pt" --weights-out "$work/$launcher.bin" > /dev/null
  sum=$(md5sum < "$work/$launcher.bin" | cut -d' ' -f1)
  echo "$launcher: $(grep -c '"kind":"train"' "$work/$launcher/metrics.jsonl") train records," \
    "weights md5 $sum"
  sums+=("$sum")
done
if [[ ${sums[0]} == "${sums[1]}" && ${sums[1]} == "${sums[2]}" ]]; then
  echo "launchers: the three runs' weights are bitwise identical"
else
  echo "launchers: the weights differ (logs in $work)"
  exit 1
fi
