#!/usr/bin/env bash
# Fault campaign (docs/fault_tolerance.md): trains a small, step-limited CPU config once without
# interruption, then again while SIGKILLing it at N random moments (about half of them while a
# checkpoint or other file is being written) and resuming after each kill; then checks that
#   - every checkpoint left on disk loads (nmt inspect) and no temporary file is left;
#   - the final and the averaged weights equal the uninterrupted run's bit for bit (cmp of nmt
#     inspect dumps), from the same snapshots;
#   - metrics.jsonl has exactly one record per logged step, the same records as the
#     uninterrupted run (same kinds and steps, same losses), and train.log one line per step.
# Prints a table of the kills and the checks; exits 0 only if every check passed.
#
#   scripts/bench/fault_campaign.sh [N]        (N kills, default 20)
# Environment: NMT (binary, default build/nmt), WORK (scratch directory, default a new temp
# directory, removed at the end unless KEEP=1), SEED (of the kill moments, default 1),
# STEPS (training steps, default 120).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kills=${1:-20}
nmt=${NMT:-$root/build/nmt}
[[ -x $nmt ]] || { echo "fault_campaign: $nmt is not an executable (build first, or set NMT)" >&2; exit 2; }
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/nmt_fault_campaign.XXXXXX")}
mkdir -p "$work"
if [[ -z ${WORK:-} && ${KEEP:-0} != 1 ]]; then trap 'rm -rf "$work"' EXIT; fi
exec python3 "$root/scripts/bench/fault_campaign.py" --nmt "$nmt" --work "$work" --kills "$kills" \
  --seed "${SEED:-1}" --steps "${STEPS:-120}" --fixtures "$root/tests/fixtures"
