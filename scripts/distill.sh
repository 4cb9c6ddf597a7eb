#!/usr/bin/env bash
# From a trained teacher to an evaluated, fast student in one command (docs/distill.md):
# sequence-level knowledge distillation, as Firefox Translations' pipeline does it.
#
#   scripts/distill.sh TEACHER [--set KEY=VALUE ...]
#     TEACHER  a run directory or checkpoint (its averaged.pt, else best.pt, else last.pt), or
#              A,B,... for an ensemble of teachers (the tokenizer comes from the first)
#     --set    goes to `nmt train` (the student's config: STUDENT_CONFIG, configs/student.json)
#
# Stages, each skipped when its output is complete, so re-running resumes an interrupted run:
#   translate  the teacher translates the training sources with beam BEAM (5) in chunks of CHUNK
#              (2000) lines; each chunk is written to a .part file and renamed when whole, so no
#              chunk is translated twice and no partial file is ever read as complete. nmt's
#              decoding workers (one per thread) translate a chunk's batches in parallel.
#   filter     drops pairs the teacher translated to nothing and, with FILTER=F (0: off), the
#              fraction F of pairs whose translation the teacher scores worst (mean log-probability
#              per piece under `nmt score`: cross-entropy filtering, as Bergamot does)
#   train      the student learns from the teacher's translations (MIX=both: also from the
#              original targets) with the teacher's tokenizer (a student config naming another
#              tokenizer is refused, naming both)
#   shortlist  `nmt shortlist` learns the lexical shortlist from the distilled pairs
#   evaluate   test_2016_flickr (EVAL_SPLITS): greedy int8 with the shortlist, and beam BEAM
#   export     CTranslate2 model directories (float32; int8 by compute type) with the shortlist
#              as its vocabulary map (vmap.txt)
# Everything goes into the student's run directory: distill/ holds the chunks, the distilled
# corpus, filter.json (what was dropped) and stages.jsonl (each stage's wall seconds).
#
# Environment: STUDENT_CONFIG (configs/student.json), BEAM (5), CHUNK (2000), FILTER (0),
# MIX (distilled | both), SOURCE (the teacher config's training source file), EVAL_SPLITS
# (test_2016_flickr; splits of the student config's data.dir), NMT (build/nmt).
set -euo pipefail

die() { echo "distill.sh: $*" >&2; exit 1; }

# Appends {"stage": NAME, "seconds": S} to the run's stages.jsonl.
record_stage() {
  printf '{"stage": "%s", "seconds": %s}\n' "$1" "$2" >>"$work/stages.jsonl"
}

# Runs stage NAME (a function) unless DONE_FILE exists, timing it.
stage() {
  local name=$1 done_file=$2 start end
  if [[ -e $done_file ]]; then
    echo "distill.sh: $name: done ($done_file)"
    return
  fi
  echo "distill.sh: $name"
  start=$(date +%s.%N)
  "stage_$name"
  end=$(date +%s.%N)
  record_stage "$name" "$(/usr/bin/python3 -c "print(round($end - $start, 1))")"
}

stage_translate() {
  mkdir -p "$work/src" "$work/hyp"
  if [[ ! -e $work/src/.complete ]]; then
    rm -f "$work"/src/chunk_*
    if [[ $source == *.gz ]]; then gzip -dc "$source"; else cat "$source"; fi |
      split -l "$chunk" -d -a 5 - "$work/src/chunk_"
    touch "$work/src/.complete"
  fi
  local chunks=("$work"/src/chunk_*) done=0 part
  for part in "${chunks[@]}"; do
    local name hyp
    name=$(basename "$part")
    hyp=$work/hyp/$name
    if [[ ! -e $hyp ]]; then
      "$nmt" translate --checkpoint "$teacher" --beam "$beam" --input "$part" \
        --output "$hyp.part" 2>>"$work/translate.log" ||
        die "the teacher failed on $part: see $work/translate.log"
      [[ $(wc -l <"$hyp.part") == $(wc -l <"$part") ]] ||
        die "$hyp.part has $(wc -l <"$hyp.part") lines for $(wc -l <"$part") sources"
      mv "$hyp.part" "$hyp"
      echo "distill.sh: translate: translated $name ($((done + 1))/${#chunks[@]})"
    else
      echo "distill.sh: translate: kept $name ($((done + 1))/${#chunks[@]}), translated before"
    fi
    done=$((done + 1))
  done
  cat "$work"/src/chunk_* >"$work/source.all"
  cat "$work"/hyp/chunk_* >"$work/teacher.all.part"
  mv "$work/teacher.all.part" "$work/teacher.all"
}

