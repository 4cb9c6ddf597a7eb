#!/usr/bin/env bash
# Proof against the real CTranslate2: builds CTranslate2 from source for the CPU, runs
# its own translator client (ct2-translator) on what `nmt export` writes, and compares its output
# and speed with `nmt translate` on the same checkpoint and the same search.
#
#   scripts/ct2_check.sh source     # export CTranslate2 and its submodules from local git mirrors
#   scripts/ct2_check.sh build      # source, then configure + build + install (Release, Ninja)
#   scripts/ct2_check.sh export     # nmt export of CKPT: float32 and int8 model directories
#   scripts/ct2_check.sh translate  # SPLIT by ct2-translator (float32, int8) and nmt translate,
#                                   # greedy and beam BEAM each, timed, THREADS threads each
#   scripts/ct2_check.sh compare    # scripts/bench/ct2_compare.py: identical lines, BLEU, speed
#   scripts/ct2_check.sh all        # build, export, translate, compare
#
# The build: CTranslate2 (CT2_REF, default v4.8.1) computing as one of its wheels does
# (CT2_FLAVOR), no MKL (not in Debian's main archive), no CUDA, GCC's OpenMP, the CLI client:
#   dnnl      (the default) what `pip install ctranslate2` computes with on x86-64: its wheel is
#             built with MKL and oneDNN, and uses MKL only on a GenuineIntel CPU, so on others
#             every float32 and int8 GEMM goes to oneDNN: -DWITH_DNNL=ON against Debian's
#             libdnnl-dev 2.6.3. One source change: the oneDNN branch of src/ops/conv1d_cpu.cc
#             (Whisper's convolution; translation never calls it) is written for oneDNN 3's
#             API, so its other branch is taken (the build log records the change).
#   openblas  the aarch64 wheel's: -DWITH_OPENBLAS=ON -DWITH_RUY=ON, float32 GEMMs to Debian's
#             OpenBLAS (libopenblas-dev), int8 GEMMs to ruy.
# Everything lands in CT2_BUILD (default build-ct2-<flavor>/, git-ignored): src/ (the sources),
# cmake/ (the build tree), install/ (bin/ct2-translator, lib/libctranslate2.so), logs/,
# models/<run>/, work/<run>/.
# Missing Debian packages are installed with apt-get, as scripts/setup.sh does.
#
# Sources, with no network: CTranslate2 and the submodules its build adds, each exported with
# `git archive` of the commit the parent tree pins, from bare mirrors
# CT2_MIRRORS/<owner>+<name>/repo (default /work/.mirror):
#   OpenNMT+CTranslate2     the tree, at CT2_REF
#   gabime+spdlog           third_party/spdlog        (pinned by CTranslate2)
#   google+cpu_features     third_party/cpu_features  (pinned by CTranslate2)
#   google+ruy              third_party/ruy           (pinned by CTranslate2)
#   jarro2783+cxxopts       third_party/cxxopts       (pinned by CTranslate2; the client's options)
#   pytorch+cpuinfo         third_party/ruy/third_party/cpuinfo  (pinned by ruy; ruy links it)
# CTranslate2's other submodules (googletest, cutlass, thrust) are for tests and CUDA: not needed.
# On a machine with network, a recursive clone does instead (CT2_SOURCE skips the mirrors):
#   git clone --recursive --branch v4.8.1 https://github.com/OpenNMT/CTranslate2 ct2-src
#   CT2_SOURCE=$PWD/ct2-src scripts/ct2_check.sh all
#
# Same search on both sides: length penalty 0 (CTranslate2's length_penalty divides by length^a,
# nmt's is GNMT's ((5 + length) / 6)^a; at 0 both rank by the summed log-probability), pad and bos
# suppressed in CTranslate2 (nmt never emits them), no minimum length (nmt has none), and one
# output limit for every sentence: model.max_len - 1 pieces (nmt --max-len, CTranslate2
# --max_decoding_length). Tokenization: Debian's spm_encode/spm_decode (package sentencepiece,
# 0.1.97 like nmt's own) with the exported SentencePiece model; no eos is appended (CTranslate2
# adds it, config.json add_source_eos). Left different: nmt also ends a beam search once `beam`
# hypotheses have finished, CTranslate2 only once its best candidate has; the batches differ (nmt:
# a token budget, CTranslate2: BATCH_SIZE sentences), so padding can move fp32's last bits.
# Wall time includes loading the model; a run on the first sentence alone gives that start-up
# time, which compare subtracts for the decoding speed.
#
# Results go to OUT (default docs/results/ct2_<run>, <run> = CKPT's run directory):
#   meta.json (checkpoint, CTranslate2 and submodule commits, options, host, date), runs.tsv
#   (every timed command), hyp/<system>.<tgt>.gz, then summary.json, table.md, differences.md.
#
# Environment: CKPT (default checkpoints/multi30k_en_de_window/averaged.pt), NMT (build/nmt),
# CT2_FLAVOR (dnnl), CT2_BUILD (build-ct2-<flavor>), CT2_MIRRORS (/work/.mirror), CT2_SOURCE (a recursive clone; no mirrors),
# CT2_REF (v4.8.1), THREADS (2), BEAM (5), BATCH_SIZE (CTranslate2 --batch_size, 32),
# DATA_DIR (data/multi30k), SPLIT (test_2016_flickr), OUT, SPM_ENCODE / SPM_DECODE (spm_encode /
# spm_decode), SHORTLIST (a lexical shortlist, `nmt shortlist`: nmt decodes with --shortlist,
# CTranslate2 with it exported as vmap.txt and --use_vmap; the run's name gains "_shortlist").
# The goal: float32 outputs identical to nmt's for >= 99% of the
# sentences and BLEU within 0.1, greedy and beam; compare exits 1 when it is missed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

