#!/usr/bin/env bash
# Runs one cell of the corpora x budgets table (docs/own_data.md): trains SETTING on
# CORPUS for MINUTES on this host, evaluates the model scripts/run.sh would evaluate (averaged.pt,
# or best.pt when the average validated worse) with beam 5 on the corpus's test set, and keeps
# the run's files in docs/results/budget_<corpus>_<minutes>min/<setting>/ (auto's and
# inherited's hypotheses where they are small), or failed.json with the error of a setting that
# cannot train on it.
#
#   scripts/bench/budget_grid.sh CORPUS MINUTES SETTING [--steps-of CELL] [--set KEY=VALUE ...]
#     CORPUS   multi30k_en_de | small_parallel_enja (ja->en) | americasnlp_aym_es (aym->es) |
#              minangnlp_min_id (min->id) | classical_modern_zh (lzh->zh); scripts/get_corpus.sh
#              fetches all but the first
#     SETTING  auto (configs/auto.json) | inherited (configs/multi30k_en_de.json) | any other
#              name for a hand setting, with its --set overrides over the inherited recipe;
#              SETTING_runN (auto_run2) is a replicate of SETTING
#     --steps-of CELL  trains a hand setting for the steps that the block's cell CELL
#              (inherited or inherited_runN, the recipe hand settings change) trained in MINUTES
#              on its host (train.max_steps, no time limit), on any host: the cell stands in
#              CELL's block (budget_table.py), and steps_of.json says so. Only for settings
#              that leave a step's cost as CELL's (--set model.dropout, train.label_smoothing,
#              train.lr, train.warmup): a block's cells train what the budget buys on its host.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
corpus=${1:?CORPUS}; minutes=${2:?MINUTES}; setting=${3:?SETTING}; shift 3
steps_of=
if [[ ${1:-} == --steps-of ]]; then
  steps_of=${2:?--steps-of CELL}; shift 2
  if [[ $setting =~ ^(auto|inherited)(_run[0-9]+)?$ ]]; then
    echo "budget_grid.sh: --steps-of is for hand settings; auto sizes its recipe from the" \
      "time budget, and the inherited recipe is the cell to take the steps of" >&2
    exit 2
  fi
  # Hand settings change the inherited recipe: its cell's steps cost what theirs do.
  if [[ ! $steps_of =~ ^inherited(_run[0-9]+)?$ ]]; then
    echo "budget_grid.sh: --steps-of $steps_of: take the steps of the block's inherited cell" \
      "(inherited or inherited_runN), whose recipe hand settings change" >&2
    exit 2
  fi
  for arg in "$@"; do
    [[ $arg == --set ]] && continue
    case ${arg%%=*} in
      model.dropout | train.label_smoothing | train.lr | train.warmup) ;;
      *) echo "budget_grid.sh: --steps-of takes settings that leave a step's cost as it is" \
           "(--set model.dropout, train.label_smoothing, train.lr, train.warmup), not '$arg'" >&2
        exit 2 ;;
    esac
  done
fi
case $corpus in
  multi30k_en_de) data=(); test_split=test_2016_flickr ;;
  small_parallel_enja)
    data=(--set data.dir=data/small_parallel_enja --set data.src_lang=ja --set data.tgt_lang=en
      --set data.train=train --set data.valid=dev)
    test_split=test ;;
  americasnlp_aym_es)
    data=(--set data.dir=data/americasnlp_aym_es --set data.src_lang=aym --set data.tgt_lang=es
      --set data.train=train --set data.valid=dev)
    test_split=test ;;
  minangnlp_min_id)
    data=(--set data.dir=data/minangnlp_min_id --set data.src_lang=min --set data.tgt_lang=id
      --set data.train=train --set data.valid=dev)
    test_split=test ;;
  classical_modern_zh)
    data=(--set data.dir=data/classical_modern_zh --set data.src_lang=lzh --set data.tgt_lang=zh
      --set data.train=train --set data.valid=dev)
    test_split=test ;;
  *) echo "budget_grid.sh: unknown corpus '$corpus' (multi30k_en_de, small_parallel_enja," \
       "americasnlp_aym_es, minangnlp_min_id, classical_modern_zh)" >&2
    exit 2 ;;
esac
config=configs/multi30k_en_de.json
# A replicate (SETTING_runN) runs its setting again: auto_run2 is auto's recipe.
kind=$setting
[[ $setting =~ ^(.+)_run[0-9]+$ ]] && kind=${BASH_REMATCH[1]}
[[ $kind == auto ]] && config=configs/auto.json
name=budget_${corpus}_${minutes}min_${setting}
out=docs/results/budget_${corpus}_${minutes}min/$setting
run_dir=checkpoints/$name
if [[ -e $run_dir/last.pt ]]; then
  echo "budget_grid.sh: $run_dir already holds a run; remove it to run the cell again" >&2
  exit 1
