#!/usr/bin/python3
"""Plot a training run's metrics.jsonl as a PNG.

Each line of metrics.jsonl is one JSON object:
  {"kind": "train", "step", "epoch", "loss", "ppl", "lr", "tokens_per_s", "elapsed_s", "rss_mb",
   "heap_mb"}
  {"kind": "valid", "step", "epoch", "loss", "ppl", "bleu" (absent or null: not measured), "elapsed_s",
   and "bleu_<split>" for each of train.monitor_splits}
Other kinds are ignored. The figure has three panels sharing the step axis: train and valid
loss, valid perplexity, valid BLEU (best point marked) and the monitored splits' BLEU (dashed).
The top axis shows elapsed minutes. For each BLEU series the script prints when it first
reached --target (default 35): step and minutes of training.

Usage:
  scripts/plot_metrics.py RUN_DIR/metrics.jsonl [--output FILE.png] [--title TEXT] [--target B]
The default output is the input path with .png (RUN_DIR/metrics.png). Needs Debian's
python3-matplotlib; run it with /usr/bin/python3. Exits 1 with one line on stderr for a
missing, empty or malformed file.
"""

import argparse
import gzip
import json
import math
import sys
from pathlib import Path

REQUIRED = {"train": ("step", "loss"), "valid": ("step", "loss")}


