#!/usr/bin/env bash
# The distillation table of docs/distill.md in one sitting: scripts/bench/bench_deploy.sh (nmt against
# CTranslate2 with oneDNN, as its x86-64 wheel computes) on the teacher and on the student that
# scripts/distill.sh trained, each without and with the student's lexical shortlist (learned with
# the teacher's tokenizer, so it serves both), then the pipeline's own files, then
# scripts/bench/distill_table.py.
#
#   scripts/bench/bench_distill.sh TEACHER STUDENT_RUN     # e.g. checkpoints/m30k_s7415 checkpoints/student
#
# Results: OUT (docs/results/distill_<student run>): teacher/, teacher_shortlist/, student/,
# student_shortlist/ (bench_deploy.sh's folders) and pipeline/ (distill/settings.json,
# filter.json, stages.jsonl; the student's config.json, results.json, metrics.jsonl.gz and
# train.log.gz; the teacher's config.json as teacher_config.json, its size and training in
# teacher.json). Environment: bench_deploy.sh's (REPEAT, THREADS, ...); CT2_FLAVORS defaults
# to dnnl here (the peer users install); SYSTEMS, the systems to run ("teacher
# teacher_shortlist student student_shortlist"; "teacher student_shortlist" is what
# distill_table.py --shapes reads).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
die() { echo "bench_distill: $*" >&2; exit 1; }
[[ $# -eq 2 ]] || { sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 2; }
teacher=$1 student=$2
[[ -d $student/distill ]] || die "$student: not a run scripts/distill.sh made (no distill/)"
shortlist=$student/shortlist.txt
[[ -f $shortlist && -f $student/distill/checkpoint ]] ||
  die "$student: run scripts/distill.sh to its evaluate stage first (shortlist.txt, distill/checkpoint)"
checkpoint_of() {
  local dir=$1
  [[ -f $dir ]] && { echo "$dir"; return; }
  for f in averaged.pt best.pt last.pt; do
    [[ -f $dir/$f ]] && { echo "$dir/$f"; return; }
  done
  die "$dir: no averaged.pt, best.pt or last.pt"
}
out=${OUT:-docs/results/distill_$(basename "$(realpath -m "$student")")}
mkdir -p "$out/pipeline"
export CT2_FLAVORS=${CT2_FLAVORS:-dnnl} TABLE_DOC=none
read -r -a systems <<<"${SYSTEMS:-teacher teacher_shortlist student student_shortlist}"
for system in "${systems[@]}"; do
  [[ $system =~ ^(teacher|teacher_shortlist|student|student_shortlist)$ ]] ||
    die "SYSTEMS: '$system' is not teacher, teacher_shortlist, student or student_shortlist"
done
distinct=$(printf '%s\n' "${systems[@]}" | sort -u | wc -l)
teacher_dir=$teacher
[[ -d $teacher_dir ]] || teacher_dir=$(dirname "${teacher%%,*}")
for f in config.json train.log metrics.jsonl; do
  [[ -f $teacher_dir/$f ]] || die "$teacher_dir/$f is missing: the teacher's run directory is read for its size"
done
for system in "${systems[@]}"; do
  model=$(checkpoint_of "$teacher")
  [[ $system == student* ]] && model=$(cat "$student/distill/checkpoint")
  list=""
  [[ $system == *_shortlist ]] && list=$shortlist
  echo "bench_distill: $system"
  CKPT=$model SHORTLIST=$list OUT=$out/$system scripts/bench/bench_deploy.sh
done
cp "$student"/distill/{settings.json,filter.json,stages.jsonl} "$out/pipeline/"
cp "$student/config.json" "$out/pipeline/"
cp "$teacher_dir/config.json" "$out/pipeline/teacher_config.json"
/usr/bin/python3 - "$teacher_dir" "$out/pipeline/teacher.json" <<'EOF'
import json, re, sys
run, out = sys.argv[1:]
found = re.search(r"(\d+) parameters", open(f"{run}/train.log", encoding="utf-8").read())
steps = [json.loads(l) for l in open(f"{run}/metrics.jsonl") if '"elapsed_s"' in l]
json.dump({"run": run, "parameters": int(found.group(1)) if found else None,
           "steps": steps[-1]["step"], "minutes": round(steps[-1]["elapsed_s"] / 60, 1)},
          open(out, "w"), indent=1)
EOF
gzip -nc "$student/metrics.jsonl" >"$out/pipeline/metrics.jsonl.gz"
[[ -f $student/results.json ]] && cp "$student/results.json" "$out/pipeline/"
gzip -nc "$student/train.log" >"$out/pipeline/train.log.gz"
# Only the whole set of systems is docs/distill.md's table; a subset is a sitting for the shapes
# table (distill_table.py --shapes), its table.md alone.
only=()
((distinct == 4)) || only=(--table-only)
/usr/bin/python3 scripts/bench/distill_table.py --write "${only[@]}" "$out"
echo "bench_distill: $out"
