#!/usr/bin/env bash
# nmt against CTranslate2 side by side, in one sitting (docs/deploy.md): the same checkpoint
# (nmt's own and as `nmt export` writes it), the same test set, THREADS threads each, on the grid
#   engine  nmt translate | CTranslate2's ct2-translator as the x86-64 wheel computes (oneDNN,
#           the peer) | as the aarch64 wheel does (OpenBLAS + ruy); CT2_FLAVORS
#   weights float32 | int8   (nmt --quantization int8; CTranslate2 --compute_type int8)
#   search  greedy | beam BEAM
# measuring sentences/s and target tokens/s after start-up, peak RSS and BLEU / chrF2.
#
#   scripts/bench/bench_deploy.sh            # build CTranslate2 and export if missing, run, tabulate
#   scripts/bench/bench_deploy.sh table      # only the table again, from OUT's runs
#
# Each cell runs twice: on the first sentence alone (the start-up: loading the libraries and the
# model) and on the whole set; the speeds are over the difference. The whole grid runs REPEAT
# times (3), round after round, and each cell keeps its fastest start-up and its fastest full
# run: single runs on this 2-core VM vary by ±10% from one minute to the next. Wall time and peak RSS come
# from /usr/bin/time. Target tokens: the pieces of each system's detokenized output under the
# model's own SentencePiece model, so both engines are counted alike. BLEU and chrF2 are
# sacreBLEU's (scripts/reference_metrics.py). nmt decodes with its default workers (one
# single-threaded worker per thread). CTranslate2 runs both of its thread layouts in every cell,
# THREADS translators of one thread (--inter_threads THREADS --intra_threads 1) and one
# translator of THREADS threads (1 x THREADS), OpenBLAS at the intra-op count; the table keeps
# each cell's faster layout (CT2_LAYOUTS: "2x1 1x2" for two threads). Batches of
# CT2_BATCH_SIZE (CT2_BATCH_TYPE: examples or tokens).
#
# CTranslate2 comes from scripts/ct2_check.sh (sourced for its settings and stages: CT2_REF,
# CKPT, NMT, THREADS, BEAM, DATA_DIR, SPLIT, ...): each flavor built from local source mirrors
# if build-ct2-<flavor>/ has no ct2-translator, exported if its model directories are missing. The search is
# the same on both sides, as there (length penalty 0, one output limit, pad and bos suppressed).
#
# Results go to OUT (default docs/results/deploy_<run>): meta.json, runs.jsonl.gz (every timed
# command: wall seconds, peak RSS), hyp/<cell>.<tgt>.gz (with SHORTLIST also CTranslate2's int8
# greedy at batch size 1, <cell>@batch1, untimed); then scripts/bench/deploy_table.py writes
# table.md there and into docs/deploy.md (its section between the deploy-table markers).
# Environment, besides ct2_check.sh's (SHORTLIST among them): TABLE_DOC (deploy.md, or none: the
# table goes to OUT only, for a sitting docs/distill.md gathers), CT2_FLAVORS ("dnnl openblas"),
# CT2_LAYOUTS (inter x intra threads, "THREADSx1 1xTHREADS"), CT2_BATCH_SIZE (32),
# CT2_BATCH_TYPE (examples), REPEAT (3), OUT.
source "$(dirname "$0")/../ct2_check.sh"

