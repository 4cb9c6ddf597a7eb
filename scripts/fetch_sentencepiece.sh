#!/usr/bin/env bash
# Fetches the SentencePiece source into third_party/sentencepiece (git-ignored).
#
# Why: Debian's libsentencepiece.so bundles its own protobuf-lite 3.14 while Debian's LibTorch links
# the system protobuf 3.21; one process loading both dies before main(). Building sentencepiece
# from source against the system protobuf (see cmake/sentencepiece.cmake) removes the clash.
#
# Source order: an existing checkout; Debian's source package (apt, deb-src given on the command
# line so /etc is not touched); the upstream release tarball from GitHub.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/third_party/sentencepiece"
version=0.1.97

if [[ -f "$dest/CMakeLists.txt" ]]; then
  echo "sentencepiece: source already in $dest"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$root/third_party"

fetch_debian() {
  command -v apt-get >/dev/null || return 1
  # The machine's own archive configuration, turned into deb-src entries (same mirrors).
  mkdir -p "$work/lists/partial" "$work/parts"
  [[ -f /etc/apt/sources.list ]] && sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$work/src.list"
  touch "$work/src.list"
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && sed 's/^Types: *deb$/Types: deb-src/' "$f" >"$work/parts/$(basename "$f")"
  done
  for f in /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] && sed -n 's/^deb /deb-src /p' "$f" >"$work/parts/$(basename "$f")"
  done
  local opts=(-q -o "Dir::Etc::SourceList=$work/src.list" -o "Dir::Etc::SourceParts=$work/parts"
              -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::archives=$work")
  apt-get "${opts[@]}" update >/dev/null 2>&1 || return 1
  (cd "$work" && apt-get "${opts[@]}" source --download-only "sentencepiece=$version-3" \
     >/dev/null 2>&1) || return 1
  # The pristine upstream tarball: Debian's patches disable the static library we need.
  tar -xzf "$work/sentencepiece_$version.orig.tar.gz" -C "$work" || return 1
}

fetch_upstream() {
  local url="https://github.com/google/sentencepiece/archive/refs/tags/v$version.tar.gz"
  curl -fsSL "$url" -o "$work/sp.tar.gz" || return 1
  tar -xzf "$work/sp.tar.gz" -C "$work" || return 1
}

if fetch_debian; then
  echo "sentencepiece: fetched $version from Debian's source package"
elif fetch_upstream; then
  echo "sentencepiece: fetched $version from github.com/google/sentencepiece"
else
  echo "error: could not fetch the sentencepiece $version source (Debian deb-src or GitHub);" \
       "put a checkout in $dest" >&2
  exit 1
fi
mv "$work/sentencepiece-$version" "$dest"
echo "sentencepiece: source in $dest"
