#!/usr/bin/env python3
"""A/B-experiment workload (issue 7), modelled on Xiaomi's A/B-testing platform on Doris: a
generated experiment table `exp_events` (experiment, group, user, day, metrics, a URL), a
seeded mix of a few hundred queries of three kinds -- user de-duplication (COUNT(DISTINCT),
and on Basalt BITMAP forms), metric sums, experiment covariance/variance -- plus LIKE
filters, run by 1, 8 and 32 concurrent clients per engine. Reported per engine and client
count: per-kind median and p95 latency, throughput, the engine process's CPU utilization
(share of all cores), errors; Basalt's throughput against the best peer's; a check of Basalt's
answers against DuckDB's for the first instances of every template.

- Data: bench/data/abtest/exp_events-<rows>-seed<seed>.parquet, written by DuckDB SQL from
  hashes of the row number (deterministic, parallel; ~1 s per million rows here).
- Basalt: Doris DDL (DUPLICATE KEY(exp_id, dt, group_id), hash buckets on user_id), Stream Load
  of the Parquet file; if this build takes them, an AGGREGATE KEY rollup `exp_users` with a
  BITMAP BITMAP_UNION column, loaded from the same file with
  `columns: exp_id,group_id,dt,user_id,users=to_bitmap(user_id)`. Clients: PyMySQL, one
  connection per client thread (the client process's CPU is reported too: it shares the
  machine with the server).
- DuckDB and chdb: each in its own worker process (this script with --worker), the table in
  memory sorted by the same key (DuckDB CREATE TABLE AS .. ORDER BY; chdb ENGINE = Memory),
  one DuckDB cursor / one chdb Session per client thread (a shared chdb Session serializes
  its queries; separate Sessions in one process share the tables and run in parallel).
- Every template is probed on each engine before the timed runs; a template an engine rejects
  is reported as not supported by it and left out of the mix of every engine that runs after
  it (Basalt runs first), so all engines' throughput covers the same templates.

Usage: bench/run abtest [--rows 20000000] [--seconds 60] [--clients 1,8,32]
                        [--engines basalt,duckdb,chdb] [--queries 300] [--seed 1]
       --seconds 0: instead of looping for a time, every client level runs the query list
       exactly once, split between the clients.
"""

import argparse
import datetime
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lib.proc import cpu_seconds, peak_rss_mb, reset_peak_rss  # noqa: E402
from lib.results import compare, normalize_rows  # noqa: E402

CORES = os.cpu_count() or 1
KINDS = ["dedup", "sums", "covariance", "like"]
ENGINES = ["basalt", "duckdb", "chdb"]
PEERS = ["duckdb", "chdb"]
REFERENCE = "duckdb"
EXPERIMENTS = 200
DAYS = 30
FIRST_DAY = datetime.date(2024, 6, 1)
CHECKS_PER_TEMPLATE = 2

# ---------------------------------------------------------------------------------------------
# Data


