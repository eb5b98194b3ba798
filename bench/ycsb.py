#!/usr/bin/env python3
"""YCSB-style point reads through JDBC (issue 5), the case of Doris's row-store blog post:
`usertable` (YCSB_KEY VARCHAR key, FIELD0..FIELD9 STRING, ~1 KB rows) as a UNIQUE KEY table with
a row store, loaded with Stream Load; then `SELECT * FROM usertable WHERE YCSB_KEY = ?` through
MySQL Connector/J (from Maven Central) with `useServerPrepStmts=true&cachePrepStmts=true`,
uniform random keys after a warm-up that reads every key once, with the short-circuit path on
and then off (`SET
enable_short_circuit_query`). Every returned row is checked against what was loaded, and the
JDBC statement life cycle (close, re-prepare, with and without the statement cache) is checked
before timing. Reported: QPS and latency for both modes, and their ratio (goal >= 20x).

Usage: bench/run ycsb [--records 1000000] [--threads 8] [--time 30] [--time-off 30]
       [--backends N]  (on a cluster of one frontend and N backends instead: the short circuit
       then reads each row from the owning backend; CPU is that of all its processes)
Needs a JDK (java 11+ runs the single-file client) and network access to Maven Central.
"""

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.basalt import BasaltCluster, BasaltServer  # noqa: E402
from lib.proc import cpu_seconds  # noqa: E402
from lib.suite import git_commit, machine, write_report  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONNECTOR_VERSION = "9.7.0"
CONNECTOR_SHA1 = "4e6e3e8765e4a9d0609744b3e8fe75afe1b98cba"
FIELD_LEN = 100
ROW_LEN = 14 + 10 * (1 + FIELD_LEN) + 1  # "user%010d", 10 x (tab + field), newline


def connector_jar():
    """MySQL Connector/J from Maven Central, checked against its SHA-1."""
    name = f"mysql-connector-j-{CONNECTOR_VERSION}.jar"
    path = os.path.join(HERE, "data", "jdbc", name)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        url = ("https://repo1.maven.org/maven2/com/mysql/mysql-connector-j/"
               f"{CONNECTOR_VERSION}/{name}")
        data = urllib.request.urlopen(url).read()
        if hashlib.sha1(data).hexdigest() != CONNECTOR_SHA1:
            sys.exit(f"{url}: SHA-1 mismatch")
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
    return path


def rows_tsv(lo, hi, rng):
    """Records lo..hi as tab-separated lines: key `user%010d`, then 10 fields of 100 bytes
    starting `%010d-<field>-` (what YcsbPointRead.java checks) followed by random letters."""
    n = hi - lo
    a = rng.integers(ord("a"), ord("z") + 1, size=(n, ROW_LEN), dtype=np.uint8)
    digits = np.empty((n, 10), dtype=np.uint8)
    x = np.arange(lo, hi, dtype=np.int64)
    for d in range(9, -1, -1):
        digits[:, d] = ord("0") + x % 10
        x //= 10
    a[:, 0:4] = np.frombuffer(b"user", dtype=np.uint8)
    a[:, 4:14] = digits
    for f in range(10):
        off = 14 + f * (1 + FIELD_LEN)
        a[:, off] = ord("\t")
        a[:, off + 1:off + 11] = digits
        a[:, off + 11] = ord("-")
        a[:, off + 12] = ord("0") + f
        a[:, off + 13] = ord("-")
    a[:, ROW_LEN - 1] = ord("\n")
    return a.tobytes()


def load(server, records, chunk=100_000):
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE ycsb")
        fields = ", ".join(f"FIELD{i} STRING" for i in range(10))
        cur.execute(
            f"CREATE TABLE ycsb.usertable (YCSB_KEY VARCHAR(255) NOT NULL, {fields}) "
            "UNIQUE KEY(YCSB_KEY) DISTRIBUTED BY HASH(YCSB_KEY) BUCKETS 16 "
            "PROPERTIES (\"replication_num\" = \"1\", \"store_row_column\" = \"true\", "
            "\"enable_unique_key_merge_on_write\" = \"true\")")
    conn.close()
    rng = np.random.default_rng(42)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="ycsb-") as tmp:
        path = os.path.join(tmp, "chunk.tsv")
        for lo in range(0, records, chunk):
            hi = min(records, lo + chunk)
            with open(path, "wb") as f:
                f.write(rows_tsv(lo, hi, rng))
            server.stream_load("ycsb", "usertable", path, {"label": f"ycsb_{lo}"})
    return time.time() - start


