#!/usr/bin/env python3
"""Benchmark `nmt serve` against offline `nmt translate` on the same sentences (stdlib only).

Measures, with one checkpoint and its default decoding options:
  offline      `nmt translate --input FILE`: sentences/s (whole command, and without start-up,
               i.e. minus the time of the same command on an empty file: the reference for the
               server's percentages, since the server has loaded its model before timing)
  in-process   per-sentence latency of `nmt translate` fed one line at a time through a pipe
               (p50/p99): the model translating that sentence alone, no HTTP
  serve, c=N   N client threads, each POSTing one sentence per request over a kept-alive
               connection: sentences/s, p50/p99 request latency, texts per batch (the server's
               /health counters); answers checked against offline

  scripts/bench/bench_serve.py --checkpoint run/best.pt --input data/multi30k/test_2016_flickr.en.gz
  scripts/bench/bench_serve.py ... --workers 2    # the server decodes 2 batches at once
"""
import argparse
import gzip
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def read_lines(path, limit):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(limit), f)]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def offline(args, sentences):
    """Seconds of `nmt translate --input` on the sentences and on an empty file; its outputs."""
    with tempfile.TemporaryDirectory() as tmp:
        src, empty = f"{tmp}/src.txt", f"{tmp}/empty.txt"
        with open(src, "w", encoding="utf-8") as f:
            f.write("".join(s + "\n" for s in sentences))
        open(empty, "w").close()
        command = [args.nmt, "translate", "--checkpoint", args.checkpoint] + args.nmt_args
        start = time.perf_counter()
        subprocess.run(command + ["--input", empty], check=True, stdout=subprocess.DEVNULL)
        startup = time.perf_counter() - start
        start = time.perf_counter()
        out = subprocess.run(command + ["--input", src], check=True, stdout=subprocess.PIPE)
        seconds = time.perf_counter() - start
    return seconds, startup, out.stdout.decode("utf-8").split("\n")[: len(sentences)]


def in_process_latencies(args, sentences):
    """Per-sentence seconds of `nmt translate` reading one line at a time from a pipe."""
    command = [args.nmt, "translate", "--checkpoint", args.checkpoint] + args.nmt_args
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    latencies = []
    for i, sentence in enumerate([sentences[0]] * 3 + sentences):  # 3 warm-up lines
        start = time.perf_counter()
        proc.stdin.write((sentence + "\n").encode("utf-8"))
        proc.stdin.flush()
        proc.stdout.readline()
        if i >= 3:
            latencies.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait()
    return latencies


