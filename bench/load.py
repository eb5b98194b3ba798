#!/usr/bin/env python3
"""Loading benchmark (issue 3): TPC-H `lineitem` through Basalt's Stream Load (curl, as users
do) against DuckDB's `COPY ... FROM` on the same '|'-separated file, one engine at a time.

Reports rows/s, wall time, and Basalt's time as a ratio of DuckDB's (lower is better for
Basalt; the goal is <= 1.0). Each engine writes a durable table on local disk; DuckDB runs
with its default threads (all cores), Basalt with its default write settings.

Usage: bench/run load [--sf 1] [--runs 3]   (or python3 bench/load.py --basalt PATH ...)
"""

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.basalt import BasaltServer  # noqa: E402
from lib.proc import cpu_seconds, peak_rss_mb  # noqa: E402

COLUMNS = [
    ("l_orderkey", "BIGINT NOT NULL"),
    ("l_partkey", "INT"),
    ("l_suppkey", "INT"),
    ("l_linenumber", "INT NOT NULL"),
    ("l_quantity", "DECIMAL(15,2)"),
    ("l_extendedprice", "DECIMAL(15,2)"),
    ("l_discount", "DECIMAL(15,2)"),
    ("l_tax", "DECIMAL(15,2)"),
    ("l_returnflag", "CHAR(1)"),
    ("l_linestatus", "CHAR(1)"),
    ("l_shipdate", "DATE"),
    ("l_commitdate", "DATE"),
    ("l_receiptdate", "DATE"),
    ("l_shipinstruct", "CHAR(25)"),
    ("l_shipmode", "CHAR(10)"),
    ("l_comment", "VARCHAR(44)"),
]

BASALT_DDL = (
    "CREATE TABLE lineitem ({cols}) DUPLICATE KEY(l_orderkey) "
    "DISTRIBUTED BY HASH(l_orderkey) BUCKETS {buckets}"
)


def generate(sf, data_dir):
    path = os.path.join(data_dir, "lineitem.tbl")
    if not os.path.exists(path):
        os.makedirs(data_dir, exist_ok=True)
        tpchgen = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
        subprocess.run(
            [tpchgen, "-s", str(sf), "--tables", "lineitem", f"--output-dir={data_dir}"],
            check=True,
        )
    return path


def basalt_runs(binary, path, runs, buckets):
    server = BasaltServer(binary)
    times, cpus = [], []
    try:
        conn = server.connect()
        cur = conn.cursor()
        cur.execute("CREATE DATABASE bench")
        cur.execute("USE bench")
        cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
        cur.execute(BASALT_DDL.format(cols=cols, buckets=buckets))
        names = ",".join(n for n, _ in COLUMNS) + ",trailing_empty"
        for i in range(runs):
            cur.execute("TRUNCATE TABLE lineitem")
            cpu0 = cpu_seconds(server.pid)
            t0 = time.perf_counter()
            out = server.stream_load(
                "bench", "lineitem", path,
                {"label": f"lineitem_{i}", "column_separator": "|", "columns": names},
            )
            elapsed = time.perf_counter() - t0
            cpus.append(cpu_seconds(server.pid) - cpu0)
            times.append(elapsed)
            print(f"  basalt run {i + 1}: {elapsed:.2f} s  {str(out)[:160]}...", flush=True)
        cur.execute("SELECT COUNT(*), SUM(l_extendedprice) FROM lineitem")
        check = cur.fetchone()
        peak_mb = peak_rss_mb(server.pid)
    finally:
        server.stop()
    return times, cpus, check, peak_mb


def duckdb_runs(path, runs):
    times = []
    work = tempfile.mkdtemp(prefix="duckdb-bench-")
    try:
        for i in range(runs):
            db = os.path.join(work, f"run{i}.duckdb")
            con = duckdb.connect(db)
            cols = ", ".join(
                f"{n} {'VARCHAR' + t[4:] if t.startswith('CHAR(') else t}" for n, t in COLUMNS
            )
            con.execute(f"CREATE TABLE lineitem ({cols})")
            t0 = time.perf_counter()
            con.execute(f"COPY lineitem FROM '{path}' (DELIMITER '|')")
            con.execute("CHECKPOINT")
            elapsed = time.perf_counter() - t0
            times.append(elapsed)
            check = con.execute("SELECT COUNT(*), SUM(l_extendedprice) FROM lineitem").fetchone()
            con.close()
            os.remove(db)
            print(f"  duckdb run {i + 1}: {elapsed:.2f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return times, check


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt")
    ap.add_argument("--sf", type=float, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--buckets", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--data", default=None, help="where generated data is kept")
    args = ap.parse_args()
    sf_name = f"{args.sf:g}"
    data_dir = args.data or os.path.join("bench", "data", f"tpch-sf{sf_name}")
    path = os.path.abspath(generate(args.sf, data_dir))
    size = os.path.getsize(path)
    print(f"lineitem: {path} ({size / 1e6:.0f} MB)")

    print("DuckDB COPY:")
    d_times, d_check = duckdb_runs(path, args.runs)
    print("Basalt Stream Load:")
    b_times, b_cpu, b_check, b_peak = basalt_runs(args.basalt, path, args.runs, args.buckets)
    rows = int(d_check[0])
    if int(b_check[0]) != rows or str(b_check[1]) != str(d_check[1]):
        print(f"MISMATCH: basalt {b_check} vs duckdb {d_check}")
        sys.exit(1)

    b_med, d_med = statistics.median(b_times), statistics.median(d_times)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"# Load benchmark: TPC-H SF{sf_name} lineitem ({rows} rows, {size / 1e6:.0f} MB)",
        "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}, commit {commit}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        f"- runs: {args.runs} per engine, median reported; results checked (count and SUM(l_extendedprice))",
        "",
        "| engine | median s | min s | max s | rows/s | server CPU s | server peak RSS MB |",
        "|---|---|---|---|---|---|---|",
        f"| DuckDB COPY (duckdb {duckdb.__version__}) | {d_med:.2f} | {min(d_times):.2f} | {max(d_times):.2f} | {rows / d_med:,.0f} | - | - |",
        f"| Basalt Stream Load | {b_med:.2f} | {min(b_times):.2f} | {max(b_times):.2f} | {rows / b_med:,.0f} | {statistics.median(b_cpu):.1f} | {b_peak:.0f} |",
        "",
        f"Basalt / DuckDB time ratio: **{b_med / d_med:.2f}** (goal <= 1.0)",
    ]
    report = "\n".join(lines)
    print(report)
    os.makedirs(os.path.join("bench", "results"), exist_ok=True)
    out = os.path.join("bench", "results", f"load-{datetime.date.today().isoformat()}.md")
    with open(out, "w") as f:
        f.write(report + "\n")
    with open(out.replace(".md", ".csv"), "w") as f:
        f.write("engine,run,seconds\n")
        for i, t in enumerate(d_times):
            f.write(f"duckdb,{i + 1},{t:.3f}\n")
        for i, t in enumerate(b_times):
            f.write(f"basalt,{i + 1},{t:.3f}\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
