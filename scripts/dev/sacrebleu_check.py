#!/usr/bin/env python3
"""Cross-checks the scores `nmt evaluate` wrote into a results.json against the sacrebleu package.

    scripts/dev/sacrebleu_check.py --results docs/results/multi30k_en_de/results.json \\
        --split test_2016_flickr --hyp docs/results/multi30k_en_de/hyp.test_2016_flickr.de.gz \\
        --ref data/multi30k/test_2016_flickr.de.gz

Recomputes BLEU (13a, cased and lowercased) and chrF2 of HYP against REF with sacrebleu and
prints both sets of numbers. Exit status 1 when any differs by more than --tolerance.
Needs `pip install sacrebleu` (Debian 12 has no package for it; scripts/reference_metrics.py is
the project's own independent re-implementation, used by the tests).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/
from reference_metrics import read_lines  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True, help="results.json written by nmt evaluate")
    parser.add_argument("--split", required=True, help="its test_set entry, e.g. test_2016_flickr")
    parser.add_argument("--hyp", required=True, help="the hypotheses nmt evaluate wrote")
    parser.add_argument("--ref", required=True, help="the reference (plain or .gz)")
    parser.add_argument("--tolerance", type=float, default=0.01)
    args = parser.parse_args()
    try:
        import sacrebleu
    except ImportError:
        sys.exit("sacrebleu_check: error: needs the sacrebleu package (pip install sacrebleu)")
    try:
        with open(args.results, encoding="utf-8") as f:
            entries = [e for e in json.load(f) if e.get("test_set") == args.split]
        hyps, refs = read_lines(args.hyp), read_lines(args.ref)
    except (OSError, ValueError) as e:  # ValueError: bad JSON or UTF-8
        sys.exit(f"sacrebleu_check: error: {e}")
    if not entries:
        sys.exit(f"sacrebleu_check: error: {args.results} has no entry with test_set {args.split}")
    if len(hyps) != len(refs):
        sys.exit(f"sacrebleu_check: error: {args.hyp} has {len(hyps)} lines, {args.ref} {len(refs)}")
    ours = entries[0]
    theirs = {
        "bleu": sacrebleu.corpus_bleu(hyps, [refs]).score,
        "bleu_lowercase": sacrebleu.corpus_bleu(hyps, [refs], lowercase=True).score,
        "chrf": sacrebleu.corpus_chrf(hyps, [refs]).score,
    }
    worst = 0.0
    for key, value in theirs.items():
        diff = abs(value - ours[key])
        worst = max(worst, diff)
        print(f"{args.hyp}: {key:15s} nmt {ours[key]:8.4f}  sacrebleu {sacrebleu.__version__} "
              f"{value:8.4f}  |diff| {diff:.4f}")
    sys.exit(0 if worst <= args.tolerance else 1)


if __name__ == "__main__":
    main()