def generate(rows, seed, data_dir):
    """The Parquet file for (rows, seed), written once by DuckDB and kept between runs.

    exp_id 1..200 skewed (experiment 1 has ~7% of rows, 200 ~0.25%); 2-4 groups per
    experiment, a user's group fixed per experiment (hash of user and experiment); user_id
    from rows/4 users (5M at 20M rows), skewed towards heavy users; 30 days; clicks
    exponential (mean 2), views >= clicks, revenue correlated with clicks and slightly higher
    in later groups, duration; url from 300 hosts (10 prefixes x 8 names x 4 TLDs, skewed), 10
    path kinds ('Promo' capitalized, for ILIKE), 10,000 ids, 7 endings."""
    path = os.path.abspath(os.path.join(data_dir, f"exp_events-{rows}-seed{seed}.parquet"))
    if os.path.exists(path):
        return path
    import duckdb

    os.makedirs(data_dir, exist_ok=True)
    users = max(1000, rows // 4)
    print(f"generating {rows:,} rows of exp_events (seed {seed}) in {path}", flush=True)
    t0 = time.perf_counter()
    con = duckdb.connect()
    # u(i, k): the k-th uniform [0, 1) number of row i, from a 53-bit slice of a hash.
    con.execute(f"CREATE MACRO u(i, k) AS (hash(i * 64 + k + {seed} * 64 * 1000003) >> 11)"
                "::DOUBLE / 9007199254740992.0")
    tmp = path + ".tmp"
    con.execute(f"""
COPY (
  WITH base AS (
    SELECT i,
      1 + floor({EXPERIMENTS} * pow(u(i, 1), 2))::INT AS exp_id,
      1 + floor({users} * pow(u(i, 2), 1.5))::BIGINT AS user_id,
      (DATE '{FIRST_DAY}' + floor({DAYS} * u(i, 3))::INT) AS dt,
      floor(-ln(1 - u(i, 4)) * 2)::INT AS clicks,
      floor(300 * pow(u(i, 7), 3))::INT AS h
    FROM range({rows}) t(i)
  ), g AS (
    SELECT *, 1 + (hash(user_id * 1000 + exp_id) % (2 + (exp_id * 7) % 3))::INT AS group_id
    FROM base
  )
  SELECT exp_id, dt, group_id, user_id, clicks,
    clicks + 1 + floor(10 * u(i, 5))::INT AS views,
    round(clicks * (0.5 + 2 * u(i, 6)) * (1 + 0.02 * (group_id - 1)), 2) AS revenue,
    round(-ln(1 - u(i, 8)) * 30 + clicks * 4.5, 3) AS duration,
    CASE WHEN u(i, 9) < 0.9 THEN 'https://' ELSE 'http://' END
      || ['www','m','shop','api','video','news','search','static','app','pay'][1 + h % 10]
      || '.' || ['mi','xiaomi','example','miui','redmi','poco','mijia','duokan'][1 + (h // 10) % 8]
      || ['.com','.cn','.net','.org'][1 + (h // 80) % 4] || '/'
      || ['product','item','search','video','article','user','cart','order','help','Promo']
         [1 + floor(10 * pow(u(i, 10), 1.5))::INT]
      || '/' || floor(10000 * u(i, 11))::INT::VARCHAR
      || ['.html','','.php','.mp4','.json','?ref=home','.htm','.html'][1 + floor(8 * u(i, 12))::INT]
      AS url
  FROM g
) TO '{tmp}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)""")
    os.replace(tmp, path)
    print(f"  generated in {time.perf_counter() - t0:.1f} s", flush=True)
    return path


# ---------------------------------------------------------------------------------------------
# Query templates: name, kind, SQL per engine ("peers" for DuckDB and chdb when both share a
# spelling; "all" when every engine does). Parameters in {braces}.

RANGE = "dt BETWEEN '{d1}' AND '{d2}'"
D1 = ("SELECT group_id, COUNT(DISTINCT user_id) AS users FROM exp_events "
      f"WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id ORDER BY group_id")
D_DAILY = ("SELECT dt, COUNT(DISTINCT user_id) AS users FROM exp_events WHERE exp_id = {e} "
           "GROUP BY dt ORDER BY dt")

TEMPLATES = [
    # -- user de-duplication
    {"name": "dedup_users", "kind": "dedup", "all": D1},
    {"name": "dedup_multi", "kind": "dedup", "all":
        "SELECT group_id, COUNT(DISTINCT user_id) AS users, "
        "COUNT(DISTINCT CASE WHEN clicks > 0 THEN user_id END) AS clickers, "
        "COUNT(DISTINCT CASE WHEN revenue > 5 THEN user_id END) AS payers, COUNT(*) AS events "
        f"FROM exp_events WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id ORDER BY group_id"},
    {"name": "dedup_daily", "kind": "dedup", "all":
        "SELECT dt, group_id, COUNT(DISTINCT user_id) AS users FROM exp_events "
        f"WHERE exp_id = {{e}} AND {RANGE} GROUP BY dt, group_id ORDER BY dt, group_id"},
    {"name": "dedup_bitmap", "kind": "dedup", "peers": D1, "basalt":
        "SELECT group_id, bitmap_union_count(to_bitmap(user_id)) AS users FROM exp_events "
        f"WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id ORDER BY group_id"},
    {"name": "dedup_rollup", "kind": "dedup", "rollup": True, "peers": D1, "basalt":
        "SELECT group_id, bitmap_union_count(users) AS users FROM exp_users "
        f"WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id ORDER BY group_id"},
    {"name": "dedup_rollup_daily", "kind": "dedup", "rollup": True, "peers": D_DAILY, "basalt":
        "SELECT dt, bitmap_union_count(users) AS users FROM exp_users WHERE exp_id = {e} "
        "GROUP BY dt ORDER BY dt"},
    # -- metric sums
    {"name": "sums_daily", "kind": "sums", "all":
        "SELECT group_id, dt, SUM(clicks) AS s_clicks, SUM(views) AS s_views, "
        f"SUM(revenue) AS s_revenue FROM exp_events WHERE exp_id = {{e}} AND {RANGE} "
        "GROUP BY group_id, dt ORDER BY group_id, dt"},
    {"name": "sums_ratio", "kind": "sums", "all":
        "SELECT exp_id, group_id, COUNT(*) AS events, SUM(clicks) AS s_clicks, "
        "SUM(views) AS s_views, CAST(SUM(clicks) AS DOUBLE) / SUM(views) AS ctr, "
        "SUM(revenue) AS s_revenue, AVG(duration) AS avg_duration FROM exp_events "
        f"WHERE exp_id IN ({{e}}, {{e2}}, {{e3}}) AND {RANGE} "
        "GROUP BY exp_id, group_id ORDER BY exp_id, group_id"},
    {"name": "sums_all_exps_day", "kind": "sums", "all":
        "SELECT exp_id, group_id, SUM(clicks) AS s_clicks, SUM(views) AS s_views, "
        "SUM(revenue) AS s_revenue FROM exp_events WHERE dt = '{day}' "
        "GROUP BY exp_id, group_id ORDER BY exp_id, group_id"},
    # -- experiment covariance / variance (t-tests, delta method)
    {"name": "cov_event", "kind": "covariance", "all":
        "SELECT group_id, COUNT(*) AS n, covar_samp(clicks, revenue) AS cov_cr, "
        "corr(clicks, revenue) AS corr_cr, corr(views, duration) AS corr_vd FROM exp_events "
        f"WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id ORDER BY group_id"},
    {"name": "cov_variance", "kind": "covariance", "all":
        "SELECT group_id, AVG(revenue) AS mean_r, stddev_samp(revenue) AS sd_r, "
        "var_samp(revenue) AS var_r, var_samp(duration) AS var_d FROM exp_events "
        f"WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id ORDER BY group_id"},
    {"name": "cov_user_level", "kind": "covariance", "all":
        "SELECT group_id, COUNT(*) AS users, AVG(r) AS mean_r, var_samp(r) AS var_r, "
        "AVG(c) AS mean_c, var_samp(c) AS var_c, covar_samp(c, v) AS cov_cv FROM ("
        "SELECT group_id, user_id, SUM(revenue) AS r, SUM(clicks) AS c, SUM(views) AS v "
        f"FROM exp_events WHERE exp_id = {{e}} AND {RANGE} GROUP BY group_id, user_id) u "
        "GROUP BY group_id ORDER BY group_id"},
    # -- LIKE filters
    {"name": "like_contains", "kind": "like", "all":
        "SELECT group_id, COUNT(*) AS n, SUM(clicks) AS s_clicks FROM exp_events "
        "WHERE exp_id = {e} AND url LIKE '%{word}%' GROUP BY group_id ORDER BY group_id"},
    {"name": "like_prefix", "kind": "like", "all":
        "SELECT exp_id, COUNT(*) AS n, SUM(revenue) AS s_revenue FROM exp_events "
        f"WHERE url LIKE '{{prefix}}%' AND {RANGE} GROUP BY exp_id ORDER BY exp_id"},
    {"name": "like_suffix", "kind": "like", "all":
        "SELECT dt, COUNT(*) AS n, SUM(views) AS s_views FROM exp_events "
        f"WHERE url LIKE '%{{suffix}}' AND {RANGE} GROUP BY dt ORDER BY dt"},
    {"name": "like_not", "kind": "like", "all":
        "SELECT group_id, COUNT(*) AS n, SUM(revenue) AS s_revenue FROM exp_events "
        "WHERE exp_id = {e} AND url NOT LIKE '%{word}%' GROUP BY group_id ORDER BY group_id"},
    {"name": "like_ilike", "kind": "like", "all":
        "SELECT COUNT(*) AS n, SUM(clicks) AS s_clicks FROM exp_events "
        f"WHERE url ILIKE '%{{iword}}%' AND {RANGE}"},
]
TEMPLATE = {t["name"]: t for t in TEMPLATES}

WORDS = ["mi.com", "video", "product/12", "search", "xiaomi", "cart", "poco.cn", ".org/help"]
PREFIXES = ["https://shop.", "https://www.xiaomi", "http://", "https://api.mi.", "https://video."]
SUFFIXES = [".html", ".mp4", ".json", "?ref=home", "0.htm"]
IWORDS = ["PROMO", "Video/1", "MI.COM/product", "Www.Poco"]


def sql_for(template, engine):
    t = TEMPLATE[template]
    return t.get(engine) or t.get("peers" if engine in PEERS else "", None) or t["all"]


def random_params(rng):
    def exp():  # weighted like the data: popular experiments are looked at more
        return 1 + int(EXPERIMENTS * rng.random() ** 2)

    start = rng.randrange(DAYS)
    length = rng.choice([1, 3, 7, 7, 14, 30])
    if length == DAYS:
        start = 0
    end = min(DAYS - 1, start + length - 1)
    return {"e": exp(), "e2": exp(), "e3": exp(),
            "d1": FIRST_DAY + datetime.timedelta(days=start),
            "d2": FIRST_DAY + datetime.timedelta(days=end),
            "day": FIRST_DAY + datetime.timedelta(days=rng.randrange(DAYS)),
            "word": rng.choice(WORDS), "prefix": rng.choice(PREFIXES),
            "suffix": rng.choice(SUFFIXES), "iword": rng.choice(IWORDS)}


def make_queries(n, seed):
    """[(id, template, params)]: the templates in turn (equal shares), random parameters,
    shuffled; the first CHECKS_PER_TEMPLATE of each template are also the probe/check ones."""
    rng = random.Random(seed)
    out = [(i, TEMPLATES[i % len(TEMPLATES)]["name"], random_params(rng))
           for i in range(max(n, len(TEMPLATES) * CHECKS_PER_TEMPLATE))]
    rng.shuffle(out)
    return out


def engine_queries(queries, engine, templates):
    """[(id, template, kind, sql)] for `engine`, only the given templates."""
    return [(i, name, TEMPLATE[name]["kind"], sql_for(name, engine).format(**params))
            for i, name, params in queries if name in templates]


def check_queries(queries, engine, templates):
    """{template: [(id, sql)]}: the first CHECKS_PER_TEMPLATE queries of each template."""
    out = {}
    for i, name, kind, sql in engine_queries(queries, engine, templates):
        if len(out.setdefault(name, [])) < CHECKS_PER_TEMPLATE:
            out[name].append((i, sql))
    return out


# ---------------------------------------------------------------------------------------------
# Running: probe + check, then timed phases (shared by Basalt in this process and the peers in
# their worker processes)


def load_error(e):
    """The Message of a failed Stream Load (lib.basalt raises with the JSON reply)."""
    text = str(e)
    try:
        return " ".join(json.loads(text[text.index("{"):])["Message"].split())[:400]
    except (ValueError, KeyError):
        return first_line(e)


def first_line(e):
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:400]


