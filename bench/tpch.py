#!/usr/bin/env python3
"""TPC-H suite: data from tpchgen-cli (Parquet), loaded into Basalt through Stream Load with
Doris DDL (keys, yearly date partitions, hash buckets); the 22 queries over the MySQL protocol;
DuckDB, chdb and datafusion-python run the same queries over the same Parquet files; every
Basalt result is checked against DuckDB's.

Usage: bench/run tpch [--sf 1] [--runs 5] [--engines basalt,duckdb,chdb,datafusion]
       [--backends 1,3]  (also on clusters of one frontend and N backends)
"""

import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib.suite import run_suite  # noqa: E402

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]

YEARS = ", ".join(
    f"PARTITION p{y} VALUES LESS THAN ('{y + 1}-01-01')" for y in range(1992, 1999)
)

# Doris-style DDL: key columns first (they are the sort key inside each tablet), big tables
# partitioned by year on the date most queries filter on, hash-bucketed on the join key.
DDL = {
    "region": """CREATE TABLE region (r_regionkey INT NOT NULL, r_name CHAR(25) NOT NULL,
        r_comment VARCHAR(152)) DUPLICATE KEY(r_regionkey) DISTRIBUTED BY HASH(r_regionkey) BUCKETS 1""",
    "nation": """CREATE TABLE nation (n_nationkey INT NOT NULL, n_name CHAR(25) NOT NULL,
        n_regionkey INT NOT NULL, n_comment VARCHAR(152)) DUPLICATE KEY(n_nationkey)
        DISTRIBUTED BY HASH(n_nationkey) BUCKETS 1""",
    "supplier": """CREATE TABLE supplier (s_suppkey INT NOT NULL, s_name CHAR(25) NOT NULL,
        s_address VARCHAR(40) NOT NULL, s_nationkey INT NOT NULL, s_phone CHAR(15) NOT NULL,
        s_acctbal DECIMAL(15,2) NOT NULL, s_comment VARCHAR(101) NOT NULL)
        DUPLICATE KEY(s_suppkey) DISTRIBUTED BY HASH(s_suppkey) BUCKETS 1""",
    "customer": """CREATE TABLE customer (c_custkey INT NOT NULL, c_name VARCHAR(25) NOT NULL,
        c_address VARCHAR(40) NOT NULL, c_nationkey INT NOT NULL, c_phone CHAR(15) NOT NULL,
        c_acctbal DECIMAL(15,2) NOT NULL, c_mktsegment CHAR(10) NOT NULL,
        c_comment VARCHAR(117) NOT NULL) DUPLICATE KEY(c_custkey)
        DISTRIBUTED BY HASH(c_custkey) BUCKETS 2""",
    "part": """CREATE TABLE part (p_partkey INT NOT NULL, p_name VARCHAR(55) NOT NULL,
        p_mfgr CHAR(25) NOT NULL, p_brand CHAR(10) NOT NULL, p_type VARCHAR(25) NOT NULL,
        p_size INT NOT NULL, p_container CHAR(10) NOT NULL, p_retailprice DECIMAL(15,2) NOT NULL,
        p_comment VARCHAR(23) NOT NULL) DUPLICATE KEY(p_partkey)
        DISTRIBUTED BY HASH(p_partkey) BUCKETS 2""",
    "partsupp": """CREATE TABLE partsupp (ps_partkey INT NOT NULL, ps_suppkey INT NOT NULL,
        ps_availqty INT NOT NULL, ps_supplycost DECIMAL(15,2) NOT NULL,
        ps_comment VARCHAR(199) NOT NULL) DUPLICATE KEY(ps_partkey, ps_suppkey)
        DISTRIBUTED BY HASH(ps_partkey) BUCKETS 2""",
    "orders": f"""CREATE TABLE orders (o_orderdate DATE NOT NULL, o_orderkey BIGINT NOT NULL,
        o_custkey INT NOT NULL, o_orderstatus CHAR(1) NOT NULL, o_totalprice DECIMAL(15,2) NOT NULL,
        o_orderpriority CHAR(15) NOT NULL, o_clerk CHAR(15) NOT NULL, o_shippriority INT NOT NULL,
        o_comment VARCHAR(79) NOT NULL) DUPLICATE KEY(o_orderdate, o_orderkey)
        PARTITION BY RANGE(o_orderdate) ({YEARS})
        DISTRIBUTED BY HASH(o_orderkey) BUCKETS 2""",
    "lineitem": f"""CREATE TABLE lineitem (l_shipdate DATE NOT NULL, l_orderkey BIGINT NOT NULL,
        l_partkey INT NOT NULL, l_suppkey INT NOT NULL, l_linenumber INT NOT NULL,
        l_quantity DECIMAL(15,2) NOT NULL, l_extendedprice DECIMAL(15,2) NOT NULL,
        l_discount DECIMAL(15,2) NOT NULL, l_tax DECIMAL(15,2) NOT NULL,
        l_returnflag CHAR(1) NOT NULL, l_linestatus CHAR(1) NOT NULL, l_commitdate DATE NOT NULL,
        l_receiptdate DATE NOT NULL, l_shipinstruct CHAR(25) NOT NULL, l_shipmode CHAR(10) NOT NULL,
        l_comment VARCHAR(44) NOT NULL) DUPLICATE KEY(l_shipdate, l_orderkey)
        PARTITION BY RANGE(l_shipdate) ({YEARS})
        DISTRIBUTED BY HASH(l_orderkey) BUCKETS 2""",
}


