#!/usr/bin/env bash
# The main job, from a fresh machine: set up, fetch Multi30k, train the default English→German
# config, average its last step checkpoints (as many as train.keep_checkpoints), evaluate that on
# test_2016_flickr (and the other test sets and val: EVAL_SPLITS), write results.json, plot the
# training curves.
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
for arg in "$@"; do
  if [[ $arg == -h || $arg == --help ]]; then
    sed -n '2,11s/^# \{0,1\}//p' "$0"
    if [[ -x build/nmt ]]; then
      printf '\nExtra arguments go to `nmt train`:\n'
      build/nmt train --help
    fi
    exit 0
  fi
done

scripts/setup.sh
scripts/get_multi30k.sh
# Where the run lives and how evaluation decodes, as `nmt train` resolves them from the config
# and the extra arguments (`--set train.name=x` trains, resumes and evaluates checkpoints/x;
# `--set decode.beam=1` evaluates greedily). Decoding follows the config file, even for a run
# trained before its decoding settings were tuned.
resolved=$(build/nmt train --config "$config" "$@" --print-config)
settings=$(/usr/bin/python3 -c 'import json, sys
c = json.load(sys.stdin)
print(c["decode"]["beam"], c["decode"]["length_penalty"], c["train"]["keep_checkpoints"],
      c["train"]["run_dir"])' <<<"$resolved")
read -r beam alpha keep run_dir <<<"$settings"
if [[ -f "$run_dir/last.pt" ]]; then
  build/nmt train --resume "$run_dir" "$@"
else
  build/nmt train --config "$config" "$@"
fi
# Average the last (up to) AVERAGE step checkpoints, by default as many as the run keeps
# (train.keep_checkpoints; numeric order: step_250 before step_1000).
mapfile -t steps < <(ls -1v "$run_dir"/step_*.pt 2>/dev/null | tail -n "${AVERAGE:-$keep}")
checkpoint=$run_dir/best.pt
if ((${#steps[@]} > 1)); then
  build/nmt average --output "$run_dir/averaged.pt" "${steps[@]}"
  checkpoint=$run_dir/averaged.pt
else
  echo "run.sh: ${#steps[@]} step checkpoint(s) in $run_dir, nothing to average: evaluating best.pt"
fi
build/nmt evaluate --checkpoint "$checkpoint" --beam "$beam" --length-penalty "$alpha" \
  --split "${EVAL_SPLITS:-test_2016_flickr,test_2017_flickr,test_2017_mscoco,val}" \
  --json "$run_dir/results.json"
/usr/bin/python3 scripts/plot_metrics.py "$run_dir/metrics.jsonl" || true
