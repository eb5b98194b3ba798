"""Basalt as a benchmark subject: start the release binary on a fresh data directory, load
files through Stream Load with curl (as users do), and time queries over the MySQL protocol
with PyMySQL."""

import json
import os
import re
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


def run_queries(server, database, queries, runs, log=print):
    """Warm-up + `runs` timed runs per query (execute + fetch every row through PyMySQL).
    Returns the same shape as a peer's result."""
    conn = server.connect(database)
    cur = conn.cursor()
    reset_peak_rss(server.pid)
    cpu0 = cpu_seconds(server.pid)
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
        log(f"  basalt {name}: "
            + (f"{min(entry['times']):.3f} s" if entry["times"] else f"ERROR {entry['error']}"))
        out.append(entry)
    conn.close()
    return {
        "engine": "basalt",
        "cpu_s": cpu_seconds(server.pid) - cpu0,
        "peak_rss_mb": peak_rss_mb(server.pid),
        "queries": out,
    }
