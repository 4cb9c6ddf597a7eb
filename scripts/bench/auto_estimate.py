#!/usr/bin/python3
"""How well `auto` foresees a budget's training on this host: for each `auto` cell that
scripts/bench/budget_grid.sh kept (docs/results/budget_<corpus>_<minutes>min/auto*/), sizes the
same corpus and budget again now (`nmt train --config configs/auto.json ... --print-config`, which
measures this host as training would) and sets what it expects beside what the cell's run did.

Usage:
  scripts/bench/auto_estimate.py [--out FILE] [CELL_DIR ...]
      (default: every auto cell with a host speed; --out also writes the table, under a line
      naming the host, the commit and the date, to FILE: docs/results/auto_estimate.md)

Prints a markdown table, a row per cell:
  - the fp32 GFLOP/s of the cell's host and of this one (`nmt bench matmul --sizes 1024`), as
    hosts named alike differ;
  - target pieces/s: what the estimate expects (pieces of the corpus estimated from its bytes)
    and what the run reached (its log's throughput, real pieces);
  - epochs of the budget: expected now, expected by the cell's run, and reached (its steps /
    the steps of its epochs);
  - the choices now (dropout, label smoothing, batch tokens) and the cell's;
  - validating: the share of the run's time its validations took, and their cost (seconds of
    one x the run's throughput / the validation set's target pieces: a validation costs what
    training on that many times its pieces does; AutoAnchor::kValidationCost assumes 1.1).
An estimate that foresees the epochs makes the choices the rules were measured at.
"""

import argparse
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NMT = ROOT / "build" / "nmt"


def number(text):
    return float(text.replace(",", ""))


def expected(auto):
    """(pieces/s, epochs) of the budget an "auto" section's dropout reason gives."""
    why = auto["model.dropout"]["why"]
    match = re.search(r"at about ([\d,]+) target pieces/s"
                      r"(?:, less [\d.]+% validating(?: and a validation before the first step)?)?"
                      r"\), ([\d.]+) epochs of", why)
    if not match:
        raise SystemExit(f"auto_estimate.py: no budget in the dropout reason: {why}")
    return number(match.group(1)), float(match.group(2))


def choices(auto):
    return "/".join(str(auto[key]["value"])
                    for key in ("model.dropout", "train.label_smoothing", "data.batch_tokens"))


def log_of(cell):
    return gzip.open(cell / "train.log.gz", "rt", encoding="utf-8").read()


def validating(log):
    """(share of the run's seconds, cost) of its validations, from its log: their seconds, and
    the seconds of one x the throughput / the validation set's target pieces (+ an eos a pair)."""
    seconds = [float(s) for s in re.findall(r"valid step \d+ \|.*\| ([\d.]+) s", log)]
    elapsed = re.findall(r" tgt tok/s \| (\d+) s\n", log)
    sizes = re.findall(r"^\S+ \S+  [^:\n]+: \d+ pairs read, (\d+) kept.*\n\s+tokens: source \d+, "
                       r"target (\d+)", log, re.M)
    speed = re.search(r"throughput: (\d+) target tokens/s", log)
    if not seconds or not elapsed or len(sizes) < 2 or not speed:
        return float("nan"), float("nan")
    pieces = int(sizes[1][0]) + int(sizes[1][1])
    cost = sum(seconds) / len(seconds) * float(speed.group(1)) / pieces
    return sum(seconds) / float(elapsed[-1]), cost


def reached(cell, minutes):
    """(pieces/s, epochs) the cell's run trained at, from its train.log.gz: the epochs from its
    steps and the steps of an epoch (it validates at each epoch's end and once at the finish),
    or, within its first epoch, from its throughput x its minutes."""
    log = log_of(cell)
    pieces = re.search(r"  train: .*? (\d+) kept.*?\n\s+tokens: source \d+, target (\d+)", log,
                       re.S)
    speed = re.search(r"throughput: (\d+) target tokens/s", log)
    if not pieces or not speed:
        raise SystemExit(f"auto_estimate.py: {cell}/train.log.gz has no corpus size or throughput")
    rate = float(speed.group(1))
    validated = [int(step) for step in re.findall(r"valid step (\d+)", log)]
    if len(validated) >= 2:
        return rate, validated[-1] / (validated[-2] / (len(validated) - 1))
    per_epoch = int(pieces.group(1)) + int(pieces.group(2))  # + an eos per pair
    return rate, rate * minutes * 60 / per_epoch


def gflops_now():
    out = subprocess.run([str(NMT), "bench", "matmul", "--sizes", "1024"], check=True,
                         capture_output=True, text=True).stdout
    return next(float(line.split()[1]) for line in out.splitlines()
                if line.split()[:1] == ["ceiling"])


def size_now(config):
    data = config["data"]
    args = [str(NMT), "train", "--config", "configs/auto.json", "--print-config"]
    for key in ("dir", "src_lang", "tgt_lang"):
        args += ["--set", f"data.{key}={data[key]}"]
    for key in ("train", "valid"):
        args += ["--set", f"data.{key}={','.join(data[key])}"]
    args += ["--set", f"train.max_minutes={config['train']['max_minutes']:g}"]
    out = subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["auto"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("cells", nargs="*", type=Path)
    args = parser.parse_args()
    cells = args.cells or sorted(
        path.parent for path in (ROOT / "docs/results").glob("budget_*/auto*/config.json")
        if "fp32_gflops" in json.loads((path.parent / "host.json").read_text()))
    here = gflops_now()
    host = json.loads(subprocess.run(["/usr/bin/python3", str(ROOT / "scripts/host_info.py"),
                                      "--fp32-gflops", f"{here:g}"], check=True,
                                     capture_output=True, text=True).stdout)
    lines = [f"Sized on {host['cpu']} ({host['cores']} cores, {here:.0f} fp32 GFLOP/s) at "
             f"{host['commit']}, {host['date']}, by `scripts/bench/auto_estimate.py`.", "",
             "| cell | GFLOP/s then, now | pieces/s expected now | pieces/s reached | epochs "
             "expected now | expected then | reached | now − reached | choices now | then | "
             "validating: share, cost |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    print("\n".join(lines), flush=True)
    for cell in cells:
        config = json.loads((cell / "config.json").read_text())
        then = json.loads((cell / "host.json").read_text())
        now = size_now(config)
        rate_now, epochs_now = expected(now)
        _, epochs_then = expected(config["auto"])
        rate, epochs = reached(cell, config["train"]["max_minutes"])
        share, cost = validating(log_of(cell))
        name = f"{cell.parent.name.removeprefix('budget_')}/{cell.name}"
        lines.append(
            f"| {name} | {then['fp32_gflops']:.0f}, {here:.0f} | {rate_now:,.0f} | {rate:,.0f} | "
            f"{epochs_now:.1f} | {epochs_then:.1f} | {epochs:.1f} | "
            f"{100 * (epochs_now / epochs - 1):+.0f}% | {choices(now)} | "
            f"{choices(config['auto'])} | {100 * share:.1f}%, {cost:.2f} |")
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")

if __name__ == "__main__":
    sys.exit(main())
