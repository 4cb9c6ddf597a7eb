#!/usr/bin/env bash
# Compares when beam search may stop (decode.early_stopping): exact stopping (the default: a
# sentence stops once no live hypothesis could win at any length up to the limit) against early
# stopping (once none could at its current length), each over a grid of length penalties α, so
# that each can be compared at its own best α. For every (stopping, α) it runs
# `nmt evaluate --json` on the splits with one model load, into OUT:
#   OUT/bench.json                         checkpoint, beam, grid, commit, host, date, command
#   OUT/<exact|early>_a<α>.json            the scores (`nmt evaluate --json`: BLEU, chrF, sent/s)
#   OUT/<exact|early>_a<α>/hyp.<split>.<lang>.gz   the hypotheses
# then prints the table of scripts/bench/stopping_table.py (OUT/table.md).
# Usage: scripts/bench/bench_stopping.sh [--nmt build/nmt] [--out DIR] [--beam 5]
#          [--alphas "0.0 0.6 1.0 1.5 2.0 2.5"] [--splits val,test_2016_flickr,...] CKPT
#          [-- more nmt evaluate options, e.g. --threads 2 --set data.dir=data/multi30k]
#        OUT defaults to docs/results/stopping_<name of CKPT's run directory>. Only commit a
#        folder measured on the model it names (not on a test model trained for minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command="$0 $*"
nmt=$root/build/nmt
out=""
beam=5
alphas="0.0 0.6 1.0 1.5 2.0 2.5"
splits=val,test_2016_flickr,test_2017_flickr,test_2017_mscoco
checkpoint=""
extra=()
while (($#)); do
  case $1 in
    --nmt) nmt=$(realpath "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --beam) beam=$2; shift 2 ;;
    --alphas) alphas=$2; shift 2 ;;
    --splits) splits=$2; shift 2 ;;
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [[ -z $checkpoint ]] || { echo "error: more than one CKPT ('$checkpoint', '$1')" >&2; exit 2; }
       checkpoint=$1; shift ;;
  esac
done
[[ -n $checkpoint ]] || { echo "error: CKPT is required (see --help)" >&2; exit 2; }
[[ -e $checkpoint ]] || { echo "error: $checkpoint: no such checkpoint file or run directory" >&2; exit 2; }
[[ -x $nmt ]] || { echo "error: $nmt is not an executable (build first, or give --nmt)" >&2; exit 2; }
run_dir=$checkpoint
[[ -d $run_dir ]] || run_dir=$(dirname "$checkpoint")
out=${out:-$root/docs/results/stopping_$(basename "$(realpath "$run_dir")")}
mkdir -p "$out"

NMT_SCRIPTS=$root/scripts /usr/bin/python3 - "$out/bench.json" "$checkpoint" "$beam" "$alphas" "$splits" "$command" <<'EOF'
import json, os, sys
sys.path.insert(0, os.environ["NMT_SCRIPTS"])
from host_info import host_info  # scripts/host_info.py
path, checkpoint, beam, alphas, splits, command = sys.argv[1:]
info = host_info()
json.dump({"checkpoint": checkpoint, "beam": int(beam), "alphas": alphas.split(),
           "splits": splits.split(","), "commit": info["commit"], "cpu": info["cpu"],
           "cores": info["cores"], "date": info["date"], "command": command},
          open(path, "w"), indent=2)
EOF

for stopping in exact early; do
  early=false
  [[ $stopping == early ]] && early=true
  for alpha in $alphas; do
    name=${stopping}_a$alpha
    echo "bench_stopping: $name"
    rm -rf "${out:?}/$name"
    "$nmt" evaluate --checkpoint "$checkpoint" --beam "$beam" --length-penalty "$alpha" \
      --early-stopping="$early" --split "$splits" --hyp-dir "$out/$name" --json "$out/$name.json" \
      "${extra[@]}" >"$out/$name.log" 2>&1 || { echo "failed: see $out/$name.log"; exit 1; }
    gzip -f "$out/$name"/hyp.*
    rm "$out/$name.log"
  done
done
/usr/bin/python3 "$root/scripts/bench/stopping_table.py" --write "$out"
cat "$out/table.md"
