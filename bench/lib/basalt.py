"""Basalt as a benchmark subject: start the release binary on a fresh data directory, load
files through Stream Load with curl (as users do), and time queries over the MySQL protocol
with PyMySQL."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import pymysql

from lib.proc import cpu_seconds, peak_rss_mb, reset_peak_rss, stop_server
from lib.results import normalize_rows


class BasaltServer:
    def __init__(self, binary, config=None):
        self.work = tempfile.mkdtemp(prefix="basalt-bench-")
        args = [binary, "server", "--data-dir", os.path.join(self.work, "data"),
                "--mysql-port", "0", "--http-port", "0"]
        if config:
            path = os.path.join(self.work, "basalt.toml")
            with open(path, "w") as f:
                f.write(config)
            args += ["--config", path]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            m = re.search(r"MySQL protocol on ([\d.]+):(\d+), HTTP on ([\d.]+):(\d+)", line)
            if m:
                self.mysql_port, self.http_port = int(m.group(2)), int(m.group(4))
                break
            if not line and self.proc.poll() is not None:
                break
        else:
            self.proc.kill()
            raise RuntimeError("basalt did not start")
        if self.proc.poll() is not None:
            raise RuntimeError("basalt exited at startup")
        self.pid = self.proc.pid

    def connect(self, database=None):
        return pymysql.connect(host="127.0.0.1", port=self.mysql_port, user="root",
                               database=database, autocommit=True)

    def stream_load(self, database, table, path, headers):
        args = ["curl", "-sS", "--location-trusted", "-u", "root:"]
        for k, v in headers.items():
            args += ["-H", f"{k}:{v}"]
        args += ["-T", path, "-XPUT",
                 f"http://127.0.0.1:{self.http_port}/api/{database}/{table}/_stream_load"]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        result = json.loads(out)
        if result.get("Status") != "Success":
            raise RuntimeError(f"stream load of {table} failed: {out}")
        return result

    def stop(self):
        stop_server(self.proc, self.work)


def _wait_for(proc, pattern, what):
    """The match of `pattern` in the first log line of `proc` that has it."""
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.search(pattern, line)
        if m:
            return m
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"{what} did not start")


class BasaltCluster:
    """A cluster of the same binary: one `basalt frontend` and `backends` x `basalt backend`,
    each with its own data directory. With taskset, backend i runs on its own share of the
    cores (the frontend on all of them), so the same command shows speed-up on a machine with
    cores enough; on a small machine the shares overlap."""

    SECRET = "bench-cluster-secret-0123456789"

    def __init__(self, binary, backends):
        self.work = tempfile.mkdtemp(prefix="basalt-cluster-bench-")
        env = dict(os.environ, BASALT_CLUSTER_SECRET=self.SECRET)
        cores = os.cpu_count() or 1
        share = max(1, cores // backends)
        self.procs, addresses = [], []
        for i in range(backends):
            args = [binary, "backend", "--data-dir", os.path.join(self.work, f"be{i}"),
                    "--port", "0"]
            if shutil.which("taskset"):
                cpus = ",".join(str((i * share + c) % cores) for c in range(share))
                args = ["taskset", "-c", cpus] + args
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True, env=env)
            self.procs.append(proc)
            m = _wait_for(proc, r"Basalt backend ready on [\d.]+:(\d+)", f"backend {i}")
            addresses.append(f"127.0.0.1:{m.group(1)}")
        self.proc = subprocess.Popen(
            [binary, "frontend", "--data-dir", os.path.join(self.work, "fe"), "--mysql-port", "0",
             "--http-port", "0", "--backends", ",".join(addresses)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.procs.append(self.proc)
        m = _wait_for(self.proc, r"MySQL protocol on ([\d.]+):(\d+), HTTP on ([\d.]+):(\d+)",
                      "frontend")
        self.mysql_port, self.http_port = int(m.group(2)), int(m.group(4))
        self.pid = self.proc.pid
        self.pids = [p.pid for p in self.procs]

    connect = BasaltServer.connect
    stream_load = BasaltServer.stream_load

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.work, ignore_errors=True)


_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def shuffled_bytes(cur, sql):
    """Bytes a cluster's query moved between nodes: the query runs once more with a profile,
    and the `bytes_transferred` of its network operators (shuffles, coalesces, broadcasts)
    are added up. The profile is kept once every backend has reported, so it is waited for."""
    cur.execute("SET enable_profile = true")
    cur.execute(sql)
    cur.fetchall()
    cur.execute("SET enable_profile = false")
    profile = None
    for _ in range(200):
        cur.execute("SHOW QUERY PROFILE")
        profile = next((r for r in cur.fetchall() if r[3] == sql), None)
        if profile:
            break
        time.sleep(0.05)
    if profile is None:
        return None
    cur.execute(f"SHOW QUERY PROFILE '/{profile[0]}'")
    total = 0.0
    for row in cur.fetchall():
        if "Network" not in str(row[2]):
            continue
        for value, unit in re.findall(r"bytes_transferred=([\d.]+) ?([KMGT]?B)", str(row[10])):
            total += float(value) * _UNITS[unit]
    return int(total)


def run_queries(server, database, queries, runs, log=print, engine="basalt"):
    """Warm-up + `runs` timed runs per query (execute + fetch every row through PyMySQL).
    Returns the same shape as a peer's result."""
    conn = server.connect(database)
    cur = conn.cursor()
    # Every process of the subject: one server, or a cluster's frontend and backends.
    pids = getattr(server, "pids", [server.pid])
    for pid in pids:
        reset_peak_rss(pid)
    cpu0 = sum(cpu_seconds(pid) for pid in pids)
    out = []
    for name, sql in queries:
        entry = {"name": name, "times": [], "rows": None, "error": None}
        try:
            cur.execute(sql)
            entry["rows"] = normalize_rows(cur.fetchall())
            for _ in range(runs):
                t = time.perf_counter()
                cur.execute(sql)
                cur.fetchall()
                entry["times"].append(time.perf_counter() - t)
        except pymysql.MySQLError as e:
            entry["error"] = str(e)[:300]
            if not conn.open:
                conn = server.connect(database)
                cur = conn.cursor()
        log(f"  {engine} {name}: "
            + (f"{min(entry['times']):.3f} s" if entry["times"] else f"ERROR {entry['error']}"))
        out.append(entry)
    cpu_s = sum(cpu_seconds(pid) for pid in pids) - cpu0
    peak = sum(peak_rss_mb(pid) for pid in pids)
    # On a cluster, one more (profiled) run per query measures the bytes it shuffles; after
    # the CPU figure, which it must not inflate.
    if hasattr(server, "pids"):
        for (name, sql), entry in zip(queries, out):
            if not entry["error"]:
                entry["shuffled_bytes"] = shuffled_bytes(cur, sql)
    conn.close()
    return {
        "engine": engine,
        "cpu_s": cpu_s,
        "peak_rss_mb": peak,
        "queries": out,
    }