class MetricsError(Exception):
    """A problem with the input file; the message names the file and line."""


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def load_records(path):
    """Returns (train, valid): lists of dicts sorted by step."""
    if not path.is_file():
        raise MetricsError(f"{path}: no such file")
    train, valid = [], []
    try:
        # split("\n"), not splitlines(): a string value may hold U+2028 or U+0085.
        text = (gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz"
                else path.read_text(encoding="utf-8"))  # docs/results/ keeps it gzipped
        lines = text.split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise MetricsError(f"{path}: cannot read ({e})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise MetricsError(f"{path}:{number}: not valid JSON ({e.msg})") from None
        if not isinstance(record, dict):
            raise MetricsError(f"{path}:{number}: expected a JSON object")
        kind = record.get("kind")
        if kind not in REQUIRED:
            continue
        for key in REQUIRED[kind]:
            if not is_number(record.get(key)):
                raise MetricsError(
                    f"{path}:{number}: '{kind}' record needs a number '{key}'")
        (train if kind == "train" else valid).append(record)
    if not train and not valid:
        raise MetricsError(f"{path}: no 'train' or 'valid' records (empty file?)")
    train.sort(key=lambda r: r["step"])
    valid.sort(key=lambda r: r["step"])
    return train, valid


def column(records, key):
    """Values of `key` as floats; missing or null values become NaN (a gap in the line)."""
    return [float(r[key]) if is_number(r.get(key)) else math.nan for r in records]


def step_to_minutes(train, valid):
    """(forward, inverse) step <-> elapsed-minutes maps for a secondary axis, or None without
    timing. Piecewise linear through the records; steps made strictly and minutes weakly
    increasing (a resumed run may repeat steps)."""
    import numpy as np

    points = sorted((r["step"], r["elapsed_s"] / 60) for r in train + valid
                    if is_number(r.get("elapsed_s")))
    steps, minutes = [], []
    for step, minute in points:
        if not steps or step > steps[-1]:
            steps.append(step)
            minutes.append(max(minute, minutes[-1]) if minutes else minute)
    if steps and steps[0] > 0 and minutes[0] >= 0:
        steps.insert(0, 0)  # training starts at step 0, minute 0
        minutes.insert(0, 0.0)
    if len(steps) < 2 or minutes[-1] <= minutes[0]:
        return None
    # Continue at the average rate beyond the records (np.interp alone would be flat there), so
    # the axis margins get evenly spaced ticks too.
    rate = (minutes[-1] - minutes[0]) / (steps[-1] - steps[0])
    reach = 10 * (steps[-1] - steps[0]) + 1
    steps = [steps[0] - reach] + steps + [steps[-1] + reach]
    minutes = [minutes[0] - rate * reach] + minutes + [minutes[-1] + rate * reach]
    steps, minutes = np.asarray(steps, dtype=float), np.asarray(minutes, dtype=float)
    return (lambda x: np.interp(x, steps, minutes), lambda m: np.interp(m, minutes, steps))


def import_pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise MetricsError("needs matplotlib: apt-get install python3-matplotlib, and run "
                           "this script with /usr/bin/python3") from None
    return plt


def plot_loss(ax, train, valid):
    if train:
        ax.plot(column(train, "step"), column(train, "loss"), lw=0.8, alpha=0.8,
                label="train loss", color="tab:blue")
    if valid:
        ax.plot(column(valid, "step"), column(valid, "loss"), marker="o", ms=3,
                label="valid loss", color="tab:orange")
    ax.set_ylabel("loss (nats/token)")
    ax.legend(loc="upper right")


def plot_ppl(ax, valid):
    ppl = column(valid, "ppl")
    finite = [p for p in ppl if math.isfinite(p) and p > 0]
    if not finite:
        ax.text(0.5, 0.5, "no valid perplexity recorded", ha="center", va="center",
                transform=ax.transAxes, color="gray")
    else:
        ax.plot(column(valid, "step"), ppl, marker="o", ms=3, color="tab:orange")
        if max(finite) / min(finite) > 20:
            ax.set_yscale("log")
    ax.set_ylabel("valid PPL")


def plot_bleu(ax, valid, to_minutes):
    steps, bleu = column(valid, "step"), column(valid, "bleu")
    scored = [(s, b) for s, b in zip(steps, bleu) if math.isfinite(b)]
    if not scored:
        ax.text(0.5, 0.5, "no BLEU recorded", ha="center", va="center",
                transform=ax.transAxes, color="gray")
    else:
        ax.plot(steps, bleu, marker="o", ms=3, color="tab:green")
        best_step, best = max(scored, key=lambda p: p[1])
        note = f"best {best:.2f} @ step {best_step:,.0f}"
        if to_minutes:
            note += f" ({float(to_minutes[0](best_step)):.0f} min)"
        ax.plot([best_step], [best], marker="*", ms=12, color="tab:red")
        right_half = best_step > (min(s for s, _ in scored) + max(s for s, _ in scored)) / 2
        ax.annotate(note, (best_step, best), textcoords="offset points",
                    xytext=(-8 if right_half else 8, -16), ha="right" if right_half else "left")
    for key in monitored_keys(valid):
        ax.plot(steps, column(valid, key), ls="--", marker=".", ms=3,
                label=key[len("bleu_"):] + " (greedy)")
    if scored and monitored_keys(valid):
        ax.plot([], [], color="tab:green", marker="o", ms=3, label="val (greedy)")
        ax.legend(loc="lower right")
    ax.set_ylabel("BLEU")
    ax.set_xlabel("step")


def monitored_keys(valid):
    """The bleu_<split> keys of the valid records (train.monitor_splits), in first-seen order."""
    keys = []
    for record in valid:
        keys += [k for k in record if k.startswith("bleu_") and k not in keys]
    return keys


def first_reached(valid, key, target):
    """(step, elapsed minutes or None) of the first valid record whose `key` >= target."""
    for record in valid:
        value = record.get(key)
        if is_number(value) and value >= target:
            elapsed = record.get("elapsed_s")
            return record["step"], elapsed / 60 if is_number(elapsed) else None
    return None


def plot(train, valid, output, title):
    plt = import_pyplot()
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(9, 10), constrained_layout=True)
    plot_loss(axes[0], train, valid)
    plot_ppl(axes[1], valid)
    to_minutes = step_to_minutes(train, valid)
    plot_bleu(axes[2], valid, to_minutes)
    if to_minutes:
        top = axes[0].secondary_xaxis("top", functions=to_minutes)
        top.set_xlabel("elapsed (minutes)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.suptitle(title)
    try:
        fig.savefig(output, dpi=110)
    except OSError as e:
        raise MetricsError(f"{output}: cannot write ({e.strerror or e})") from None
    finally:
        plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description="Plot a run's metrics.jsonl as a PNG.")
    parser.add_argument("metrics", type=Path, help="path to metrics.jsonl")
    parser.add_argument("--output", "-o", type=Path,
                        help="PNG to write (default: the input path with .png)")
    parser.add_argument("--title", help="figure title (default: the run directory's name)")
    parser.add_argument("--target", type=float, default=35.0,
                        help="report when each BLEU series first reached this (default 35)")
    args = parser.parse_args()
    output = args.output or args.metrics.with_suffix(".png")
    title = args.title or args.metrics.resolve().parent.name
    try:
        train, valid = load_records(args.metrics)
        plot(train, valid, output, title)
    except MetricsError as e:
        print(f"plot_metrics: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {output} ({len(train)} train, {len(valid)} valid records)")
    for key in ["bleu"] + monitored_keys(valid):
        name = "val" if key == "bleu" else key[len("bleu_"):]
        reached = first_reached(valid, key, args.target)
        if reached is None:
            print(f"{name}: greedy BLEU never reached {args.target:g}")
        else:
            minutes = "" if reached[1] is None else f", {reached[1]:.1f} min of training"
            print(f"{name}: greedy BLEU first >= {args.target:g} at step {reached[0]}{minutes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
