#!/usr/bin/env bash
# scripts/bench/budget_grid.sh's refusals, before it trains anything: an unknown corpus, a run
# folder that holds a run, and a cell's results folder that holds a cell (another run of a
# setting is SETTING_runN; the cell's files stay as they were), and --steps-of's: a setting
# that changes a step's cost, auto, a cell other than inherited, one that is not there and one
# without steps.
set -uo pipefail
source_script=$(cd "$(dirname "$0")/.." && pwd)/scripts/bench/budget_grid.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A tree of its own: the script works in the tree it lives in.
mkdir -p "$tmp/scripts/bench"
cp "$source_script" "$tmp/scripts/bench/budget_grid.sh"
script=$tmp/scripts/bench/budget_grid.sh
source "$(dirname "$0")/expect.sh"

expect 2 "unknown corpus 'nope'" "$script" nope 10 auto

mkdir -p "$tmp/checkpoints/budget_multi30k_en_de_10min_auto"
touch "$tmp/checkpoints/budget_multi30k_en_de_10min_auto/last.pt"
expect 1 "already holds a run" "$script" multi30k_en_de 10 auto

cell=$tmp/docs/results/budget_small_parallel_enja_10min/inherited
mkdir -p "$cell"
echo '{"bleu": 24.9}' >"$cell/results.json"
expect 1 "already holds a cell; run the setting again as inherited_runN" \
  "$script" small_parallel_enja 10 inherited
mkdir -p "${cell}_run2"
expect 1 "run the setting again as inherited_runN" "$script" small_parallel_enja 10 inherited_run2
[[ $(cat "$cell/results.json") == '{"bleu": 24.9}' ]] || fail "the cell's results.json changed"

# --steps-of: hand settings whose steps cost what the cell's do, taken from a cell that exists.
expect 2 "leave a step's cost as it is" "$script" minangnlp_min_id 30 v8000 --steps-of inherited \
  --set data.vocab_size=8000
expect 2 "for hand settings; auto sizes" "$script" minangnlp_min_id 30 auto_run2 --steps-of \
  inherited
expect 2 "take the steps of the block's inherited cell" "$script" minangnlp_min_id 30 drop030 \
  --steps-of auto --set model.dropout=0.3
expect 1 "no cell docs/results/budget_minangnlp_min_id_30min/inherited" \
  "$script" minangnlp_min_id 30 drop030 --steps-of inherited --set model.dropout=0.3
source_cell=$tmp/docs/results/budget_minangnlp_min_id_30min/inherited
mkdir -p "$source_cell"
echo '{}' >"$source_cell/host.json"
echo '{"kind": "train"}' | gzip >"$source_cell/metrics.jsonl.gz"
expect 1 "no steps in" "$script" minangnlp_min_id 30 drop030 --steps-of inherited \
  --set model.dropout=0.3

finish budget_grid_test
