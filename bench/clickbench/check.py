#!/usr/bin/env python3
"""Checks Basalt's answers to the 43 ClickBench queries against DuckDB's over the same Parquet
file (correctness only; timings are printed but a debug build's mean little).

    bench/.venv/bin/python bench/clickbench/check.py --parquet bench/data/clickbench/hits.parquet \
        [--basalt target/debug/basalt | --port N --http-port M [--no-load]] [--queries Q1,Q24]

Without --port it starts `--basalt` on a temporary data directory with free ports, creates the
table from basalt_ddl.sql, loads the file with Stream Load (curl, format parquet), and stops the
server at the end. DuckDB loads the file into an in-memory table.

How results are compared (queries.py gives each engine its spelling):
- values: integers exactly, other numbers within 1e-6 relative, text exactly, dates and
  timestamps as ISO text;
- no ORDER BY: the same rows in any order;
- ORDER BY: the same rows in the same order; where that fails, ties decide: DuckDB computes the
  query's ORDER BY keys alongside its columns, and Basalt's row at each position must carry
  the key DuckDB has there. A group of tied rows that lies wholly inside the returned window
  must be the same rows; a group cut by LIMIT/OFFSET may be any of the tied rows (each
  Basalt row must exist in the full, unlimited result with that key);
- LIMIT without ORDER BY (Q18): any rows of the full result, as many as DuckDB returns.
Exit status 1 if any query errors or mismatches.
"""

import argparse
import datetime
import decimal
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import duckdb
import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from queries import queries  # noqa: E402

DATABASE = "clickbench_check"


# --- Basalt server ---------------------------------------------------------------------------