fi
# A cell's files are a result: another run of its setting is SETTING_runN, never over it.
if [[ -e $out ]]; then
  echo "budget_grid.sh: $out already holds a cell; run the setting again as ${setting%_run*}_runN" \
    "(a new N), or remove the folder to replace it" >&2
  exit 1
fi
# A cell at another cell's steps: that cell's last step (its final validation's).
budget=(--set train.max_minutes="$minutes")
if [[ -n $steps_of ]]; then
  source_cell=docs/results/budget_${corpus}_${minutes}min/$steps_of
  if [[ ! -e $source_cell/metrics.jsonl.gz || ! -e $source_cell/host.json ||
        -e $source_cell/steps_of.json ]]; then
    echo "budget_grid.sh: --steps-of $steps_of: no cell $source_cell (metrics.jsonl.gz," \
      "host.json) trained in $minutes minutes to take the steps from" >&2
    exit 1
  fi
  steps=$(gzip -dc "$source_cell/metrics.jsonl.gz" | /usr/bin/python3 -c 'import json, sys
print(max([json.loads(l).get("step", 0) for l in sys.stdin if l.strip()] or [0]))') || steps=
  if [[ ! $steps =~ ^[1-9][0-9]*$ ]]; then
    echo "budget_grid.sh: --steps-of $steps_of: no steps in $source_cell/metrics.jsonl.gz" >&2
    exit 1
  fi
  budget=(--set train.max_minutes=0 --set train.max_steps="$steps")
fi
# The host's speed goes into host.json: hosts of one CPU name differ (EPYC sessions measured
# 180 to 261 GFLOP/s), and a minute buys steps in proportion.
gflops=$(build/nmt bench matmul --sizes 1024 | awk '$1 == "ceiling" { print $2 }') || gflops=
host_json() { /usr/bin/python3 scripts/host_info.py --fp32-gflops "$gflops"; }
# What a cell at another cell's steps stands for: that cell, its steps and its host.
steps_of_json() {
  [[ -n $steps_of ]] || return 0
  /usr/bin/python3 -c 'import json, sys
json.dump({"cell": sys.argv[1], "steps": int(sys.argv[2]), "host": json.load(open(sys.argv[3]))},
          sys.stdout, indent=2)' "$steps_of" "$steps" "$source_cell/host.json" >"$out/steps_of.json"
}
# A setting that cannot train on the corpus is a result too: its error goes to failed.json.
train=(build/nmt train --config "$config" "${data[@]}" "${budget[@]}" "$@")
if ! "${train[@]}" --set train.monitor_splits= --set train.name="$name" \
    2> >(tee "$run_dir.err" >&2); then
  mkdir -p "$out"
  /usr/bin/python3 -c 'import json, sys
errors = [l.strip() for l in open(sys.argv[1]) if l.startswith("error:")]
json.dump({"error": errors[-1] if errors else "nmt train failed", "command": sys.argv[2:]},
          sys.stdout, ensure_ascii=False, indent=2)' "$run_dir.err" "${train[@]}" >"$out/failed.json"
  host_json >"$out/host.json"
  steps_of_json
  rm -f "$run_dir.err"
  echo "budget_grid.sh: $setting failed on $corpus; $out/failed.json" >&2
  exit 1
fi
rm -f "$run_dir.err"
checkpoint=$run_dir/averaged.pt
if [[ ! -e $checkpoint ]] || [[ $(/usr/bin/python3 -c 'import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if "\"averaged\"" in l]
print(records[-1].get("better_than_final") if records else None)' "$run_dir/metrics.jsonl") == False ]]; then
  checkpoint=$run_dir/best.pt
fi
mkdir -p "$out"
build/nmt evaluate --checkpoint "$checkpoint" --beam 5 --length-penalty 2.0 --split "$test_split" \
  --json "$out/results.json" --hyp-dir "$out"
cp "$run_dir/config.json" "$out/"
gzip -c "$run_dir/metrics.jsonl" >"$out/metrics.jsonl.gz"
host_json >"$out/host.json"
steps_of_json
gzip -c "$run_dir/train.log" >"$out/train.log.gz"
for hyp in "$out"/hyp.*; do
  if [[ -e $hyp && $hyp != *.gz ]]; then gzip -f "$hyp"; fi
done
# docs/ stays about 8 MB: only auto's and the inherited recipe's hypotheses stay, and not over
# 50 kB (3,000-line test sets); every cell keeps its scores.
[[ $kind == auto || $kind == inherited ]] || rm -f "$out"/hyp.*
find "$out" -name 'hyp.*.gz' -size +50k -delete
echo "budget_grid.sh: $out"
