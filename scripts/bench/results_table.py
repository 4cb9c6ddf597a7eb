#!/usr/bin/python3
"""Results tables, generated from the run folders in docs/results/.

Usage:
  scripts/bench/results_table.py --check    exit 1, naming the file, when a committed table differs
                                      from what the run folders give (run by ctest)
  scripts/bench/results_table.py --write    rewrite the tables in docs/results.md, README.md and
                                      docs/multilingual.md
  scripts/bench/results_table.py --print    print both generated tables
  scripts/bench/results_table.py RESULTS.json [...]
                                      one table of `nmt evaluate --json` files (one row per file
                                      and test set), e.g. checkpoints/multi30k_en_de/results.json

Each run folder docs/results/<run>/ holds run.json (date, commit, host, command, description,
training minutes/steps/tokens per second, how many checkpoints were averaged, tags),
config.json (the resolved config), results.json (`nmt evaluate --json`), metrics.jsonl.gz,
train.log.gz and hyp.<split>.<lang>.gz; a subfolder such as last5/ holds another evaluation of
the same training (results.json and hypotheses), described in run.json's "evaluations".
The generated tables sit between `<!-- results:begin -->` and `<!-- results:end -->`.
"""

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
# Table order of the hosts (docs/lab/performance.md#hosts): the AVX512-BF16 EPYCs together, newest first.
HOST_RANK = {"epyc-bf16": 0, "epyc-bf16-late": 0, "xeon-amx": 1, "epyc-avx2": 2, "h200": 3}
DIRECTIONS = {"en-de": "en→de", "de-en": "de→en", "en-fr": "en→fr", "en-cs": "en→cs",
              "en-xx": "en→de, fr, cs"}
# What the README's short table compares with. The only published figure the project has cited:
# Multi30k test_2016 en→de, 41.0 BLEU lowercased and tokenized (not sacreBLEU), a model trained
# to convergence; and the target the project set itself, ≥ 40 cased / ≥ 42 lowercased.
PUBLISHED = {"en-de": "41.0 (lc, tok.) ¹"}


class TableError(Exception):
    pass


def load_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TableError(f"{path}: {e}")


# ---- the old usage: a table of `nmt evaluate --json` files ----------------------------------

COLUMNS = ("direction", "test set", "BLEU", "BLEU (lc)", "chrF2", "loss", "PPL", "decoding",
           "checkpoint")


def evaluate_rows(path):
    entries = load_json(path)
    if not isinstance(entries, list):
        raise TableError(f"{path}: expected a JSON list (nmt evaluate --json)")
    for number, e in enumerate(entries, start=1):
        try:
            yield (e["direction"], e["test_set"], f"{e['bleu']:.2f}", f"{e['bleu_lowercase']:.2f}",
                   f"{e['chrf']:.2f}", f"{e['loss']:.3f}", f"{e['perplexity']:.2f}",
                   f"beam {e['beam']}, α {e['length_penalty']:g}, "
                   f"{e['sentences_per_s']:.0f} sent/s",
                   f"{Path(e['checkpoint']).name} (step {e['step']})")
        except (KeyError, TypeError, ValueError) as err:
            raise TableError(f"{path}: entry {number}: missing or bad {err}")


def evaluate_table(paths):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for path in paths:
        lines += ["| " + " | ".join(row) + " |" for row in evaluate_rows(path)]
    return "\n".join(lines)


# ---- run folders -------------------------------------------------------------------------------

def scores_by_direction(path):
    """{direction: {test_set: {bleu, bleu_lowercase, chrf}}} of one results.json, directions in
    file order (a model of several pairs has one entry per pair and test set)."""
    entries = load_json(path)
    if not isinstance(entries, list):
        raise TableError(f"{path}: expected a JSON list (nmt evaluate --json)")
    try:
        keys = ("bleu", "bleu_lowercase", "chrf")
        out = {}
        for e in entries:
            out.setdefault(e["direction"], {})[e["test_set"]] = {k: e[k] for k in keys}
        return out
    except (KeyError, TypeError) as err:
        raise TableError(f"{path}: missing {err}")


def scores_of(path):
    """{test_set: {bleu, bleu_lowercase, chrf}} of a results.json of one direction."""
    by_direction = scores_by_direction(path)
    if len(by_direction) != 1:
        raise TableError(f"{path}: expected one direction, got {', '.join(by_direction)}")
    return next(iter(by_direction.values()))