class Server:
    """A Basalt server on a temporary data directory and free ports."""

    def __init__(self, binary):
        self.work = tempfile.mkdtemp(prefix="basalt-clickbench-check-")
        self.log = open(os.path.join(self.work, "stderr.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "server", "--data-dir", os.path.join(self.work, "data"),
             "--mysql-port", "0", "--http-port", "0"],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.time() + 120
        self.port = self.http_port = None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            m = re.search(r"MySQL protocol on [\d.]+:(\d+), HTTP on [\d.]+:(\d+)", line)
            if m:
                self.port, self.http_port = int(m.group(1)), int(m.group(2))
                break
            if not line and self.proc.poll() is not None:
                break
        if self.port is None:
            self.stop()
            raise RuntimeError("basalt did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)


def basalt_ddl():
    with open(os.path.join(HERE, "basalt_ddl.sql")) as f:
        text = "\n".join(l for l in f if not l.lstrip().startswith("--"))
    return text.strip().rstrip(";")


def load_basalt(port, http_port, parquet):
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    cur.execute(f"USE {DATABASE}")
    cur.execute("DROP TABLE IF EXISTS hits")
    cur.execute(basalt_ddl())
    conn.close()
    t = time.perf_counter()
    out = subprocess.run(
        ["curl", "-sS", "--location-trusted", "-u", "root:", "-H", "format:parquet",
         "-H", f"label:hits_{int(time.time() * 1000)}", "-T", parquet, "-XPUT",
         f"http://127.0.0.1:{http_port}/api/{DATABASE}/hits/_stream_load"],
        check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    if result.get("Status") != "Success":
        raise RuntimeError(f"stream load failed: {out}")
    print(f"basalt: loaded {result['NumberLoadedRows']} rows in {time.perf_counter() - t:.1f} s",
          flush=True)


# --- values ----------------------------------------------------------------------------------

def norm(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() and abs(v) < 2**63 else float(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


def values_match(a, b):
    a, b = norm(a), norm(b)
    if a is None or b is None:
        return a is None and b is None
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def rows_match(r1, r2):
    return len(r1) == len(r2) and all(values_match(a, b) for a, b in zip(r1, r2))


def sort_key(row):
    out = []
    for v in map(norm, row):
        if v is None:
            out.append((0, ""))
        elif isinstance(v, (int, float)):
            out.append((1, float(f"{float(v):.5g}")))
        else:
            out.append((2, str(v)))
    return out


def multiset_match(got, want):
    if len(got) != len(want):
        return False
    g, w = sorted(got, key=sort_key), sorted(want, key=sort_key)
    if all(rows_match(a, b) for a, b in zip(g, w)):
        return True
    if len(got) > 3000:
        return False
    left = list(want)  # rounding can order near-equal numbers differently: match greedily
    for row in got:
        for i, cand in enumerate(left):
            if rows_match(row, cand):
                del left[i]
                break
        else:
            return False
    return True


# --- SQL structure (top level of the DuckDB spelling) -----------------------------------------

def top_level_tokens(sql):
    """(keyword, position) of top-level FROM / ORDER BY / LIMIT / OFFSET, outside parentheses
    and string literals."""
    masked = re.sub(r"'(?:[^']|'')*'", lambda m: "'" + " " * (len(m.group(0)) - 2) + "'", sql)
    out, depth = [], 0
    for m in re.finditer(r"[()]|\b(FROM|ORDER\s+BY|LIMIT|OFFSET)\b", masked, re.I):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            out.append((re.sub(r"\s+", " ", tok.upper()), m.start(), m.end()))
    return out


def split_commas(text):
    parts, depth, cur, quoted = [], 0, "", False
    for ch in text:
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


class Shape:
    """Where a query's FROM, ORDER BY, LIMIT and OFFSET are."""

    def __init__(self, sql):
        self.sql = sql
        toks = top_level_tokens(sql)
        pos = {}
        for name, start, end in toks:
            pos.setdefault(name, (start, end))
        self.from_at = pos["FROM"][0]
        tail_starts = [pos[k][0] for k in ("ORDER BY", "LIMIT", "OFFSET") if k in pos]
        self.body_end = min(tail_starts) if tail_starts else len(sql)
        self.order = None
        if "ORDER BY" in pos:
            end = min([pos[k][0] for k in ("LIMIT", "OFFSET") if k in pos] or [len(sql)])
            self.order = sql[pos["ORDER BY"][1]:end].strip()
        self.limit = self.offset = None
        if "LIMIT" in pos:
            self.limit = int(re.match(r"\s*(\d+)", sql[pos["LIMIT"][1]:]).group(1))
        if "OFFSET" in pos:
            self.offset = int(re.match(r"\s*(\d+)", sql[pos["OFFSET"][1]:]).group(1))

    def order_keys(self):
        return [re.sub(r"\s+(ASC|DESC)$", "", k, flags=re.I) for k in split_commas(self.order)]

    def keyed(self, with_order=True, limit=None):
        """The query with its ORDER BY expressions appended as columns __k0.., optionally
        without ORDER BY and with another LIMIT (no OFFSET)."""
        keys = self.order_keys() if self.order else []
        extra = "".join(f", {k} AS __k{i}" for i, k in enumerate(keys))
        sql = self.sql[:self.from_at].rstrip() + extra + " " + self.sql[self.from_at:self.body_end]
        if with_order and self.order:
            sql += f" ORDER BY {self.order}"
        if limit is not None:
            sql += f" LIMIT {limit}"
        return sql, len(keys)


# --- comparison ------------------------------------------------------------------------------

def members(con, got_rows, ncols, key_filter=None):
    """True if every row of got_rows is a distinct row of __ref (whose first ncols columns are
    the query's), restricted to key_filter ({column: value})."""
    counts = {}
    for row in got_rows:
        k = tuple(map(norm, row))
        counts.setdefault(k, [row, 0])[1] += 1
    for row, count in counts.values():
        conds, params = [], []
        for col, val in (key_filter or {}).items():
            conds.append(f"{col} IS NOT DISTINCT FROM ?")
            params.append(val)
        for i, v in enumerate(row):
            if v is None or isinstance(v, (int, str, datetime.date)) and not isinstance(v, bool):
                conds.append(f"c{i} IS NOT DISTINCT FROM ?")
                params.append(v)
        where = " AND ".join(conds) or "TRUE"
        cols = ", ".join(f"c{i}" for i in range(ncols))
        cands = con.execute(f"SELECT {cols} FROM __ref WHERE {where} LIMIT {count + 1000}",
                            params).fetchall()
        if sum(1 for c in cands if rows_match(row, c)) < count:
            return False
    return True


def ref_table(con, shape, ncols):
    sql, nkeys = shape.keyed(with_order=False)
    names = [f"c{i}" for i in range(ncols)] + [f"__k{i}" for i in range(nkeys)]
    con.execute(f"CREATE OR REPLACE TEMP TABLE __ref AS SELECT * FROM ({sql}) AS t({', '.join(names)})")
    return nkeys


def compare(con, duck_sql, got, want, ncols):
    """(ok, note)."""
    shape = Shape(duck_sql)
    if shape.order is None:
        if multiset_match(got, want):
            return True, ""
        if shape.limit is None:
            return False, "rows differ (unordered)"
        if len(got) != len(want):
            return False, f"{len(got)} rows, expected {len(want)}"
        ref_table(con, shape, ncols)
        if members(con, got, ncols):
            return True, "LIMIT without ORDER BY: other rows of the full result"
        return False, "rows not in the full result"
    if len(got) == len(want) and all(rows_match(g, w) for g, w in zip(got, want)):
        return True, ""
    if len(got) != len(want):
        return False, f"{len(got)} rows, expected {len(want)}"
    # Ties: where does each position's key lie?
    offset = shape.offset or 0
    keyed, nkeys = shape.keyed(limit=None if shape.limit is None else offset + shape.limit)
    window = con.execute(keyed).fetchall()[offset:]
    ref_table(con, shape, ncols)
    groups = {}
    for i, row in enumerate(window):
        groups.setdefault(tuple(row[ncols:]), []).append(i)
    for key, positions in groups.items():
        key_filter = {f"__k{j}": v for j, v in enumerate(key)}
        where = " AND ".join(f"{c} IS NOT DISTINCT FROM ?" for c in key_filter)
        total = con.execute(f"SELECT COUNT(*) FROM __ref WHERE {where}", list(key)).fetchone()[0]
        g_rows = [got[i] for i in positions]
        if total == len(positions):
            if not multiset_match(g_rows, [window[i][:ncols] for i in positions]):
                return False, f"rows at positions {positions[0]}..{positions[-1]} differ (key {key})"
        elif not members(con, g_rows, ncols, key_filter):
            return False, (f"rows at positions {positions[0]}..{positions[-1]} are not rows "
                           f"with ORDER BY key {key}")
    return True, "ties broken differently"


def fmt_row(row, width=160):
    return str(tuple(norm(v) for v in row))[:width]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parquet", required=True)
    ap.add_argument("--basalt", default="target/debug/basalt")
    ap.add_argument("--port", type=int, help="use a running server (MySQL port)")
    ap.add_argument("--http-port", type=int, help="its HTTP port (for loading)")
    ap.add_argument("--no-load", action="store_true",
                    help=f"the running server already has {DATABASE}.hits")
    ap.add_argument("--queries", default="", help="e.g. Q1,Q24 (default: all 43)")
    ap.add_argument("--verbose", "-v", action="store_true", help="print rows of mismatches")
    args = ap.parse_args()
    parquet = os.path.abspath(args.parquet)
    wanted = set(args.queries.upper().split(",")) if args.queries else None
    duck_q = [(n, s) for n, s in queries("duckdb") if not wanted or n in wanted]
    basalt_q = dict(queries("basalt"))

    con = duckdb.connect()
    t = time.perf_counter()
    con.execute(f"CREATE TABLE hits AS SELECT * FROM read_parquet('{parquet}')")
    print(f"duckdb {duckdb.__version__}: loaded in {time.perf_counter() - t:.1f} s", flush=True)

    server = None
    try:
        if args.port:
            port, http_port = args.port, args.http_port
        else:
            server = Server(os.path.abspath(args.basalt))
            port, http_port = server.port, server.http_port
            print(f"basalt: {args.basalt} on MySQL port {port}, HTTP port {http_port}")
        if not args.no_load:
            load_basalt(port, http_port, parquet)
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database=DATABASE,
                               autocommit=True)
        results = []
        for name, dsql in duck_q:
            t = time.perf_counter()
            dcur = con.execute(dsql)
            want = dcur.fetchall()
            ncols = len(dcur.description)
            d_time = time.perf_counter() - t
            got, err = None, None
            t = time.perf_counter()
            try:
                cur = conn.cursor()
                cur.execute(basalt_q[name])
                got = list(cur.fetchall())
            except pymysql.MySQLError as e:
                err = str(e)
                if not conn.open:
                    conn = pymysql.connect(host="127.0.0.1", port=port, user="root",
                                           database=DATABASE, autocommit=True)
            b_time = time.perf_counter() - t
            if err:
                status, note = "ERROR", err.replace("\n", " ")[:400]
            else:
                ok, note = compare(con, dsql, got, want, ncols)
                status = "ok" if ok else "MISMATCH"
            empty = " (empty result)" if not want else ""
            print(f"{name:>4} {status:<8} rows={len(want):<3} basalt {b_time:7.3f} s  duckdb "
                  f"{d_time:6.3f} s{empty}{'  ' + note if note else ''}", flush=True)
            if status == "MISMATCH" and args.verbose:
                for i in range(max(len(got), len(want))):
                    g = fmt_row(got[i]) if i < len(got) else "-"
                    w = fmt_row(want[i]) if i < len(want) else "-"
                    mark = "  " if i < len(got) and i < len(want) and rows_match(got[i], want[i]) else "!!"
                    print(f"       {mark} basalt {g}\n          duckdb {w}")
            results.append((name, status, len(want)))
        conn.close()
    finally:
        if server:
            server.stop()
    bad = [n for n, s, _ in results if s != "ok"]
    empty = [n for n, _, rows in results if rows == 0]
    print(f"\n{len(results) - len(bad)} of {len(results)} match"
          + (f"; failing: {', '.join(bad)}" if bad else "")
          + (f"; empty on this data: {', '.join(empty)}" if empty else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
