#!/usr/bin/env bash
# The main job, from a fresh machine: set up, fetch Multi30k, train the default English→German
# config, average its last step checkpoints, evaluate that on test_2016_flickr (and the other
# test sets and val: EVAL_SPLITS), write results.json, plot the training curves.
# Re-running continues an interrupted run (Ctrl-C saves; this script resumes).
#
#   scripts/run.sh                                  # configs/multi30k_en_de.json
#   CONFIG=configs/multi30k_de_en.json scripts/run.sh
#   scripts/run.sh --set train.max_minutes=10       # extra arguments go to `nmt train`
#   scripts/run.sh --set train.name=my_run           # ...and name the run: checkpoints/my_run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
config=${CONFIG:-configs/multi30k_en_de.json}

scripts/setup.sh
scripts/get_multi30k.sh
# The run's name, and the decoding settings evaluation uses (the config's, even for a run
# trained before they were tuned).
settings=$(/usr/bin/python3 -c 'import json, sys
try:
    c = json.load(open(sys.argv[1], encoding="utf-8"))
    print(c["train"]["name"], c.get("decode", {}).get("beam", 5),
          c.get("decode", {}).get("length_penalty", 0.6))
except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
    sys.exit(f"run.sh: error: {sys.argv[1]}: {type(e).__name__}: {e} (a JSON config with a train.name)")' "$config")
read -r name beam alpha <<<"$settings"
# A `--set train.name=NAME` among the extra arguments names the run instead (the last one wins,
# as in `nmt train`), so `scripts/run.sh --set train.name=x` trains, resumes and evaluates
# checkpoints/x.
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --set) ((i + 1 < ${#args[@]})) && [[ ${args[i + 1]} == train.name=* ]] && name=${args[i + 1]#train.name=} ;;
    --set=train.name=*) name=${args[i]#--set=train.name=} ;;
  esac
done
run_dir=checkpoints/$name
if [[ -f "$run_dir/last.pt" ]]; then
  build/nmt train --resume "$run_dir" "$@"
else
  build/nmt train --config "$config" "$@"
fi
# Average the last (up to) AVERAGE step checkpoints (numeric order: step_250 before step_1000).
mapfile -t steps < <(ls -1v "$run_dir"/step_*.pt 2>/dev/null | tail -n "${AVERAGE:-5}")
checkpoint=$run_dir/best.pt
if ((${#steps[@]} > 1)); then
  build/nmt average --output "$run_dir/averaged.pt" "${steps[@]}"
  checkpoint=$run_dir/averaged.pt
fi
build/nmt evaluate --checkpoint "$checkpoint" --beam "$beam" --length-penalty "$alpha" \
  --split "${EVAL_SPLITS:-test_2016_flickr,test_2017_flickr,test_2017_mscoco,val}" \
  --json "$run_dir/results.json"
/usr/bin/python3 scripts/plot_metrics.py "$run_dir/metrics.jsonl" || true
