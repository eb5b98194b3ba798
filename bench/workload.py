#!/usr/bin/env python3
"""Workload group experiments (issue 6), after Doris's workload-group best practices, at this
machine's scale. Each is measured from outside the server (its CPU time and resident memory from
/proc, client-side latencies and errors) and from Basalt's own tables
(information_schema.workload_group_resource_usage).

- cpu: clients saturate the machine with aggregations, first in a group without limits, then in
  one with cpu_hard_limit 50%: cores used per 1 s window (goal: 50% of all cores within 10%).
- shares: two groups with cpu_share 3072 and 1024 saturate the machine together: their CPU
  split (goal: 3:1).
- io: full scans with the column cache off, first unlimited, then in a group with
  read_bytes_per_second 100 MB/s: bytes read per 5 s window (goal: within 10%).
- queue: max_concurrency 1, max_queue_size 2, queue_timeout 1.4x one query's time; four
  queries at once: one runs, one waits and runs, one times out, the fourth fails at once.
- isolation: a "report" group's short queries alone, then while an "adhoc" group with
  cpu_hard_limit 20% saturates the machine: p95 ratio (goal: <= 1.3).
- memory: three large aggregations at once in a group with overcommit off and memory_limit
  1.5x what one of them needs alone,
  beside a stream of queries in `normal`: the group's sampled usage never above its limit,
  failures name MEM_LIMIT_EXCEEDED and the group, `normal` sees no error, server RSS stays
  bounded.

Usage: bench/run workload [--rows 5000000] [--seconds 10]
       [--only cpu,shares,io,queue,isolation,memory]
"""

import argparse
import datetime
import os
import statistics
import sys
import threading
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.basalt import BasaltServer  # noqa: E402
from lib.proc import cpu_seconds, peak_rss_mb, reset_peak_rss  # noqa: E402
from lib.suite import git_commit, machine, write_report  # noqa: E402

CORES = os.cpu_count() or 1
AGG = "SELECT user_id % 200000 AS u, COUNT(*), SUM(amount) FROM events GROUP BY u ORDER BY 3 DESC LIMIT 5"
SCAN = "SELECT COUNT(*), SUM(LENGTH(url)), SUM(amount) FROM events"
REPORT = "SELECT COUNT(*), SUM(amount) FROM events WHERE user_id = 4242"
BIG_AGG = "SELECT user_id, COUNT(*), MAX(url) FROM events GROUP BY user_id ORDER BY 2 DESC LIMIT 3"


def load_events(server, rows):
    conn = server.connect()
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS wg")
    cur.execute("USE wg")
    cur.execute(
        "CREATE TABLE IF NOT EXISTS events (id BIGINT NOT NULL, user_id BIGINT, amount DOUBLE, "
        "url VARCHAR(200)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 8 "
        "PROPERTIES ('replication_num' = '1')")
    step = 1_000_000
    for start in range(1, rows + 1, step):
        end = min(rows, start + step - 1)
        cur.execute(
            "INSERT INTO events SELECT v, (v * 7919) % 1000003, (v % 1000) / 10.0, "
            "concat('https://example.com/', md5(CAST(v AS VARCHAR)), '/', "
            f"md5(CAST(v * 3 AS VARCHAR))) FROM generate_series({start}, {end}) AS g(v)")
    conn.close()


def connect(server, group):
    conn = server.connect("wg")
    conn.cursor().execute(f"SET workload_group = '{group}'")
    return conn


def group_usage(cur, group):
    cur.execute(
        "SELECT memory_usage_bytes, cpu_usage_percent, local_scan_bytes, cpu_time_ms "
        "FROM information_schema.workload_group_resource_usage "
        f"WHERE workload_group_name = '{group}'")
    row = cur.fetchone()
    return {"memory": int(row[0]), "cpu_percent": float(row[1]), "scan_bytes": int(row[2]),
            "cpu_ms": int(row[3])}


class Load:
    """`clients` threads running `sql` in `group` until stopped; counts and errors kept."""

    def __init__(self, server, group, sql, clients):
        self.stop = threading.Event()
        self.latencies, self.errors = [], []
        self.threads = [threading.Thread(target=self._run, args=(server, group, sql))
                        for _ in range(clients)]
        for t in self.threads:
            t.start()

    def _run(self, server, group, sql):
        conn = connect(server, group)
        cur = conn.cursor()
        while not self.stop.is_set():
            t = time.perf_counter()
            try:
                cur.execute(sql)
                cur.fetchall()
                self.latencies.append(time.perf_counter() - t)
            except pymysql.MySQLError as e:
                self.errors.append(str(e))
        conn.close()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join()
        return self