mirrors=${CT2_MIRRORS:-/work/.mirror}
ct2_ref=${CT2_REF:-v4.8.1}
nmt=${NMT:-build/nmt}
ckpt=${CKPT:-checkpoints/multi30k_en_de_window/averaged.pt}
threads=${THREADS:-2}
beam=${BEAM:-5}
batch_size=${BATCH_SIZE:-32}
data_dir=${DATA_DIR:-data/multi30k}
split=${SPLIT:-test_2016_flickr}
spm_encode=${SPM_ENCODE:-spm_encode}
spm_decode=${SPM_DECODE:-spm_decode}
shortlist=${SHORTLIST:-}
[[ -z $shortlist || -f $shortlist ]] || { echo "ct2_check: error: SHORTLIST=$shortlist: no such file" >&2; exit 1; }
# The settings of one build flavor (see the top): flavor, ct2_cmake_flags, ct2_package, and the
# paths build, src_tree, prefix, ct2 and logs. CT2_BUILD names the build of CT2_FLAVOR only.
set_flavor() {
  flavor=$1
  case $flavor in
    dnnl) ct2_cmake_flags=(-DWITH_DNNL=ON -DWITH_OPENBLAS=OFF -DWITH_RUY=OFF) ct2_package=libdnnl-dev ;;
    openblas) ct2_cmake_flags=(-DWITH_DNNL=OFF -DWITH_OPENBLAS=ON -DWITH_RUY=ON)
              ct2_package=libopenblas-dev ;;
    *) echo "ct2_check: error: CT2_FLAVOR=$flavor: choose dnnl (the x86-64 wheel) or openblas" >&2
       exit 2 ;;
  esac
  build=build-ct2-$flavor
  [[ -n ${CT2_BUILD:-} && $flavor == "${CT2_FLAVOR:-dnnl}" ]] && build=$CT2_BUILD
  src_tree=${CT2_SOURCE:-$build/src/CTranslate2}
  prefix=$(realpath -m "$build/install")  # absolute: it becomes the install prefix and RPATH
  ct2=$build/install/bin/ct2-translator  # relative when CT2_BUILD is (runs.tsv shows it)
  logs=$build/logs
}
set_flavor "${CT2_FLAVOR:-dnnl}"
# The submodules the CPU build adds (CMakeLists.txt: add_subdirectory, cli/CMakeLists.txt).
submodules=(third_party/spdlog third_party/cpu_features third_party/ruy third_party/cxxopts)

