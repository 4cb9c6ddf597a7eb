#!/usr/bin/env bash
# The main job, from a fresh machine: set up, fetch Multi30k, train the default English→German
# config, evaluate the average it ends with (averaged.pt: snapshots over the last
# train.average_window of the budget; best.pt when there is none, or when the average validated
# worse than the final weights) on test_2016_flickr (and the
# other test sets and val: EVAL_SPLITS; a model of several pairs: each pair on the sets that
# exist in its target language), write results.json, plot the training curves.
# AVERAGE=N evaluates the mean of the last N step checkpoints instead.
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
    sed -n '2,14s/^# \{0,1\}//p' "$0"
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
print(c["decode"]["beam"], c["decode"]["length_penalty"], c["train"]["run_dir"])' <<<"$resolved")
read -r beam alpha run_dir <<<"$settings"
if [[ -f "$run_dir/last.pt" ]]; then
  build/nmt train --resume "$run_dir" "$@"
else
  build/nmt train --config "$config" "$@"
fi
# The trainer averages its snapshots into averaged.pt when the run ends on its budget.
checkpoint=$run_dir/averaged.pt
if [[ -n ${AVERAGE:-} ]]; then  # the last AVERAGE step checkpoints instead (numeric order)
  mapfile -t steps < <(ls -1v "$run_dir"/step_*.pt 2>/dev/null | tail -n "$AVERAGE")
  checkpoint=$run_dir/averaged_last${AVERAGE}.pt
  build/nmt average --output "$checkpoint" "${steps[@]}"
elif [[ ! -f $checkpoint ]]; then
  echo "run.sh: no averaged.pt in $run_dir (train.average_snapshots 0, or the run stopped early): evaluating best.pt"
  checkpoint=$run_dir/best.pt
elif [[ $(/usr/bin/python3 -c 'import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if "\"averaged\"" in l]
print(records[-1].get("better_than_final") if records else None)' "$run_dir/metrics.jsonl") == False ]]; then
  # A budget too short for the averaging window: the trainer's log says so, with both losses.
  echo "run.sh: averaged.pt validates worse than the final weights (train.log): evaluating best.pt"
  checkpoint=$run_dir/best.pt
fi
splits=${EVAL_SPLITS:-test_2016_flickr,test_2017_flickr,test_2017_mscoco,val}
# A model of several pairs (data.train entries with their own languages): every pair on the test
# sets that exist in both its languages, one results.json for all.
info=$(build/nmt inspect "$checkpoint")
pairs=$(/usr/bin/python3 -c 'import json, sys
for p in json.loads(sys.argv[1])["languages"]: print(p["src"], p["tgt"])' "$info")
if (( $(wc -l <<<"$pairs") <= 1 )); then
  build/nmt evaluate --checkpoint "$checkpoint" --beam "$beam" --length-penalty "$alpha" \
    --split "$splits" --json "$run_dir/results.json"
else
  data_dir=$(/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["data"]["dir"])' \
    <<<"$resolved")
  parts=()
  while read -r src tgt; do
    corpora=""
    IFS=, read -ra wanted <<<"$splits"
    for split in "${wanted[@]}"; do
      if compgen -G "$data_dir/$split.$src*" >/dev/null && compgen -G "$data_dir/$split.$tgt*" >/dev/null; then
        corpora+="${corpora:+, }{\"split\": \"$split\", \"src_lang\": \"$src\", \"tgt_lang\": \"$tgt\"}"
      fi
    done
    [[ -n $corpora ]] || continue
    build/nmt evaluate --checkpoint "$checkpoint" --beam "$beam" --length-penalty "$alpha" \
      --tgt-lang "$tgt" --corpus "[$corpora]" --json "$run_dir/results.$src-$tgt.json" </dev/null
    parts+=("$run_dir/results.$src-$tgt.json")
  done <<<"$pairs"
  /usr/bin/python3 -c 'import json, sys
print(json.dumps([r for f in sys.argv[1:] for r in json.load(open(f))], indent=2))' \
    "${parts[@]}" >"$run_dir/results.json.tmp"
  mv "$run_dir/results.json.tmp" "$run_dir/results.json"
fi
/usr/bin/python3 scripts/plot_metrics.py "$run_dir/metrics.jsonl" || true