def load_runs(runs_dir):
    runs = []
    for run_json in sorted(Path(runs_dir).glob("*/run.json")):
        run = load_json(run_json)
        folder = run_json.parent
        for key in ("name", "direction", "date", "host", "hardware", "description", "command"):
            if key not in run:
                raise TableError(f"{run_json}: missing key '{key}'")
        if run["name"] != folder.name:
            raise TableError(f"{run_json}: name '{run['name']}' differs from its folder")
        if not (folder / "config.json").exists():
            raise TableError(f"{folder}: no config.json (the run's resolved config)")
        run["folder"] = folder
        run["evals"] = []
        if (folder / "results.json").exists():
            # A model of several pairs: one evaluation per pair, the first one the main row.
            by_direction = scores_by_direction(folder / "results.json")
            run["pairs"] = by_direction
            for i, (direction, scores) in enumerate(by_direction.items()):
                label = None if len(by_direction) == 1 else f"{DIRECTIONS.get(direction, direction)}"
                run["evals"].append(dict(label=label, averaged=run.get("averaged"),
                                         scores=scores, command=None, pair=label is not None))
        for e in run.get("evaluations", []):
            if "scores" in e:
                scores, label = e["scores"], e["description"] + " †"
            else:
                scores, label = scores_of(folder / e["dir"] / "results.json"), e["description"]
            run["evals"].append(dict(label=label, averaged=e.get("averaged"), scores=scores,
                                     command=e.get("command"), pair=False))
        runs.append(run)
    if not runs:
        raise TableError(f"{runs_dir}: no run folders (*/run.json)")
    return runs


def sort_key(run):
    host = HOST_RANK.get(run["host"], len(HOST_RANK))
    started = run.get("trained", run["date"])  # "YYYY-MM-DD hh:mm:ss to ...": newest first
    return (list(DIRECTIONS).index(run["direction"]), host, [-ord(c) for c in started], run["name"])


def fmt(scores, split, key="bleu"):
    value = scores.get(split, {}).get(key)
    return "" if value is None else f"{value:.2f}"


def test_2016(scores):
    parts = [fmt(scores, "test_2016_flickr", k) for k in ("bleu", "bleu_lowercase", "chrf")]
    return " / ".join(p for p in parts if p)


def training(run):
    t = run.get("training", {})
    parts = [f"{t['minutes']:g} min" if t.get("minutes") else "",
             f"{t['steps']:,} steps" if t.get("steps") else "",
             f"the steps of {t['step_matched_minutes']:g} min" if t.get("step_matched_minutes")
             else ""]
    return ", ".join(p for p in parts if p)


def code(text):
    return "`" + text.replace("|", "\\|") + "`" if text else ""


def averaged(value):
    """run.json's "averaged": a count of step checkpoints (the last N), or words (the window)."""
    if not value:
        return ""
    return f"last {value}" if isinstance(value, int) else str(value).replace("|", "\\|")


def eval_rows(run):
    """One row per evaluation of a run: the main one with the run's details, then the others."""
    name = f"[{run['name']}](results/{run['name']}/)"
    tps = run.get("training", {}).get("target_tokens_per_s")
    hardware = f"{DIRECTIONS[run['direction']]}, {run['hardware']}"
    for i, e in enumerate(run["evals"]):
        s, first = e["scores"], i == 0
        what = run["description"] if first else e["label"]
        if e["label"] and first:  # the first pair of a model of several
            what = f"{e['label']}: {what}"
        yield [name if first else "", run["date"] if first else "", hardware if first else "",
               what.replace("|", "\\|"),
               training(run) if first else ("(the same model)" if e["pair"] else "(the same run)"),
               f"{tps:,}" if first and tps else "",
               averaged(e["averaged"]),
               test_2016(s), fmt(s, "test_2017_flickr"), fmt(s, "test_2017_mscoco"), fmt(s, "val"),
               code(run["command"] if first else e["command"])]


def unevaluated_rows(runs):
    for run in runs:
        tps = run.get("training", {}).get("target_tokens_per_s")
        yield [f"[{run['name']}](results/{run['name']}/)", run["date"],
               f"{DIRECTIONS[run['direction']]}, {run['hardware']}",
               run["description"].replace("|", "\\|"), training(run), f"{tps:,}" if tps else "",
               code(run["command"])]


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def results_md_table(runs):
    runs = sorted(runs, key=sort_key)
    header = ["run", "date", "hardware", "what", "training", "tokens/s", "averaged",
              "test_2016 BLEU / lc / chrF2", "test_2017_flickr", "mscoco", "val", "command"]
    lines = markdown(header, [row for run in runs if run["evals"] for row in eval_rows(run)])
    lines += ["", "Runs stopped before an evaluation (their curves are in their folders):", ""]
    lines += markdown(["run", "date", "hardware", "what", "training", "tokens/s", "command"],
                      unevaluated_rows([run for run in runs if not run["evals"]]))
    return "\n".join(lines)


def mean(values):
    return sum(values) / len(values)


