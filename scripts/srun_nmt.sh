#!/usr/bin/env bash
# Starts one nmt rank under Slurm: turns srun's task variables into the ones nmt reads (RANK,
# WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), then runs build/nmt.
#   srun --nodes=2 --ntasks-per-node=4 --gpus-per-node=4 scripts/srun_nmt.sh train --config c.json
# MASTER_PORT defaults to 29500 + (job id mod 1000), so that two jobs on a node do not collide.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${SLURM_PROCID:?run this under srun}"
export RANK=$SLURM_PROCID
export WORLD_SIZE=$SLURM_NTASKS
export LOCAL_RANK=$SLURM_LOCALID
export LOCAL_WORLD_SIZE=${SLURM_NTASKS_PER_NODE:-$((SLURM_NTASKS / SLURM_NNODES))}
LOCAL_WORLD_SIZE=${LOCAL_WORLD_SIZE%%(*}  # "4(x2)" -> 4
if [[ -z "${MASTER_ADDR:-}" ]]; then
  MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
fi
export MASTER_ADDR
export MASTER_PORT=${MASTER_PORT:-$((29500 + SLURM_JOB_ID % 1000))}
exec "${NMT:-$root/build/nmt}" "$@"
