#!/usr/bin/python3
"""Writes docs/config.md: every config key, its default and its meaning.

Usage:
  scripts/dev/config_reference.py [--nmt build/nmt] [--check]

The keys and their values come from the binary (`nmt train --config FILE --print-config`, once
for an empty config, which gives the code's defaults, and once per shipped config); the meanings
are the doc comments of the fields in src/core/config.h (`///<` after a field, or `///` lines
before it), and the valid values the range each key declares in its section's fields()
(`.range(min, max)`, core/option.h; the same declaration validate() checks). The table sits between `<!-- config:begin -->` and `<!-- config:end -->` in
docs/config.md; the text around it is kept. `--check` exits 1 when the committed table differs.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- config:begin -->", "<!-- config:end -->"
STRUCTS = {"ModelConfig": "model", "DataConfig": "data", "TrainConfig": "train",
           "DecodeConfig": "decode", "AugmentConfig": "data.augment"}
CONFIGS = ("configs/multi30k_en_de.json", "configs/multi30k_de_en.json")
FIELD = re.compile(r"^\s*[\w:<>, ]+?\s+(\w+)(?:\s*=\s*[^;]*)?;\s*(?:///<\s*(.*))?$")


def comments(header):
    """{section: {key: meaning}} from the doc comments in config.h."""
    out, section, pending, last = {}, None, [], None
    lines = []
    for line in header.read_text(encoding="utf-8").splitlines():
        if lines and lines[-1].rstrip().endswith("=") and "///" not in lines[-1]:
            lines[-1] = lines[-1].rstrip() + " " + line.strip()  # a declaration broken after '='
        else:
            lines.append(line)
    for line in lines:
        m = re.match(r"^struct (\w+) \{", line)
        if m:
            section, pending, last = STRUCTS.get(m.group(1)), [], None
            continue
        if section is None:
            continue
        if line.startswith("};"):
            section = None
            continue
        stripped = line.strip()
        if stripped.startswith("///<") and last:  # a trailing comment's continuation line
            out[section][last] += " " + stripped[4:].strip()
            continue
        if stripped.startswith("///"):
            pending.append(stripped[3:].strip())
            continue
        m = FIELD.match(line)
        if m and "(" not in line.split("///")[0].split("=")[0]:  # not a function
            text = " ".join(pending + ([m.group(2).strip()] if m.group(2) else []))
            out.setdefault(section, {})[m.group(1)] = text
            last = m.group(1)
        else:
            last = None
        pending = []
    return out


def number(text):
    """A range bound as config.h writes it, shown as a number."""
    v = float(text)
    return f"{v:g}"


def declared_ranges(header):
    """{section: {key: "valid: ..."}} from the .range() of each key's fields() declaration."""
    out = {}
    text = header.read_text(encoding="utf-8")
    for m in re.finditer(r"^struct (\w+) \{(.*?)^\};", text, re.S | re.M):
        section = STRUCTS.get(m.group(1))
        body = re.search(r"void fields\(F&& f\) \{(.*?)\n  \}", m.group(2), re.S)
        if section is None or body is None:
            continue
        calls = re.split(r'\bf\("', body.group(1))[1:]
        for call in calls:
            key = call.split('"', 1)[0]
            r = re.search(r"\.range\(([^,)]+)(?:,\s*([^)]+))?\)", call)
            if r:
                low, high = r.group(1).strip(), r.group(2)
                out.setdefault(section, {})[key] = (
                    f"valid: {number(low)} to {number(high.strip())}" if high
                    else f"valid: at least {number(low)}")
    return out


def print_config(nmt, path):
    p = subprocess.run([nmt, "train", "--config", str(path), "--print-config"], cwd=ROOT,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"config_reference: error: {nmt} --config {path}: {p.stderr.strip()}")
    config = json.loads(p.stdout)
    # --print-config resolves an empty train.run_dir to checkpoints/<name> (scripts/run.sh reads
    # it): the key's own value, which a config file writes, is the empty string.
    train = config.get("train", {})
    if train.get("run_dir") == f"checkpoints/{train.get('name')}":
        train["run_dir"] = ""
    return config


def value(v):
    text = json.dumps(v, ensure_ascii=False)
    return f"`{text}`" if text != '""' else '`""` (empty)'


def flatten(values, meaning, all_meanings, section):
    """A section's values and meanings with each nested group's keys as "group.key", where the
    group's own row was (data.augment -> data.augment.upper, ...)."""
    flat_values, flat_meaning = {}, {}
    for key in list(meaning) + [k for k in values if k not in meaning]:
        if key not in values:
            continue
        if isinstance(values[key], dict):
            inner = all_meanings.get(f"{section}.{key}", {})
            for sub in list(inner) + sorted(set(values[key]) - set(inner)):
                flat_values[f"{key}.{sub}"] = values[key][sub]
                flat_meaning[f"{key}.{sub}"] = inner.get(sub, "")
        else:
            flat_values[key] = values[key]
            flat_meaning[key] = meaning.get(key, "")
    return flat_values, flat_meaning


def section_table(section, defaults, shipped, meaning):
    """The rows of one section, in config.h's field order."""
    order = list(meaning)
    keys = sorted(defaults, key=lambda k: (order.index(k) if k in order else len(order), k))
    lines = [f"### `{section}`", "",
             "| key | default | en→de config | de→en config | meaning |",
             "| --- | --- | --- | --- | --- |"]
    for key in keys:
        default = defaults[key]
        cells = [value(s[key]) if s[key] != default else "" for s in shipped]
        text = meaning.get(key, "").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
        lines.append(f"| `{section}.{key}` | {value(default)} | {cells[0]} | {cells[1]} | {text} |")
    return lines + [""]


def table(nmt):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as empty:
        empty.write("{}")
        empty.flush()
        defaults = print_config(nmt, empty.name)
    shipped = [print_config(nmt, ROOT / c) for c in CONFIGS]
    meaning = comments(ROOT / "src" / "core" / "config.h")
    for section, keys in declared_ranges(ROOT / "src" / "core" / "config.h").items():
        for key, valid in keys.items():
            text = meaning.setdefault(section, {}).get(key, "")
            meaning[section][key] = f"{text} ({valid})" if text else valid
    sections = [s for s in STRUCTS.values() if s in defaults]
    sections += sorted(set(defaults) - set(sections))
    lines = []
    for section in sections:
        values, words = flatten(defaults[section], meaning.get(section, {}), meaning, section)
        configs = [flatten(s[section], meaning.get(section, {}), meaning, section)[0]
                   for s in shipped]
        lines += section_table(section, values, configs, words)
    return "\n".join(lines).rstrip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nmt", default=str(ROOT / "build" / "nmt"), help="the nmt binary")
    parser.add_argument("--check", action="store_true", help="fail if docs/config.md is stale")
    args = parser.parse_args()
    path = ROOT / "docs" / "config.md"
    text = path.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        sys.exit(f"config_reference: error: {path} needs one {BEGIN} ... {END} block")
    before, rest = text.split(BEGIN)
    new = f"{before}{BEGIN}\n{table(args.nmt)}\n{END}{rest.split(END)[1]}"
    if new == text:
        return 0
    if args.check:
        print(f"config_reference: error: {path} differs from what {args.nmt} and "
              "src/core/config.h give; run scripts/dev/config_reference.py", file=sys.stderr)
        return 1
    path.write_text(new, encoding="utf-8")
    print(f"config_reference: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
