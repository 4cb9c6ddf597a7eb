#!/usr/bin/env bash
# Puts a public parallel corpus that nmt was not tuned on into DEST as plain split files
# (train/dev/test.<lang>, as data.dir reads them) and verifies their line counts.
#
# usage: scripts/get_corpus.sh [--from GIT_DIR] NAME [DEST]      (DEST default: data/NAME)
#
# NAME: small_parallel_enja  English-Japanese, 50,000 / 500 / 500 pairs (Tanaka corpus, tokenized
#                            and lowercased English, word-split Japanese), from
#                            github.com/odashi/small_parallel_enja at commit 312408a.
# The files come from --from GIT_DIR (a clone or bare mirror of that repository), else from a
# shallow clone of GitHub. Nothing is committed; running it twice does nothing the second time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
from=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) [[ $# -ge 2 ]] || { echo "error: --from needs a git directory" >&2; exit 2; }
            from="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ ${#args[@]} -ge 1 && ${#args[@]} -le 2 ]] ||
  { echo "error: give NAME and optionally DEST (see --help)" >&2; exit 2; }
name=${args[0]}
dest=${args[1]:-$root/data/$name}

case "$name" in
  small_parallel_enja)
    url=https://github.com/odashi/small_parallel_enja
    commit=312408a
    langs="en ja"
    declare -A lines=([train]=50000 [dev]=500 [test]=500)
    declare -A paths=([train]=train [dev]=dev [test]=test) ;;
  *) echo "error: unknown corpus '$name' (known: small_parallel_enja)" >&2; exit 2 ;;
esac

complete() {
  local split lang
  for split in "${!lines[@]}"; do
    for lang in $langs; do
      [[ -f $dest/$split.$lang && $(wc -l <"$dest/$split.$lang") -eq ${lines[$split]} ]] || return 1
    done
  done
}
if complete; then
  echo "get_corpus: $dest already holds $name"
  exit 0
fi
mkdir -p "$dest"
if [[ -z $from ]]; then
  from=$(mktemp -d)
  trap 'rm -rf "$from"' EXIT
  git clone --quiet "$url" "$from"
  from=$from/.git
fi
if ! git --git-dir="$from" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "error: $from has no commit $commit of $url" >&2
  exit 1
fi
for split in "${!lines[@]}"; do
  for lang in $langs; do
    git --git-dir="$from" show "$commit:${paths[$split]}.$lang" >"$dest/$split.$lang.tmp"
    mv "$dest/$split.$lang.tmp" "$dest/$split.$lang"
  done
done
if ! complete; then
  echo "error: $dest: the line counts differ from ${lines[*]} (train dev test)" >&2
  exit 1
fi
echo "get_corpus: wrote $name ($url at $commit) to $dest"
