#!/usr/bin/python3
"""CTranslate2 against nmt on the same checkpoint, from the folder that
scripts/ct2_check.sh translate writes: meta.json, runs.tsv (every timed command) and
hyp/<system>.<lang>.gz for the systems nmt_<search>, ct2_float32_<search>, ct2_int8_<search>
(search: greedy, beam<N>).

Usage:
  scripts/bench/ct2_compare.py DIR           write DIR/summary.json, DIR/table.md, DIR/differences.md
                                       and print the table; exit 1 when the goal is missed
  scripts/bench/ct2_compare.py --check DIR   exit 1 when those files differ from what DIR gives

For each search, every CTranslate2 output is compared line by line with nmt's (the share of
identical lines; every differing line of the float32 runs, with the source and both outputs, goes
to differences.md), and every output is scored against the reference: corpus BLEU (sacreBLEU's
13a defaults) and chrF2, by scripts/reference_metrics.py. Speed: sentences per second over the
whole command (model loading included) and after start-up (the run on the first sentence alone
taken off). The goal: float32 identical to nmt for >= 99% of the sentences and BLEU within 0.1.
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # scripts/
import reference_metrics  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MIN_IDENTICAL = 0.99
MAX_BLEU_DIFFERENCE = 0.1
ENGINES = ("nmt", "ct2_float32", "ct2_int8")


class CompareError(Exception):
    pass


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise CompareError(f"{path}: {e}") from e


def read_lines(path):
    try:
        return reference_metrics.read_lines(path)
    except (OSError, UnicodeDecodeError) as e:
        raise CompareError(f"{path}: {e}") from e


def read_runs(path):
    """{(system, kind): {"wall_s", "sentences", "command"}} from runs.tsv."""
    runs = {}
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 5:
                    raise CompareError(f"{path}:{number}: expected 5 tab-separated fields")
                system, kind, wall, sentences, command = fields
                runs[(system, kind)] = {"wall_s": float(wall), "sentences": int(sentences),
                                        "command": command}
    except OSError as e:
        raise CompareError(f"{path}: {e}") from e
    return runs


def scores(hyps, refs):
    if len(hyps) != len(refs):
        raise CompareError(f"{len(hyps)} hypotheses but {len(refs)} references")
    hyp_len, ref_len, matches, totals = reference_metrics.bleu_statistics(hyps, refs)
    bleu = reference_metrics.bleu_from_statistics(hyp_len, ref_len, matches, totals, False)[0]
    chrf = reference_metrics.chrf_from_statistics(reference_metrics.chrf_statistics(hyps, refs))
    return round(bleu, 2), round(chrf, 2)


def speed(runs, system):
    full, startup = runs[(system, "full")], runs.get((system, "startup"))
    result = {"wall_s": full["wall_s"],
              "sentences_per_s": round(full["sentences"] / full["wall_s"], 1),
              "command": full["command"]}
    if startup:
        decoding = full["wall_s"] - startup["wall_s"]
        result["startup_s"] = startup["wall_s"]
        if decoding > 0:
            result["decoding_sentences_per_s"] = round((full["sentences"] - 1) / decoding, 1)
    return result


def summarize(folder):
    meta = load_json(folder / "meta.json")
    runs = read_runs(folder / "runs.tsv")
    lang, data = meta["tgt_lang"], ROOT / meta["data_dir"]
    refs = read_lines(data / f"{meta['split']}.{lang}.gz")
    sources = read_lines(data / f"{meta['split']}.{meta['src_lang']}.gz")
    searches = ["greedy", f"beam{meta['beam']}"]
    systems, agreement, differences, missed = {}, {}, {}, []
    for search in searches:
        outputs = {}
        for engine in ENGINES:
            name = f"{engine}_{search}"
            outputs[engine] = read_lines(folder / "hyp" / f"{name}.{lang}.gz")
            bleu, chrf = scores(outputs[engine], refs)
            systems[name] = {"bleu": bleu, "chrf": chrf, **speed(runs, name)}
        agreement[search] = {}
        for engine in ENGINES[1:]:
            same = sum(a == b for a, b in zip(outputs["nmt"], outputs[engine]))
            share = same / len(refs)
            delta = round(systems[f"{engine}_{search}"]["bleu"]
                          - systems[f"nmt_{search}"]["bleu"], 2)
            agreement[search][engine] = {"identical": same, "sentences": len(refs),
                                         "share": round(share, 4), "bleu_difference": delta}
        differences[search] = [
            {"line": i + 1, "source": sources[i], "nmt": a, "ct2_float32": b}
            for i, (a, b) in enumerate(zip(outputs["nmt"], outputs["ct2_float32"])) if a != b]
        fp32 = agreement[search]["ct2_float32"]
        if fp32["share"] < MIN_IDENTICAL:
            missed.append(f"{search}: {fp32['share']:.2%} identical (< {MIN_IDENTICAL:.0%})")
        if abs(fp32["bleu_difference"]) > MAX_BLEU_DIFFERENCE:
            missed.append(f"{search}: BLEU differs by {fp32['bleu_difference']:+.2f}")
    return {"meta": meta, "sentences": len(refs), "systems": systems, "agreement": agreement,
            "goal": {"min_identical_share": MIN_IDENTICAL,
                     "max_bleu_difference": MAX_BLEU_DIFFERENCE,
                     "met": not missed, "missed": missed},
            "differences": differences}


def row(cells):
    return "| " + " | ".join(cells) + " |"


def table(summary):
    meta = summary["meta"]
    lines = [f"`{meta['checkpoint']}` on {meta['split']} ({summary['sentences']} sentences); "
             f"CTranslate2 {meta['ctranslate2']['ref']} (ct2-translator, OpenBLAS + ruy) against "
             f"`nmt translate`, {meta['threads']} threads each, length penalty 0, output limit "
             f"{meta['max_decoding_length']} pieces; commit {meta['commit']}, {meta['cpu']} "
             f"({meta['cores']} cores), {meta['date']}.", ""]
    header = ["system", "search", "BLEU", "chrF2", "identical to nmt", "wall s",
              "sent/s", "sent/s after start-up"]
    lines += [row(header), "|" + " --- |" * len(header)]
    for search, engines in summary["agreement"].items():
        for engine in ENGINES:
            s = summary["systems"][f"{engine}_{search}"]
            same = engines.get(engine)
            lines.append(row([engine, search, f"{s['bleu']:.2f}", f"{s['chrf']:.2f}",
                              f"{same['identical']} of {same['sentences']}" if same else "—",
                              f"{s['wall_s']:.1f}", f"{s['sentences_per_s']:.1f}",
                              f"{s['decoding_sentences_per_s']:.1f}"
                              if "decoding_sentences_per_s" in s else "—"]))
    goal = summary["goal"]
    verdict = "met" if goal["met"] else "missed: " + "; ".join(goal["missed"])
    lines += ["", f"Goal (float32 identical to nmt for >= {goal['min_identical_share']:.0%} of the "
              f"sentences, BLEU within {goal['max_bleu_difference']}): {verdict}."]
    return "\n".join(lines) + "\n"


def differences_text(summary):
    lines = ["Every line where CTranslate2 float32 and nmt differ (same checkpoint, same search).",
             ""]
    for search, items in summary["differences"].items():
        lines += [f"## {search}: {len(items)} of {summary['sentences']} lines differ", ""]
        for item in items:
            lines += [f"- line {item['line']}: {item['source']}",
                      f"  - nmt: {item['nmt']}", f"  - ct2: {item['ct2_float32']}"]
        lines.append("")
    return "\n".join(lines)


def outputs(summary):
    return {"summary.json": json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
            "table.md": table(summary), "differences.md": differences_text(summary)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if DIR's files are stale")
    parser.add_argument("dir", help="a folder written by scripts/ct2_check.sh translate")
    args = parser.parse_args()
    folder = Path(args.dir)
    try:
        summary = summarize(folder)
    except (CompareError, KeyError, ValueError, ZeroDivisionError) as e:
        sys.exit(f"ct2_compare.py: {folder}: {type(e).__name__} {e}")
    files = outputs(summary)
    if args.check:
        stale = [n for n, text in files.items()
                 if not (folder / n).exists() or (folder / n).read_text(encoding="utf-8") != text]
        if stale:
            sys.exit(f"ct2_compare.py: {', '.join(stale)} in {folder} differ from what it gives")
        return
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    sys.stdout.write(files["table.md"])
    if not summary["goal"]["met"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
