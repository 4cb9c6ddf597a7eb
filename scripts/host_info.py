#!/usr/bin/python3
"""What a measurement ran on, for the benchmark scripts' JSON records (bench_stopping.sh,
ct2_check.sh): `host_info()` gives the commit, CPU model, core count, whether it has AVX512-BF16
and the UTC date. Run directly, it prints that as JSON (with `--fp32-gflops N`, that speed too).
"""

import argparse
import datetime
import json
import os
import platform
import subprocess


def run(*args):
    """A command's stdout, stripped, or "" when it cannot run or fails."""
    try:
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def host_info():
    cpuinfo = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
                if line.startswith("model name")), platform.processor())
    # "-dirty" when the code measured differs from the commit; docs/ does not count (a
    # benchmark rewrites its own results there while it runs).
    code_changed = run("git", "status", "--porcelain", "--", ".", ":(exclude)docs")
    commit = run("git", "describe", "--always") + ("-dirty" if code_changed else "")
    return {"commit": commit, "cpu": cpu,
            "cores": os.cpu_count(), "avx512_bf16": "avx512_bf16" in cpuinfo,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Prints what a measurement ran on as JSON.")
    parser.add_argument("--fp32-gflops", default="", metavar="N",
                        help="the speed a caller measured (budget_grid.sh: `nmt bench matmul`); "
                        "empty when its measure failed, which leaves the field out")
    args = parser.parse_args()
    info = host_info()
    if args.fp32_gflops:
        try:
            info["fp32_gflops"] = float(args.fp32_gflops)
        except ValueError:
            parser.error(f"--fp32-gflops {args.fp32_gflops!r}: expected a number of GFLOP/s")
    print(json.dumps(info, indent=2))
