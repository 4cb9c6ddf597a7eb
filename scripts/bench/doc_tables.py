#!/usr/bin/python3
"""Tables generated into a Markdown document between two markers, for the benchmark scripts'
--write DIR and --check DIR (bench_text.py, bench_serve_exposure.py): the begin marker names
the results folder the table comes from, so one document may hold a table per folder.
"""

import argparse
import os
import sys
from pathlib import Path


def section(begin, end, root, folder, body):
    """The markers around `body`, the begin marker naming `folder` relative to `root`."""
    rel = os.path.relpath(Path(folder).resolve(), root)
    return f"{begin}{rel} -->\n{body}\n{end}"


def replace_section(doc, new, begin, end, doc_path, tool):
    """`doc` with the section whose begin marker is `new`'s first line replaced by `new` (or,
    when no marker names that folder, the document's only section); SystemExit otherwise."""
    marker = new[: new.index("\n")]
    start = doc.find(marker)
    if start < 0 and doc.count(begin) == 1:
        start = doc.find(begin)
    stop = doc.find(end, start) if start >= 0 else -1
    if start < 0 or stop < 0:
        raise SystemExit(f"{tool}: {doc_path} has no marker {marker} (nor a single table): add "
                         f"the lines\n{marker}\n{end}\nwhere the table goes")
    return doc[:start] + new + doc[stop + len(end):]


def write_or_check(doc_path, new_section, begin, end, tool, folder, write):
    """--write: puts the section into the document; --check: 1 (with a message) when the
    document's section differs. Returns the exit code."""
    doc = Path(doc_path).read_text(encoding="utf-8")
    new = replace_section(doc, new_section, begin, end, doc_path, tool)
    if write:
        Path(doc_path).write_text(new, encoding="utf-8")
        return 0
    if new != doc:
        print(f"{tool}: {doc_path}'s table differs from {folder}: run scripts/{tool}.py --write "
              f"{folder}", file=sys.stderr)
        return 1
    return 0


def publish(folder, text, doc_path, begin, end, root, tool, mode):
    """A results folder's table: `mode` "write" writes FOLDER/table.md and the document's section
    (doc_path None: the table file only), "check" exits 1 when either differs from `text`, and
    anything else prints `text`."""
    folder = Path(folder)
    target = folder / "table.md"
    doc = new_doc = ""
    if doc_path is not None:
        doc = Path(doc_path).read_text(encoding="utf-8")
        new_doc = replace_section(doc, section(begin, end, root, folder, text.rstrip("\n")),
                                  begin, end, doc_path, tool)
    if mode == "write":
        target.write_text(text, encoding="utf-8")
        if doc_path is not None:
            Path(doc_path).write_text(new_doc, encoding="utf-8")
    elif mode == "check":
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            sys.exit(f"{tool}: {target} differs from what {folder} gives (--write)")
        if new_doc != doc:
            sys.exit(f"{tool}: {doc_path} differs from what {folder} gives (--write)")
    else:
        sys.stdout.write(text)


def table_arguments(description, writes, dir_help, options=None):
    """The arguments every table script takes: --write (writing `writes`) or --check, and the
    results folder; `options(parser)` adds a script's own. Returns (args, mode), mode one of
    "write", "check", "print"."""
    parser = argparse.ArgumentParser(description=description)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help=f"write {writes}")
    group.add_argument("--check", action="store_true", help=f"exit 1 if {writes} is stale")
    if options:
        options(parser)
    parser.add_argument("dir", help=dir_help)
    args = parser.parse_args()
    return args, "write" if args.write else "check" if args.check else "print"
