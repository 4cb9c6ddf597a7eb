#!/usr/bin/python3
"""Scores tests/fixtures/metrics/ with sacreBLEU itself and writes the goldens that
tests/test_metrics_goldens.cpp checks nmt's BLEU (every tokenizer), chrF, chrF++ and TER against.

    SACREBLEU_SRC=/path/to/sacrebleu scripts/dev/metric_goldens.py > tests/fixtures/metrics/goldens.json

sacreBLEU comes from an installed `sacrebleu` package or, with SACREBLEU_SRC, from a source
checkout (github.com/mjpost/sacrebleu; Debian 12 has no package). Its dependencies are Debian's:
python3-regex python3-tabulate python3-portalocker python3-colorama python3-numpy python3-lxml.
A checkout lacks the generated sacrebleu/version.py: write `__version__ = "2.6.0"` (the tag
checked out) into it. ja-mecab needs mecab-python3 and the `ipadic` package from pip, which
Debian lacks, so it is not among the goldens (docs/evaluation.md says how far Debian's MeCab is).

Each fixture pair is LANG.hyp / LANG.ref, one segment per line, UTF-8. ter_shifts.hyp/.ref
stress TER's shift search (repeated words, so tied shifts; phrases moved, dropped, replaced;
segments up to 150 words, beyond the band and the candidate budget); `--ter-fixture` writes
them (seeded, so the same files every time) and the goldens hold each segment's edit count.
"""
import random
import json
import os
import sys

if os.environ.get("SACREBLEU_SRC"):
    sys.path.insert(0, os.environ["SACREBLEU_SRC"])

import sacrebleu  # noqa: E402
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                        "metrics")
LANGUAGES = ["de", "fr", "cs", "zh", "ja"]
TOKENIZERS = ["13a", "intl", "char", "zh", "none"]


def read_lines(path):
    """One segment per line, split at '\\n' only (as nmt reads files; str.splitlines would also
    split at Unicode line separators)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def make_ter_fixture():
    rng = random.Random(55)
    vocab = "the a man woman dog ball red blue runs sits on in with and".split()
    hyps, refs = [], []
    for length in [3, 5, 8, 12, 12, 16, 20, 25, 30, 40, 55, 70, 90, 120, 150] * 4:
        ref = [rng.choice(vocab[:6 + length % 9]) for _ in range(length)]
        hyp = list(ref)
        for _ in range(rng.randint(1, 1 + length // 6)):  # move a phrase
            start = rng.randrange(len(hyp))
            size = rng.randint(1, min(6, len(hyp) - start))
            phrase = hyp[start:start + size]
            del hyp[start:start + size]
            where = rng.randint(0, len(hyp))
            hyp[where:where] = phrase
        for _ in range(rng.randint(0, 1 + length // 8)):  # substitute, drop, add
            edit = rng.choice("sda")
            at = rng.randrange(len(hyp))
            if edit == "s":
                hyp[at] = rng.choice(vocab)
            elif edit == "d" and len(hyp) > 1:
                del hyp[at]
            else:
                hyp.insert(at, rng.choice(vocab))
        if rng.random() < 0.15:  # very uneven lengths widen the band
            hyp = hyp[: max(1, len(hyp) // 5)]
        hyps.append(" ".join(hyp))
        refs.append(" ".join(ref))
    for name, lines in (("ter_shifts.hyp", hyps), ("ter_shifts.ref", refs)):
        with open(os.path.join(FIXTURES, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def ter_segment_goldens():
    from sacrebleu.metrics.lib_ter import translation_edit_rate
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer
    tokenizer = TercomTokenizer()
    hyps = read_lines(os.path.join(FIXTURES, "ter_shifts.hyp"))
    refs = read_lines(os.path.join(FIXTURES, "ter_shifts.ref"))
    return [list(translation_edit_rate(tokenizer(h.rstrip()).split(), tokenizer(r.rstrip()).split()))
            for h, r in zip(hyps, refs)]


def main():
    if "--ter-fixture" in sys.argv:
        make_ter_fixture()
        return
    goldens = []
    for lang in LANGUAGES:
        hyps = read_lines(os.path.join(FIXTURES, lang + ".hyp"))
        refs = read_lines(os.path.join(FIXTURES, lang + ".ref"))
        assert len(hyps) == len(refs), lang

        def golden(scorer, **fields):
            score = scorer.corpus_score(hyps, [refs]).score
            goldens.append({"lang": lang, **fields, "score": score,
                            "signature": str(scorer.get_signature())})

        for lowercase in (False, True):
            for tokenize in TOKENIZERS:
                golden(BLEU(tokenize=tokenize, lowercase=lowercase), metric="bleu",
                       tokenize=tokenize, lowercase=lowercase)
            for word_order in (0, 2):
                golden(CHRF(word_order=word_order, lowercase=lowercase), metric="chrf",
                       word_order=word_order, lowercase=lowercase)
        golden(TER(), metric="ter")
    json.dump({"sacrebleu_version": sacrebleu.__version__,
               "made_by": "SACREBLEU_SRC=<sacrebleu v" + sacrebleu.__version__ +
                          " checkout> scripts/dev/metric_goldens.py",
               "goldens": goldens,
               "ter_segments": ter_segment_goldens()}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
