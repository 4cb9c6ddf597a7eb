#!/usr/bin/python3
"""Print a Markdown table of evaluation scores from `nmt evaluate --json` files.

Usage:
  scripts/results_table.py checkpoints/multi30k_en_de/results.json [more results.json ...]

One row per (file, test set): direction, test set, cased BLEU, lowercased BLEU, chrF2, loss,
perplexity, beam/length penalty, checkpoint step and decoding speed. Exits 1 with one line on
stderr for a missing or malformed file.
"""

import json
import sys
from pathlib import Path

COLUMNS = ("direction", "test set", "BLEU", "BLEU (lc)", "chrF2", "loss", "PPL", "decoding",
           "checkpoint")


def rows(path):
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SystemExit(f"results_table: error: {path}: {e}")
    if not isinstance(entries, list):
        raise SystemExit(f"results_table: error: {path}: expected a JSON list (nmt evaluate --json)")
    for number, e in enumerate(entries, start=1):
        try:
            yield (e["direction"], e["test_set"], f"{e['bleu']:.2f}", f"{e['bleu_lowercase']:.2f}",
                   f"{e['chrf']:.2f}", f"{e['loss']:.3f}", f"{e['perplexity']:.2f}",
                   f"beam {e['beam']}, α {e['length_penalty']:g}, {e['sentences_per_s']:.0f} sent/s",
                   f"{Path(e['checkpoint']).name} (step {e['step']})")
        except (KeyError, TypeError, ValueError) as err:
            raise SystemExit(f"results_table: error: {path}: entry {number}: missing or bad {err}")


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    for path in sys.argv[1:]:
        for row in rows(path):
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
