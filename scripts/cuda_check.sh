#!/usr/bin/env bash
# Builds nmt against a LibTorch 2.x with CUDA and checks the CUDA path end to end, writing every
# log into LOG_DIR. Made for a GPU machine that has PyTorch (hence LibTorch 2.x) but none of the
# other C++ dependencies: those come as Debian .deb files in DEBS_DIR, unpacked into a private
# prefix (no root, no package manager needed), as the README's Build section describes.
#
#   scripts/cuda_check.sh build    # configure + build build-cuda/ (ninja -k 0: all errors at once)
#   scripts/cuda_check.sh test     # the default test suite (ctest -LE slow) on that build
#   scripts/cuda_check.sh resume   # a resumed CUDA run gives the uninterrupted run's losses
#   scripts/cuda_check.sh bench    # GPU matmul ceiling, training throughput of the default config
#   scripts/cuda_check.sh train    # train the default config on the GPU for TRAIN_MINUTES, then
#                                  # evaluate its averaged.pt (beam 5) on every test set
#   scripts/cuda_check.sh sacrebleu  # rescore the kept hypotheses with the sacrebleu package
#   scripts/cuda_check.sh all      # the six in order
#
# DEBS_DIR is filled on a Debian 12 machine (.gpu/ is git-ignored; scripts/dev/check_cuda_recipe.py
# checks that the list covers every package a required find_package needs):
#   mkdir -p .gpu/multi30k && (cd .gpu && apt-get download libsentencepiece0 libsentencepiece-dev \
#     libcxxopts-dev nlohmann-json3-dev libgtest-dev googletest zlib1g-dev \
#     libcpp-httplib-dev libcpp-httplib0.11 libbrotli1 libgloo-dev libboost1.74-dev \
#     libssl-dev libssl3 \
#     libicu-dev libicu72 libxml2-dev libxml2)   # gloo: multi-process training
#   cp data/multi30k/*.gz .gpu/multi30k/
#
# Environment: TORCH_PREFIX (default: the cmake prefix of python3's torch), DEBS_DIR (default
# .gpu; holds the .deb files and a multi30k/ folder of the raw *.gz files), LOG_DIR (default
# build-cuda/logs), TRAIN_MINUTES (default 5), CONFIG (default configs/multi30k_en_de.json),
# TRAIN_ARGS (more arguments for nmt train, e.g. "--set train.precision=bf16").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build-cuda}
debs=${DEBS_DIR:-.gpu}
logs=${LOG_DIR:-$build/logs}
config=${CONFIG:-configs/multi30k_en_de.json}
minutes=${TRAIN_MINUTES:-5}
deps=/tmp/nmt-deps
export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$logs"