class Client:
    """One kept-alive connection; reconnects when the server has closed it."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def translate(self, text):
        body = json.dumps({"text": text}).encode("utf-8")
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
                self.conn.request("POST", "/translate", body, {"Content-Type": "application/json"})
                response = self.conn.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                if response.status != 200:
                    raise RuntimeError(f"HTTP {response.status}: {data[:200]!r}")
                return json.loads(data)["translations"][0]
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn = None
                if attempt == 2:
                    raise
        return None


def health(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/health")
    data = json.loads(conn.getresponse().read())
    conn.close()
    return data


def serve_run(port, sentences, concurrency):
    """Seconds, per-request latencies and answers of `concurrency` clients on all sentences."""
    latencies = [0.0] * len(sentences)
    answers = [None] * len(sentences)
    next_index = [0]
    lock = threading.Lock()

    def work():
        client = Client(port)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(sentences):
                return
            start = time.perf_counter()
            answers[i] = client.translate(sentences[i])
            latencies[i] = time.perf_counter() - start

    threads = [threading.Thread(target=work) for _ in range(concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, latencies, answers


def start_server(args):
    command = [args.nmt, "serve", "--checkpoint", args.checkpoint, "--port", "0"]
    command += ["--max-batch-tokens", str(args.max_batch_tokens)]
    command += ["--max-wait-ms", str(args.max_wait_ms), "--workers", str(args.workers)]
    command += args.nmt_args
    proc = subprocess.Popen(command, stdout=subprocess.PIPE)
    line = proc.stdout.readline().decode()
    if "127.0.0.1:" not in line:
        proc.kill()
        sys.exit(f"bench_serve: nmt serve did not start: {line!r}")
    return proc, int(line.split("127.0.0.1:")[1].split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nmt", default="build/nmt")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--input", required=True, help="source sentences (.gz or plain)")
    parser.add_argument("--limit", type=int, default=500, help="sentences for throughput")
    parser.add_argument("--latency-limit", type=int, default=100,
                        help="sentences for concurrency 1 and in-process latency")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--max-batch-tokens", type=int, default=4096)
    parser.add_argument("--max-wait-ms", type=int, default=5)
    parser.add_argument("--workers", type=int, default=0,
                        help="nmt serve --workers (0: its default)")
    parser.add_argument("nmt_args", nargs="*", help="more nmt options after --, e.g. --threads 2")
    args = parser.parse_args()
    sentences = read_lines(args.input, args.limit)
    short = sentences[: args.latency_limit]

    seconds, startup, expected = offline(args, sentences)
    # The server's model is loaded before timing starts: compare with offline minus start-up.
    offline_rate = len(sentences) / (seconds - startup)
    print(f"offline nmt translate: {len(sentences)} sentences in {seconds:.2f} s "
          f"({len(sentences) / seconds:.1f} sent/s; start-up {startup:.2f} s, without it "
          f"{offline_rate:.1f} sent/s)", flush=True)
    local = in_process_latencies(args, short)
    local_p50 = statistics.median(local)
    print(f"in-process, one sentence at a time ({len(short)}): p50 {local_p50 * 1000:.1f} ms, "
          f"p99 {percentile(local, 99) * 1000:.1f} ms", flush=True)

    proc, port = start_server(args)
    try:
        Client(port).translate(sentences[0])  # warm-up
        rows = []
        for c in [int(x) for x in args.concurrency.split(",")]:
            batch = short if c == 1 else sentences
            cpu_before = time.process_time()
            before = health(port)
            seconds_c, lat, answers = serve_run(port, batch, c)
            after = health(port)
            client_cpu = time.process_time() - cpu_before  # this script's threads, all of them
            batches = after["batches"] - before["batches"]
            per_batch = (after["texts"] - before["texts"]) / max(batches, 1)
            differ = sum(a != e for a, e in zip(answers, expected))
            rate = len(batch) / seconds_c
            rows.append((c, len(batch), rate, statistics.median(lat), percentile(lat, 99), differ))
            print(f"serve c={c}: {len(batch)} sentences, {rate:.1f} sent/s "
                  f"({rate / offline_rate * 100:.0f}% of offline), p50 "
                  f"{statistics.median(lat) * 1000:.1f} ms, p99 {percentile(lat, 99) * 1000:.1f} "
                  f"ms, {differ} differ from offline, {batches} batches of {per_batch:.1f} texts "
                  f"on average; the client itself used {client_cpu:.1f} s "
                  f"of CPU ({client_cpu / seconds_c * 100:.0f}% of one core)", flush=True)
    finally:
        proc.terminate()
        proc.wait()
    print("\n| run | sentences | sent/s | vs offline | p50 ms | p99 ms | differ |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(f"| offline translate, without start-up | {len(sentences)} | {offline_rate:.1f} | 100% "
          "| | | |")
    print(f"| in-process, 1 at a time | {len(short)} | {len(short) / sum(local):.1f} | | "
          f"{local_p50 * 1000:.1f} | {percentile(local, 99) * 1000:.1f} | |")
    for c, n, rate, p50, p99, differ in rows:
        print(f"| serve c={c} | {n} | {rate:.1f} | {rate / offline_rate * 100:.0f}% | "
              f"{p50 * 1000:.1f} | {p99 * 1000:.1f} | {differ} |")
    c1 = [r for r in rows if r[0] == 1]
    if c1:
        print(f"\nc=1 p50 / in-process p50: {c1[0][3] / local_p50:.2f}x (goal <= 2x)")


if __name__ == "__main__":
    main()
