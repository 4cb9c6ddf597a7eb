#!/usr/bin/env bash
# Checks that a refactoring left training bit-identical on the CPU: trains three tiny runs on
# tests/fixtures with each of two nmt binaries and compares every logged loss (and validation
# score: loss, perplexity, learning rate, BLEU, chrF) exactly.
#   fp32: AdamW on linear weights, cosine schedule, 300 steps, a validation every 100;
#   rdrop: R-Drop, GELU, pre-norm, sinusoidal positions, 200 steps;
#   bf16: bf16 autocast with R-Drop, 4 steps (bf16 is very slow on CPUs without AVX512-BF16).
# Usage: scripts/dev/same_losses.sh OLD_NMT NEW_NMT   (e.g. a copy of build/nmt made before the change)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
common=(--config configs/tiny.json --set data.dir=tests/fixtures --set data.train_split=tiny
  --set data.valid_split=tiny_val --set data.vocab_size=300 --set data.batch_tokens=600
  --set train.max_epochs=0 --set train.max_minutes=0 --set train.log_every=1 --set train.threads=2
  --set train.warmup=50 --set train.allow_small_data=true)
variants=(
  "fp32|--set train.max_steps=300 --set train.validate_every=100 --set train.precision=fp32 --set train.weight_decay=0.1 --set train.weight_decay_on=linear --set train.schedule=cosine"
  "rdrop|--set train.max_steps=200 --set train.validate_every=100 --set train.precision=fp32 --set train.rdrop_alpha=1 --set model.activation=gelu --set model.norm=pre --set model.positions=sinusoidal"
  "bf16|--set train.max_steps=4 --set train.valid_bleu=false --set train.metric=loss --set train.precision=bf16 --set train.rdrop_alpha=1"
)
status=0
for variant in "${variants[@]}"; do
  name=${variant%%|*}
  read -r -a extra <<<"${variant#*|}"
  for side in old new; do
    nmt=$1
    [[ $side == new ]] && nmt=$2
    "$nmt" train "${common[@]}" "${extra[@]}" --set train.run_dir="$work/$side-$name" \
      >"$work/$side-$name.log" 2>&1 || { echo "$side $name: training failed:"; tail -3 "$work/$side-$name.log"; exit 1; }
    python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["kind"], r["step"], *(repr(r.get(k)) for k in ("loss", "ppl", "lr", "bleu", "chrf")))' \
      "$work/$side-$name/metrics.jsonl" >"$work/$side-$name.losses"
  done
  if cmp -s "$work/old-$name.losses" "$work/new-$name.losses"; then
    echo "$name: identical ($(wc -l <"$work/new-$name.losses") records)"
  else
    echo "$name: DIFFERENT"; diff "$work/old-$name.losses" "$work/new-$name.losses" | head -5
    status=1
  fi
done
exit $status
