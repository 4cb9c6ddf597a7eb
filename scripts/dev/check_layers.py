#!/usr/bin/python3
"""Check that src/ includes point one way through the layers.

Usage: scripts/dev/check_layers.py [SRC_DIR]

Each folder of src/ is a layer and may include only the layers listed for it below (and itself):
core is at the bottom, cli at the top. Prints every include that breaks the order, as
`file:line: layer 'decode' may not include 'train/checkpoint.h'`, and exits 1; exits 0 when
there is none.
"""

import re
import sys
from pathlib import Path

from checks import report

# layer -> the layers it may include (besides itself)
ALLOWED = {
    "core": set(),
    "cpu": set(),
    "data": {"core"},
    "model": {"core", "cpu"},
    "eval": {"core"},
    "decode": {"core", "cpu", "data", "model", "eval"},
    "text": {"core", "cpu", "data", "model", "eval", "decode"},
    "train": {"core", "cpu", "data", "model", "eval", "decode", "text"},
    "export": {"core", "cpu", "data", "model", "train"},
    "serve": {"core", "data", "model", "eval", "decode", "text"},
    "cli": {"core", "cpu", "data", "model", "eval", "decode", "text", "train", "export", "serve"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def violations(src):
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".in"):
            continue
        layer = path.relative_to(src).parts[0]
        if layer not in ALLOWED:
            yield f"{path}: folder '{layer}' is not a known layer (add it to scripts/dev/check_layers.py)"
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(1)
            header = line.split('"')[1]
            allowed = ", ".join(sorted(ALLOWED[layer])) or "nothing"
            if target != layer and target not in ALLOWED[layer] and target in ALLOWED:
                yield (f"{path}:{number}: layer '{layer}' may not include '{header}' "
                       f"(it may include: {allowed})")


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "src")
    return report("check_layers", list(violations(src)), "include(s) against the layer order",
                  f"{src}: every include follows the layer order")


if __name__ == "__main__":
    sys.exit(main())
