#!/usr/bin/env bash
# Puts the Multi30k task-1 raw files (gzipped, as the reader reads them) into DEST and verifies
# their line counts.
#
# usage: scripts/get_multi30k.sh [--from DIR] [DEST]      (DEST default: data/multi30k)
#
# Source, first that applies: --from DIR; $MULTI30K_DIR; ../shared/data/multi30k next to the repo
# root; otherwise a download from github.com/multi30k/dataset (data/task1/raw). Files already in
# DEST with the right line counts are left alone, so running it twice does nothing the second time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
upstream="https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
from="${MULTI30K_DIR:-}"
dest=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) [[ $# -ge 2 ]] || { echo "error: --from needs a directory" >&2; exit 2; }
            from="$2"; shift 2 ;;
    --from=*) from="${1#--from=}"; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [[ -z "$dest" ]] || { echo "error: more than one DEST given ('$dest', '$1')" >&2; exit 2; }
       dest="$1"; shift ;;
  esac
done
dest="${dest:-$root/data/multi30k}"
if [[ -z "$from" && -d "$root/../shared/data/multi30k" ]]; then
  from=$(cd "$root/../shared/data/multi30k" && pwd)
fi
if [[ -n "$from" && ! -d "$from" ]]; then
  echo "error: source directory '$from' does not exist (from --from or MULTI30K_DIR)" >&2
  exit 1
fi

# Expected lines per split (every language of a split has the same count).
declare -A lines=([train]=29000 [val]=1014 [test_2016_flickr]=1000 [test_2017_flickr]=1000
                  [test_2017_mscoco]=461)
declare -A langs=([train]="en de fr cs" [val]="en de fr cs" [test_2016_flickr]="en de fr cs"
                  [test_2017_flickr]="en de fr" [test_2017_mscoco]="en de fr")
splits=(train val test_2016_flickr test_2017_flickr test_2017_mscoco)

count_lines() { zcat -- "$1" 2>/dev/null | wc -l; }

# Copies or downloads one file to $2 and checks it has $3 lines; a temp name until verified, so
# neither an interrupted run nor a bad source leaves a wrong file in DEST.
fetch() {
  local name="$1" target="$2" expected="$3" tmp="$2.part" got
  if [[ -n "$from" ]]; then
    [[ -f "$from/$name" ]] || { echo "error: $from/$name is missing" >&2; return 1; }
    cp -- "$from/$name" "$tmp"
  else
    curl -fsSL --retry 3 -o "$tmp" "$upstream/$name" ||
      { rm -f "$tmp"; echo "error: could not download $upstream/$name" >&2; return 1; }
  fi
  got=$(count_lines "$tmp")
  if [[ "$got" -ne "$expected" ]]; then
    rm -f -- "$tmp"
    echo "error: ${from:-$upstream}/$name has $got lines, expected $expected (corrupt or wrong file)" >&2
    return 1
  fi
  mv -- "$tmp" "$target"
}

mkdir -p "$dest"
kept=0 fetched=0 failed=0
for split in "${splits[@]}"; do
  for lang in ${langs[$split]}; do
    name="$split.$lang.gz" expected="${lines[$split]}" target="$dest/$split.$lang.gz"
    if [[ -f "$target" && "$(count_lines "$target")" -eq "$expected" ]]; then
      echo "ok       $name ($expected lines, already present)"
      kept=$((kept + 1)); continue
    fi
    if ! fetch "$name" "$target" "$expected"; then failed=$((failed + 1)); continue; fi
    echo "fetched  $name ($expected lines, from ${from:-$upstream})"
    fetched=$((fetched + 1))
  done
done

if [[ $failed -gt 0 ]]; then
  echo "error: $failed file(s) missing or with wrong line counts in $dest" >&2
  exit 1
fi
echo "multi30k: $((kept + fetched)) files verified in $dest ($fetched fetched, $kept already present)"
