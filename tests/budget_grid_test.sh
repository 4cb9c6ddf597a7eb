#!/usr/bin/env bash
# scripts/bench/budget_grid.sh's refusals, before it trains anything: an unknown corpus, a run
# folder that holds a run, and a cell's results folder that holds a cell (another run of a
# setting is SETTING_runN; the cell's files stay as they were).
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

finish budget_grid_test
