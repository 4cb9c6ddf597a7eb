#!/usr/bin/python3
"""Independent reference BLEU and chrF, used to produce the golden values in tests/test_bleu.cpp
and tests/test_chrf.cpp.

Pure Python 3 standard library, written from the definitions rather than from the C++ code:
  BLEU  Papineni et al. 2002, with sacreBLEU 2.x's defaults (Post 2018): 13a tokenization
        (mteval-v13a.pl via sacreBLEU's Tokenizer13a + TokenizerRegexp), n = 1..4, "exp"
        smoothing, effective_order=False for the corpus score and True for sentence scores.
  chrF  Popović 2015 with sacreBLEU 2.x's defaults: char_order 6, word_order 0, beta 2,
        whitespace removed, eps_smoothing False (precision/recall averaged over the orders that
        occur).

One deliberate difference from sacreBLEU, shared with the C++ code: an empty reference line is
scored as zero reference tokens instead of being refused.

Usage:
  scripts/reference_metrics.py HYP_FILE REF_FILE [--lowercase]   corpus BLEU and chrF
  scripts/reference_metrics.py HYP_FILE REF_FILE --sentence      sentence BLEU per line
  scripts/reference_metrics.py --tokenize FILE                   13a tokens per line
Files are UTF-8, one segment per line.
"""

import argparse
import gzip
import math
import re
import sys
from collections import Counter

MAX_ORDER = 4
CHAR_ORDER = 6
BETA = 2

# The four regexes of mteval-v13a.pl as sacreBLEU's TokenizerRegexp writes them.
_13A_RULES = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),  # symbols
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # . and , unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # . and , unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash after a digit
]