def machine_busy_seconds():
    """CPU seconds all processes on the machine have used (/proc/stat: all but idle, iowait)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def probe(open_client, checks, log):
    """Runs each template's check queries once (errors mean the template is not supported).
    Returns ({template: error}, {query id: rows})."""
    client = open_client()
    unsupported, rows = {}, {}
    for name, items in checks.items():
        for qid, sql in items:
            t = time.perf_counter()
            try:
                rows[qid] = normalize_rows(client.run(sql))
            except Exception as e:  # noqa: BLE001 -- an engine's error is a finding
                unsupported[name] = first_line(e)
                client = client.reopen()
                log(f"  {name}: NOT SUPPORTED: {unsupported[name]}")
                break
            log(f"  {name} (query {qid}): {time.perf_counter() - t:.3f} s, {len(rows[qid])} rows")
    client.close()
    return unsupported, rows


def timed_phase(open_client, queries, clients, seconds, pid, dead=lambda: False):
    """`clients` threads, one client each, run `queries` [(id, template, kind, sql)] in order
    from their own offset: for `seconds`, or (seconds == 0) the list once, split between them.
    CPU of process `pid` (the engine) and of this process (the clients) is read at the start,
    at the deadline (the steady-state window) and at the end."""
    conns = [open_client() for _ in range(clients)]
    records = [[] for _ in range(clients)]
    state = {}
    go = threading.Barrier(clients + 1)
    n = len(queries)

    def work(c):
        conn = conns[c]
        if seconds > 0:
            todo = None
            j = (c * n) // clients
        else:
            todo = list(range(c, n, clients))
            j = 0
        go.wait()
        start = state["start"]
        while True:
            if todo is None:
                if time.perf_counter() >= state["deadline"]:
                    break
                qid, name, kind, sql = queries[j % n]
            else:
                if j >= len(todo):
                    break
                qid, name, kind, sql = queries[todo[j]]
            j += 1
            t0 = time.perf_counter()
            err = None
            try:
                conn.run(sql)
            except Exception as e:  # noqa: BLE001
                err = first_line(e)
                conn = conn.reopen()
            records[c].append((qid, name, kind, round(t0 - start, 4),
                               round(time.perf_counter() - t0, 6), err))
            if err and dead():
                break
        conn.close()

    threads = [threading.Thread(target=work, args=(c,), daemon=True) for c in range(clients)]
    for t in threads:
        t.start()
    engine_cpu0, client_cpu0, busy0 = cpu_seconds(pid), cpu_seconds(), machine_busy_seconds()
    state["start"] = time.perf_counter()
    state["deadline"] = state["start"] + seconds
    go.wait()
    window = None
    if seconds > 0:
        time.sleep(max(0.0, state["deadline"] - time.perf_counter()))
        window = (time.perf_counter() - state["start"], cpu_seconds(pid) - engine_cpu0,
                  cpu_seconds() - client_cpu0, machine_busy_seconds() - busy0)
    for t in threads:
        t.join()
    wall = time.perf_counter() - state["start"]
    if window is None:
        window = (wall, cpu_seconds(pid) - engine_cpu0, cpu_seconds() - client_cpu0,
                  machine_busy_seconds() - busy0)
    # CPU of every other process on the machine (a compile beside the run shows up here).
    other = window[3] - window[1] - (window[2] if pid != "self" else 0)
    return {"clients": clients, "wall_s": wall, "window_s": window[0],
            "engine_cpu_s": window[1], "client_cpu_s": window[2], "other_cpu_s": other,
            "records": [r for rs in records for r in rs]}


def run_engine(open_client, checks, timed, clients_list, seconds, pid, log, dead=lambda: False,
               exclude=()):
    """Probe, then one timed phase per client count over the supported templates."""
    log("  probing templates (each template's check queries, serially)")
    unsupported, rows = probe(open_client, checks, log)
    run = [q for q in timed if q[1] not in unsupported and q[1] not in exclude]
    phases = []
    reset_peak_rss(pid)
    for clients in clients_list:
        if not run:
            break
        p = timed_phase(open_client, run, clients, seconds, pid, dead)
        ok = [r for r in p["records"] if r[5] is None]
        log(f"  {clients} clients: {len(ok)} queries in {p['wall_s']:.1f} s "
            f"({len(ok) / p['wall_s']:.1f} QPS), errors {len(p['records']) - len(ok)}, "
            f"CPU {p['engine_cpu_s'] / p['window_s'] / CORES * 100:.0f}% of {CORES} cores")
        phases.append(p)
        if dead():
            log("  the engine process died; stopping")
            break
    return {"unsupported": unsupported, "rows": {str(k): v for k, v in rows.items()},
            "phases": phases, "peak_rss_mb": peak_rss_mb(pid)}


# ---------------------------------------------------------------------------------------------
# Basalt


class BasaltClient:
    def __init__(self, server):
        import pymysql

        self.server = server
        self.conn = pymysql.connect(host="127.0.0.1", port=server.mysql_port, user="root",
                                    database="bench", autocommit=True, read_timeout=900)
        self.cur = self.conn.cursor()

    def run(self, sql):
        self.cur.execute(sql)
        return self.cur.fetchall()

    def reopen(self):
        if self.conn.open:
            return self
        try:
            return BasaltClient(self.server)
        except Exception:  # noqa: BLE001 -- server gone: keep the dead client, errors count
            return self

    def close(self):
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001
            pass


BASALT_DDL = """CREATE TABLE exp_events (
    exp_id INT NOT NULL, dt DATE NOT NULL, group_id INT NOT NULL, user_id BIGINT NOT NULL,
    clicks INT NOT NULL, views INT NOT NULL, revenue DOUBLE NOT NULL, duration DOUBLE NOT NULL,
    url VARCHAR(256) NOT NULL)
