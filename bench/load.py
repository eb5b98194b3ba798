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
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb
import pymysql

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


def start_basalt(binary, data_dir):
    proc = subprocess.Popen(
        [binary, "server", "--data-dir", data_dir, "--mysql-port", "0", "--http-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"MySQL protocol on ([\d.]+):(\d+), HTTP on ([\d.]+):(\d+)", line)
        if m:
            return proc, int(m.group(2)), int(m.group(4))
    proc.kill()
    raise RuntimeError("basalt did not start")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def basalt_runs(binary, path, runs, buckets):
    work = tempfile.mkdtemp(prefix="basalt-bench-")
    proc, mysql_port, http_port = start_basalt(binary, work)
    times, cpus = [], []
    try:
        conn = pymysql.connect(host="127.0.0.1", port=mysql_port, user="root", autocommit=True)
        cur = conn.cursor()
        cur.execute("CREATE DATABASE bench")
        cur.execute("USE bench")
        cols = ", ".join(f"{n} {t}" for n, t in COLUMNS)
        cur.execute(BASALT_DDL.format(cols=cols, buckets=buckets))
        names = ",".join(n for n, _ in COLUMNS) + ",trailing_empty"
        for i in range(runs):
            cur.execute("TRUNCATE TABLE lineitem")
            cpu0 = cpu_seconds(proc.pid)
            t0 = time.perf_counter()
            out = subprocess.run(
                [
                    "curl", "-sS", "--location-trusted", "-u", "root:",
                    "-H", f"label:lineitem_{i}", "-H", "column_separator:|",
                    "-H", f"columns:{names}", "-T", path, "-XPUT",
                    f"http://127.0.0.1:{http_port}/api/bench/lineitem/_stream_load",
                ],
                check=True, capture_output=True, text=True,
            ).stdout
            elapsed = time.perf_counter() - t0
            cpus.append(cpu_seconds(proc.pid) - cpu0)
            if '"Status":"Success"' not in out:
                raise RuntimeError(f"stream load failed: {out}")
            times.append(elapsed)
            print(f"  basalt run {i + 1}: {elapsed:.2f} s  {out[:160]}...", flush=True)
        cur.execute("SELECT COUNT(*), SUM(l_extendedprice) FROM lineitem")
        check = cur.fetchone()
        with open(f"/proc/{proc.pid}/status") as f:
            peak_mb = next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)
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