ct2_batch_size=${CT2_BATCH_SIZE:-32}
ct2_batch_type=${CT2_BATCH_TYPE:-examples}
read -r -a ct2_flavors <<<"${CT2_FLAVORS:-dnnl openblas}"
read -r -a ct2_layouts <<<"${CT2_LAYOUTS:-${threads}x1 1x${threads}}"
for layout in "${ct2_layouts[@]}"; do
  [[ $layout =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || die "CT2_LAYOUTS: '$layout' is not INTERxINTRA"
done
repeat=${REPEAT:-3}
table_doc=${TABLE_DOC:-deploy.md}
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "REPEAT=$repeat: a whole number of rounds, 1 or more"
name=$(run_name)
out=${OUT:-docs/results/deploy_$name}
work=$build/work/deploy_$name

# Runs COMMAND... under /usr/bin/time, appending one JSON line to OUT/runs.jsonl.
# Usage: measured CELL LAYOUT KIND SENTENCES COMMAND...   (LAYOUT: "" for nmt)
measured() {
  local cell=$1 layout=$2 kind=$3 sentences=$4 times
  shift 4
  echo "bench_deploy: $cell${layout:+ $layout} ($kind)"
  times=$work/$cell$layout.$kind.time
  /usr/bin/time -f '%e %M' -o "$times" "$@" 2>>"$work/$cell$layout.$kind.log" ||
    die "$cell $layout ($kind) failed: see $work/$cell$layout.$kind.log"
  /usr/bin/python3 - "$cell" "$layout" "$kind" "$sentences" "$times" "$*" >>"$out/runs.jsonl" <<'EOF'
import json, sys
cell, layout, kind, sentences, times, command = sys.argv[1:]
wall, rss_kb = open(times).read().split()[-2:]
engine, weights, search = cell.split("_")
print(json.dumps({"engine": engine, "weights": weights, "search": search, "layout": layout,
                  "kind": kind, "sentences": int(sentences), "wall_s": float(wall),
                  "max_rss_mb": round(int(rss_kb) / 1024, 1), "command": command}))
EOF
}

run_grid() {
  need_nmt
  if [[ -n ${CT2_BUILD:-} ]] && ((${#ct2_flavors[@]} > 1)); then
    die "CT2_BUILD names one build; with CT2_FLAVORS of several, leave it unset"
  fi
  local f models
  for f in "${ct2_flavors[@]}"; do
    set_flavor "$f"
    [[ -x $ct2 ]] || stage_build
    models=$build/models/$name
    export_current || stage_export
  done
  local src_lang tgt_lang max_len limit tgt_spm sentences pad bos
  rm -rf "$work" "$out/hyp" "$out/runs.jsonl" "$out/runs.jsonl.gz"
  mkdir -p "$work" "$out/hyp"
  prepare_inputs  # the same for every flavor: it reads the last flavor's export

  local weights b cell kind input n quantization compute cmd round layout
  for ((round = 1; round <= repeat; ++round)); do
    for weights in fp32 int8; do
      for b in 1 "$beam"; do
        quantization=none compute=float32
        [[ $weights == int8 ]] && quantization=int8 compute=int8
        cell=nmt_${weights}_$(search_name "$b")
        for kind in startup full; do
          if [[ $kind == full ]]; then input=$work/src.txt n=$sentences
          else input=$work/first.txt n=1; fi
          nmt_command "$b" "$input" "$work/$cell.$kind.txt" --quantization "$quantization"
          measured "$cell" "" "$kind" "$n" "${cmd[@]}"
        done
        gzip -n <"$work/$cell.full.txt" >"$out/hyp/$cell.$tgt_lang.gz"

        for f in "${ct2_flavors[@]}"; do
          set_flavor "$f"
          models=$build/models/$name
          cell=ct2-${f}_${weights}_$(search_name "$b")
          for layout in "${ct2_layouts[@]}"; do
            for kind in startup full; do
              if [[ $kind == full ]]; then input=$work/src.pieces n=$sentences
              else input=$work/first.pieces n=1; fi
              ct2_command "$compute" "$b" "$input" "$work/$cell$layout.$kind.pieces" \
                "${layout#*x}" "${layout%x*}" "$ct2_batch_size" "$ct2_batch_type"
              measured "$cell" "$layout" "$kind" "$n" "${cmd[@]}"
            done
            "$spm_decode" --model="$tgt_spm" --input_format=piece <"$work/$cell$layout.full.pieces" |
              gzip -n >"$out/hyp/$cell@$layout.$tgt_lang.gz"
          done
        done
      done
    done
  done
  # With a shortlist, CTranslate2's vmap scores the union of a batch's lists, nmt each sentence's
  # own. At batch size 1 the candidates are the same: the int8 greedy outputs docs/distill.md
  # compares with nmt's (hyp/<cell>@batch1; not timed).
  if [[ -n $shortlist ]]; then
    for f in "${ct2_flavors[@]}"; do
      set_flavor "$f"
      models=$build/models/$name
      cell=ct2-${f}_int8_greedy@batch1
      ct2_command int8 1 "$work/src.pieces" "$work/$cell.pieces" 1 "$threads" 1 examples
      "${cmd[@]}" 2>>"$work/$cell.log" || die "$cell failed: see $work/$cell.log"
      "$spm_decode" --model="$tgt_spm" --input_format=piece <"$work/$cell.pieces" |
        gzip -n >"$out/hyp/$cell.$tgt_lang.gz"
    done
  fi
  # Target tokens of every output under the one target model.
  local hyp
  for hyp in "$out"/hyp/*."$tgt_lang".gz; do
    printf '%s\t%s\n' "$(basename "$hyp" ".$tgt_lang.gz")" \
      "$(zcat "$hyp" | "$spm_encode" --model="$tgt_spm" --output_format=piece | wc -w)"
  done >"$out/target_tokens.tsv"
  write_meta "$out/meta.json" "$name" "$src_lang" "$tgt_lang" "$limit"
  gzip -nf "$out/runs.jsonl"  # each line names its whole command: a tenth of the size
  local builds=()
  for f in "${ct2_flavors[@]}"; do
    set_flavor "$f"
    builds+=("$f=${ct2_cmake_flags[*]}")
  done
  /usr/bin/python3 - "$out/meta.json" "$ct2_batch_size" "$ct2_batch_type" "$repeat" \
    "${ct2_layouts[*]}" "${builds[@]}" <<'EOF'
import json, sys
path, size, kind, repeat, layouts, *builds = sys.argv[1:]
meta = json.load(open(path))
meta["ct2_batch_size"], meta["ct2_batch_type"] = int(size), kind
meta["repeat"] = int(repeat)
meta["ct2_layouts"] = layouts.split()
meta["ctranslate2"]["builds"] = dict(b.split("=", 1) for b in builds)
del meta["ctranslate2"]["flavor"], meta["ctranslate2"]["cmake"]
json.dump(meta, open(path, "w"), indent=2)
EOF
}

case "${1:-}" in
  "") run_grid; /usr/bin/python3 scripts/bench/deploy_table.py --write --doc "$table_doc" "$out" ;;
  table) /usr/bin/python3 scripts/bench/deploy_table.py --write --doc "$table_doc" "$out" ;;
  -h|--help) usage ;;
  *) echo "bench_deploy: unknown argument '$1' (none, table or --help)" >&2; exit 2 ;;
esac
