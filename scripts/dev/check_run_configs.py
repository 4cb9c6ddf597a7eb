#!/usr/bin/python3
"""Re-checks the resolved config of every run folder in docs/results/ (needs a built nmt).

Usage:
  scripts/dev/check_run_configs.py [--nmt build/nmt] [RUN ...]

For each run: runs the `nmt train ... --print-config` command its run.json records
("config.command"; older runs have none) and compares the output with its config.json, then
checks that config against what the run itself recorded:
  - the parameter count, precision and data-parallel workers on train.log's device line;
  - the learning rate of every logged step in metrics.jsonl, recomputed from train.lr,
    warmup (steps, or a share of the budget; warmup_steps in older runs), schedule and
    max_minutes (src/train/schedule.cpp);
  - the label smoothing: the mean training loss over steps 2,000-3,000 lies in that smoothing's
    band (0.1 runs 2.1-3.2, 0.2 runs 3.3-3.8, 0.3 4.3: the smoothing term dominates the level).
Prints one line per run; exits 1 when any run fails.
"""

import argparse
import gzip
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMOOTHING_BANDS = {0.1: (0.0, 3.2), 0.2: (3.25, 4.0), 0.3: (4.0, 99.0)}


def parameters(cfg):
    """Parameter count of the model a config describes (joint vocabulary, as all runs use)."""
    m, d = cfg["model"], cfg["model"]["d_model"]
    vocab, ff = cfg["data"]["vocab_size"], m["d_ff"]
    attention, ffn, norm = 4 * (d * d + d), 2 * d * ff + ff + d, 2 * d
    encoder = m["encoder_layers"] * (attention + ffn + 2 * norm)
    decoder = m["decoder_layers"] * (2 * attention + ffn + 3 * norm)
    tables = 1 + (not m["share_embeddings"]) + (not m["tie_output"])
    positions = 0 if m["positions"] == "sinusoidal" else 2 * m["max_len"] * d
    final_norms = 2 * norm if m["norm"] == "pre" else 0
    return encoder + decoder + vocab * d * tables + vocab + positions + final_norms


def check_log(folder, cfg):
    log = folder / "train.log.gz"
    if not log.exists():
        return []
    text = gzip.open(log, "rt", encoding="utf-8").read()
    m = re.search(r"precision (\w+), (\d+) parameters", text)
    if not m:
        return []
    workers = re.search(r"(\d+) data-parallel workers", text)
    workers = int(workers.group(1)) if workers else 1
    t = cfg["train"]
    results = [(parameters(cfg) == int(m.group(2)),
                f"{parameters(cfg)} parameters = train.log's {m.group(2)}")]
    if t["precision"] != "auto":
        results.append((t["precision"] == m.group(1), f"precision {t['precision']} = {m.group(1)}"))
    if "cuda" not in t["device"]:
        want = (2 if m.group(1) == "fp32" else 1) if t["cpu_workers"] == 0 else t["cpu_workers"]
        results.append((want == workers, f"cpu_workers {t['cpu_workers']}: {want} = {workers}"))
    return results


def expected_lr(t, step, elapsed_s):
    s = max(step, 1)
    p = min(max(elapsed_s / (60.0 * t["max_minutes"]), 0.0), 1.0) if t["max_minutes"] > 0 else 0.0
    warmup = t.get("warmup", t.get("warmup_steps"))
    if isinstance(warmup, str) and warmup.endswith("%"):
        share = float(warmup[:-1]) / 100  # a share of the budget ramps on progress
        if t["schedule"] == "inverse_sqrt":
            return t["lr"] * min(p / share, math.sqrt(share / p)) if p > 0 else 0.0
        ramp = min(1.0, p / share)
    else:
        warmup = int(warmup)
        ramp = min(1.0, s / warmup) if warmup > 0 else 1.0
    if t["schedule"] == "linear":
        return t["lr"] * ramp * (1 - p)
    if t["schedule"] == "cosine":
        return t["lr"] * ramp * 0.5 * (1 + math.cos(math.pi * p))
    if t["schedule"] == "constant":
        return t["lr"] * ramp
    if warmup <= 0:
        return t["lr"] / math.sqrt(s)
    return t["lr"] * min(s / warmup, math.sqrt(warmup / s))


