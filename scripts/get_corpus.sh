#!/usr/bin/env bash
# Puts a public parallel corpus that nmt was not tuned on into DEST as plain split files
# (train/dev/test.<lang>, as data.dir reads them) and verifies their line counts.
#
# usage: scripts/get_corpus.sh [--from GIT_DIR] NAME [DEST]      (DEST default: data/NAME)
#
# NAME (train / dev / test pairs):
#   small_parallel_enja  English-Japanese, 50,000 / 500 / 500 (Tanaka corpus, tokenized and
#                        lowercased English, word-split Japanese), github.com/odashi/
#                        small_parallel_enja at commit 312408a.
#   americasnlp_aym_es   Aymara-Spanish, 6,531 / 996 / 1,003 (Global Voices news to train; the
#                        AmericasNLP 2021 shared task's dev and test sets), github.com/AmericasNLP/
#                        americasnlp2021 at commit d3f519c.
#   minangnlp_min_id     Minangkabau-Indonesian, 11,571 / 1,600 / 3,200 (Wikipedia sentences,
#                        lowercased and Moses-tokenized; Koto & Koto, PACLIC 2020),
#                        github.com/fajri91/minangNLP at commit 15d5c00.
#   classical_modern_zh  Classical-modern Chinese (lzh, zh), 961,538 / 3,000 / 3,000: every
#                        sentence pair of NiuTrans/Classical-Modern's bilingual folder at commit
#                        4e746ea, duplicates dropped, shuffled with seed 1 and split; a train pair
#                        whose classical side is in dev or test is dropped.
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
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ ${#args[@]} -ge 1 && ${#args[@]} -le 2 ]] ||
  { echo "error: give NAME and optionally DEST (see --help)" >&2; exit 2; }
name=${args[0]}
dest=${args[1]:-$root/data/$name}

# paths[SPLIT.LANG]: the file in the repository that becomes DEST/SPLIT.LANG. A corpus without
# paths is built by build_<name> below.
declare -A paths=()
case "$name" in
  small_parallel_enja)
    url=https://github.com/odashi/small_parallel_enja
    commit=312408a
    langs="en ja"
    declare -A lines=([train]=50000 [dev]=500 [test]=500)
    for split in train dev test; do
      for lang in $langs; do paths[$split.$lang]=$split.$lang; done
    done ;;
  americasnlp_aym_es)
    url=https://github.com/AmericasNLP/americasnlp2021
    commit=d3f519c
    langs="aym es"
    declare -A lines=([train]=6531 [dev]=996 [test]=1003)
    for lang in $langs; do
      paths[train.$lang]=data/aymara-spanish/train.$lang
      paths[dev.$lang]=data/aymara-spanish/dev.$lang
      paths[test.$lang]=test_data/test.$lang
    done ;;
  minangnlp_min_id)
    url=https://github.com/fajri91/minangNLP
    commit=15d5c00
    langs="min id"
    declare -A lines=([train]=11571 [dev]=1600 [test]=3200)
    for split in train dev test; do
      paths[$split.min]=translation/wiki_data/src_$split.txt
      paths[$split.id]=translation/wiki_data/tgt_$split.txt
    done ;;
  classical_modern_zh)
    url=https://github.com/NiuTrans/Classical-Modern
    commit=4e746ea
    langs="lzh zh"
    declare -A lines=([train]=961538 [dev]=3000 [test]=3000) ;;
  *) echo "error: unknown corpus '$name' (known: small_parallel_enja, americasnlp_aym_es," \
       "minangnlp_min_id, classical_modern_zh)" >&2; exit 2 ;;
esac

complete() {
  local split lang
  for split in "${!lines[@]}"; do
    for lang in $langs; do
      [[ -f $dest/$split.$lang && $(wc -l <"$dest/$split.$lang") -eq ${lines[$split]} ]] || return 1
    done
  done
}

# Every source.txt / target.txt pair under 双语数据/ (sentence-aligned, one file pair per
# chapter), in path order; then exact duplicates dropped, a seeded shuffle, dev and test taken
# first, and train pairs whose classical side is in dev or test dropped.
build_classical_modern_zh() {
  /usr/bin/python3 - "$from" "$commit" "$dest" <<'EOF'
import random, subprocess, sys
git_dir, commit, dest = sys.argv[1:]
git = ["git", "--git-dir", git_dir]
names = subprocess.run(git + ["ls-tree", "-r", "-z", "--name-only", commit, "双语数据"],
                       check=True, capture_output=True).stdout.decode().split("\0")
chapters = sorted(n[: -len("source.txt")] for n in names if n.endswith("/source.txt"))
cat = subprocess.Popen(git + ["cat-file", "--batch"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
def blob(path):
    cat.stdin.write(f"{commit}:{path}\n".encode()); cat.stdin.flush()
    header = cat.stdout.readline().split()
    if header[-1] == b"missing":
        sys.exit(f"error: {git_dir} has no {path} at {commit}")
    data = cat.stdout.read(int(header[2])); cat.stdout.read(1)
    return data.decode("utf-8").splitlines()
pairs, seen = [], set()
for chapter in chapters:
    src, tgt = blob(chapter + "source.txt"), blob(chapter + "target.txt")
    if len(src) != len(tgt):
        sys.exit(f"error: {chapter}: {len(src)} classical lines, {len(tgt)} modern")
    for pair in zip(src, tgt):
        pair = tuple(" ".join(side.split()) for side in pair)
        if all(pair) and pair not in seen:
            seen.add(pair); pairs.append(pair)
random.Random(1).shuffle(pairs)
splits = {"dev": pairs[:3000], "test": pairs[3000:6000]}
held = {src for split in splits.values() for src, _ in split}
splits["train"] = [p for p in pairs[6000:] if p[0] not in held]
for split, rows in splits.items():
    for side, lang in enumerate(("lzh", "zh")):
        with open(f"{dest}/{split}.{lang}.tmp", "w", encoding="utf-8") as out:
            out.writelines(row[side] + "\n" for row in rows)
print(f"get_corpus: {len(chapters)} chapters, {len(pairs)} distinct pairs, "
      f"{len(splits['train'])} to train")
EOF
  local split lang
  for split in train dev test; do
    for lang in $langs; do mv "$dest/$split.$lang.tmp" "$dest/$split.$lang"; done
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
if [[ ${#paths[@]} -eq 0 ]]; then
  "build_$name"
else
  for split in "${!lines[@]}"; do
    for lang in $langs; do
      git --git-dir="$from" show "$commit:${paths[$split.$lang]}" >"$dest/$split.$lang.tmp"
      mv "$dest/$split.$lang.tmp" "$dest/$split.$lang"
    done
  done
fi
if ! complete; then
  echo "error: $dest: the line counts differ from train ${lines[train]}, dev ${lines[dev]}," \
    "test ${lines[test]}" >&2
  exit 1
fi
echo "get_corpus: wrote $name ($url at $commit) to $dest"