def generate(sf, data_dir):
    """Parquet files for every table (kept between runs)."""
    parquet_dir = os.path.join(data_dir, "parquet")
    paths = {t: os.path.abspath(os.path.join(parquet_dir, f"{t}.parquet")) for t in TABLES}
    missing = [t for t, p in paths.items() if not os.path.exists(p)]
    if missing:
        os.makedirs(parquet_dir, exist_ok=True)
        tpchgen = os.path.join(os.path.dirname(sys.executable), "tpchgen-cli")
        print(f"generating TPC-H SF{sf:g} Parquet in {parquet_dir}", flush=True)
        subprocess.run([tpchgen, "parquet", "-s", f"{sf:g}", f"--output-dir={parquet_dir}",
                        "--tables", ",".join(missing)], check=True)
    return paths


def read_queries(sf):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tpch", "queries.sql")
    with open(path) as f:
        text = f.read()
    parts = re.split(r"^-- (Q\d+)\s*$", text, flags=re.M)
    queries = []
    for name, body in zip(parts[1::2], parts[2::2]):
        sql = body.strip().rstrip(";").replace("{q11_fraction}", f"{0.0001 / sf:.10f}")
        queries.append((name, sql))
    assert len(queries) == 22, f"expected 22 queries, found {len(queries)}"
    return queries


def chdb_variant(sql):
    # ClickHouse: correlated subqueries are still opt-in; EXISTS/NOT EXISTS and scalar
    # subqueries referring to the outer row need it.
    return sql


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt")
    ap.add_argument("--sf", type=float, default=1)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--engines", default="basalt,duckdb,chdb,datafusion")
    ap.add_argument("--queries", default="", help="e.g. Q1,Q6 (default: all 22)")
    ap.add_argument("--data", default=None)
    ap.add_argument("--backends", default="",
                    help="also run on clusters of 1 frontend + N backends, e.g. 1,3")
    args = ap.parse_args()
    args.backends = [int(n) for n in args.backends.split(",") if n.strip()]
    args.engines = args.engines.split(",")
    data_dir = args.data or os.path.join("bench", "data", f"tpch-sf{args.sf:g}")
    tables = generate(args.sf, data_dir)
    queries = read_queries(args.sf)
    if args.queries:
        wanted = set(args.queries.upper().split(","))
        queries = [q for q in queries if q[0] in wanted]

    def queries_for(engine):
        if engine == "chdb":
            return [(n, chdb_variant(s)) for n, s in queries]
        return queries

    def load_basalt(server):
        conn = server.connect()
        cur = conn.cursor()
        cur.execute("CREATE DATABASE bench")
        cur.execute("USE bench")
        t0 = time.perf_counter()
        rows = 0
        for t in TABLES:
            cur.execute(DDL[t])
            r = server.stream_load("bench", t, tables[t], {"format": "parquet", "label": f"tpch_{t}"})
            rows += r["NumberLoadedRows"]
        conn.close()
        return {"rows": f"{rows:,}", "Stream Load s": f"{time.perf_counter() - t0:.1f}"}

    run_suite(f"tpch-sf{args.sf:g}", args, tables, load_basalt, queries_for,
              f"TPC-H SF{args.sf:g}: Basalt vs DuckDB, chdb, datafusion-python",
              notes=["queries: bench/tpch/queries.sql (validation parameters); DDL: bench/tpch.py"])


if __name__ == "__main__":
    main()
