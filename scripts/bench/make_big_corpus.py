#!/usr/bin/python3
"""Makes a synthetic parallel corpus of N sentence pairs from Multi30k, for scaling measurements
(docs/scaling.md). Never commit its output.

Usage:
  scripts/bench/make_big_corpus.py --pairs 1M --out /tmp/big1m [--source data/multi30k]
                             [--src en --tgt de] [--seed 1] [--joined 0.5]

Writes <out>/train.<src> and <out>/train.<tgt> (plain text, N lines each) and copies every other
file of the source folder (val, test sets) there, so `--set data.dir=<out>` trains on it with any
Multi30k config. Pair k is, with a generator seeded by --seed (the same N and seed give the same
files on every machine): with probability --joined (default 0.5) two random Multi30k pairs
joined side by side ("a b" ||| "a' b'"), which stays a translation and gives longer sentences,
otherwise one random pair. --joined 1 gives long lines only (two captions, about 25 words, per
line). N may carry a k or M suffix (29k, 1M, 5M)."""

import argparse
import gzip
import random
import shutil
import sys
from pathlib import Path


def parse_count(text):
    scale = {"k": 1000, "K": 1000, "m": 1000000, "M": 1000000}.get(text[-1:], 1)
    number = text[:-1] if scale > 1 else text
    count = int(float(number) * scale)
    if count < 1:
        raise argparse.ArgumentTypeError(f"--pairs {text}: must be at least 1")
    return count


def read_lines(folder, split, lang):
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        path = folder / name
        if path.exists():
            opener = gzip.open if name.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as f:
                return [line.rstrip("\n").strip() for line in f]
    sys.exit(f"error: neither {folder}/{split}.{lang} nor {folder}/{split}.{lang}.gz exists "
             "(scripts/get_multi30k.sh fetches Multi30k)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=parse_count, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--source", type=Path, default=Path("data/multi30k"))
    parser.add_argument("--src", default="en")
    parser.add_argument("--tgt", default="de")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--joined", type=float, default=0.5,
                        help="the fraction of lines that join two pairs (0..1)")
    args = parser.parse_args()
    if not 0 <= args.joined <= 1:
        sys.exit(f"error: --joined {args.joined}: must be in [0, 1]")
    src = read_lines(args.source, "train", args.src)
    tgt = read_lines(args.source, "train", args.tgt)
    if len(src) != len(tgt) or not src:
        sys.exit(f"error: {args.source}: train.{args.src} has {len(src)} lines, "
                 f"train.{args.tgt} {len(tgt)}")
    pairs = [(s, t) for s, t in zip(src, tgt) if s and t]
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    n = len(pairs)
    with open(args.out / f"train.{args.src}", "w", encoding="utf-8") as out_src, \
            open(args.out / f"train.{args.tgt}", "w", encoding="utf-8") as out_tgt:
        for _ in range(args.pairs):
            s, t = pairs[rng.randrange(n)]
            if rng.random() < args.joined:
                s2, t2 = pairs[rng.randrange(n)]
                s, t = s + " " + s2, t + " " + t2
            out_src.write(s + "\n")
            out_tgt.write(t + "\n")
    for path in sorted(args.source.iterdir()):
        if path.is_file() and not path.name.startswith("train."):
            shutil.copy2(path, args.out / path.name)
    print(f"{args.out}: {args.pairs} pairs (train.{args.src}, train.{args.tgt}) "
          f"from {n} Multi30k pairs, seed {args.seed}")


if __name__ == "__main__":
    main()
