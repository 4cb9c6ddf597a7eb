#!/usr/bin/python3
"""The scaling table of docs/scaling.md, generated from the JSON files that
scripts/bench/bench_scaling.sh writes (docs/results/scaling/scaling_<N>.json).

Usage:
  scripts/bench/scaling_table.py --write   rewrite the table in docs/scaling.md
  scripts/bench/scaling_table.py --check   exit 1 when the committed table differs from the files
  scripts/bench/scaling_table.py --print   print the table
  scripts/bench/scaling_table.py FILE.json [...]   print the table of the given files

The table sits between `<!-- scaling:begin -->` and `<!-- scaling:end -->`."""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scaling.md"
RESULTS = ROOT / "docs" / "results" / "scaling"
BEGIN, END = "<!-- scaling:begin -->", "<!-- scaling:end -->"


def long_lines(r):  # runs before --long have no "joined": their corpora joined half of the lines
    return r.get("joined", 0.5) == 1


def pairs(r):
    return f"{r['pairs_kept']:,}" + (" (long lines)" if long_lines(r) else "")


def characters(r):  # runs before data.spm_characters do not report the sample's characters
    return f"{r['spm_characters'] / 1e6:.1f}" if "spm_characters" in r else "-"


COLUMNS = [
    ("pairs (kept)", pairs),
    ("SentencePiece lines (sampled / read)", lambda r: f"{r['spm_sampled']:,} / {r['spm_lines']:,}"),
    ("SentencePiece M characters", characters),
    ("sampling s", lambda r: f"{r['tokenizer_sample_s']:.1f}"),
    ("SentencePiece s (threads)", lambda r: f"{r['tokenizer_train_s']:.1f} ({r['spm_threads']})"),
    ("encoding s", lambda r: f"{r['encode_s']:.1f}"),
    ("prepare s (wall)", lambda r: f"{r['prepare_wall_s']:.0f}"),
    ("file MB", lambda r: f"{r['corpus_file_mb']:.1f}"),
    ("prepare peak RSS MB", lambda r: f"{r['prepare_peak_rss_mb']:.0f}"),
    ("start-up s, no file / file", lambda r: f"{r['startup_without_file_s']:.2f} / "
                                             f"{r['startup_with_file_s']:.2f}"),
    ("first step s, no file / file", lambda r: f"{r['first_step_without_file_s']:.1f} / "
                                               f"{r['first_step_with_file_s']:.1f}"),
    ("train peak RSS MB, no file / file", lambda r: f"{r['train_peak_rss_without_file_mb']:.0f} / "
                                                    f"{r['train_peak_rss_with_file_mb']:.0f}"),
    ("target tokens/s", lambda r: f"{r['tokens_per_s']:.0f}"),
]


def table(files):
    rows = sorted((json.loads(Path(f).read_text()) for f in files),
                  key=lambda r: (long_lines(r), r["pairs_kept"]))
    if not rows:
        return ("No measurements yet: run `scripts/bench/bench_scaling.sh`, then "
                "`scripts/bench/scaling_table.py --write`.\n")
    lines = ["| " + " | ".join(name for name, _ in COLUMNS) + " |",
             "|" + "|".join(" --- " for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(cell(r) for _, cell in COLUMNS) + " |" for r in rows]
    hosts = {}  # each host, commit and date, with the rows measured there
    for r in rows:
        host = f"{r['cpu']} ({r['cores']} cores), commit {r['commit']}, {r['date']}"
        hosts.setdefault(host, []).append(r["pairs"])
    measured = [f"{host} ({', '.join(names)})" for host, names in sorted(hosts.items())]
    return "\n".join(lines) + "\n\nMeasured on " + "; ".join(measured) + ".\n"


def replaced(doc, body):
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    return doc[:start] + "\n" + body + doc[end:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--print", action="store_true")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.files:
        print(table(args.files), end="")
        return 0
    body = table(sorted(RESULTS.glob("*.json")))
    doc = DOC.read_text()
    if args.write:
        DOC.write_text(replaced(doc, body))
    elif args.check:
        if replaced(doc, body) != doc:
            print(f"{DOC}: the scaling table differs from {RESULTS}; run "
                  "scripts/bench/scaling_table.py --write", file=sys.stderr)
            return 1
    else:
        print(body, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
