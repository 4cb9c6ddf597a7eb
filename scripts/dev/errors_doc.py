#!/usr/bin/env python3
"""Writes docs/errors.md from the rows the bad-input tests collect:

    rm -f /tmp/rows && NMT_BAD_INPUT_ROWS=/tmp/rows build/tests/nmt_tests --gtest_filter='Groups/BadInput.*'
    scripts/dev/errors_doc.py /tmp/rows > docs/errors.md

The test BadInputCases.AtLeastFortyAndEachListedInDocsErrorsWithItsMessage fails when this file
and tests/bad_input_cases.h disagree."""
import sys

HEADER = """# Errors: bad input and what nmt says

Every error a user can reach from the command line ends the command with one line on stderr,
`error: ...`, naming the file, line, key or value at fault and, where it helps, what would be
valid; the exit status is 2 (1 when input lines could not be translated: the other lines still
are). Nothing a user can give `nmt` aborts, segfaults, hangs or escapes as an uncaught exception.

The table lists the cases that tests/test_bad_input.cpp runs against the real binary (cases in
tests/bad_input_cases.h; `{d}` is the test's scratch directory). For each, the test asserts a
non-zero exit that is not a signal, that the output contains the fragment, and that no crash or
sanitizer report appears. The test `BadInputCases.AtLeastFortyAndEachListedInDocsErrorsWithItsMessage`
fails when this table and the cases differ. Regenerate it with:

    rm -f /tmp/rows && NMT_BAD_INPUT_ROWS=/tmp/rows build/tests/nmt_tests --gtest_filter='Groups/BadInput.*'
    scripts/dev/errors_doc.py /tmp/rows > docs/errors.md

Not errors, but no crash either: a 100,000-character line given to `translate` is translated
truncated to the model's length with a warning naming the line
(`BadInputRobustness.AHundredThousandCharacterLineIsTranslatedTruncatedWithAWarning`).

"""

ORDER = ["cli", "config", "data", "checkpoint", "resume", "translate", "evaluate"]


def main():
    rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
    rows.sort(key=lambda r: ORDER.index(r[0]))
    out = [HEADER, "| group | case | message contains | message as printed |",
           "| --- | --- | --- | --- |"]
    for group, name, fragment, message in rows:
        out.append("| %s | `%s` | `%s` | %s |" % (group, name, fragment,
                                                message.replace("|", "\\|")))
    print("\n".join(out))


if __name__ == "__main__":
    main()
