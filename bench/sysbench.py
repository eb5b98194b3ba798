#!/usr/bin/env python3
"""Point-query serving benchmark (issue 5): Debian's `sysbench oltp_point_select` against Basalt
and against MariaDB (Debian's mariadb-server, InnoDB buffer pool 2 GiB) in the same run, on the
same machine. Both get the same table from `sysbench ... prepare` (MySQL DDL with PRIMARY KEY
and AUTO_INCREMENT, bulk INSERTs, a secondary index); then, for each thread count, MariaDB and
Basalt run `SELECT c FROM sbtest1 WHERE id=?` (server-side prepared statements) one after the
other. Reported: QPS, p95 and p99 latency (from sysbench's histogram), server CPU per query, and
Basalt's QPS as a ratio of MariaDB's (higher is better for Basalt; goal >= 1.0, and p99 < 2 ms at
8 threads).

Usage: bench/run sysbench [--rows 1000000] [--threads 1,8,32] [--time 30]
"""

import argparse
import datetime
import os
import re
import resource
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.basalt import BasaltServer  # noqa: E402
from lib.mariadb import MariaDBServer  # noqa: E402
from lib.proc import cpu_seconds  # noqa: E402
from lib.suite import git_commit, machine, write_report  # noqa: E402


def sysbench(port, rows, *args):
    cmd = ["sysbench", "oltp_point_select", "--db-driver=mysql", "--mysql-host=127.0.0.1",
           f"--mysql-port={port}", "--mysql-user=root", "--mysql-db=sbtest", "--tables=1",
           f"--table-size={rows}", *args]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def percentile(histogram, q):
    """The q-quantile (0..1) of sysbench's latency histogram [(ms, count)]."""
    total = sum(c for _, c in histogram)
    seen = 0
    for value, count in histogram:
        seen += count
        if seen >= q * total:
            return value
    return histogram[-1][0] if histogram else float("nan")


def parse_run(text):
    qps = float(re.search(r"queries:\s+\d+\s+\(([\d.]+) per sec", text).group(1))
    errors = int(re.search(r"ignored errors:\s+(\d+)", text).group(1))
    histogram = [(float(v), int(c)) for v, c in
                 re.findall(r"^\s+([\d.]+)\s+\|\**\s+(\d+)\s*$", text, re.M)]
    return {"qps": qps, "errors": errors, "p95": percentile(histogram, 0.95),
            "p99": percentile(histogram, 0.99)}


def children_cpu_seconds():
    """User + system CPU seconds of this process's finished children (sysbench runs)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def mysql(port, sql):
    subprocess.run(["mysql", "-h127.0.0.1", f"-P{port}", "-uroot", "-e", sql], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--threads", default="1,8,32")
    ap.add_argument("--time", type=int, default=30)
    ap.add_argument("--out", default="bench/results")
    args = ap.parse_args()
    if not shutil.which("sysbench"):
        sys.exit("sysbench not found: apt-get install sysbench")
    threads = [int(t) for t in args.threads.split(",")]

    engines = {}
    print("starting MariaDB and Basalt", flush=True)
    engines["mariadb"] = MariaDBServer(buffer_pool="2G")
    engines["basalt"] = BasaltServer(args.basalt)
    prepare = {}
    results = {}
    try:
        for name, server in engines.items():
            mysql(server.mysql_port, "CREATE DATABASE sbtest")
            start = time.time()
            sysbench(server.mysql_port, args.rows, "prepare")
            prepare[name] = time.time() - start
            print(f"{name}: prepare {args.rows} rows in {prepare[name]:.1f} s", flush=True)
            # One short warm-up run fills caches (buffer pool / row cache).
            sysbench(server.mysql_port, args.rows, "--threads=8", "--time=5", "run")
        for t in threads:
            for name, server in engines.items():
                cpu0 = cpu_seconds(server.pid)
                client0 = children_cpu_seconds()
                text = sysbench(server.mysql_port, args.rows, f"--threads={t}",
                                f"--time={args.time}", "--histogram=on", "--percentile=99",
                                "run")
                cpu = cpu_seconds(server.pid) - cpu0
                client = children_cpu_seconds() - client0
                r = parse_run(text)
                r["cpu_us_per_query"] = cpu * 1e6 / max(1, r["qps"] * args.time)
                r["client_us_per_query"] = client * 1e6 / max(1, r["qps"] * args.time)
                results[(name, t)] = r
                print(f"{name} threads={t}: {r['qps']:.0f} QPS, p95 {r['p95']:.3f} ms, "
                      f"p99 {r['p99']:.3f} ms, server CPU {r['cpu_us_per_query']:.1f} us/query, "
                      f"sysbench CPU {r['client_us_per_query']:.1f} us/query, "
                      f"errors {r['errors']}", flush=True)
    finally:
        for server in engines.values():
            server.stop()

    day = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"sysbench-point-select-{day}.md")
    lines = [
        f"# sysbench oltp_point_select, {args.rows} rows, {args.time} s per run ({day})", "",
        f"- commit {git_commit()}; machine: {machine()}",
        f"- prepare (sysbench bulk INSERTs + index): MariaDB {prepare['mariadb']:.1f} s, "
        f"Basalt {prepare['basalt']:.1f} s",
        "- sysbench runs on the same machine as the server (it takes CPU from it); MariaDB "
        "10.11 from Debian with a 2 GiB InnoDB buffer pool; Basalt with its default config "
        "(row cache 5% of RAM). Each run follows a 5 s warm-up per engine.", "",
        "| threads | MariaDB QPS | Basalt QPS | Basalt/MariaDB | MariaDB p95 / p99 ms | "
        "Basalt p95 / p99 ms | server CPU us/query MariaDB / Basalt | "
        "sysbench CPU us/query MariaDB / Basalt | errors |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for t in threads:
        m, b = results[("mariadb", t)], results[("basalt", t)]
        lines.append(
            f"| {t} | {m['qps']:.0f} | {b['qps']:.0f} | {b['qps'] / m['qps']:.2f} | "
            f"{m['p95']:.3f} / {m['p99']:.3f} | {b['p95']:.3f} / {b['p99']:.3f} | "
            f"{m['cpu_us_per_query']:.1f} / {b['cpu_us_per_query']:.1f} | "
            f"{m['client_us_per_query']:.1f} / {b['client_us_per_query']:.1f} | "
            f"{m['errors']} / {b['errors']} |")
    write_report(path, lines)


if __name__ == "__main__":
    main()