def cores_per_window(pid, seconds, window=1.0, probe=None):
    """Cores the process used in each `window` over `seconds` (and `probe()` per window)."""
    out, probes = [], []
    last, t_last = cpu_seconds(pid), time.perf_counter()
    end = t_last + seconds
    while time.perf_counter() < end:
        time.sleep(window)
        now, t_now = cpu_seconds(pid), time.perf_counter()
        out.append((now - last) / (t_now - t_last))
        last, t_last = now, t_now
        if probe:
            probes.append(probe())
    return out, probes


def cpu_experiment(server, args, report):
    admin = server.connect("wg").cursor()
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS free_cpu")
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS capped PROPERTIES ('cpu_hard_limit' = '50%')")
    rows = []
    for group in ["free_cpu", "capped"]:
        load = Load(server, group, AGG, CORES * 2)
        time.sleep(1)
        windows, probes = cores_per_window(
            server.pid, args.seconds, probe=lambda g=group: group_usage(admin, g)["cpu_percent"])
        load.finish()
        rows.append((group, windows, probes, len(load.latencies), len(load.errors)))
    report += ["## CPU hard limit", "",
               f"{CORES * 2} clients loop `{AGG}` for {args.seconds} s per group. Server cores "
               "from /proc per 1 s window; the group's own figure from "
               "workload_group_resource_usage.", "",
               "| group | mean cores | min / max per 1 s window | share of all cores | "
               "group CPU_USAGE_PERCENT (mean) | queries | errors |",
               "| --- | --- | --- | --- | --- | --- | --- |"]
    for group, windows, probes, done, errors in rows:
        mean = statistics.mean(windows)
        report.append(
            f"| {group} | {mean:.2f} | {min(windows):.2f} / {max(windows):.2f} | "
            f"{mean / CORES * 100:.0f}% | {statistics.mean(probes):.0f}% | {done} | {errors} |")
    report.append("")


def shares_experiment(server, args, report):
    admin = server.connect("wg").cursor()
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS heavy_share PROPERTIES ('cpu_share' = '3072')")
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS light_share PROPERTIES ('cpu_share' = '1024')")
    loads = [Load(server, g, AGG, CORES * 2) for g in ["heavy_share", "light_share"]]
    time.sleep(2)
    samples = []
    end = time.perf_counter() + args.seconds
    while time.perf_counter() < end:
        time.sleep(1)
        samples.append((group_usage(admin, "heavy_share")["cpu_percent"],
                        group_usage(admin, "light_share")["cpu_percent"]))
    for load in loads:
        load.finish()
    heavy = statistics.mean(h for h, _ in samples)
    light = statistics.mean(l for _, l in samples)
    report += ["## CPU shares under contention", "",
               f"{CORES * 2} clients per group loop `{AGG}` in `heavy_share` (cpu_share 3072) and "
               f"`light_share` (cpu_share 1024) at once for {args.seconds} s; each group's "
               "CPU_USAGE_PERCENT sampled every second (goal: 3:1).", "",
               "| group | mean CPU_USAGE_PERCENT | queries | errors |", "| --- | --- | --- | --- |",
               f"| heavy_share | {heavy:.0f}% | {len(loads[0].latencies)} | {len(loads[0].errors)} |",
               f"| light_share | {light:.0f}% | {len(loads[1].latencies)} | {len(loads[1].errors)} |",
               "", f"ratio: {heavy / max(light, 1e-9):.2f}", ""]


