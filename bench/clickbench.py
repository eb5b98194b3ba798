#!/usr/bin/env python3
"""ClickBench-style suite: a synthetic `hits` table with ClickBench's 105-column schema, made by
our seeded generator (bench/clickbench/generate.py; ClickBench's own data set cannot be
downloaded here), loaded into Basalt through Stream Load (Parquet) with Doris DDL
(bench/clickbench/basalt_ddl.sql); the 43 ClickBench queries over the MySQL protocol; DuckDB,
chdb and datafusion-python run the same queries (bench/clickbench/queries.py gives each
engine its spelling) over the same Parquet file. Every Basalt result is checked against
DuckDB's with bench/clickbench/check.py's comparison, which knows ClickBench's ties: rows
an ORDER BY leaves tied and a LIMIT cuts may be any of the tied rows.

Usage: bench/run clickbench [--rows 10000000] [--seed 1] [--runs 5]
                            [--engines basalt,duckdb,chdb,datafusion] [--queries Q1,Q24]
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lib.suite import run_suite  # noqa: E402


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


clickbench = os.path.join(HERE, "clickbench")
sys.path.insert(0, clickbench)  # check.py imports queries.py by name
queries_mod = load_module("clickbench_queries", os.path.join(clickbench, "queries.py"))
check_mod = load_module("clickbench_check", os.path.join(clickbench, "check.py"))


def generate(rows, seed, data_dir):
    """The generated Parquet file for (rows, seed), made once and kept between runs."""
    path = os.path.abspath(os.path.join(data_dir, f"hits-{rows}-seed{seed}.parquet"))
    if not os.path.exists(path):
        os.makedirs(data_dir, exist_ok=True)
        print(f"generating {rows:,} rows of hits (seed {seed}) in {path}", flush=True)
        tmp = path + ".tmp"
        subprocess.run([sys.executable, os.path.join(clickbench, "generate.py"),
                        "--rows", str(rows), "--seed", str(seed), "--out", tmp], check=True)
        os.replace(tmp, path)
    return path


class DuckDBChecker:
    """Compares Basalt's rows with DuckDB's using check.py's rules; loads the file into an
    in-memory DuckDB table the first time a query needs the full result (ties, LIMIT
    without ORDER BY). Runs after all timing, so no engine runs at the same time."""

    def __init__(self, parquet):
        self.parquet = parquet
        self.con = None
        self.sql = dict(queries_mod.queries("duckdb"))

    def connection(self):
        if self.con is None:
            import duckdb

            self.con = duckdb.connect()
            self.con.execute(f"CREATE TABLE hits AS SELECT * FROM read_parquet('{self.parquet}')")
        return self.con

    def __call__(self, name, got, want):
        ncols = len(want[0]) if want else (len(got[0]) if got else 0)
        if not got and not want:
            return True, "empty on this data"
        return check_mod.compare(_Lazy(self), self.sql[name], got, want, ncols)


class _Lazy:
    """A DuckDB connection opened on first use (most queries compare without one)."""

    def __init__(self, checker):
        self.checker = checker

    def execute(self, *args):
        return self.checker.connection().execute(*args)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--engines", default="basalt,duckdb,chdb,datafusion")
    ap.add_argument("--queries", default="", help="e.g. Q1,Q24 (default: all 43)")
    ap.add_argument("--data", default=os.path.join("bench", "data", "clickbench"))
    args = ap.parse_args()
    args.engines = args.engines.split(",")
    parquet = generate(args.rows, args.seed, args.data)
    wanted = set(args.queries.upper().split(",")) if args.queries else None

    def queries_for(engine):
        return [(n, s) for n, s in queries_mod.queries(engine) if not wanted or n in wanted]

    def load_basalt(server):
        conn = server.connect()
        cur = conn.cursor()
        cur.execute("CREATE DATABASE bench")
        cur.execute("USE bench")
        cur.execute(check_mod.basalt_ddl())
        conn.close()
        t0 = time.perf_counter()
        r = server.stream_load("bench", "hits", parquet, {"format": "parquet", "label": "hits"})
        return {"rows": f"{r['NumberLoadedRows']:,}",
                "Stream Load s": f"{time.perf_counter() - t0:.1f}"}

    run_suite(f"clickbench-{args.rows}", args, {"hits": parquet}, load_basalt, queries_for,
              f"ClickBench-style, {args.rows:,} generated rows: Basalt vs DuckDB, chdb, "
              "datafusion-python",
              notes=[f"data: bench/clickbench/generate.py --rows {args.rows} --seed {args.seed} "
                     "(synthetic hits, ClickBench's 105-column schema)",
                     "queries: bench/clickbench/queries.sql (ClickBench's 43), per-engine "
                     "spellings in bench/clickbench/queries.py; DDL: "
                     "bench/clickbench/basalt_ddl.sql"],
              check=DuckDBChecker(parquet))


if __name__ == "__main__":
    main()
