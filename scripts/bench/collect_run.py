#!/usr/bin/python3
"""Copies a finished run from checkpoints/<name>/ into docs/results/<name>/ as data, the way the
other run folders are kept (scripts/bench/results_table.py reads them), and writes its run.json.

Usage:
  scripts/bench/collect_run.py NAME --description TEXT --command TEXT [--tags a,b] [--averaged TEXT]
                         [--host epyc-bf16] [--hardware "2-core CPU"] [--host-cpu TEXT]
                         [--commit SHA] [--note TEXT] [--step-matched MINUTES] [--force]

Copies config.json and results.json; gzips metrics.jsonl, train.log and every hyp.<split>.<lang>.
run.json takes the direction from results.json (src-xx for a model of several pairs), the
training's start, end, steps and target tokens/s from train.log, the commit from git, and the
rest from the options. No checkpoint is copied (never commit checkpoints).
"""

import argparse
import datetime
import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST_CPU = ("2 cores of an AMD EPYC with AVX512-BF16 (KVM), 24 GiB, no GPU; LibTorch 1.13 "
            "(Debian), bf16 autocast")


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def training_of(log_text):
    """Start and end (host clock), steps and target tokens/s from a train.log."""
    stamps = re.findall(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ", log_text, re.M)
    steps = re.findall(r"finished \(.*?\) after (\d+) steps", log_text)
    tps = re.findall(r"throughput: (\d+) target tokens/s", log_text)
    if not stamps or not steps:
        raise SystemExit("collect_run: error: train.log has no finished line: is the run done?")
    start, end = (datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S") for s in (stamps[0], stamps[-1]))
    training = {"minutes": round((end - start).total_seconds() / 60), "steps": int(steps[-1])}
    if tps:
        training["target_tokens_per_s"] = int(tps[-1])
    return stamps[0], stamps[-1], training


def direction_of(results):
    directions = list(dict.fromkeys(r["direction"] for r in results))
    if len(directions) == 1:
        return directions[0]
    return directions[0].split("-")[0] + "-xx"


def main(argv):
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("name")
    parser.add_argument("--description", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--tags", default="")
    parser.add_argument("--averaged", default="8 snapshots, last 30%")
    parser.add_argument("--host", default="epyc-bf16")
    parser.add_argument("--hardware", default="2-core CPU")
    parser.add_argument("--host-cpu", default=HOST_CPU)
    parser.add_argument("--commit", help="the commit whose nmt trained it (default: HEAD)")
    parser.add_argument("--note", default="", help="added to 'trained', e.g. what ran beside it")
    parser.add_argument("--step-matched", type=float, metavar="MINUTES",
                        help="the run took the steps of MINUTES quiet minutes (max_steps), not a "
                        "time budget: recorded instead of its wall-clock minutes")
    parser.add_argument("--force", action="store_true", help="replace an existing folder")
    args = parser.parse_args(argv)
    source, dest = ROOT / "checkpoints" / args.name, ROOT / "docs" / "results" / args.name
    for needed in ("config.json", "results.json", "metrics.jsonl", "train.log"):
        if not (source / needed).exists():
            raise SystemExit(f"collect_run: error: {source / needed} is missing")
    if dest.exists() and not args.force:
        raise SystemExit(f"collect_run: error: {dest} exists (--force replaces it)")
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "results.json"):
        shutil.copyfile(source / name, dest / name)
    for plain in [source / "metrics.jsonl", source / "train.log"] + sorted(source.glob("hyp.*")):
        if plain.suffix == ".gz":
            continue
        with open(plain, "rb") as f, gzip.GzipFile(dest / (plain.name + ".gz"), "wb", mtime=0) as g:
            shutil.copyfileobj(f, g)
    log = (source / "train.log").read_text(encoding="utf-8")
    start, end, training = training_of(log)
    if args.step_matched:
        del training["minutes"]
        training["step_matched_minutes"] = args.step_matched
    results = json.loads((source / "results.json").read_text(encoding="utf-8"))
    commit = git("rev-parse", args.commit or "HEAD")
    run = {
        "name": args.name,
        "direction": direction_of(results),
        "date": start[:10],
        "trained": f"{start} to {end} (host clock, UTC{'; ' + args.note if args.note else ''})",
        "commit": commit,
        "commit_date": git("show", "-s", "--format=%cI", commit),
        "host": args.host,
        "host_cpu": args.host_cpu,
        "hardware": args.hardware,
        "description": args.description,
        "command": args.command,
        "training": training,
        "evaluations": [],
        "tags": [t for t in args.tags.split(",") if t],
        "averaged": args.averaged,
    }
    (dest / "run.json").write_text(json.dumps(run, indent=2, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    print(f"collect_run: wrote {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
