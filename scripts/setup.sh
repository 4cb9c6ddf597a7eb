#!/usr/bin/env bash
# Sets nmt up on Debian 12 from nothing but the base system, git, cmake and a compiler:
# installs the missing Debian packages, fetches the sentencepiece source (see
# cmake/sentencepiece.cmake for why), configures and builds Release into build/.
# Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh                    # packages + build
#   scripts/setup.sh -- -DNMT_WERROR=ON # extra CMake arguments after --
#   BUILD_DIR=build-asan scripts/setup.sh -- -DNMT_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug
#   CMAKE_PREFIX_PATH=/opt/libtorch scripts/setup.sh   # a LibTorch 2.x instead of Debian's 1.13
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
[[ "${1:-}" == "--" ]] && shift

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl
  libtorch-dev libopenblas0-pthread            # LibTorch 1.13 (CPU) and a fast BLAS for it
  libprotobuf-dev protobuf-compiler zlib1g-dev # sentencepiece from source; gzip corpora
  libsentencepiece-dev libcxxopts-dev nlohmann-json3-dev libgtest-dev
  libboost-dev libssl-dev                      # nmt serve: Boost.Beast, OpenSSL (optional for the build)
  libcpp-httplib-dev                           # tests: nmt serve's HTTP(S) client
  strace                                       # tests: the fsync/rename order of checkpoint writes
  libgloo-dev                                  # multi-process training's c10d Gloo (optional)
  libdnnl-dev                                  # oneDNN: int8 decoding (optional for the build)
  libicu-dev                                   # BLEU's intl tokenizer; sentence splitting, casing
  libxml2-dev                                  # --format html: libxml2's HTML parser
  libjemalloc-dev                              # the nmt binary's allocator (optional for the build)
  libmecab-dev mecab-ipadic-utf8               # BLEU's ja-mecab tokenizer (optional for the build)
  chromium chromium-driver python3-selenium    # tests: nmt serve's page in a headless browser
  python3 python3-numpy python3-matplotlib     # golden-file scripts and the metrics plot
  clang-format                                 # scripts/dev/check_format.sh (CI)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

"$root/scripts/fetch_sentencepiece.sh"

generator=()
[[ -f "$build_dir/CMakeCache.txt" ]] || generator=(-G Ninja)
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
start=$(date +%s)
cmake --build "$build_dir" -j"$(nproc)"
echo "setup: built $build_dir in $(( $(date +%s) - start )) s"
"$build_dir/nmt" --version