def check_metrics(folder, cfg):
    path = folder / "metrics.jsonl.gz"
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    train = [r for r in records if r.get("kind") == "train" and "lr" in r and "elapsed_s" in r]
    t, results = cfg["train"], []
    errors = sorted(abs(r["lr"] - e) / e for r in train
                    for e in [expected_lr(t, r["step"], r["elapsed_s"])] if e > 0.05 * t["lr"])
    if errors:
        median, worst = errors[len(errors) // 2], errors[-1]
        results.append((median < 0.02 and worst < 0.10,
                        f"lr of {len(train)} logged steps: median error {100 * median:.2f}%"))
    band = [r["loss"] for r in train if 2000 <= r["step"] < 3000]
    if band and t["label_smoothing"] in SMOOTHING_BANDS:
        lo, hi = SMOOTHING_BANDS[t["label_smoothing"]]
        loss = sum(band) / len(band)
        results.append((lo <= loss < hi, f"label smoothing {t['label_smoothing']:g}: "
                                         f"training loss {loss:.2f} in [{lo:g}, {hi:g})"))
    return results


def differences(stored, printed, prefix=""):
    """The keys of `stored` whose value --print-config gives otherwise (keys added to nmt since
    the run, which the stored config lacks, are left out: they hold their defaults)."""
    out = []
    for key, value in stored.items():
        name = prefix + key
        if isinstance(value, dict) and isinstance(printed.get(key), dict):
            out += differences(value, printed[key], name + ".")
        elif printed.get(key, value) != value:
            out.append(f"{name} ({json.dumps(value)} against {json.dumps(printed.get(key))})")
    return out


def check_run(nmt, folder):
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    if not (folder / "config.json").exists():
        return [(True, "no config.json (not a training run): nothing to check")]
    stored = json.loads((folder / "config.json").read_text())
    if "warmup_steps" in stored["train"]:  # the key's name before train.warmup took a share
        stored["train"]["warmup"] = stored["train"].pop("warmup_steps")
    command = run.get("config", {}).get("command")
    if command is None:  # older run folders recorded no --print-config command
        results = [(True, "no recorded --print-config command: config.json's own checks")]
    else:
        args = shlex.split(command)
        if args[:2] != ["nmt", "train"] or args[-1] != "--print-config":
            return [(False,
                     "run.json's config.command is not an nmt train ... --print-config command")]
        p = subprocess.run([nmt] + args[1:], cwd=ROOT, capture_output=True, text=True)
        if p.returncode != 0:
            return [(False, f"--print-config failed: {p.stderr.strip()}")]
        # A shipped config that changed since (a new default) is not the run's fault: said, not
        # failed; the run is then checked against its own config.json.
        differ = differences(stored, json.loads(p.stdout))
        results = [(True, "config.json = --print-config" if not differ else
                    "the recorded command gives another config today (the shipped config "
                    "changed since): " + ", ".join(differ[:3]))]
    return results + check_log(folder, stored) + check_metrics(folder, stored)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nmt", default=str(ROOT / "build" / "nmt"))
    parser.add_argument("runs", nargs="*", help="run names (default: all)")
    args = parser.parse_args()
    folders = [ROOT / "docs" / "results" / r for r in args.runs] or sorted(
        p.parent for p in (ROOT / "docs" / "results").glob("*/run.json"))
    failed = 0
    for folder in folders:
        results = check_run(args.nmt, folder)
        bad = [text for ok, text in results if not ok]
        failed += bool(bad)
        print(("FAIL " if bad else "ok   ") + folder.name + ": " +
              "; ".join(bad or [text for _, text in results]))
    print(f"{len(folders) - failed} of {len(folders)} runs agree with their config.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