def tokenize_13a(line):
    for old, new in [("<skipped>", ""), ("-\n", ""), ("\n", " "), ("&quot;", '"'),
                     ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")]:
        line = line.replace(old, new)
    line = " " + line + " "
    for pattern, replacement in _13A_RULES:
        line = pattern.sub(replacement, line)
    return " ".join(line.split())


def _bleu_tokens(line, lowercase):
    if lowercase:
        line = line.lower()
    return tokenize_13a(line.rstrip()).split()


def _word_ngrams(tokens):
    return Counter(tuple(tokens[i:i + n]) for n in range(1, MAX_ORDER + 1)
                   for i in range(len(tokens) - n + 1))


def bleu_statistics(hyps, refs, lowercase=False):
    """Returns (hyp_len, ref_len, matches[4], totals[4]) summed over the corpus."""
    hyp_len = ref_len = 0
    matches = [0] * MAX_ORDER
    totals = [0] * MAX_ORDER
    for hyp, ref in zip(hyps, refs):
        hyp_tokens, ref_tokens = _bleu_tokens(hyp, lowercase), _bleu_tokens(ref, lowercase)
        hyp_len += len(hyp_tokens)
        ref_len += len(ref_tokens)
        ref_ngrams = _word_ngrams(ref_tokens)
        for ngram, count in _word_ngrams(hyp_tokens).items():
            totals[len(ngram) - 1] += count
            matches[len(ngram) - 1] += min(count, ref_ngrams.get(ngram, 0))
    return hyp_len, ref_len, matches, totals


def bleu_from_statistics(hyp_len, ref_len, matches, totals, effective_order):
    """Returns (score, precisions, brevity_penalty), all as sacreBLEU reports them."""
    if hyp_len >= ref_len:
        bp = 1.0
    else:
        bp = math.exp(1 - ref_len / hyp_len) if hyp_len > 0 else 0.0
    precisions = [0.0] * MAX_ORDER
    if sum(matches) == 0:
        return 0.0, precisions, bp
    halvings = 0
    orders = MAX_ORDER
    for n in range(MAX_ORDER):
        if totals[n] == 0:
            break
        if effective_order:
            orders = n + 1
        if matches[n] == 0:
            halvings += 1
            precisions[n] = 100.0 / (2 ** halvings * totals[n])
        else:
            precisions[n] = 100.0 * matches[n] / totals[n]
    used = precisions[:orders]
    if min(used) == 0.0:
        return 0.0, precisions, bp
    return bp * math.exp(sum(math.log(p) for p in used) / orders), precisions, bp


def _chrf_chars(line, lowercase):
    if lowercase:
        line = line.lower()
    return "".join(line.split())


def chrf_statistics(hyps, refs, lowercase=False):
    """Returns [[hyp, ref, match] for n in 1..6] summed over the corpus."""
    stats = [[0, 0, 0] for _ in range(CHAR_ORDER)]
    for hyp, ref in zip(hyps, refs):
        hyp, ref = _chrf_chars(hyp, lowercase), _chrf_chars(ref, lowercase)
        for n in range(1, CHAR_ORDER + 1):
            hyp_ngrams = Counter(hyp[i:i + n] for i in range(len(hyp) - n + 1))
            ref_ngrams = Counter(ref[i:i + n] for i in range(len(ref) - n + 1))
            # sacreBLEU counts hypothesis n-grams only where the reference has some.
            stats[n - 1][0] += sum(hyp_ngrams.values()) if ref_ngrams else 0
            stats[n - 1][1] += sum(ref_ngrams.values())
            stats[n - 1][2] += sum((hyp_ngrams & ref_ngrams).values())
    return stats


def chrf_from_statistics(stats):
    precisions = [m / h for h, r, m in stats if h > 0 and r > 0]
    recalls = [m / r for h, r, m in stats if h > 0 and r > 0]
    if not precisions:
        return 0.0
    p = sum(precisions) / len(precisions)
    r = sum(recalls) / len(recalls)
    if p + r == 0:
        return 0.0
    # The operations in sacreBLEU's order, so that a score on a rounding boundary (96.875 in
    # the tests) is displayed with the same last digit.
    score = (1 + BETA ** 2) * p * r
    score /= BETA ** 2 * p + r
    return 100 * score


def read_lines(path):
    """The lines of a UTF-8 text file, plain or gzipped (by the .gz suffix), without newlines."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="\n") as f:
        return [line[:-1] if line.endswith("\n") else line for line in f]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hyp", nargs="?", help="hypothesis file")
    parser.add_argument("ref", nargs="?", help="reference file")
    parser.add_argument("--lowercase", action="store_true")
    parser.add_argument("--sentence", action="store_true", help="sentence BLEU per line")
    parser.add_argument("--tokenize", metavar="FILE", help="print 13a tokens of each line")
    args = parser.parse_args()
    if args.tokenize:
        for line in read_lines(args.tokenize):
            print(tokenize_13a(line))
        return 0
    if not args.hyp or not args.ref:
        parser.error("give HYP_FILE and REF_FILE (or --tokenize FILE)")
    hyps, refs = read_lines(args.hyp), read_lines(args.ref)
    if len(hyps) != len(refs):
        print(f"error: {len(hyps)} hypotheses but {len(refs)} references", file=sys.stderr)
        return 1
    if args.sentence:
        for hyp, ref in zip(hyps, refs):
            stats = bleu_statistics([hyp], [ref])
            print(repr(bleu_from_statistics(*stats, effective_order=True)[0]))
        return 0
    hyp_len, ref_len, matches, totals = bleu_statistics(hyps, refs, args.lowercase)
    score, precisions, bp = bleu_from_statistics(hyp_len, ref_len, matches, totals, False)
    ratio = hyp_len / ref_len if ref_len else 0
    print(f"BLEU = {score:.2f} {'/'.join(f'{p:.1f}' for p in precisions)} (BP = {bp:.3f} "
          f"ratio = {ratio:.3f} hyp_len = {hyp_len} ref_len = {ref_len})")
    chrf = chrf_from_statistics(chrf_statistics(hyps, refs, args.lowercase))
    print(f"chrF2 = {chrf:.2f}")
    print(f"bleu_score {score!r}")
    print(f"bleu_precisions {precisions!r}")
    print(f"bleu_matches {matches} totals {totals}")
    print(f"bleu_bp {bp!r}")
    print(f"chrf_score {chrf!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
