#!/usr/bin/env python3
"""Checks that scripts/cuda_check.sh's list of Debian packages holds every library CMake requires.

A GPU machine has PyTorch (LibTorch 2.x) but none of nmt's other C++ dependencies; cuda_check.sh
unpacks them from the .deb files its header comment downloads. A library CMakeLists.txt (or
tests/CMakeLists.txt) finds with `find_package(... REQUIRED)` but that list lacks makes the CUDA
build fail to configure, which no test on a CPU host notices. Exits 1 naming what is missing.

  scripts/dev/check_cuda_recipe.py [ROOT]
"""

import re
import sys
from pathlib import Path

# find_package name -> the Debian packages that provide it (headers, CMake files, the library);
# None: not a Debian package on the GPU machine (the torch wheel, the C library).
PACKAGES = {
    "Torch": None,
    "Threads": None,
    "nlohmann_json": ["nlohmann-json3-dev"],
    "cxxopts": ["libcxxopts-dev"],
    "ZLIB": ["zlib1g-dev"],
    "ICU": ["libicu-dev", "libicu72"],
    "LibXml2": ["libxml2-dev", "libxml2"],
    "GTest": ["libgtest-dev"],
}

FIND = re.compile(r"^\s*find_package\((\w+)([^)]*)\)", re.M)


def required(cmake_text):
    """The find_package names a CMake file requires (QUIET ones are optional)."""
    return [name for name, args in FIND.findall(cmake_text) if "QUIET" not in args.split()]


def recipe(script_text):
    """The packages of the `apt-get download` command in cuda_check.sh's header comment."""
    lines = script_text.splitlines()
    start = next((i for i, line in enumerate(lines) if "apt-get download" in line), None)
    if start is None:
        return None
    words = []
    for line in lines[start:]:
        body = line.lstrip("#").split("#")[0] if line.startswith("#") else ""
        words += body.replace("\\", " ").split()
        if ")" in body:
            break
    after = words[words.index("download") + 1:] if "download" in words else []
    return {w.strip(")") for w in after if re.fullmatch(r"[a-z0-9][a-z0-9.+-]*\)?", w)}


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    names = required((root / "CMakeLists.txt").read_text())
    names += required((root / "tests" / "CMakeLists.txt").read_text())
    listed = recipe((root / "scripts" / "cuda_check.sh").read_text())
    if listed is None:
        print("check_cuda_recipe: scripts/cuda_check.sh has no `apt-get download` list")
        return 1
    problems = []
    for name in dict.fromkeys(names):
        if name not in PACKAGES:
            problems.append(f"find_package({name}) has no entry in check_cuda_recipe.py's PACKAGES: "
                            "name the Debian packages that provide it, and add them to "
                            "scripts/cuda_check.sh's apt-get download list")
            continue
        missing = [p for p in PACKAGES[name] or [] if p not in listed]
        if missing:
            problems.append(f"find_package({name}) is required, but scripts/cuda_check.sh's "
                            f"apt-get download list lacks {' '.join(missing)}: the CUDA build "
                            "would fail to configure")
    for problem in problems:
        print("check_cuda_recipe: " + problem)
    if not problems:
        print(f"check_cuda_recipe: the {len(listed)} packages of scripts/cuda_check.sh cover "
              f"every required find_package ({', '.join(dict.fromkeys(names))})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