def run_client(jar, server, records, threads, seconds, short_circuit):
    cmd = ["java", "-cp", jar, os.path.join(HERE, "ycsb", "YcsbPointRead.java"), "127.0.0.1",
           str(server.mysql_port), "ycsb", str(records), str(threads), str(seconds),
           str(short_circuit)]
    pids = getattr(server, "pids", [server.pid])
    cpu0 = sum(cpu_seconds(pid) for pid in pids)
    out = subprocess.run(cmd, capture_output=True, text=True)
    cpu = sum(cpu_seconds(pid) for pid in pids) - cpu0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["cpu_us_per_query"] = cpu * 1e6 / max(1, r["ops"])
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt")
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--time", type=int, default=30, help="seconds with the short-circuit on")
    ap.add_argument("--time-off", type=int, default=30, help="seconds with it off")
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--backends", type=int, default=0,
                    help="run on 1 frontend + N backends instead of the all-in-one server")
    args = ap.parse_args()
    if not shutil.which("java"):
        sys.exit("java not found: apt-get install openjdk-17-jdk-headless")
    jar = connector_jar()
    if args.backends:
        server = BasaltCluster(args.basalt, args.backends)
    else:
        server = BasaltServer(args.basalt)
    subject = (f"1 frontend + {args.backends} backend(s)" if args.backends
               else "the all-in-one server")
    results = {}
    try:
        load_s = load(server, args.records)
        print(f"loaded {args.records} rows in {load_s:.1f} s", flush=True)
        # Warm-up: every key read once (JIT, row cache), as a serving table is in steady
        # state; then the two timed runs.
        warm = run_client(jar, server, args.records, args.threads, 0, 1)
        print(f"warm-up: every key read once in {warm['seconds']:.1f} s", flush=True)
        for mode, seconds in ((1, args.time), (0, args.time_off)):
            r = run_client(jar, server, args.records, args.threads, seconds, mode)
            results[mode] = r
            print(f"short-circuit {'on' if mode else 'off'}: {r['qps']:.0f} QPS, p50 "
                  f"{r['p50_ms']:.3f} ms, p95 {r['p95_ms']:.3f} ms, p99 {r['p99_ms']:.3f} ms, "
                  f"server CPU {r['cpu_us_per_query']:.0f} us/query", flush=True)
    finally:
        server.stop()

    on, off = results[1], results[0]
    day = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    suffix = f"-{args.backends}be" if args.backends else ""
    path = os.path.join(args.out, f"ycsb-point-read{suffix}-{day}.md")
    lines = [
        f"# YCSB point reads through JDBC, {args.records} rows, {args.threads} threads, on "
        f"{subject} ({day})",
        "",
        f"- commit {git_commit()}; machine: {machine()}",
        f"- MySQL Connector/J {CONNECTOR_VERSION}, `useServerPrepStmts=true&cachePrepStmts=true`; "
        "the client runs on the same machine as the server; uniform random keys; every row "
        "is checked. Load (Stream Load, 100k-row chunks, ~1 KB rows): "
        f"{load_s:.1f} s. Warm-up before the timed runs: every key read once with the "
        f"short-circuit on ({warm['seconds']:.1f} s; fills the row cache, whose default "
        "5% of RAM holds this table).",
        "",
        "| short-circuit | seconds | QPS | p50 ms | p95 ms | p99 ms | max ms | "
        "server CPU us/query |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, r in (("on", on), ("off", off)):
        lines.append(f"| {name} | {r['seconds']:.0f} | {r['qps']:.0f} | {r['p50_ms']:.3f} | "
                     f"{r['p95_ms']:.3f} | {r['p99_ms']:.3f} | {r['max_ms']:.1f} | "
                     f"{r['cpu_us_per_query']:.0f} |")
    lines += ["", f"QPS on/off: {on['qps'] / off['qps']:.1f}x (goal >= 20x); "
              f"p99 off/on: {off['p99_ms'] / on['p99_ms']:.1f}x"]
    write_report(path, lines)


if __name__ == "__main__":
    main()
