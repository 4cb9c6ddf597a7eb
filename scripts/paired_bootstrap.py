#!/usr/bin/python3
"""Paired bootstrap resampling of corpus BLEU (Koehn 2004): how much of the difference between two
systems' outputs on one test set is more than the choice of sentences.

Draws --samples test sets of the same size, with replacement, from the sentence indices, scores
both hypothesis files on each (sacreBLEU's corpus BLEU, via scripts/reference_metrics.py) and
prints each system's BLEU with its standard deviation and 95% interval, and the same for the
difference A - B, with the share of samples where B scored at least as high as A.

Usage:
  scripts/paired_bootstrap.py HYP_A HYP_B REF [--lowercase] [--samples 1000] [--seed 1]
REF may be gzipped (data/multi30k/test_2016_flickr.de.gz). Files are UTF-8, one segment per line.
"""

import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_metrics  # noqa: E402


def read_lines(path):
    try:
        return reference_metrics.read_lines(path)
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"paired_bootstrap.py: error: {path}: {e}")


def corpus_bleu(stats, indices):
    hyp_len = ref_len = 0
    matches = [0] * reference_metrics.MAX_ORDER
    totals = [0] * reference_metrics.MAX_ORDER
    for i in indices:
        h, r, m, t = stats[i]
        hyp_len += h
        ref_len += r
        for n in range(reference_metrics.MAX_ORDER):
            matches[n] += m[n]
            totals[n] += t[n]
    return reference_metrics.bleu_from_statistics(hyp_len, ref_len, matches, totals, False)[0]


def interval(values):
    ordered = sorted(values)
    return ordered[int(0.025 * len(ordered))], ordered[min(len(ordered) - 1, int(0.975 * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hyp_a")
    parser.add_argument("hyp_b")
    parser.add_argument("ref")
    parser.add_argument("--lowercase", action="store_true")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.samples < 2:
        sys.exit(f"paired_bootstrap.py: error: --samples {args.samples}: needs at least 2")
    ref = read_lines(args.ref)
    stats = {}
    for name, path in (("A", args.hyp_a), ("B", args.hyp_b)):
        hyps = read_lines(path)
        if len(hyps) != len(ref):
            sys.exit(f"paired_bootstrap.py: error: {path}: {len(hyps)} lines, but {args.ref} has "
                     f"{len(ref)} (one hypothesis per reference line)")
        stats[name] = [reference_metrics.bleu_statistics([h], [r], args.lowercase)
                       for h, r in zip(hyps, ref)]
    n = len(ref)
    if n == 0:
        sys.exit(f"paired_bootstrap.py: error: {args.ref}: no lines")
    rng = random.Random(args.seed)
    samples = {"A": [], "B": [], "A - B": []}
    for _ in range(args.samples):
        indices = [rng.randrange(n) for _ in range(n)]
        a, b = corpus_bleu(stats["A"], indices), corpus_bleu(stats["B"], indices)
        samples["A"].append(a)
        samples["B"].append(b)
        samples["A - B"].append(a - b)
    full = range(n)
    observed = {"A": corpus_bleu(stats["A"], full), "B": corpus_bleu(stats["B"], full)}
    observed["A - B"] = observed["A"] - observed["B"]
    case = "lowercased" if args.lowercase else "cased"
    print(f"{n} sentences, {args.samples} bootstrap samples (seed {args.seed}), {case} BLEU")
    for name in ("A", "B", "A - B"):
        low, high = interval(samples[name])
        print(f"{name:>5}: {observed[name]:6.2f}  sd {statistics.stdev(samples[name]):.2f}  "
              f"95% interval [{low:.2f}, {high:.2f}]")
    not_worse = sum(d <= 0 for d in samples["A - B"]) / args.samples
    print(f"share of samples where B >= A: {not_worse:.3f}")


if __name__ == "__main__":
    main()
