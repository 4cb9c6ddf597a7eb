#!/usr/bin/python3
"""What a trained model does beyond translating, measured on Multi30k: an ensemble of
two runs against each member alone, and terminology constraints taken from the references.

Usage:
  scripts/bench/bench_model_use.py ensemble [--out DIR] [--split S] [--beam N] CKPT_A CKPT_B
      nmt evaluate on S (default test_2016_flickr) with A, B and the ensemble A,B, beam N
      (default 5), into DIR/ensemble.json (default DIR: docs/results/model_use_<A's run>).
  scripts/bench/bench_model_use.py constraints [--out DIR] [--split S] [--beam N] CKPT
      One constraint per sentence of S: the reference word (punctuation stripped) rarest in the
      training targets. nmt translate with and without --constraints; the share of sentences
      whose output contains their constraint, and BLEU and chrF2 of both, into
      DIR/constraints.json. The constraints file and the hypotheses stay in
      build/model_use/<DIR's name>/ (not committed: they are derived from the test set).
  scripts/bench/bench_model_use.py [table] [--write | --check] DIR
      DIR/table.md from the two JSON files, also copied into docs/usage.md between its
      model-use markers (--write writes both; --check exits 1 when either differs from what the
      JSON gives; ctest ModelUseTables.* runs it).

Options after "--" go to nmt (e.g. -- --threads 2). Data: the checkpoint config's data.dir
(data/multi30k by default, as scripts/get_multi30k.sh leaves it).
"""

import argparse
import collections
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/
import reference_metrics  # noqa: E402  scripts/reference_metrics.py
from host_info import host_info  # noqa: E402  scripts/host_info.py

ROOT = Path(__file__).resolve().parents[2]
NMT = ROOT / "build" / "nmt"
WORK = ROOT / "build" / "model_use"  # hypotheses and the constraints file: not committed
PUNCTUATION = ".,;:!?\"'()[]«»„“”"