unpack() {
  [[ -d "$deps/usr" ]] && return 0
  compgen -G "$debs/*.deb" >/dev/null || { echo "cuda_check: no .deb files in $debs" >&2; exit 1; }
  for f in "$debs"/*.deb; do dpkg-deb -x "$f" "$deps"; done
}

stage_build() {
  unpack
  local torch_prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')}
  local start=$(date +%s)
  # System sentencepiece (Debian's, from the prefix): the configure-time probe proves it can
  # share a process with this LibTorch. No pkg-config needed (cmake/sentencepiece.cmake).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNMT_SENTENCEPIECE=system \
    -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$deps/usr" 2>&1 | tee "$logs/configure.log"
  cmake --build "$build" -j"$(nproc)" -- -k 0 2>&1 | tee "$logs/build.log"
  echo "cuda_check: built $build in $(( $(date +%s) - start )) s" | tee -a "$logs/build.log"
}

stage_test() {
  # Two threads per test, half as many tests at once as cores: with every test on all cores
  # (16 tests x 16 OpenMP threads on a 16-core machine) the suite ran past 150 s; this way, 20 s.
  OMP_NUM_THREADS=2 ctest --test-dir "$build" -LE slow --output-on-failure \
    -j"$(( $(nproc) > 1 ? $(nproc) / 2 : 1 ))" 2>&1 | tee "$logs/test.log"
}

data() {
  [[ -f data/multi30k/train.en.gz ]] || scripts/get_multi30k.sh --from "$debs/multi30k" data/multi30k
}

stage_bench() {
  data
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
    "$build/nmt" --version
    "$build/nmt" bench matmul --device cuda
    "$build/nmt" bench train --config "$config" --set train.device=cuda --steps 200 --warmup 20
    "$build/nmt" bench train --config "$config" --set train.device=cuda --set train.precision=fp32 \
      --steps 200 --warmup 20
  } 2>&1 | tee "$logs/bench.log"
}

stage_train() {
  data
  local name=cuda_${minutes}min run=checkpoints/cuda_${minutes}min
  rm -rf "$run"
  {
    "$build/nmt" train --config "$config" --device cuda --set train.name="$name" \
      --set train.max_minutes="$minutes" ${TRAIN_ARGS:-}
    # the trainer's own average (train.average_snapshots over the last train.average_window)
    "$build/nmt" evaluate --checkpoint "$run/averaged.pt" --device cuda --beam 5 --length-penalty 2 \
      --split test_2016_flickr,test_2017_flickr,test_2017_mscoco,val --json "$run/results.json"
  } 2>&1 | tee "$logs/train.log"
  cp "$run/metrics.jsonl" "$run/results.json" "$logs/"
}

# A CUDA resume continues the same random streams: the tiny fixture config with
# dropout, 40 steps in one go and 20 + 20 with a resume, must give the same losses. Both runs use
# the same kernels, so what can differ is the random stream; CUDA's atomics (embedding backward)
# may still move the last bits, so the check allows 1e-5 relative. A resume that lost the GPU
# generator's state differs from step 21 on by the dropout noise (about 1e-2).
stage_resume() {
  local dir=$build/resume_check
  rm -rf "$dir"
  local args=(--config configs/tiny.json --device cuda --set data.dir=tests/fixtures
              --set data.train=tiny --set data.valid=tiny_val --set data.vocab_size=150
              --set train.valid_bleu=false --set train.metric=loss --set train.max_epochs=0
              --set train.log_every=1 --set train.precision=fp32)
  {
    "$build/nmt" train "${args[@]}" --set train.run_dir="$dir/whole" --set train.max_steps=40
    "$build/nmt" train "${args[@]}" --set train.run_dir="$dir/halves" --set train.max_steps=20
    "$build/nmt" train --resume "$dir/halves" --set train.max_steps=40
    python3 - "$dir/whole/metrics.jsonl" "$dir/halves/metrics.jsonl" <<'PY'
import json, sys
def losses(path):
    return [r["loss"] for r in map(json.loads, open(path)) if r["kind"] == "train"]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
worst = max(abs(x - y) / abs(x) for x, y in zip(a, b))
print(f"cuda resume: {len(a)} / {len(b)} steps, largest relative loss difference {worst:.2e}")
sys.exit(0 if len(a) == len(b) == 40 and worst < 1e-5 else 1)
PY
  } 2>&1 | tee "$logs/resume.log"
}

# Every kept hypothesis file (docs/results/RUN[/EVAL]/hyp.SPLIT.LANG.gz, and the train stage's
# checkpoints/cuda_Nmin/hyp.SPLIT.LANG) scored again by the sacrebleu package, against the
# numbers in the results.json of the same folder.
stage_sacrebleu() {
  data
  local status=0 hyp rest
  for hyp in docs/results/*/hyp.* docs/results/*/*/hyp.* checkpoints/cuda_"$minutes"min/hyp.*; do
    [[ -f "$hyp" ]] || continue
    [[ -f "$(dirname "$hyp")/results.json" ]] || continue
    rest=${hyp##*/hyp.}
    rest=${rest%.gz}
    python3 scripts/dev/sacrebleu_check.py --results "$(dirname "$hyp")/results.json" \
      --split "${rest%.*}" --hyp "$hyp" --ref "data/multi30k/$rest.gz" || status=1
  done >"$logs/sacrebleu.log" 2>&1
  cat "$logs/sacrebleu.log"
  return $status
}

case "${1:-all}" in
  build) stage_build ;;
  test) stage_test ;;
  bench) stage_bench ;;
  train) stage_train ;;
  sacrebleu) stage_sacrebleu ;;
  resume) stage_resume ;;
  data) data ;;
  all) stage_build; stage_test; stage_resume; stage_bench; stage_train; stage_sacrebleu ;;
  *) echo "cuda_check: unknown stage '$1' (build, test, resume, bench, train, sacrebleu or all)" >&2
     exit 2 ;;
esac