stage_filter() {
  local scores=/dev/null
  if [[ $filter != 0 ]]; then
    scores=$work/teacher.scores
    "$nmt" score --checkpoint "$teacher" --src "$work/source.all" --tgt "$work/teacher.all" \
      --only mean >"$scores.part"
    mv "$scores.part" "$scores"
  fi
  /usr/bin/python3 - "$work" "$filter" "$scores" <<'PYEOF'
import json, math, os, sys
work, fraction, scores_file = sys.argv[1], float(sys.argv[2]), sys.argv[3]
src = open(os.path.join(work, "source.all"), encoding="utf-8").read().split("\n")[:-1]
hyp = open(os.path.join(work, "teacher.all"), encoding="utf-8").read().split("\n")[:-1]
assert len(src) == len(hyp), (len(src), len(hyp))
keep = [bool(s.strip()) and bool(h.strip()) for s, h in zip(src, hyp)]
empty = len(src) - sum(keep)
dropped = 0
if fraction > 0:
    scores = [float(x) for x in open(scores_file).read().split()]
    assert len(scores) == len(src), (len(scores), len(src))
    ranked = sorted((s if not math.isnan(s) else -math.inf, i) for i, s in enumerate(scores) if keep[i])
    for _, i in ranked[: int(fraction * len(ranked) + 0.5)]:
        keep[i] = False
        dropped += 1
for name, lines in (("train.src", src), ("train.tgt", hyp)):
    with open(os.path.join(work, name + ".part"), "w", encoding="utf-8") as out:
        out.writelines(line + "\n" for line, k in zip(lines, keep) if k)
for name in ("train.src", "train.tgt"):
    os.replace(os.path.join(work, name + ".part"), os.path.join(work, name))
report = {"pairs": len(src), "empty_dropped": empty, "filter": fraction,
          "score_dropped": dropped, "kept": sum(keep)}
json.dump(report, open(os.path.join(work, "filter.json"), "w"), indent=1)
print("distill.sh: filter:", json.dumps(report))
PYEOF
}

stage_train() {
  if [[ -e $run_dir/last.pt ]]; then
    "$nmt" train --resume "$run_dir" "${train_args[@]}"
  else
    "$nmt" train --config "$student_config" "${student_data[@]}" "${train_args[@]}"
  fi
  [[ -e $run_dir/averaged.pt || -e $run_dir/best.pt ]] || die "the student left no checkpoint"
  touch "$work/train.done"
}

stage_shortlist() {
  "$nmt" shortlist --checkpoint "$run_dir" --src "$work/train.src" --tgt "$work/train.tgt" \
    --output "$run_dir/shortlist.txt"
}

