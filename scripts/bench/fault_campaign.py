"""The fault campaign's driver (run it through scripts/bench/fault_campaign.sh). Python 3 stdlib only."""
import argparse
import collections
import json
import os
import random
import re
import signal
import subprocess
import sys
import time


def config(fixtures, steps):
    """A tiny CPU config over the fixture corpus that validates and checkpoints every 5 steps."""
    return {
        "model": {"d_model": 32, "n_heads": 2, "encoder_layers": 1, "decoder_layers": 1,
                  "d_ff": 64, "max_len": 64},
        "data": {"dir": fixtures, "train_split": "tiny", "valid_split": "tiny_val",
                 "vocab_size": 150, "batch_tokens": 400, "max_len": 63},
        "train": {"device": "cpu", "threads": 1, "cpu_workers": 1, "precision": "fp32",
                  "lr": 3e-3, "warmup": 10, "max_epochs": 0, "max_steps": steps,
                  "log_every": 1, "validate_every": 5, "valid_bleu": False, "metric": "loss",
                  "keep_checkpoints": 3, "allow_small_data": True},
    }


def start(nmt, run_dir, config_file, log):
    resume = os.path.exists(os.path.join(run_dir, "last.pt"))
    args = ([nmt, "train", "--resume", run_dir] if resume else
            [nmt, "train", "--config", config_file, "--set", "train.run_dir=" + run_dir])
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT), resume


def writing(run_dir):
    """The temporary files being written in run_dir right now."""
    try:
        return sorted(n for n in os.listdir(run_dir) if n.endswith(".tmp"))
    except FileNotFoundError:
        return []


def metrics_size(run_dir):
    try:
        return os.path.getsize(os.path.join(run_dir, "metrics.jsonl"))
    except OSError:
        return 0


def last_step(run_dir):
    """The step of metrics.jsonl's last train record, or 0."""
    try:
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:  # being written
            continue
        if record.get("kind") == "train":
            return record["step"]
    return 0


def kill_once(proc, run_dir, mode, moment):
    """Kills proc at `moment` = (phase, target, seconds): ("startup", 0, s) s seconds after its
    start, or ("training", step, s) s seconds after it logged `step` (or a later one; at once
    when it resumed beyond it); in mode "write", at the first moment after that when a file is
    being written. Returns (seconds into the attempt, files being written) or None if the
    process ended first."""
    began = time.monotonic()
    phase, target, delay = moment
    if phase == "training":  # wait for this attempt's first step record, then for `target`
        size = metrics_size(run_dir)
        while metrics_size(run_dir) == size and proc.poll() is None:
            time.sleep(0.002)
        while last_step(run_dir) < target and proc.poll() is None:
            time.sleep(0.002)
    start = time.monotonic()
    while time.monotonic() - start < delay:
        if proc.poll() is not None:
            return None
        time.sleep(0.002)
    if mode == "write":  # poll until a temporary file exists, then kill at once
        deadline = time.monotonic() + 30
        while not writing(run_dir) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.0005)
    files = writing(run_dir)
    if proc.poll() is not None:
        return None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return time.monotonic() - began, files


def inspect(nmt, checkpoint, weights_out=None):
    args = [nmt, "inspect", checkpoint] + (["--weights-out", weights_out] if weights_out else [])
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip()
    return json.loads(done.stdout.strip().splitlines()[-1]), ""


def records(run_dir):
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def step_lines(run_dir):
    with open(os.path.join(run_dir, "train.log")) as f:
        return re.findall(r"  step (\d+) \|", f.read())


def attempt_notes(path):
    """What the attempt logged in `path` said about the run directory it found."""
    found, discarded = "", ""
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("resume: found "):
                found = line.strip()
            elif line.startswith(("resume: discarded ", "new run: discarded ")):
                discarded = line.split(": discarded ", 1)[1].strip()
    step = re.search(r"last\.pt \(step (\d+)\)", found)
    if step:
        return "last.pt step " + step.group(1), discarded or "nothing"
    if discarded:
        return "new run (no last.pt yet)", discarded
    return "(killed in start-up, before its report)", "-"