def io_experiment(server, args, report):
    admin = server.connect("wg").cursor()
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS free_io")
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS io_capped "
                  f"PROPERTIES ('read_bytes_per_second' = '{args.io_limit_mb * 1024 * 1024}')")
    rows = []
    for group in ["free_io", "io_capped"]:
        load = Load(server, group, SCAN, 2)
        time.sleep(1)
        rates = []
        for _ in range(max(1, int(args.seconds // 5))):
            before, t0 = group_usage(admin, group)["scan_bytes"], time.perf_counter()
            time.sleep(5)
            after, t1 = group_usage(admin, group)["scan_bytes"], time.perf_counter()
            rates.append((after - before) / (t1 - t0) / 2**20)
        load.finish()
        rows.append((group, rates, len(load.latencies), len(load.errors)))
    report += ["## Read-IO limit", "",
               f"Two clients loop `{SCAN}` with the column cache off (every scan reads the "
               f"segment files); limit {args.io_limit_mb} MB/s. MB read per 5 s window.", "",
               "| group | mean MB/s | per 5 s window | queries | errors |",
               "| --- | --- | --- | --- | --- |"]
    for group, rates, done, errors in rows:
        report.append(f"| {group} | {statistics.mean(rates):.1f} | "
                      f"{', '.join(f'{r:.1f}' for r in rates)} | {done} | {errors} |")
    report.append("")


def queue_experiment(server, args, report):
    admin = server.connect("wg").cursor()
    heavy = ("SELECT COUNT(DISTINCT v % 1000003) FROM generate_series(1, "
             f"{args.queue_series}) AS t(v)")
    t = time.perf_counter()
    admin.execute(heavy)
    alone = time.perf_counter() - t
    timeout_ms = int(alone * 1.4 * 1000)
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS queued PROPERTIES ("
                  "'max_concurrency' = '1', 'max_queue_size' = '2', "
                  f"'queue_timeout' = '{timeout_ms}')")
    results = [None] * 4

    def run(i):
        conn = connect(server, "queued")
        t0 = time.perf_counter()
        try:
            conn.cursor().execute(heavy)
            results[i] = ("ok", time.perf_counter() - t0, "")
        except pymysql.MySQLError as e:
            results[i] = ("error", time.perf_counter() - t0, str(e.args[-1])[:90])
        conn.close()

    threads = []
    for i in range(4):
        threads.append(threading.Thread(target=run, args=(i,)))
        threads[-1].start()
        time.sleep(0.1)
    for th in threads:
        th.join()
    report += ["## Queueing", "",
               f"One query alone: {alone:.2f} s. Group: max_concurrency 1, max_queue_size 2, "
               f"queue_timeout {timeout_ms} ms; four queries started 100 ms apart.", "",
               "| query | outcome | seconds | message |", "| --- | --- | --- | --- |"]
    for i, (outcome, secs, msg) in enumerate(results):
        report.append(f"| {i + 1} | {outcome} | {secs:.2f} | {msg} |")
    report.append("")


def p95(values):
    values = sorted(values)
    return values[int(0.95 * (len(values) - 1))] if values else float("nan")


def isolation_experiment(server, args, report):
    admin = server.connect("wg").cursor()
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS report")
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS adhoc PROPERTIES ('cpu_hard_limit' = '20%')")

    def report_latencies():
        conn = connect(server, "report")
        cur = conn.cursor()
        out = []
        end = time.perf_counter() + args.seconds
        while time.perf_counter() < end:
            t = time.perf_counter()
            cur.execute(REPORT)
            cur.fetchall()
            out.append(time.perf_counter() - t)
        conn.close()
        return out

    alone = report_latencies()
    load = Load(server, "adhoc", AGG, CORES * 2)
    time.sleep(1)
    busy = report_latencies()
    load.finish()
    ratio = p95(busy) / p95(alone)
    report += ["## Isolation", "",
               f"`report` runs `{REPORT}` in a loop for {args.seconds} s, alone and while "
               f"{CORES * 2} `adhoc` clients (cpu_hard_limit 20%) loop `{AGG}`.", "",
               "| report group | queries | p50 ms | p95 ms |", "| --- | --- | --- | --- |",
               f"| alone | {len(alone)} | {statistics.median(alone) * 1000:.1f} | "
               f"{p95(alone) * 1000:.1f} |",
               f"| beside adhoc | {len(busy)} | {statistics.median(busy) * 1000:.1f} | "
               f"{p95(busy) * 1000:.1f} |", "",
               f"p95 ratio: {ratio:.2f} (goal <= 1.3); adhoc finished {len(load.latencies)} "
               f"queries, {len(load.errors)} errors.", ""]


def peak_group_memory(admin, group, until):
    """Peak MEMORY_USAGE_BYTES of `group`, sampled every 20 ms until `until()` is true."""
    peak = 0
    while not until():
        peak = max(peak, group_usage(admin, group)["memory"])
        time.sleep(0.02)
    return peak


def memory_experiment(server, args, report):
    admin = server.connect("wg").cursor()
    # Calibrate: one query's peak in a group without a limit; the small group then holds 1.5x
    # that, so one query fits and three at once do not.
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS calib")
    one = Load(server, "calib", BIG_AGG, 1)
    time.sleep(0.2)
    end = time.perf_counter() + 5
    one_peak = peak_group_memory(admin, "calib", lambda: time.perf_counter() > end)
    one.finish()
    mem_limit = parse_size(args.mem_limit)
    percent = round(1.5 * one_peak / mem_limit * 100, 2)
    admin.execute("CREATE WORKLOAD GROUP IF NOT EXISTS small PROPERTIES ("
                  f"'memory_limit' = '{percent}%', 'enable_memory_overcommit' = 'false')")
    reset_peak_rss(server.pid)
    rss0 = peak_rss_mb(server.pid)
    heavy = Load(server, "small", BIG_AGG, 3)
    normal = Load(server, "normal", REPORT, 1)
    end = time.perf_counter() + args.seconds
    peak_usage = peak_group_memory(admin, "small", lambda: time.perf_counter() > end)
    heavy.finish()
    normal.finish()
    limit = percent / 100 * mem_limit
    mem_errors = [e for e in heavy.errors if "MEM_LIMIT_EXCEEDED" in e]
    report += ["## Memory hard limit", "",
               f"One `{BIG_AGG}` alone peaked at {one_peak / 2**20:.0f} MB; group `small` gets "
               f"1.5x that: memory_limit {percent}% of mem_limit {args.mem_limit} = "
               f"{limit / 2**20:.0f} MB, overcommit off. Three clients loop the query in `small` "
               f"for {args.seconds} s beside one client looping `{REPORT}` in `normal`; group "
               "usage sampled every 20 ms.", "",
               "| figure | value |", "| --- | --- |",
               f"| small: queries ok / failed | {len(heavy.latencies)} / {len(heavy.errors)} |",
               f"| small: failures with MEM_LIMIT_EXCEEDED | {len(mem_errors)} |",
               f"| small: peak sampled MEMORY_USAGE_BYTES | {peak_usage / 2**20:.0f} MB "
               f"({peak_usage / limit * 100:.0f}% of the limit) |",
               f"| normal: queries ok / failed | {len(normal.latencies)} / {len(normal.errors)} |",
               f"| server peak RSS (before: {rss0:.0f} MB; includes the column cache) | "
               f"{peak_rss_mb(server.pid):.0f} MB |",
               ""]
    if heavy.errors:
        report += ["First failure: `" + heavy.errors[0][:300].replace("|", "/") + "`", ""]


def parse_size(text):
    units = {"KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
    for unit, factor in units.items():
        if text.upper().endswith(unit):
            return float(text[:-2]) * factor
    return float(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", required=True)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--io-limit-mb", type=int, default=100)
    ap.add_argument("--queue-series", type=int, default=20_000_000)
    ap.add_argument("--mem-limit", default="8GB")
    ap.add_argument("--only", default="cpu,shares,io,queue,isolation,memory")
    args = ap.parse_args()
    only = set(args.only.split(","))
    report = [f"# Workload groups, {args.rows} rows ({datetime.date.today()})", "",
              f"- commit {git_commit()}; machine: {machine()}",
              f"- Basalt release build, mem_limit {args.mem_limit}; clients (PyMySQL) on the "
              "same machine.", ""]
    config = f'mem_limit = "{args.mem_limit}"\n'
    server = BasaltServer(args.basalt, config=config)
    try:
        t = time.perf_counter()
        load_events(server, args.rows)
        report.append(f"- generating `events` with INSERT .. SELECT: {time.perf_counter() - t:.1f} s")
        report.append("")
        for name, experiment in [("cpu", cpu_experiment), ("shares", shares_experiment),
                                 ("queue", queue_experiment),
                                 ("isolation", isolation_experiment),
                                 ("memory", memory_experiment)]:
            if name in only:
                print(f"running {name} ...", flush=True)
                experiment(server, args, report)
    finally:
        server.stop()
    if "io" in only:
        print("running io ...", flush=True)
        server = BasaltServer(args.basalt, config=config + "column_cache_mb = 0\n")
        try:
            load_events(server, args.rows)
            io_experiment(server, args, report)
        finally:
            server.stop()
    os.makedirs("bench/results", exist_ok=True)
    write_report(f"bench/results/workload-{args.rows}-{datetime.date.today()}.md", report)


if __name__ == "__main__":
    main()