# The student's model, as scripts/run.sh chooses it: averaged.pt, or best.pt when there is none or
# when the trainer found the average validating worse than the final weights. Recorded in
# distill/checkpoint for the stages after it (and scripts/bench/bench_distill.sh).
student_checkpoint() {
  local checkpoint=$run_dir/averaged.pt
  if [[ ! -e $checkpoint ]] || [[ $(/usr/bin/python3 -c 'import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if "\"averaged\"" in l]
print(records[-1].get("better_than_final") if records else None)' "$run_dir/metrics.jsonl") == False ]]; then
    checkpoint=$run_dir/best.pt
  fi
  echo "$checkpoint" >"$work/checkpoint"
  echo "$checkpoint"
}

stage_evaluate() {
  local checkpoint
  checkpoint=$(student_checkpoint)
  "$nmt" evaluate --checkpoint "$checkpoint" --split "$eval_splits" --beam 1 \
    --quantization int8 --shortlist "$run_dir/shortlist.txt" \
    --json "$work/results.int8_greedy_shortlist.json"
  "$nmt" evaluate --checkpoint "$checkpoint" --split "$eval_splits" --beam "$beam" \
    --json "$run_dir/results.json"
}

stage_export() {
  local checkpoint
  checkpoint=$(student_checkpoint)
  "$nmt" export --checkpoint "$checkpoint" --format ctranslate2 --shortlist \
    "$run_dir/shortlist.txt" --output "$run_dir/ctranslate2"
}

main() {
  root=$(cd "$(dirname "$0")/.." && pwd)
  cd "$root"
  [[ $# -ge 1 && $1 != -h && $1 != --help ]] || { sed -n '2,30s/^# \{0,1\}//p' "$0"; exit 0; }
  teacher=$1
  shift
  train_args=("$@")
  nmt=${NMT:-build/nmt}
  student_config=${STUDENT_CONFIG:-configs/student.json}
  beam=${BEAM:-5}
  chunk=${CHUNK:-2000}
  filter=${FILTER:-0}
  mix=${MIX:-distilled}
  eval_splits=${EVAL_SPLITS:-test_2016_flickr}
  [[ $chunk =~ ^[1-9][0-9]*$ ]] || die "CHUNK=$chunk: lines per chunk, a whole number >= 1"
  [[ $beam =~ ^[1-9][0-9]*$ ]] || die "BEAM=$beam: a beam size, a whole number >= 1"
  [[ $filter =~ ^(0|0?\.[0-9]+)$ ]] || die "FILTER=$filter: a fraction of pairs in [0, 1)"
  [[ $mix == distilled || $mix == both ]] || die "MIX=$mix: distilled | both"
  [[ -f $student_config ]] || die "STUDENT_CONFIG=$student_config: no such file"
  [[ -x "$nmt" ]] || scripts/setup.sh

  # The teacher's run directory: its config (training source) and tokenizer.
  local first=${teacher%%,*} teacher_dir
  if [[ -d $first ]]; then teacher_dir=$first; else teacher_dir=$(dirname "$first"); fi
  [[ -f $teacher_dir/config.json ]] || die "$first: no config.json beside the teacher"
  local spm=$teacher_dir/spm.model
  [[ -f $spm ]] || die "$teacher_dir: no spm.model (a teacher with a joint vocabulary)"
  local teacher_info
  teacher_info=$(/usr/bin/python3 - "$teacher_dir/config.json" <<'PYEOF'
import json, os, sys
d = json.load(open(sys.argv[1]))["data"]
train = d["train"][0] if d["train"] else "train"
name = train if isinstance(train, str) else train.get("src", "")
if isinstance(train, str) or "split" in (train if isinstance(train, dict) else {}):
    split = train if isinstance(train, str) else train["split"]
    base = os.path.join(d["dir"], f'{split}.{d["src_lang"]}')
    name = base + ".gz" if os.path.exists(base + ".gz") else base
print(name)
print(d.get("spm_model_tgt", ""))
PYEOF
)
  source=${SOURCE:-$(sed -n 1p <<<"$teacher_info")}
  [[ -z $(sed -n 2p <<<"$teacher_info") ]] ||
    die "$teacher_dir: the teacher has separate source and target tokenizers; distill.sh needs a joint one"
  [[ -f $source ]] || die "SOURCE=$source: no such file (the teacher's training source)"

  # The student's run directory, and its tokenizer: the teacher's.
  local resolved student_spm
  resolved=$("$nmt" train --config "$student_config" "${train_args[@]}" --print-config)
  read -r run_dir student_spm < <(/usr/bin/python3 -c 'import json, sys
c = json.load(sys.stdin)
print(c["train"]["run_dir"], c["data"]["spm_model"] or c["data"]["spm_model_tgt"] or "-")' <<<"$resolved")
  if [[ $student_spm != - && $(realpath -m "$student_spm") != $(realpath -m "$spm") ]]; then
    die "the student's tokenizer ($student_spm, data.spm_model) is not the teacher's ($spm): a student decodes the teacher's pieces; drop the key or give the teacher's"
  fi
  work=$run_dir/distill
  mkdir -p "$work"
  local corpus="{\"src\": \"$work/train.src\", \"tgt\": \"$work/train.tgt\"}"
  [[ $mix == both ]] && corpus+=", \"train\""
  student_data=(--set "data.spm_model=$spm" --set "data.train=[$corpus]")
  printf '{"teacher": "%s", "beam": %s, "chunk": %s, "filter": %s, "mix": "%s", "source": "%s", "student_config": "%s", "train_args": "%s"}\n' \
    "$teacher" "$beam" "$chunk" "$filter" "$mix" "$source" "$student_config" "${train_args[*]}" \
    >"$work/settings.json"

  local start end
  start=$(date +%s.%N)
  stage translate "$work/teacher.all"
  stage filter "$work/filter.json"
  stage train "$work/train.done"
  stage shortlist "$run_dir/shortlist.txt"
  stage evaluate "$run_dir/results.json"
  stage export "$run_dir/ctranslate2"
  end=$(date +%s.%N)
  echo "distill.sh: done in $(/usr/bin/python3 -c "print(round($end - $start))") s; stages in $work/stages.jsonl"
}

main "$@"
exit
