#!/usr/bin/env python3
"""Benchmark (not a test): do many small loads make reads slow once compaction has settled?

Against a running Basalt server, for each key model (Duplicate, Unique, Aggregate):
  1. N single-row INSERTs into table `small` (autocommit, one load each);
  2. time a scan query right away (compaction still catching up);
  3. wait until background compaction settles (SHOW TABLETS: one rowset per tablet);
  4. load the same N rows with one INSERT into table `bulk`;
  5. time the same scan query on both tables (median of several runs) and report the ratio.
Goal (issue 3): small / bulk within 1.5x after compaction settles.

Usage: python3 bench/compaction_small_loads.py --host 127.0.0.1 --port 9030 [--rows 1000]
Needs: pymysql (pip install pymysql).
"""

import argparse
import statistics
import sys
import time

import pymysql

MODELS = {
    "duplicate": (
        "k BIGINT, city VARCHAR(32), amount DECIMAL(12,2), qty INT",
        "DUPLICATE KEY(k)",
    ),
    "unique": (
        "k BIGINT, city VARCHAR(32), amount DECIMAL(12,2), qty INT",
        "UNIQUE KEY(k)",
    ),
    "aggregate": (
        "k BIGINT, city VARCHAR(32), amount DECIMAL(12,2) SUM, qty INT MAX",
        "AGGREGATE KEY(k, city)",
    ),
}

SCAN = (
    "SELECT city, COUNT(*), SUM(amount), MAX(qty), MIN(k) FROM {t} "
    "GROUP BY city ORDER BY city"
)


def rows_for(n):
    """Deterministic rows; keys repeat so Unique overwrites and Aggregate merges."""
    cities = ["oslo", "lima", "kyiv", "baku", "rome", "nuuk", "riga", "doha"]
    out = []
    for i in range(n):
        k = (i * 7) % max(1, (n * 3) // 4)
        out.append((k, cities[i % len(cities)], (i % 1000) + 0.25, i % 97))
    return out


def values(row):
    k, city, amount, qty = row
    return f"({k}, '{city}', {amount:.2f}, {qty})"


def tablets(cur, table):
    cur.execute(f"SHOW TABLETS FROM {table}")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def rowset_counts(cur, table):
    return [int(t["RowsetCount"]) for t in tablets(cur, table)]


def wait_settled(cur, table, timeout):
    start = time.monotonic()
    while True:
        counts = rowset_counts(cur, table)
        if all(c <= 1 for c in counts):
            return time.monotonic() - start, counts
        if time.monotonic() - start > timeout:
            print(f"  compaction did not settle within {timeout}s: {counts}", file=sys.stderr)
            return None, counts
        time.sleep(0.2)


def time_query(cur, sql, runs):
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        cur.execute(sql)
        result = cur.fetchall()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def bench_model(conn, model, n, buckets, runs, timeout):
    cols, key = MODELS[model]
    cur = conn.cursor()
    for t in ("small", "bulk"):
        cur.execute(f"DROP TABLE IF EXISTS {t}")
        cur.execute(
            f"CREATE TABLE {t} ({cols}) {key} DISTRIBUTED BY HASH(k) BUCKETS {buckets} "
            "PROPERTIES ('replication_num' = '1')"
        )
    data = rows_for(n)

    t0 = time.perf_counter()
    for r in data:
        cur.execute(f"INSERT INTO small VALUES {values(r)}")
    load_s = time.perf_counter() - t0
    counts = rowset_counts(cur, "small")
    early_s, _ = time_query(cur, SCAN.format(t="small"), 1)

    settle_s, settled = wait_settled(cur, "small", timeout)

    t0 = time.perf_counter()
    cur.execute("INSERT INTO bulk VALUES " + ", ".join(values(r) for r in data))
    bulk_load_s = time.perf_counter() - t0

    # Warm both, then measure.
    time_query(cur, SCAN.format(t="small"), 2)
    time_query(cur, SCAN.format(t="bulk"), 2)
    small_s, small_res = time_query(cur, SCAN.format(t="small"), runs)
    bulk_s, bulk_res = time_query(cur, SCAN.format(t="bulk"), runs)
    same = small_res == bulk_res
    ratio = small_s / bulk_s if bulk_s > 0 else float("inf")
    print(
        f"{model:9} | {n} single-row INSERTs in {load_s:6.2f}s ({n / load_s:6.0f}/s), "
        f"rowsets after loads {sum(counts):4} (per tablet max {max(counts)}) | "
        f"scan before settle {early_s * 1000:7.1f} ms | "
        f"settled in {settle_s if settle_s is None else round(settle_s, 2)}s "
        f"to rowsets {settled} | bulk INSERT {bulk_load_s * 1000:6.1f} ms | "
        f"scan small {small_s * 1000:6.1f} ms, bulk {bulk_s * 1000:6.1f} ms, "
        f"ratio {ratio:4.2f} | results {'identical' if same else 'DIFFER'}"
    )
    return ratio, same, settle_s is not None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9030)
    p.add_argument("--user", default="root")
    p.add_argument("--password", default="")
    p.add_argument("--database", default="bench_compaction")
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--buckets", type=int, default=4)
    p.add_argument("--runs", type=int, default=15, help="scan repetitions (median)")
    p.add_argument("--settle-timeout", type=float, default=300)
    p.add_argument(
        "--models", default="duplicate,unique,aggregate", help="comma-separated key models"
    )
    a = p.parse_args()
    conn = pymysql.connect(
        host=a.host, port=a.port, user=a.user, password=a.password, autocommit=True
    )
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {a.database}")
    cur.execute(f"USE {a.database}")
    worst = 0.0
    ok = True
    for model in a.models.split(","):
        ratio, same, settled = bench_model(
            conn, model.strip(), a.rows, a.buckets, a.runs, a.settle_timeout
        )
        worst = max(worst, ratio)
        ok = ok and same and settled
    goal = worst <= 1.5
    print(f"worst ratio {worst:.2f} (goal <= 1.5: {'met' if goal else 'NOT met'})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