def read_text(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def split_file(data_dir, split, lang):
    for name in (f"{split}.{lang}", f"{split}.{lang}.gz"):
        if (data_dir / name).exists():
            return data_dir / name
    raise SystemExit(f"error: no {split}.{lang}[.gz] in {data_dir} (run scripts/get_multi30k.sh)")


def run_dir_name(checkpoint):
    path = Path(checkpoint)
    return (path if path.is_dir() else path.parent).resolve().name


def metrics(hyps, refs):
    stats = reference_metrics.bleu_statistics(hyps, refs)
    bleu = reference_metrics.bleu_from_statistics(*stats, effective_order=False)[0]
    chrf = reference_metrics.chrf_from_statistics(reference_metrics.chrf_statistics(hyps, refs))
    return {"bleu": round(bleu, 2), "chrf": round(chrf, 2)}


def meta(args, command):
    info = host_info()
    return {"commit": info["commit"], "cpu": info["cpu"], "cores": info["cores"],
            "date": info["date"], "command": command, "split": args.split, "beam": args.beam}


def ensemble(args, extra):
    out = Path(args.out or ROOT / "docs" / "results" / f"model_use_{run_dir_name(args.a)}")
    out.mkdir(parents=True, exist_ok=True)
    work = WORK / out.name
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, checkpoint in (("A", args.a), ("B", args.b), ("A+B", f"{args.a},{args.b}")):
        report = work / f"ensemble_{name}.json"
        start = time.time()
        subprocess.run([str(NMT), "evaluate", "--checkpoint", checkpoint, "--split", args.split,
                        "--beam", str(args.beam), "--output", str(work / f"hyp_{name}"),
                        "--json", str(report), *extra], check=True)
        result = json.loads(report.read_text())[0]
        rows.append({"member": name, "checkpoint": checkpoint, "bleu": round(result["bleu"], 2),
                     "chrf": round(result["chrf"], 2),
                     "sentences_per_s": round(result["sentences_per_s"], 1),
                     "seconds": round(time.time() - start, 1)})
        print(rows[-1], flush=True)
    best = max(rows[0]["bleu"], rows[1]["bleu"])
    result = {**meta(args, "scripts/bench/bench_model_use.py " + " ".join(sys.argv[1:])),
              "rows": rows, "gain_over_better_member": round(rows[2]["bleu"] - best, 2),
              "goal": "+0.5 BLEU over the better member"}
    (out / "ensemble.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"ensemble {rows[2]['bleu']} against {best}: {result['gain_over_better_member']:+.2f}")


def rarest_words(refs, train_refs):
    counts = collections.Counter(w.strip(PUNCTUATION) for line in train_refs for w in line.split())
    chosen = []
    for line in refs:
        words = [w.strip(PUNCTUATION) for w in line.split()]
        words = [w for w in words if w]
        # rarest in training (unseen counts 0), ties: the longer, then the first
        chosen.append(min(words, key=lambda w: (counts[w], -len(w))) if words else "")
    return chosen


def constraints(args, extra):
    out = Path(args.out or ROOT / "docs" / "results" / f"model_use_{run_dir_name(args.checkpoint)}")
    out.mkdir(parents=True, exist_ok=True)
    work = WORK / out.name
    work.mkdir(parents=True, exist_ok=True)
    path = Path(args.checkpoint)
    config = json.loads(((path if path.is_dir() else path.parent) / "config.json").read_text())
    data = config["data"]
    data_dir = ROOT / data["dir"] if not Path(data["dir"]).is_absolute() else Path(data["dir"])
    src = read_text(split_file(data_dir, args.split, data["src_lang"]))
    refs = read_text(split_file(data_dir, args.split, data["tgt_lang"]))
    train_refs = read_text(split_file(data_dir, "train", data["tgt_lang"]))
    words = rarest_words(refs, train_refs)
    (work / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (work / "constraints.jsonl").write_text(
        "".join(json.dumps([w] if w else [], ensure_ascii=False) + "\n" for w in words),
        encoding="utf-8")
    runs = {}
    for name, options in (("without", []),
                          ("with", ["--constraints", str(work / "constraints.jsonl")])):
        hyp = work / f"hyp_{name}.txt"
        start = time.time()
        subprocess.run([str(NMT), "translate", "--checkpoint", args.checkpoint, "--beam",
                        str(args.beam), "--input", str(work / "src.txt"), "--output", str(hyp),
                        *options, *extra], check=True)
        seconds = time.time() - start
        hyps = read_text(hyp)
        kept = sum(1 for h, w in zip(hyps, words) if w and w in h)
        runs[name] = {**metrics(hyps, refs), "seconds": round(seconds, 1),
                      "sentences_per_s": round(len(hyps) / seconds, 1),
                      "constraints_in_output": kept}
        print(name, runs[name], flush=True)
    total = sum(1 for w in words if w)
    unseen = sum(1 for w in words if w and w not in " ".join(train_refs))
    result = {**meta(args, "scripts/bench/bench_model_use.py " + " ".join(sys.argv[1:])),
              "checkpoint": args.checkpoint, "constraints": total,
              "constraints_unseen_in_training": unseen,
              "satisfied_share": round(runs["with"]["constraints_in_output"] / total, 4),
              "without": runs["without"], "with": runs["with"],
              "rule": "one per sentence: the reference word rarest in the training targets"}
    (out / "constraints.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"satisfied {result['satisfied_share']:.2%}; BLEU {runs['without']['bleu']} -> "
          f"{runs['with']['bleu']}")


def table(folder):
    lines = []
    ens = folder / "ensemble.json"
    if ens.exists():
        e = json.loads(ens.read_text())
        lines += [f"Ensemble, {e['split']}, beam {e['beam']}; commit {e['commit']}, {e['cpu']} "
                  f"({e['cores']} cores), {e['date']}.", "",
                  "| model | BLEU | chrF2 | sent/s |", "| --- | ---: | ---: | ---: |"]
        for row in e["rows"]:
            lines.append(f"| {row['member']} `{row['checkpoint']}` | {row['bleu']:.2f} | "
                         f"{row['chrf']:.2f} | {row['sentences_per_s']:.1f} |")
        lines += ["", f"Ensemble against the better member: {e['gain_over_better_member']:+.2f} "
                  f"BLEU (goal: {e['goal']}).", ""]
    con = folder / "constraints.json"
    if con.exists():
        c = json.loads(con.read_text())
        lines += [f"Constraints, {c['split']}, beam {c['beam']}, `{c['checkpoint']}`: {c['rule']} "
                  f"({c['constraints']} constraints, {c['constraints_unseen_in_training']} never "
                  f"seen in training); commit {c['commit']}, {c['date']}.", "",
                  "| run | constraints in the output | BLEU | chrF2 | sent/s (whole run) |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for name in ("without", "with"):
            r = c[name]
            lines.append(f"| {name} | {r['constraints_in_output']} of {c['constraints']} | "
                         f"{r['bleu']:.2f} | {r['chrf']:.2f} | {r['sentences_per_s']:.1f} |")
        lines.append("")
    return "\n".join(lines)


USAGE = ROOT / "docs" / "usage.md"
BEGIN, END = "<!-- model-use:begin -->", "<!-- model-use:end -->"


def with_usage_section(text, folder):
    """docs/usage.md with the section between the markers replaced by `text`."""
    usage = USAGE.read_text(encoding="utf-8")
    if BEGIN not in usage or END not in usage:
        raise SystemExit(f"error: {USAGE} has no {BEGIN} ... {END} markers")
    head, rest = usage.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    source = f"<!-- generated by scripts/bench/bench_model_use.py --write {folder.relative_to(ROOT)} -->"
    return f"{head}{BEGIN}\n{source}\n\n{text}{END}{tail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("ensemble", "constraints"):
        p = sub.add_parser(name)
        p.add_argument("--out")
        p.add_argument("--split", default="test_2016_flickr")
        p.add_argument("--beam", type=int, default=5)
        if name == "ensemble":
            p.add_argument("a")
            p.add_argument("b")
        else:
            p.add_argument("checkpoint")
    p = sub.add_parser("table")
    p.add_argument("--write", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("folder")
    argv = sys.argv[1:]
    if argv and argv[0] in ("--write", "--check"):
        argv = ["table"] + argv
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = parser.parse_args(argv)
    if args.command == "ensemble":
        ensemble(args, extra)
    elif args.command == "constraints":
        constraints(args, extra)
    else:
        folder = Path(args.folder).resolve()
        text = table(folder)
        usage = with_usage_section(text, folder)
        if args.check:
            stale = [str(path) for path, wanted in ((folder / "table.md", text), (USAGE, usage))
                     if not path.exists() or path.read_text(encoding="utf-8") != wanted]
            if stale:
                print(f"differs from {folder}'s JSON: {', '.join(stale)}; run "
                      f"scripts/bench/bench_model_use.py --write {folder}", file=sys.stderr)
                return 1
            return 0
        if args.write:
            (folder / "table.md").write_text(text, encoding="utf-8")
            USAGE.write_text(usage, encoding="utf-8")
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