def main():
    p = argparse.ArgumentParser()
    for name in ("nmt", "work", "fixtures"):
        p.add_argument("--" + name, required=True)
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--steps", type=int, default=120)
    a = p.parse_args()
    rng = random.Random(a.seed)
    config_file = os.path.join(a.work, "config.json")
    with open(config_file, "w") as f:
        json.dump(config(a.fixtures, a.steps), f)
    ref_dir, run_dir = os.path.join(a.work, "reference"), os.path.join(a.work, "interrupted")
    log = open(os.path.join(a.work, "campaign.log"), "ab")
    attempt_log = lambda i: os.path.join(a.work, "attempt_%02d.log" % i)

    began = time.monotonic()
    proc, _ = start(a.nmt, ref_dir, config_file, log)
    metrics = os.path.join(ref_dir, "metrics.jsonl")
    while proc.poll() is None and not (os.path.exists(metrics) and os.path.getsize(metrics)):
        time.sleep(0.01)
    startup = time.monotonic() - began  # to the first step's record: loading, tokenizer, ...
    if proc.wait() != 0:
        sys.exit("fault_campaign: the uninterrupted run failed (see %s/campaign.log)" % a.work)
    ref_seconds = time.monotonic() - began
    training = max(0.1, ref_seconds - startup)
    # Kill moments: a quarter during start-up (loading, tokenizer, config.json), the rest after a
    # step drawn from the kill's own share of the run (kill i of N: steps i/N to (i+1)/N of it),
    # so the kills cover the whole run, its end (snapshots, the average) included, plus a delay
    # of up to two steps.
    step_seconds = training / a.steps
    def moment(i):
        if rng.random() < 0.25:
            return "startup", 0, rng.uniform(0.0, startup)
        target = int(rng.uniform(i, i + 1) * a.steps / a.kills)
        return "training", min(target, a.steps - 1), rng.uniform(0.0, 2 * step_seconds)

    rows, attempts, restarts = [], 0, 0
    while len(rows) < a.kills:
        mode = "write" if len(rows) % 2 == 1 else "time"
        attempts += 1
        proc, resumed = start(a.nmt, run_dir, config_file, open(attempt_log(attempts), "wb"))
        outcome = kill_once(proc, run_dir, mode, moment(len(rows)))
        if outcome is None:  # finished before the kill: start the interrupted run over
            restarts += 1
            if proc.returncode != 0 or restarts > 3:
                sys.exit("fault_campaign: a resumed run failed or kept finishing before its kill"
                         " (see %s/campaign.log)" % a.work)
            subprocess.run(["rm", "-rf", run_dir], check=True)
            rows.clear()
            continue
        rows.append((len(rows) + 1, mode, outcome[0], ", ".join(outcome[1]) or "-", attempts))
    proc, _ = start(a.nmt, run_dir, config_file, open(attempt_log(attempts + 1), "wb"))
    final_code = proc.wait()

    print("| kill | mode | at (s) | being written | then resumed from | discarded by the resume |")
    print("| ---: | --- | ---: | --- | --- | --- |")
    resumes = 0
    for number, mode, at, files, attempt in rows:
        what, gone = attempt_notes(attempt_log(attempt + 1))  # the attempt after the kill
        resumes += what.startswith("last.pt")
        print("| %d | %s | %.2f | %s | %s | %s |" % (number, mode, at, files, what, gone))

    checks = []
    checks.append(("final run exits 0", final_code == 0, "exit %d" % final_code))
    left = writing(run_dir)
    checks.append(("no temporary file left", not left, ", ".join(left) or "none"))
    bad, names = [], sorted(n for n in os.listdir(run_dir) if n.endswith(".pt"))
    for name in names:
        info, err = inspect(a.nmt, os.path.join(run_dir, name))
        if info is None:
            bad.append(name + ": " + err)
    checks.append(("every checkpoint loads", not bad and bool(names),
                   "%d checkpoints (%s)%s" % (len(names), " ".join(names),
                                              "; " + "; ".join(bad) if bad else "")))
    for name, what in (("last.pt", "final weights"), ("averaged.pt", "averaged weights")):
        wa, wb = os.path.join(a.work, "reference.bin"), os.path.join(a.work, "interrupted.bin")
        ia, _ = inspect(a.nmt, os.path.join(ref_dir, name), wa)
        ib, _ = inspect(a.nmt, os.path.join(run_dir, name), wb)
        same = ia is not None and ib is not None and open(wa, "rb").read() == open(wb, "rb").read()
        checks.append(("%s equal the uninterrupted run's bit for bit" % what, same,
                       "%s: step %s vs %s, %d bytes compared" % (
                           name, ia and ia["step"], ib and ib["step"],
                           os.path.getsize(wa) if os.path.exists(wa) else 0)))
    steps = lambda d: sorted(int(m.group(1)) for m in
                             (re.fullmatch(r"snapshot_(\d+)\.pt", n) for n in os.listdir(d)) if m)
    snapshots = [steps(ref_dir), steps(run_dir)]
    checks.append(("the same snapshots averaged", snapshots[0] == snapshots[1],
                   "steps %s vs %s" % (snapshots[0], snapshots[1])))
    for name in ("best.pt",):
        ra, _ = inspect(a.nmt, os.path.join(ref_dir, name))
        rb, _ = inspect(a.nmt, os.path.join(run_dir, name))
        checks.append((name + " is the same step", ra is not None and rb is not None and
                       ra["step"] == rb["step"], "%s vs %s" % (ra and ra["step"], rb and rb["step"])))
    ours, theirs = records(run_dir), records(ref_dir)
    keys = collections.Counter((r["kind"], r["step"]) for r in ours)
    dupes = sorted(k for k, c in keys.items() if c > 1)
    checks.append(("metrics.jsonl: one record per logged step", not dupes,
                   "%d records, %d duplicated %s" % (len(ours), len(dupes), dupes[:5])))
    same_records = [(r["kind"], r["step"], r["loss"]) for r in ours] == \
                   [(r["kind"], r["step"], r["loss"]) for r in theirs]
    checks.append(("metrics.jsonl: same records and losses as the uninterrupted run", same_records,
                   "%d vs %d records" % (len(ours), len(theirs))))
    lines = collections.Counter(step_lines(run_dir))
    repeated = sorted(int(s) for s, c in lines.items() if c > 1)
    checks.append(("train.log: one line per step", not repeated and len(lines) == a.steps,
                   "%d step lines, repeated: %s" % (sum(lines.values()), repeated[:5])))
    print()
    print("%d kills (%d while a file was being written), %d resumes; uninterrupted run %.1f s "
          "(%.1f s to the first step)" % (len(rows), sum(1 for r in rows if r[3] != "-"),
                                         resumes, ref_seconds, startup))
    print()
    print("| check | result | detail |")
    print("| --- | --- | --- |")
    for name, ok, detail in checks:
        print("| %s | %s | %s |" % (name, "pass" if ok else "FAIL", detail))
    sys.exit(0 if all(ok for _, ok, _ in checks) else 1)


if __name__ == "__main__":
    main()
