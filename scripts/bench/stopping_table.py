#!/usr/bin/python3
"""Tables of exact against early stopping in beam search, generated from the folder that
scripts/bench/bench_stopping.sh writes (bench.json and <exact|early>_a<alpha>.json with its
hypotheses in <exact|early>_a<alpha>/hyp.<split>.<lang>.gz).

Usage:
  scripts/bench/stopping_table.py DIR           print the tables
  scripts/bench/stopping_table.py --write DIR   write them to DIR/table.md
  scripts/bench/stopping_table.py --check DIR   exit 1 when DIR/table.md differs from what DIR gives

The first table has one row per length penalty α: BLEU of both stoppings on every split, how
many output sentences differ between them (all splits together) and their decoding speed. The
second retunes α for each stopping on the first split (val by default) and gives every split's
BLEU and chrF at that α.
"""

import gzip
import sys
from pathlib import Path

import doc_tables  # scripts/bench/doc_tables.py
from results_table import TableError, load_json  # scripts/bench/results_table.py

MODES = ("exact", "early")


def scores(folder, mode, alpha):
    """{split: `nmt evaluate --json` entry} of one evaluation."""
    path = folder / f"{mode}_a{alpha}.json"
    return {e["test_set"]: e for e in load_json(path)}


def hypotheses(folder, mode, alpha, split):
    files = sorted((folder / f"{mode}_a{alpha}").glob(f"hyp.{split}.*.gz"))
    if len(files) != 1:
        raise TableError(f"{folder / f'{mode}_a{alpha}'}: expected one hyp.{split}.*.gz")
    with gzip.open(files[0], "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def changed(folder, alpha, splits):
    """(sentences whose output differs between exact and early stopping, all sentences)."""
    differ = total = 0
    for split in splits:
        exact = hypotheses(folder, "exact", alpha, split)
        early = hypotheses(folder, "early", alpha, split)
        differ += sum(a != b for a, b in zip(exact, early))
        total += len(exact)
    return differ, total


def speed(entries, splits):
    """Sentences per second over all splits."""
    sentences = sum(entries[s]["sentences"] for s in splits)
    seconds = sum(entries[s]["sentences"] / entries[s]["sentences_per_s"] for s in splits)
    return sentences / seconds


def row(cells):
    return "| " + " | ".join(cells) + " |"


def tables(folder):
    folder = Path(folder)
    bench = load_json(folder / "bench.json")
    alphas = bench["alphas"]  # as spelled in the file names
    splits = bench["splits"]
    results = {(m, a): scores(folder, m, a) for m in MODES for a in alphas}
    lines = [f"Beam {bench['beam']}, `{bench['checkpoint']}`; commit {bench['commit']}, "
             f"{bench['cpu']} ({bench['cores']} cores), {bench['date']}. "
             "BLEU exact / early stopping.", ""]
    header = ["α"] + splits + ["outputs changed", "sent/s exact / early"]
    lines += [row(header), "|" + " --- |" * len(header)]
    for a in alphas:
        exact, early = results[("exact", a)], results[("early", a)]
        differ, total = changed(folder, a, splits)
        lines.append(row([a] + [f"{exact[s]['bleu']:.2f} / {early[s]['bleu']:.2f}" for s in splits]
                         + [f"{differ} of {total}",
                            f"{speed(exact, splits):.1f} / {speed(early, splits):.1f}"]))
    tune = splits[0]
    lines += ["", f"α retuned on {tune} for each stopping: BLEU (chrF2).", ""]
    header = ["stopping", f"best α on {tune}"] + splits + ["sent/s"]
    lines += [row(header), "|" + " --- |" * len(header)]
    for m in MODES:
        best = max(alphas, key=lambda a: results[(m, a)][tune]["bleu"])
        entries = results[(m, best)]
        lines.append(row([m, best] + [f"{entries[s]['bleu']:.2f} ({entries[s]['chrf']:.2f})"
                                      for s in splits] + [f"{speed(entries, splits):.1f}"]))
    return "\n".join(lines) + "\n"


def main():
    args, mode = doc_tables.table_arguments(__doc__.splitlines()[0], "DIR/table.md",
                                            "a folder written by scripts/bench/bench_stopping.sh")
    try:
        text = tables(args.dir)
    except (TableError, KeyError, ZeroDivisionError) as e:
        sys.exit(f"stopping_table.py: {args.dir}: {type(e).__name__} {e}")
    target = Path(args.dir) / "table.md"
    if mode == "write":
        target.write_text(text, encoding="utf-8")
    elif mode == "check":
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            sys.exit(f"stopping_table.py: {target} differs from what {args.dir} gives (--write)")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