die() { echo "ct2_check: error: $*" >&2; exit 1; }

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }

# The run directory's name: CKPT itself when it is a directory, else the folder holding it.
run_name() {
  local dir=$ckpt
  [[ -d $dir ]] || dir=$(dirname "$ckpt")
  echo "$(basename "$(realpath -m "$dir")")${shortlist:+_shortlist}"
}

install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "ct2_check: installing ${missing[*]}"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The bare mirror of a GitHub URL (https://github.com/owner/name[.git]): CT2_MIRRORS/owner+name/repo.
mirror_of() {
  local url=${1%.git} name
  name=${url#https://github.com/}
  [[ $name != "$url" && $name == */* ]] || die "submodule URL '$1' is not a github.com URL"
  local dir=$mirrors/${name/\//+}
  [[ -d $dir/repo ]] && dir=$dir/repo
  git --git-dir="$dir" rev-parse --git-dir >/dev/null 2>&1 ||
    die "no git mirror of $name at $dir: fetch github:$name there (or set CT2_MIRRORS," \
      "or give a recursive clone as CT2_SOURCE; see --help)"
  echo "$dir"
}

# The commit that tree COMMIT of mirror GIT pins at submodule PATH, and that submodule's URL.
pinned_commit() {
  git --git-dir="$1" ls-tree "$2" "$3" | awk '$2 == "commit" { print $3 }'
}
submodule_url() {
  local name  # .gitmodules names a submodule freely (ruy: "cpuinfo"): find it by its path
  name=$(git --git-dir="$1" config --blob "$2:.gitmodules" --get-regexp '^submodule\..*\.path$' |
    awk -v path="$3" '$2 == path { sub(/^submodule\./, "", $1); sub(/\.path$/, "", $1); print $1; exit }')
  [[ -n $name ]] && git --git-dir="$1" config --blob "$2:.gitmodules" --get "submodule.$name.url"
}

# Exports COMMIT of the mirror of URL into DEST (which must be empty or missing).
export_tree() {
  local url=$1 commit=$2 dest=$3 git
  git=$(mirror_of "$url")
  git --git-dir="$git" cat-file -e "$commit^{commit}" 2>/dev/null ||
    die "$git lacks commit $commit (pinned for $dest): fetch a newer snapshot of $url"
  mkdir -p "$dest"
  git --git-dir="$git" archive "$commit" | tar -x -C "$dest"
  printf '%s\t%s\t%s\n' "${dest#"$src_tree"/}" "$url" "$commit" >>"$build/src/sources.tsv.tmp"
}

# Exports submodule PATH of the tree in mirror GIT at COMMIT into src_tree/PREFIX/PATH.
export_submodule() {
  local git=$1 commit=$2 path=$3 dest=$4 pinned url
  pinned=$(pinned_commit "$git" "$commit" "$path")
  [[ -n $pinned ]] || die "$git: $path is not a submodule at $commit"
  url=$(submodule_url "$git" "$commit" "$path") || die "$git: no URL for $path in .gitmodules"
  export_tree "$url" "$pinned" "$dest"
}

stage_source() {
  if [[ -n ${CT2_SOURCE:-} ]]; then
    [[ -f $src_tree/CMakeLists.txt &&
       -f $src_tree/third_party/ruy/third_party/cpuinfo/CMakeLists.txt ]] ||
      die "CT2_SOURCE=$src_tree is not a recursive clone of CTranslate2" \
        "(git submodule update --init --recursive)"
    mkdir -p "$build/src"
    printf '.\t%s\t%s\n' "$(git -C "$src_tree" remote get-url origin 2>/dev/null || echo "$src_tree")" \
      "$(git -C "$src_tree" rev-parse HEAD 2>/dev/null || echo unknown)" >"$build/src/sources.tsv"
    git -C "$src_tree" submodule status --recursive 2>/dev/null |
      awk '{ sub(/^[-+ U]/, ""); printf "%s\t(clone)\t%s\n", $2, $1 }' >>"$build/src/sources.tsv" || true
    echo "ct2_check: sources from $src_tree (CT2_SOURCE)"
    return 0
  fi
  local ct2_git commit ruy_git ruy_commit
  ct2_git=$(mirror_of https://github.com/OpenNMT/CTranslate2)
  commit=$(git --git-dir="$ct2_git" rev-parse --verify -q "$ct2_ref^{commit}") ||
    die "$ct2_git has no $ct2_ref (CT2_REF): fetch a newer snapshot of OpenNMT/CTranslate2"
  if [[ -f $src_tree/CMakeLists.txt && -f $build/src/sources.tsv &&
        $(head -1 "$build/src/sources.tsv" | cut -f3) == "$commit" ]]; then
    echo "ct2_check: sources of CTranslate2 $ct2_ref ($commit) already in $src_tree"
    return 0
  fi
  rm -rf "$build/src"
  mkdir -p "$src_tree"
  git --git-dir="$ct2_git" archive "$commit" | tar -x -C "$src_tree"
  printf '.\t%s\t%s\n' https://github.com/OpenNMT/CTranslate2 "$commit" >"$build/src/sources.tsv.tmp"
  local path
  for path in "${submodules[@]}"; do
    export_submodule "$ct2_git" "$commit" "$path" "$src_tree/$path"
  done
  ruy_git=$(mirror_of "$(submodule_url "$ct2_git" "$commit" third_party/ruy)")
  ruy_commit=$(pinned_commit "$ct2_git" "$commit" third_party/ruy)
  export_submodule "$ruy_git" "$ruy_commit" third_party/cpuinfo \
    "$src_tree/third_party/ruy/third_party/cpuinfo"
  mv "$build/src/sources.tsv.tmp" "$build/src/sources.tsv"
  echo "ct2_check: CTranslate2 $ct2_ref and its submodules in $src_tree:"
  cat "$build/src/sources.tsv"
}

stage_build() {
  install_missing build-essential cmake ninja-build git "$ct2_package"
  stage_source
  mkdir -p "$logs"
  if [[ $flavor == dnnl ]] && grep -q '^#ifdef CT2_WITH_DNNL' "$src_tree/src/ops/conv1d_cpu.cc"; then
    sed -i 's|^#ifdef CT2_WITH_DNNL|#if 0  // nmt ct2_check.sh: oneDNN 3 API; Debian has oneDNN 2.6|' \
      "$src_tree/src/ops/conv1d_cpu.cc"
    echo "ct2_check: src/ops/conv1d_cpu.cc: its oneDNN 3 branch left out (Whisper only)" |
      tee "$logs/source_change.log"
  fi
  local start
  start=$(date +%s)
  # Tests, benchmarks and tools of cpuinfo off: they would download googletest and benchmark.
  cmake -S "$src_tree" -B "$build/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_INSTALL_RPATH="$prefix/lib" \
    -DWITH_MKL=OFF -DWITH_CUDA=OFF "${ct2_cmake_flags[@]}" \
    -DOPENMP_RUNTIME=COMP -DBUILD_CLI=ON -DBUILD_TESTS=OFF \
    -DCPUINFO_BUILD_UNIT_TESTS=OFF -DCPUINFO_BUILD_MOCK_TESTS=OFF \
    -DCPUINFO_BUILD_BENCHMARKS=OFF -DCPUINFO_BUILD_TOOLS=OFF 2>&1 | tee "$logs/configure.log"
  cmake --build "$build/cmake" -j"$(nproc)" 2>&1 | tee "$logs/build.log"
  cmake --install "$build/cmake" 2>&1 | tee "$logs/install.log"
  echo "ct2_check: built and installed CTranslate2 into $prefix in $(( $(date +%s) - start )) s" |
    tee -a "$logs/build.log"
  "$ct2" --help >/dev/null || die "$ct2 does not run (see $logs/)"
}

need_nmt() {
  [[ -x $nmt ]] || die "$nmt is not an executable: build nmt first (scripts/setup.sh) or set NMT"
  [[ -e $ckpt ]] || die "$ckpt: no such checkpoint (set CKPT to a checkpoint file or run directory)"
}

# What an export was made from: the checkpoint's path, size and time, and the shortlist's.
export_source() {
  local f name
  for f in "$ckpt" ${shortlist:+"$shortlist"}; do
    if [[ -d $f ]]; then  # a run directory: nmt reads its averaged.pt, else best.pt, else last.pt
      for name in averaged.pt best.pt last.pt; do [[ -f $f/$name ]] && { f=$f/$name; break; }; done
    fi
    echo "$(realpath -m "$f") $(stat -c '%s %Y' "$f" 2>/dev/null)"
  done
}

# Whether models/<run>/ holds both exports of this very checkpoint (and shortlist): the run's
# name alone does not say which of its checkpoints was exported.
export_current() {
  local models=$build/models/$(run_name)
  [[ -f $models/float32/model.bin && -f $models/int8/model.bin && -f $models/source ]] &&
    [[ $(cat "$models/source") == "$(export_source)" ]]
}

stage_export() {
  need_nmt
  local models q
  models=$build/models/$(run_name)
  mkdir -p "$models"
  rm -f "$models/source"
  for q in float32 int8; do
    rm -rf "${models:?}/$q"
    "$nmt" export --checkpoint "$ckpt" --format ctranslate2 --output "$models/$q" --quantization "$q" \
      ${shortlist:+--shortlist "$shortlist"}
  done
  export_source >"$models/source"
}

# One field of the checkpoint run's config.json (e.g. model.max_len), for the output limit.
config_value() {
  local dir=$ckpt
  [[ -d $dir ]] || dir=$(dirname "$ckpt")
  [[ -f $dir/config.json ]] ||
    die "$dir/config.json is missing: the run's config gives model.max_len and the languages"
  /usr/bin/python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))
for key in sys.argv[2].split("."):
    value = value[key]
print(value)' "$dir/config.json" "$1"
}

# The piece of id ID in an exported model directory's (target) vocabulary.
vocab_piece() {
  local file=$1/shared_vocabulary.json
  [[ -f $file ]] || file=$1/target_vocabulary.json
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])])' "$file" "$2"
}

# Runs COMMAND..., appending "system<TAB>kind<TAB>wall seconds<TAB>sentences<TAB>command" to
# OUT/runs.tsv. Usage: timed SYSTEM KIND SENTENCES COMMAND...
timed() {
  local system=$1 kind=$2 sentences=$3 start end
  shift 3
  echo "ct2_check: $system ($kind)"
  start=$(date +%s.%N)
  "$@" 2>>"$work/$system.$kind.log" || die "$system ($kind) failed: see $work/$system.$kind.log"
  end=$(date +%s.%N)
  printf '%s\t%s\t%s\t%s\t%s\n' "$system" "$kind" \
    "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')" "$sentences" "$*" \
    >>"$out/runs.tsv"
}

# The tokens of the search settings, one system name per beam: greedy or beam<N>.
search_name() { if (($1 == 1)); then echo greedy; else echo "beam$1"; fi; }

# The test set as both engines read it, into $work (the caller sets it and $models, the export's
# directory): src.txt and first.txt (text), src.pieces and first.pieces (SentencePiece pieces).
# Sets src_lang, tgt_lang, limit (the output limit, model.max_len - 1), max_len, tgt_spm,
# sentences, and pad and bos (the pieces CTranslate2 must not emit).
prepare_inputs() {
  if ! command -v "$spm_encode" >/dev/null || ! command -v "$spm_decode" >/dev/null; then
    install_missing sentencepiece  # Debian's spm_encode and spm_decode
  fi
  src_lang=$(config_value data.src_lang)
  tgt_lang=$(config_value data.tgt_lang)
  max_len=$(config_value model.max_len)
  limit=$((max_len - 1))
  local source=$data_dir/$split.$src_lang.gz
  [[ -f $source && -f $data_dir/$split.$tgt_lang.gz ]] ||
    die "$source or its reference is missing (scripts/get_multi30k.sh, or set DATA_DIR/SPLIT)"
  local src_spm=$models/float32/sentencepiece.model
  tgt_spm=$src_spm
  [[ -f $src_spm ]] || { src_spm=$models/float32/source.spm; tgt_spm=$models/float32/target.spm; }
  zcat "$source" >"$work/src.txt"
  head -1 "$work/src.txt" >"$work/first.txt"
  sentences=$(wc -l <"$work/src.txt")
  "$spm_encode" --model="$src_spm" --output_format=piece <"$work/src.txt" >"$work/src.pieces"
  head -1 "$work/src.pieces" >"$work/first.pieces"
  pad=$(vocab_piece "$models/float32" 0)
  bos=$(vocab_piece "$models/float32" 2)
}

# The commands of the one search both engines run (length penalty 0, the output limit, pad and
# bos suppressed; see the top), into the array `cmd`; prepare_inputs sets what they read.
# Usage: ct2_command COMPUTE BEAM INPUT OUTPUT INTRA_THREADS INTER_THREADS BATCH_SIZE BATCH_TYPE
ct2_command() {
  # OpenBLAS (fp32 GEMMs) keeps its own threads: CTranslate2 sets only OpenMP's and ruy's.
  cmd=(env OPENBLAS_NUM_THREADS="$5" "$ct2" --model "$models/$1" --src "$3" --out "$4"
       --device cpu --compute_type "$1" --intra_threads "$5" --inter_threads "$6"
       --beam_size "$2" --length_penalty 0 --batch_size "$7" --batch_type "$8"
       --max_input_length "$max_len" --max_decoding_length "$limit" --min_decoding_length 0
       --suppress_sequences "$pad,$bos" ${shortlist:+--use_vmap})
}
# Usage: nmt_command BEAM INPUT OUTPUT [more nmt translate options]
nmt_command() {
  cmd=("$nmt" translate --checkpoint "$ckpt" --device cpu --precision fp32 --threads "$threads"
       --beam "$1" --nbest 1 --length-penalty 0 --early-stopping=false --max-len "$limit"
       --input "$2" --output "$3" ${shortlist:+--shortlist "$shortlist"} "${@:4}")
}

stage_translate() {
  need_nmt
  [[ -x $ct2 ]] || die "$ct2 is missing: run 'scripts/ct2_check.sh build' first"
  local name models src_lang tgt_lang max_len limit tgt_spm sentences pad bos
  name=$(run_name)
  models=$build/models/$name
  export_current ||
    die "$models/{float32,int8} missing or exported from another checkpoint: run 'scripts/ct2_check.sh export' first"
  out=${OUT:-docs/results/ct2_$name}
  work=$build/work/$name
  rm -rf "$work" "$out/hyp" "$out/runs.tsv"
  mkdir -p "$work" "$out/hyp"
  prepare_inputs

  local q b system input n kind cmd
  for q in float32 int8; do
    for b in 1 "$beam"; do
      system=ct2_${q}_$(search_name "$b")
      for kind in startup full; do
        if [[ $kind == full ]]; then input=$work/src.pieces n=$sentences
        else input=$work/first.pieces n=1; fi
        ct2_command "$q" "$b" "$input" "$work/$system.$kind.pieces" "$threads" 1 "$batch_size" \
          examples
        timed "$system" "$kind" "$n" "${cmd[@]}"
      done
      "$spm_decode" --model="$tgt_spm" --input_format=piece <"$work/$system.full.pieces" |
        gzip -n >"$out/hyp/$system.$tgt_lang.gz"
    done
  done
  for b in 1 "$beam"; do
    system=nmt_$(search_name "$b")
    for kind in startup full; do
      if [[ $kind == full ]]; then input=$work/src.txt n=$sentences
      else input=$work/first.txt n=1; fi
      nmt_command "$b" "$input" "$work/$system.$kind.txt"
      timed "$system" "$kind" "$n" "${cmd[@]}"
    done
    gzip -n <"$work/$system.full.txt" >"$out/hyp/$system.$tgt_lang.gz"
  done
  write_meta "$out/meta.json" "$name" "$src_lang" "$tgt_lang" "$limit"
}

# OUT/meta.json: what was run, where and on what (read by scripts/bench/ct2_compare.py).
write_meta() {
  local sources=""
  [[ -f $build/src/sources.tsv ]] && sources=$build/src/sources.tsv
  NMT_SCRIPTS=$root/scripts /usr/bin/python3 - "$@" "$ckpt" "$split" "$data_dir" "$threads" "$beam" "$batch_size" \
    "$ct2_ref" "$sources" "$("$nmt" --version 2>&1 | head -1)" "$flavor" "${ct2_cmake_flags[*]}" <<'EOF'
import json, os, sys
sys.path.insert(0, os.environ["NMT_SCRIPTS"])
from host_info import host_info  # scripts/host_info.py
(path, name, src_lang, tgt_lang, limit, ckpt, split, data_dir, threads, beam, batch_size, ct2_ref, sources,
 nmt_version, flavor, flags) = sys.argv[1:]
rows = [line.rstrip("\n").split("\t") for line in open(sources)] if sources else []
json.dump({
    "run": name, "checkpoint": ckpt, "split": split, "data_dir": data_dir,
    "src_lang": src_lang, "tgt_lang": tgt_lang,
    "threads": int(threads), "beam": int(beam), "ct2_batch_size": int(batch_size),
    "max_decoding_length": int(limit), "length_penalty": 0,
    "ctranslate2": {"ref": ct2_ref, "flavor": flavor,
                    "sources": [{"path": p, "url": u, "commit": c} for p, u, c in rows],
                    "cmake": f"-DWITH_MKL=OFF -DWITH_CUDA=OFF {flags} -DOPENMP_RUNTIME=COMP "
                             "-DBUILD_CLI=ON, Release"},
    "nmt": nmt_version, **host_info(),
    "env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS",
                                       "OMP_NUM_THREADS", "OMP_WAIT_POLICY") if k in os.environ},
}, open(path, "w"), indent=2)
EOF
}

stage_compare() {
  local name
  name=$(run_name)
  out=${OUT:-docs/results/ct2_$name}
  [[ -f $out/runs.tsv && -f $out/meta.json ]] ||
    die "$out has no runs: run 'scripts/ct2_check.sh translate' first"
  /usr/bin/python3 scripts/bench/ct2_compare.py "$out"
}

# Sourced (scripts/bench/bench_deploy.sh): the settings, helpers and stages above, nothing run.
[[ ${BASH_SOURCE[0]} == "$0" ]] || return 0

case "${1:-}" in
  source) stage_source ;;
  build) stage_build ;;
  export) stage_export ;;
  translate) stage_translate ;;
  compare) stage_compare ;;
  all) stage_build; stage_export; stage_translate; stage_compare ;;
  -h|--help) usage ;;
  "") usage >&2; exit 2 ;;
  *) echo "ct2_check: unknown stage '$1' (source, build, export, translate, compare or all; see --help)" >&2
     exit 2 ;;
esac