DUPLICATE KEY(exp_id, dt, group_id)
DISTRIBUTED BY HASH(user_id) BUCKETS {buckets}
PROPERTIES ('replication_num' = '1')"""

ROLLUP_DDL = """CREATE TABLE exp_users (
    exp_id INT NOT NULL, group_id INT NOT NULL, dt DATE NOT NULL,
    users BITMAP BITMAP_UNION)
AGGREGATE KEY(exp_id, group_id, dt)
DISTRIBUTED BY HASH(exp_id) BUCKETS 2
PROPERTIES ('replication_num' = '1')"""

ROLLUP_COLUMNS = "exp_id,group_id,dt,user_id,users=to_bitmap(user_id)"


def load_basalt(server, parquet, buckets, log):
    """Creates and loads exp_events; then tries the BITMAP rollup. Returns (facts, rollup
    error or None)."""
    conn = server.connect()
    cur = conn.cursor()
    cur.execute("CREATE DATABASE bench")
    cur.execute("USE bench")
    cur.execute(BASALT_DDL.format(buckets=buckets))
    t0 = time.perf_counter()
    r = server.stream_load("bench", "exp_events", parquet, {"format": "parquet", "label": "events"})
    facts = {"exp_events rows": f"{r['NumberLoadedRows']:,}",
             "exp_events Stream Load s": f"{time.perf_counter() - t0:.1f}"}
    log(f"  loaded exp_events: {facts}")
    rollup_error = None
    try:
        cur.execute(ROLLUP_DDL)
    except Exception as e:  # noqa: BLE001
        rollup_error = f"CREATE TABLE exp_users (BITMAP BITMAP_UNION) failed: {first_line(e)}"
    if rollup_error is None:
        t0 = time.perf_counter()
        try:
            r = server.stream_load("bench", "exp_users", parquet,
                                   {"format": "parquet", "columns": ROLLUP_COLUMNS,
                                    "label": "users_parquet"})
        except Exception as e:  # noqa: BLE001 -- Parquet refused: Doris's usual CSV form
            parquet_error = load_error(e)
            log(f"  exp_users from Parquet failed ({parquet_error}); trying CSV")
            try:
                csv = rollup_csv(parquet)
                t0 = time.perf_counter()
                r = server.stream_load("bench", "exp_users", csv,
                                       {"format": "csv", "column_separator": ",",
                                        "columns": ROLLUP_COLUMNS, "label": "users_csv"})
            except Exception as e2:  # noqa: BLE001
                r = None
                rollup_error = (f"Stream Load into exp_users with columns: {ROLLUP_COLUMNS} "
                                f"failed: Parquet: {parquet_error}; CSV: {load_error(e2)}")
        if r is not None:
            facts["exp_users (BITMAP rollup) source rows"] = f"{r['NumberLoadedRows']:,}"
            facts["exp_users Stream Load s"] = f"{time.perf_counter() - t0:.1f}"
            cur.execute("SELECT COUNT(*) FROM exp_users")
            facts["exp_users rows"] = f"{cur.fetchone()[0]:,}"
    if rollup_error:
        log(f"  rollup: {rollup_error}")
    conn.close()
    facts["background compaction after the loads s"] = f"{settle(server.pid, log):.1f}"
    return facts, rollup_error


def settle(pid, log, idle_share=0.05, window=2.0, limit=300.0, first=3.0):
    """Waits until the server is idle (background compaction of the fresh loads done, as a
    table that has been loaded a while is), so no timed phase shares the cores with it.
    Compaction starts once a tablet has been quiet for 1 s and the scheduler's next 1 s tick
    comes, hence the `first` seconds before idleness counts. Returns the seconds waited."""
    t0 = time.perf_counter()
    time.sleep(first)
    while time.perf_counter() - t0 < limit:
        before = cpu_seconds(pid)
        time.sleep(window)
        if (cpu_seconds(pid) - before) / window < idle_share * CORES:
            break
    waited = time.perf_counter() - t0
    log(f"  server idle after {waited:.1f} s (background compaction of the loads)")
    return waited


def rollup_csv(parquet):
    """exp_id,group_id,dt,user_id as CSV next to the Parquet file (made once)."""
    path = parquet.replace(".parquet", "-users.csv")
    if not os.path.exists(path):
        import duckdb

        duckdb.connect().execute(
            f"COPY (SELECT exp_id, group_id, dt, user_id FROM read_parquet('{parquet}')) "
            f"TO '{path}.tmp' (FORMAT csv, HEADER false)")
        os.replace(path + ".tmp", path)
    return path


def run_basalt(args, parquet, queries, log):
    from lib.basalt import BasaltServer

    server = BasaltServer(args.basalt)
    try:
        facts, rollup_error = load_basalt(server, parquet, args.buckets, log)
        names = [t["name"] for t in TEMPLATES]
        checks = check_queries(queries, "basalt", names)
        if rollup_error:
            for t in TEMPLATES:
                if t.get("rollup"):
                    checks.pop(t["name"], None)
        timed = engine_queries(queries, "basalt", names)
        rollup = {t["name"] for t in TEMPLATES if t.get("rollup")} if rollup_error else set()
        result = run_engine(lambda: BasaltClient(server), checks, timed, args.clients,
                            args.seconds, server.pid, log,
                            dead=lambda: server.proc.poll() is not None, exclude=rollup)
        if rollup_error:
            for t in TEMPLATES:
                if t.get("rollup"):
                    result["unsupported"][t["name"]] = rollup_error
        result["load"] = facts
        result["setting"] = (f"release build, DUPLICATE KEY(exp_id, dt, group_id), "
                             f"HASH(user_id) BUCKETS {args.buckets}; PyMySQL clients")
        result["version"] = "(this checkout's release binary)"
        return result
    finally:
        server.stop()


# ---------------------------------------------------------------------------------------------
# Peers: each in a worker process (this script with --worker SPEC)


class DuckDBHost:
    def __init__(self, parquet, threads):
        import duckdb

        self.version = duckdb.__version__
        self.setting = (f"in-memory table (CREATE TABLE AS .. ORDER BY exp_id, dt, group_id), "
                        f"threads={threads}, one cursor per client thread")
        self.con = duckdb.connect()
        self.con.execute(f"SET threads={threads}")
        self.con.execute("CREATE TABLE exp_events AS SELECT * FROM "
                         f"read_parquet('{parquet}') ORDER BY exp_id, dt, group_id")

    def client(self):
        return _DuckDBClient(self.con)


class _DuckDBClient:
    def __init__(self, con):
        self.con = con
        self.cur = con.cursor()

    def run(self, sql):
        return self.cur.execute(sql).fetchall()

    def reopen(self):
        return _DuckDBClient(self.con)

    def close(self):
        self.cur.close()


class ChdbHost:
    def __init__(self, parquet, threads):
        import chdb
        from chdb import session

        self.version = chdb.__version__
        self.threads = threads
        self.setting = (f"ENGINE = Memory table (sorted by exp_id, dt, group_id), "
                        f"max_threads={threads}, one Session per client thread")
        self.session = session.Session()  # holds the engine (and the table) while we run
        self.session.query("CREATE DATABASE IF NOT EXISTS bench")
        self.session.query(
            "CREATE TABLE bench.exp_events ENGINE = Memory AS SELECT * FROM "
            f"file('{parquet}', Parquet) ORDER BY exp_id, dt, group_id "
            "SETTINGS schema_inference_make_columns_nullable = 0")

    def client(self):
        return _ChdbClient(self.threads)


class _ChdbClient:
    def __init__(self, threads):
        from chdb import session

        self.threads = threads
        self.sess = session.Session()
        self.sess.query("USE bench")

    def run(self, sql):
        t = self.sess.query(f"{sql} SETTINGS max_threads = {self.threads}", "ArrowTable")
        cols = [c.to_pylist() for c in t.columns]
        return list(zip(*cols)) if cols else []

    def reopen(self):
        return self

    def close(self):
        self.sess.close()


HOSTS = {"duckdb": DuckDBHost, "chdb": ChdbHost}


def worker(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    host = HOSTS[spec["engine"]](spec["parquet"], spec["threads"])
    load_s = time.perf_counter() - t0
    log(f"  loaded in {load_s:.1f} s")
    checks = {k: [tuple(x) for x in v] for k, v in spec["checks"].items()}
    timed = [tuple(q) for q in spec["timed"]]
    result = run_engine(host.client, checks, timed, spec["clients"], spec["seconds"], "self",
                        log, exclude=set(spec["exclude"]))
    result.update(version=host.version, setting=host.setting,
                  load={"load into memory s": f"{load_s:.1f}"})
    with open(spec["out"], "w") as f:
        json.dump(result, f)


def run_peer(engine, args, parquet, queries, exclude, log):
    names = [t["name"] for t in TEMPLATES if t["name"] not in exclude]
    with tempfile.TemporaryDirectory() as tmp:
        spec = {"engine": engine, "parquet": parquet, "threads": args.threads,
                "clients": args.clients, "seconds": args.seconds, "exclude": sorted(exclude),
                "checks": check_queries(queries, engine, names),
                "timed": engine_queries(queries, engine, names),
                "out": os.path.join(tmp, "out.json")}
        path = os.path.join(tmp, "spec.json")
        with open(path, "w") as f:
            json.dump(spec, f, default=str)
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path])
        if proc.returncode != 0 or not os.path.exists(spec["out"]):
            log(f"  {engine} worker failed (exit {proc.returncode}); left out")
            return None
        with open(spec["out"]) as f:
            return json.load(f)


# ---------------------------------------------------------------------------------------------
# Report


def pct(values, q):
    values = sorted(values)
    if not values:
        return None
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def ms(v):
    return "-" if v is None else (f"{v * 1000:.0f}" if v >= 0.1 else f"{v * 1000:.1f}")


def phase_stats(p):
    ok = [r for r in p["records"] if r[5] is None]
    errs = [r for r in p["records"] if r[5] is not None]
    kinds = {k: [r[4] for r in ok if r[2] == k] for k in KINDS}
    return {"ok": len(ok), "errors": len(errs), "qps": len(ok) / p["wall_s"],
            "cpu": p["engine_cpu_s"] / p["window_s"] / CORES,
            "client_cpu": p["client_cpu_s"] / p["window_s"] / CORES,
            "other_cpu": p.get("other_cpu_s", 0.0) / p["window_s"] / CORES,
            "kinds": {k: (pct(v, 0.5), pct(v, 0.95), len(v)) for k, v in kinds.items()},
            "first_errors": [f"{r[1]}: {r[5]}" for r in errs[:3]],
            "templates": {}}


def report(args, results, queries, notes, exclude_log):
    from lib.suite import git_commit, machine

    engines = [e for e in ENGINES if e in results]
    stats = {e: {p["clients"]: phase_stats(p) for p in results[e]["phases"]} for e in engines}
    mode = (f"clients loop over the shuffled list from their own offset for {args.seconds:g} s "
            "(queries in flight at the deadline finish and count; QPS = completed / wall to "
            "the last one; CPU over the timed window)" if args.seconds > 0 else
            "the list runs once per client count, split between the clients")
    lines = [f"# A/B-experiment workload, {args.rows:,} rows: Basalt vs "
             + ", ".join(e for e in engines if e != "basalt"), "",
             f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}, "
             f"commit {git_commit()}",
             f"- machine: {machine()}",
             f"- data: `exp_events`, {args.rows:,} rows generated by bench/abtest.py "
             f"(seed {args.seed}): {EXPERIMENTS} experiments (skewed), 2-4 groups each, "
             f"{max(1000, args.rows // 4):,} users (skewed), {DAYS} days, clicks/views/"
             "revenue/duration, URL-like strings from 300 hosts",
             f"- queries: {len(queries)} from {len(TEMPLATES)} templates (equal shares, seeded "
             f"parameters, shuffled), kinds {', '.join(KINDS)}; {mode}",
             "- CPU: the engine's process (Basalt: the server; peers: their worker process, "
             f"clients included) from /proc, as a share of all {CORES} cores; Basalt's "
             "PyMySQL clients run in the harness process on the same cores (client CPU)"]
    for e in engines:
        r = results[e]
        lines.append(f"- {e} {r.get('version', '')}: {r.get('setting', '')}; "
                     + ", ".join(f"{k} {v}" for k, v in r.get("load", {}).items())
                     + f"; peak RSS in the timed runs {r['peak_rss_mb']:.0f} MB")
    lines += [f"- {n}" for n in notes]
    unsupported = [(e, n, err) for e in engines for n, err in results[e]["unsupported"].items()]
    if unsupported or exclude_log:
        lines += ["", "## Templates left out", "",
                  "| engine | template | reason |", "|---|---|---|"]
        lines += [f"| {e} | {n} | {err.replace('|', '/')} |" for e, n, err in unsupported]
        lines += [f"| {e} | {n} | {why} |" for e, n, why in exclude_log]
    for clients in args.clients:
        lines += ["", f"## {clients} client{'s' if clients > 1 else ''}", "",
                  "| engine | queries | errors | QPS | "
                  + " | ".join(f"{k} p50 / p95 ms" for k in KINDS)
                  + " | engine CPU (all cores) | client CPU | other processes' CPU |",
                  "|---" * (7 + len(KINDS)) + "|"]
        for e in engines:
            s = stats[e].get(clients)
            if s is None:
                lines.append(f"| {e} | not run |" + " |" * (5 + len(KINDS)))
                continue
            cells = [f"{ms(s['kinds'][k][0])} / {ms(s['kinds'][k][1])}" if s["kinds"][k][2]
                     else "-" for k in KINDS]
            client = f"{s['client_cpu'] * 100:.0f}%" if e == "basalt" else "(in engine)"
            lines.append(f"| {e} | {s['ok']} | {s['errors']} | {s['qps']:.1f} | "
                         + " | ".join(cells) + f" | {s['cpu'] * 100:.0f}% | {client} | "
                         f"{max(0.0, s['other_cpu']) * 100:.0f}% |")
    peers = [e for e in engines if e != "basalt"]
    if "basalt" in engines and peers:
        lines += ["", "## Goals: Basalt throughput vs the best peer, CPU, errors", "",
                  "| clients | Basalt QPS | best peer | peer QPS | Basalt / best peer | "
                  "Basalt CPU | errors |", "|---|---|---|---|---|---|---|"]
        for clients in args.clients:
            b = stats["basalt"].get(clients)
            ps = [(stats[p][clients]["qps"], p) for p in peers if clients in stats[p]]
            if not b or not ps:
                continue
            best_qps, best = max(ps)
            lines.append(f"| {clients} | {b['qps']:.1f} | {best} | {best_qps:.1f} | "
                         f"{b['qps'] / best_qps:.2f} | {b['cpu'] * 100:.0f}% | {b['errors']} |")
        lines += ["", "Goals (issue 7): CPU >= 90% of all cores under concurrency, no errors, "
                  "Basalt / best peer >= 1.00."]
        noisy = sorted({f"{e} at {c} clients ({s['other_cpu'] * 100:.0f}%)"
                        for e in engines for c, s in stats[e].items() if s["other_cpu"] > 0.1})
        if noisy:
            lines += ["", "**The machine was not quiet**: other processes used more than 10% of "
                      "all cores during " + ", ".join(noisy) + "; compare with care."]
    # Per-template medians: serial and at the highest client count.
    for clients in sorted({args.clients[0], args.clients[-1]}):
        lines += ["", f"## Per template, {clients} client{'s' if clients > 1 else ''}: "
                  "median ms (completed queries)", "",
                  "| template | kind | " + " | ".join(engines)
                  + "".join(f" | basalt/{p}" for p in peers if "basalt" in engines) + " |",
                  "|---" * (2 + len(engines) + (len(peers) if "basalt" in engines else 0)) + "|"]
        for t in TEMPLATES:
            med = {}
            for e in engines:
                p = next((p for p in results[e]["phases"] if p["clients"] == clients), None)
                v = [r[4] for r in p["records"] if r[1] == t["name"] and r[5] is None] if p else []
                med[e] = statistics.median(v) if v else None
            if not any(med.values()):
                continue
            cells = [ms(med[e]) for e in engines]
            ratios = [f"{med['basalt'] / med[p]:.2f}" if med.get("basalt") and med[p] else "-"
                      for p in peers] if "basalt" in engines else []
            lines.append(f"| {t['name']} | {t['kind']} | " + " | ".join(cells)
                         + "".join(f" | {r}" for r in ratios) + " |")
    # Correctness: Basalt's check rows against DuckDB's.
    mismatches = []
    if "basalt" in results and REFERENCE in results:
        got, want = results["basalt"]["rows"], results[REFERENCE]["rows"]
        ids = sorted(set(got) & set(want), key=int)
        sql = {str(i): (n, sql_for(n, "basalt").format(**p)) for i, n, p in queries}
        for qid in ids:
            ok, note = compare(sql[qid][1], [tuple(r) for r in got[qid]],
                               [tuple(r) for r in want[qid]])
            if not ok:
                mismatches.append((qid, sql[qid][0], note, sql[qid][1]))
        lines += ["", f"## Correctness: Basalt against {REFERENCE}", "",
                  f"{len(ids) - len(mismatches)} of {len(ids)} check queries "
                  f"({CHECKS_PER_TEMPLATE} per template both ran) match (counts exact, "
                  "numbers within 1e-6 relative)."]
        for qid, name, note, text in mismatches:
            lines += ["", f"- **MISMATCH** query {qid} ({name}): {note}", f"  `{text}`"]
    errors = [(e, c, s["first_errors"]) for e in engines for c, s in stats[e].items()
              if s["first_errors"]]
    if errors:
        lines += ["", "## First errors in the timed runs", ""]
        for e, c, errs in errors:
            lines += [f"- {e}, {c} clients: " + "; ".join(f"`{x}`" for x in errs)]
    lines += ["", "## Templates", "", "Per-engine spellings where they differ "
              "(`{e}` experiment, `{d1}`..`{d2}` date range, `{word}` etc. from fixed lists).",
              ""]
    for t in TEMPLATES:
        if "all" in t:
            lines.append(f"- **{t['name']}** ({t['kind']}): `{t['all']}`")
        else:
            lines.append(f"- **{t['name']}** ({t['kind']}): Basalt `{t['basalt']}`; "
                         f"DuckDB and chdb `{t['peers']}`")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.join("bench", "results"), exist_ok=True)
    stem = os.path.join("bench", "results",
                        f"abtest-{args.rows}-{datetime.date.today().isoformat()}")
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".csv", "w") as f:
        f.write("engine,clients,query_id,template,kind,start_s,seconds,error\n")
        for e in engines:
            for p in results[e]["phases"]:
                for qid, name, kind, start, secs, err in p["records"]:
                    err = "" if err is None else '"' + err.replace('"', "'") + '"'
                    f.write(f"{e},{p['clients']},{qid},{name},{kind},{start},{secs},{err}\n")
    print(text)
    print(f"written {stem}.md and .csv")
    return mismatches


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        return worker(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", default="target/release/basalt")
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=60,
                    help="per client count; 0: run the query list once instead")
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--engines", default="basalt,duckdb,chdb")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--threads", type=int, default=CORES, help="peers' threads")
    ap.add_argument("--buckets", type=int, default=8, help="Basalt's hash buckets")
    ap.add_argument("--data", default=os.path.join("bench", "data", "abtest"))
    args = ap.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    args.engines = [e for e in args.engines.split(",") if e]
    for e in args.engines:
        if e not in ENGINES:
            ap.error(f"unknown engine {e} (basalt, duckdb, chdb)")

    def log(msg):
        print(msg, flush=True)

    parquet = generate(args.rows, args.seed, args.data)
    queries = make_queries(args.queries, args.seed)
    results, exclude, exclude_log = {}, set(), []
    for engine in [e for e in ENGINES if e in args.engines]:
        log(f"== {engine}")
        if engine == "basalt":
            r = run_basalt(args, parquet, queries, log)
        else:
            r = run_peer(engine, args, parquet, queries, exclude, log)
        if r is None:
            continue
        results[engine] = r
        # Templates this engine could not run leave the mix of the engines after it.
        for name in r["unsupported"]:
            if name not in exclude:
                exclude.add(name)
                for e in [x for x in ENGINES if x in args.engines and x != engine]:
                    if ENGINES.index(e) > ENGINES.index(engine):
                        exclude_log.append((e, name, f"not run: {engine} does not support it"))
                    else:
                        exclude_log.append((e, name, f"ran, but {engine} (later) did not: "
                                                     "the mixes differ"))
    notes = []
    mismatches = report(args, results, queries, notes, exclude_log)
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