def readme_table(runs):
    lines = ["| direction, hardware | run | training | test_2016 BLEU / lc | val | "
             "published | command |", "|" + " --- |" * 7]
    for run in sorted((r for r in runs if "readme" in r.get("tags", [])), key=sort_key):
        s = run["evals"][0]["scores"]
        bleu = f"{fmt(s, 'test_2016_flickr')} / {fmt(s, 'test_2016_flickr', 'bleu_lowercase')}"
        val = fmt(s, "val")
        if len(run.get("pairs", {})) > 1:  # a model of several pairs: each target's cased BLEU
            pairs = run["pairs"].items()
            bleu = " · ".join(f"{d.split('-')[1]} {fmt(x, 'test_2016_flickr')}" for d, x in pairs)
            val = " · ".join(f"{d.split('-')[1]} {fmt(x, 'val')}" for d, x in pairs)
        lines.append("| " + " | ".join([
            f"{DIRECTIONS[run['direction']]}, {run['hardware']}",
            f"[{run['name'].replace('multi30k_', '')}](docs/results/{run['name']}/)", training(run),
            bleu, val, PUBLISHED.get(run["direction"], "—"),
            code(run.get("readme_command", run["command"]))]) + " |")
        group = next((t for t in run.get("tags", []) if t.startswith("default-")), None)
        members = [r for r in runs if group in r.get("tags", [])] if group else []
        if len(members) > 1:
            ss = [r["evals"][0]["scores"] for r in members]
            m = {k: mean([x["test_2016_flickr"][k] for x in ss]) for k in ("bleu", "bleu_lowercase",
                                                                         "chrf")}
            val = mean([x["val"]["bleu"] for x in ss])
            steps = [r["training"]["steps"] for r in members]
            lines.append("| " + " | ".join([
                "", f"mean of its {len(members)} hours", f"{min(steps):,}–{max(steps):,} steps",
                f"{m['bleu']:.2f} / {m['bleu_lowercase']:.2f}", f"{val:.2f}",
                "", "other seeds and hosts: [results.md](docs/results.md)"]) + " |")
    return "\n".join(lines)


def multilingual_table(runs):
    """docs/multilingual.md: the runs tagged "multilingual" (one model of several pairs, and the
    bilingual runs it is compared with), one row per run and pair."""
    header = ["model", "pair", "training", "test_2016 BLEU / chrF2", "test_2017_flickr BLEU / chrF2",
              "val BLEU"]
    rows = []
    chosen = [r for r in runs if "multilingual" in r.get("tags", []) and r.get("pairs")]
    for run in sorted(chosen, key=lambda r: (-len(r["pairs"]), r["name"])):
        for i, (direction, s) in enumerate(run["pairs"].items()):
            both = [" / ".join(p for p in (fmt(s, split), fmt(s, split, "chrf")) if p)
                    for split in ("test_2016_flickr", "test_2017_flickr")]
            rows.append([f"[{run['name']}](results/{run['name']}/)" if i == 0 else "",
                         DIRECTIONS.get(direction, direction), training(run) if i == 0 else "",
                         both[0], both[1], fmt(s, "val")])
    if not rows:
        return "No run is tagged \"multilingual\" yet."
    return "\n".join(markdown(header, rows))


def replace_block(text, table, path):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise TableError(f"{path}: needs exactly one {BEGIN} ... {END} block")
    before, rest = text.split(BEGIN)
    after = rest.split(END)[1]
    return f"{before}{BEGIN}\n{table}\n{END}{after}"


def targets(root, runs_dir):
    runs = load_runs(runs_dir)
    return [(root / "docs" / "results.md", results_md_table(runs)),
            (root / "README.md", readme_table(runs)),
            (root / "docs" / "multilingual.md", multilingual_table(runs))]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], usage=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--print", action="store_true")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root")
    parser.add_argument("files", nargs="*", help="nmt evaluate --json files")
    args = parser.parse_args(argv)
    try:
        if args.files:
            print(evaluate_table(args.files))
            return 0
        if not (args.check or args.write or args.print):
            print(__doc__.strip(), file=sys.stderr)
            return 2
        stale = []
        for path, table in targets(args.root, args.root / "docs" / "results"):
            if args.print:
                print(f"{path}:\n{table}\n")
                continue
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            new = replace_block(text, table, path)
            if new != text:
                if args.write:
                    path.write_text(new, encoding="utf-8")
                    print(f"results_table: wrote {path}")
                else:
                    stale.append(path)
        for path in stale:
            print(f"results_table: error: the table in {path} differs from what docs/results/*/ "
                  "gives; run scripts/bench/results_table.py --write (never edit it by hand)",
                  file=sys.stderr)
        return 1 if stale else 0
    except TableError as e:
        print(f"results_table: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
