#!/usr/bin/env bash
# Measures how nmt scales with the size of the training corpus (docs/scaling.md). For each N:
#   1. the corpus: Multi30k itself for 29k, else N synthetic pairs (scripts/bench/make_big_corpus.py,
#      made once under WORK and reused);
#   2. `nmt prepare` with configs/multi30k_en_de.json: tokenizer sampling+training and corpus
#      encoding timed separately (its "timings:" line), peak RSS (/usr/bin/time -v), the size of
#      the encoded corpus file;
#   3. `nmt train` for STEPS steps in a new run directory holding the tokenizer only (it encodes
#      the corpus itself): start-up, time to the first step, peak RSS, target tokens/s;
#   4. the same in a new run directory holding the tokenizer and the encoded file (it maps it).
# One JSON per N goes to OUT (scaling_<N>.json); scripts/bench/scaling_table.py --write renders the
# table in docs/scaling.md from them. --long makes the synthetic corpora of long lines only (two
# Multi30k pairs joined on every line: make_big_corpus.py --joined 1), named <N>_long.
# Usage: scripts/bench/bench_scaling.sh [--nmt build/nmt] [--work /tmp/nmt_scaling]
#          [--out docs/results/scaling] [--source data/multi30k] [--steps 40] [--long] [N ...]
#        N: 29k (Multi30k) or a pair count such as 50k, 1M, 5M (default: 29k 1M 5M)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nmt=$root/build/nmt
work=/tmp/nmt_scaling
out=$root/docs/results/scaling
source=$root/data/multi30k
steps=40
joined=0.5 # make_big_corpus.py's default: half the lines join two pairs
suffix=""
sizes=()
while (($#)); do
  case $1 in
    --nmt) nmt=$(realpath "$2"); shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --source) source=$(realpath "$2"); shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --long) joined=1; suffix=_long; shift ;;
    -h|--help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) sizes+=("$1"); shift ;;
  esac
done
((${#sizes[@]})) || sizes=(29k 1M 5M)
[[ -x $nmt ]] || { echo "error: $nmt is not an executable (build first, or give --nmt)"; exit 2; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is missing (apt-get install time)"; exit 2; }
mkdir -p "$work" "$out"
cd "$root"
common=(--config configs/multi30k_en_de.json --set train.max_minutes=0 --set train.max_epochs=0
  --set train.max_steps=1 --set train.valid_bleu=false --set train.metric=loss
  --set 'train.monitor_splits=[]'
  --set train.keep_checkpoints=0 --set train.average_snapshots=0 --set train.log_every=10)

timed() {  # LOG COMMAND...: runs COMMAND under /usr/bin/time -v, all output into LOG
  local log=$1
  shift
  /usr/bin/time -v "$@" >"$log" 2>&1 || { echo "failed: $*"; tail -5 "$log"; exit 1; }
}

for size in "${sizes[@]}"; do
  if [[ $size == 29k ]]; then
    n=$size
    data=$source
  else
    n=$size$suffix
    data=$work/corpus_$n
    [[ -f $data/train.en ]] || "$root/scripts/bench/make_big_corpus.py" --pairs "$size" --out "$data" \
      --source "$source" --joined "$joined"
  fi
  run=$work/run_$n
  rm -rf "$run" "$run.nofile" "$run.file"
  echo "== $n: nmt prepare"
  timed "$work/prepare_$n.log" "$nmt" prepare "${common[@]}" --set data.dir="$data" \
    --set train.run_dir="$run"
  mkdir -p "$run.nofile" "$run.file"
  cp "$run"/spm*.model "$run.nofile/"
  cp "$run"/spm*.model "$run/train.corpus" "$run.file/"
  echo "== $n: nmt train, $steps steps, no encoded file"
  timed "$work/train_nofile_$n.log" "$nmt" train "${common[@]}" --set data.dir="$data" \
    --set train.run_dir="$run.nofile" --set train.max_steps="$steps"
  echo "== $n: nmt train, $steps steps, with the encoded file"
  timed "$work/train_file_$n.log" "$nmt" train "${common[@]}" --set data.dir="$data" \
    --set train.run_dir="$run.file" --set train.max_steps="$steps"
  [[ $size == 29k ]] && joined_here=0 || joined_here=$joined
  python3 - "$n" "$work" "$run/train.corpus" "$out/scaling_$n.json" "$steps" "$joined_here" <<'PY'
import datetime, json, os, re, socket, subprocess, sys
n, work, corpus_file, out, steps, joined = sys.argv[1:]

def text(name):
    return open(os.path.join(work, f"{name}_{n}.log"), encoding="utf-8").read()

def number(pattern, log, default=None):
    match = re.search(pattern, log)
    if not match:
        if default is not None:
            return default
        sys.exit(f"bench_scaling: '{pattern}' not found in the {n} logs")
    return float(match.group(1))

def wall_s(log):  # /usr/bin/time -v: "Elapsed (wall clock) time (h:mm:ss or m:ss): 3:11.44"
    match = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", log)
    if not match:
        sys.exit(f"bench_scaling: no wall clock time in the {n} prepare log")
    seconds = 0.0
    for part in match.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    return seconds

def rss_mb(log):
    return number(r"Maximum resident set size \(kbytes\): (\d+)", log) / 1024

prepare, nofile, withfile = text("prepare"), text("train_nofile"), text("train_file")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
result = {
    "pairs": n,
    "joined": float(joined),
    "pairs_read": int(number(r"(\d+) pairs read", prepare)),
    "pairs_kept": int(number(r"pairs read, (\d+) kept", prepare)),
    "spm_lines": int(number(r"trained on \d+ of (\d+) lines", prepare)),
    "spm_sampled": int(number(r"trained on (\d+) of", prepare)),
    "spm_characters": int(number(r"(\d+) characters per model", prepare)),
    "spm_threads": int(number(r"on (\d+) thread", prepare)),
    "tokenizer_sample_s": number(r"reading and sampling ([\d.]+) s", prepare),
    "tokenizer_train_s": number(r"SentencePiece training ([\d.]+) s", prepare),
    "encode_s": number(r"training corpus ([\d.]+) s", prepare),
    "prepare_wall_s": wall_s(prepare),
    "prepare_peak_rss_mb": rss_mb(prepare),
    "corpus_file_mb": os.path.getsize(corpus_file) / 1e6,
    "startup_without_file_s": number(r"start-up took ([\d.]+) s", nofile),
    "first_step_without_file_s": number(r"first step done ([\d.]+) s", nofile),
    "train_peak_rss_without_file_mb": rss_mb(nofile),
    "startup_with_file_s": number(r"start-up took ([\d.]+) s", withfile),
    "first_step_with_file_s": number(r"first step done ([\d.]+) s", withfile),
    "train_peak_rss_with_file_mb": rss_mb(withfile),
    "tokens_per_s": number(r"throughput: ([\d.]+) target tokens/s", withfile),
    "tokens_per_s_without_file": number(r"throughput: ([\d.]+) target tokens/s", nofile),
    "steps": int(steps),
    "host": socket.gethostname(),
    "cpu": cpu,
    "cores": os.cpu_count(),
    "date": datetime.date.today().isoformat(),
    "commit": commit,
}
with open(out, "w", encoding="utf-8") as f:
    json.dump(result, f, indent=1)
    f.write("\n")
print(json.dumps(result))
PY
done
echo "results in $out; render the table with: scripts/bench/scaling_table.py --write"
