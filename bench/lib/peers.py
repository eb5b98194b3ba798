"""Runs one peer engine (DuckDB, chdb or datafusion-python) over Parquet files in its own
process, so its CPU time and memory are its own and engines never run at once.

Each peer loads every table into its in-memory tables first (its best setting on this
machine, and how the issue's reference numbers were taken), then runs each query once to
warm up and `runs` more times, timing execute + fetching the whole result as Arrow.

    python bench/lib/peers.py SPEC.json      (SPEC: engine, tables, queries, runs, threads, out)
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from lib.proc import cpu_seconds, peak_rss_mb, reset_peak_rss  # noqa: E402
from lib.results import normalize_rows  # noqa: E402


def arrow_rows(table):
    cols = [c.to_pylist() for c in table.columns]
    return list(zip(*cols)) if cols else []


class DuckDB:
    setting = "in-memory tables (CREATE TABLE AS SELECT * FROM read_parquet), threads={threads}"

    def __init__(self, threads):
        import duckdb

        self.version = duckdb.__version__
        self.con = duckdb.connect()
        self.con.execute(f"SET threads={threads}")
        # The reference for Basalt's answers sorts NULLs as MySQL and Doris do: first in
        # ascending order, last in descending (DuckDB's default is last in both).
        self.con.execute("SET default_null_order = 'nulls_first_on_asc_last_on_desc'")

    def load(self, name, path):
        self.con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_parquet('{path}')")

    def run(self, sql):
        return self.con.execute(sql).to_arrow_table()


class Chdb:
    setting = "Memory engine tables (CREATE TABLE .. ENGINE = Memory AS SELECT * FROM file(.., Parquet)), max_threads={threads}"

    def __init__(self, threads):
        import chdb
        from chdb import session

        self.version = chdb.__version__
        self.threads = threads
        self.sess = session.Session()
        self.sess.query("CREATE DATABASE IF NOT EXISTS bench")
        self.sess.query("USE bench")

    def load(self, name, path):
        self.sess.query(
            f"CREATE TABLE bench.{name} ENGINE = Memory AS SELECT * FROM file('{path}', Parquet)"
        )

    def run(self, sql):
        sql = sql.rstrip().rstrip(";")
        # Standard SQL readings ClickHouse makes opt-in (TPC-DS needs them): a bare UNION is
        # DISTINCT, a derived table in a comma join needs no alias, CAST keeps NULLs.
        return self.sess.query(
            f"{sql} SETTINGS max_threads = {self.threads}, union_default_mode = 'DISTINCT', "
            "joined_subquery_requires_alias = 0, cast_keep_nullable = 1", "ArrowTable"
        )


class DataFusion:
    setting = "in-memory tables (MemTable from the Parquet batches, {threads} partitions), target_partitions={threads}"

    def __init__(self, threads):
        import datafusion
        from datafusion import SessionConfig, SessionContext

        self.version = datafusion.__version__
        self.threads = threads
        self.ctx = SessionContext(SessionConfig().with_target_partitions(threads))

    def load(self, name, path):
        batches = self.ctx.read_parquet(path).collect()
        parts = [batches[i :: self.threads] for i in range(self.threads)]
        parts = [p for p in parts if p] or [batches]
        self.ctx.register_record_batches(name, parts)

    def run(self, sql):
        import pyarrow as pa

        df = self.ctx.sql(sql)
        batches = df.collect()
        if not batches:
            return pa.Table.from_batches([], schema=df.schema())
        return pa.Table.from_batches(batches)


ENGINES = {"duckdb": DuckDB, "chdb": Chdb, "datafusion": DataFusion}


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    engine_cls = ENGINES[spec["engine"]]
    threads = spec["threads"]
    engine = engine_cls(threads)
    t0 = time.perf_counter()
    for name, path in spec["tables"].items():
        engine.load(name, path)
    load_s = time.perf_counter() - t0
    reset_peak_rss()
    cpu0 = cpu_seconds()
    out = []
    for name, sql in spec["queries"]:
        entry = {"name": name, "times": [], "rows": None, "error": None}
        try:
            result = engine.run(sql)
            entry["rows"] = normalize_rows(arrow_rows(result))
            for _ in range(spec["runs"]):
                t = time.perf_counter()
                engine.run(sql)
                entry["times"].append(time.perf_counter() - t)
        except Exception as e:  # a query one engine cannot run is reported, not fatal
            entry["error"] = str(e).splitlines()[0][:300] if str(e) else type(e).__name__
        print(f"  {spec['engine']} {name}: "
              + (f"{min(entry['times']):.3f} s" if entry["times"] else f"ERROR {entry['error']}"),
              file=sys.stderr, flush=True)
        out.append(entry)
    result = {
        "engine": spec["engine"],
        "version": engine.version,
        "setting": engine_cls.setting.format(threads=threads),
        "load_s": load_s,
        "cpu_s": cpu_seconds() - cpu0,
        "peak_rss_mb": peak_rss_mb(),
        "queries": out,
    }
    with open(spec["out"], "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
