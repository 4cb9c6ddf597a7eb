#!/usr/bin/python3
"""Checks that every relative link in the repository's Markdown files points to a file or folder
that exists and, when it names an anchor (`file.md#section`, `#section`), to a heading of that
Markdown file with that anchor (GitHub's: the heading's text lower-cased, punctuation dropped,
spaces as hyphens, -1, -2, ... for repeats) or an explicit `<a id="...">`. Exit 1 listing each
broken link as FILE:LINE: TARGET.

Usage: scripts/dev/check_links.py        (ctest: Docs.RelativeLinksResolve)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def slug(text):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link shows its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path, cache={}):
    """The anchors a Markdown file offers (headings outside code fences, explicit ids)."""
    if path not in cache:
        found, seen, fenced = set(), {}, False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            found.update(EXPLICIT.findall(line))
            match = None if fenced else HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


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
                if re.match(r"^[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                linked = path if not file_part else path.parent / file_part
                if not linked.exists():
                    broken.append(f"{name}:{number}: {target}")
                elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                    broken.append(f"{name}:{number}: {target} (no such heading in "
                                  f"{linked.relative_to(ROOT)})")
    for item in broken:
        print("check_links: broken link " + item, file=sys.stderr)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
