"""What the repository's check scripts share: how they end."""
import sys


def report(tool, problems, failure, success):
    """Prints each problem, then `failure` (with their count) to stderr and returns 1; or prints
    `success` and returns 0: the exit code."""
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{tool}: {len(problems)} {failure}", file=sys.stderr)
        return 1
    print(f"{tool}: {success}")
    return 0
