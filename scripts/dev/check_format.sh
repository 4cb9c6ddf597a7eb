#!/usr/bin/env bash
# Checks that every C++ file in src/ and tests/ is formatted as .clang-format says (clang-format
# --dry-run -Werror): prints the first differences and exits 1 when one is not. Installs
# clang-format when it is missing. Fix with: scripts/dev/check_format.sh --fix
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends clang-format >/dev/null
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'src/*.cpp' 'src/*.h' \
  'tests/*.cpp' 'tests/*.h' | while read -r f; do [[ -f $f ]] && echo "$f"; done)
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  echo "check_format: formatted ${#files[@]} files"
  exit 0
fi
if ! clang-format --dry-run -Werror "${files[@]}" 2>/tmp/nmt_format.$$; then
  head -40 /tmp/nmt_format.$$ >&2
  n=$(grep -c 'error:' /tmp/nmt_format.$$ || true)
  rm -f /tmp/nmt_format.$$
  echo "check_format: $n places differ from .clang-format; run scripts/dev/check_format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/nmt_format.$$
echo "check_format: ${#files[@]} files match .clang-format"
