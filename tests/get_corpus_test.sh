#!/usr/bin/env bash
# scripts/get_corpus.sh without the network: its errors (an unknown corpus, bad arguments, a
# repository without the pinned commit) and its second run, which finds the corpus complete and
# touches nothing, while a corpus with a wrong line count is fetched again.
set -uo pipefail
script=$(cd "$(dirname "$0")/.." && pwd)/scripts/get_corpus.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/expect.sh"

expect 2 "unknown corpus 'nope' (known: small_parallel_enja" "$script" nope
expect 2 "give NAME and optionally DEST" "$script"
expect 2 "give NAME and optionally DEST" "$script" a b c
expect 2 "--from needs a git directory" "$script" --from
expect 2 "unknown option '--form'" "$script" --form x minangnlp_min_id

# A repository that is not minangNLP: no commit 15d5c00.
repo=$tmp/repo
git init --quiet "$repo"
git -C "$repo" -c user.name=t -c user.email=t@t commit --quiet --allow-empty -m empty
expect 1 "has no commit 15d5c00 of https://github.com/fajri91/minangNLP" \
  "$script" --from "$repo/.git" minangnlp_min_id "$tmp/min_id"

# A complete corpus (the line counts it pins) is left as it is, without reading --from.
dest=$tmp/aym_es
mkdir -p "$dest"
for split in train:6531 dev:996 test:1003; do
  for lang in aym es; do
    seq "${split#*:}" >"$dest/${split%:*}.$lang"
  done
done
before=$(cat "$dest"/* | md5sum)
expect 0 "already holds americasnlp_aym_es" \
  "$script" --from "$tmp/missing" americasnlp_aym_es "$dest"
[[ $(cat "$dest"/* | md5sum) == "$before" ]] || fail "a complete corpus was rewritten"

# One line short: not complete, so it is fetched again (and here the commit is missing).
sed -i '$d' "$dest/dev.es"
expect 1 "has no commit d3f519c" "$script" --from "$repo/.git" americasnlp_aym_es "$dest"

finish get_corpus_test
