#!/usr/bin/python3
"""Checks that every relative link in the repository's Markdown files points to a file or folder
that exists (anchors are not checked). Exit 1 listing each broken link as FILE:LINE: TARGET.

Usage: scripts/check_links.py        (ctest: Docs.RelativeLinksResolve)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def main():
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    broken = []
    for name in files:
        path = ROOT / name
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                if not (path.parent / target.split("#")[0]).exists():
                    broken.append(f"{name}:{number}: {target}")
    for item in broken:
        print("check_links: broken link " + item, file=sys.stderr)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
