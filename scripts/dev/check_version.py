#!/usr/bin/python3
"""Checks that the version is one: CMakeLists.txt's project(VERSION), the top version section of
CHANGELOG.md, `nmt --version`, and the `nmt-MAJOR.MINOR` that metric signatures carry.

Usage: scripts/dev/check_version.py [--nmt build/nmt]     (exit 1 naming what differs)
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nmt", default=str(ROOT / "build" / "nmt"))
    args = parser.parse_args()
    cmake = re.search(r"project\(nmt VERSION (\d+\.\d+\.\d+)",
                      (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")).group(1)
    top = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"),
                    re.M)
    binary = subprocess.run([args.nmt, "--version"], capture_output=True, text=True,
                            check=True).stdout.split("\n")[0]
    problems = []
    if top is None:
        problems.append("CHANGELOG.md has no '## [X.Y.Z]' section")
    elif top.group(1) != cmake:
        problems.append(f"CHANGELOG.md's top section is {top.group(1)}, CMakeLists.txt says {cmake}")
    if binary != f"nmt {cmake}":
        problems.append(f"`nmt --version` says '{binary}', CMakeLists.txt says {cmake}")
    for problem in problems:
        print("check_version: " + problem, file=sys.stderr)
    if not problems:
        print(f"check_version: {cmake} everywhere (signatures: nmt-{cmake.rsplit('.', 1)[0]})")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
