"""A query suite run end to end: Basalt (loaded through Stream Load, queried over MySQL), then
each peer in its own process over the same Parquet files, one engine at a time; Basalt's
results are checked against the reference engine's; medians, geometric means, ratios, CPU
and peak memory go to bench/results/<suite>-<date>.md and .csv."""

import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile

from lib.basalt import BasaltCluster, BasaltServer, run_queries
from lib.results import compare

PEERS = ["duckdb", "chdb", "datafusion"]
REFERENCE = "duckdb"


def machine():
    model = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{model}, {os.cpu_count()} cores, {mem_gb:.0f} GiB, {platform.platform()}"


def git_commit():
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return out.stdout.strip() + ("+dirty" if dirty else "")


def run_peer(engine, tables, queries, runs, threads):
    with tempfile.TemporaryDirectory() as tmp:
        spec = {"engine": engine, "tables": tables, "queries": queries, "runs": runs,
                "threads": threads, "out": os.path.join(tmp, "out.json")}
        spec_path = os.path.join(tmp, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        here = os.path.dirname(os.path.abspath(__file__))
        proc = subprocess.run([sys.executable, os.path.join(here, "peers.py"), spec_path])
        if proc.returncode != 0 or not os.path.exists(spec["out"]):
            return None
        with open(spec["out"]) as f:
            return json.load(f)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def median(entry):
    return statistics.median(entry["times"]) if entry and entry["times"] else None


def run_suite(suite, args, tables, load_basalt, queries_for, title, notes=(), check=None):
    """`tables`: name -> Parquet path; `load_basalt(server)` creates and loads Basalt's tables
    and returns a dict of facts to report; `queries_for(engine)`: [(name, sql)];
    `check(name, basalt_rows, reference_rows)` -> (ok, note) replaces the default comparison
    (lib.results.compare on the reference engine's SQL)."""
    results = {}
    peers = [p for p in PEERS if p in args.engines]
    if "basalt" in args.engines:
        print("== basalt", flush=True)
        server = BasaltServer(args.basalt)
        try:
            load_facts = load_basalt(server)
            results["basalt"] = run_queries(server, "bench", queries_for("basalt"), args.runs)
            results["basalt"]["load"] = load_facts
        finally:
            server.stop()
    # The same load and queries on clusters of 1 frontend + N backends (`--backends 1,3`).
    for n in getattr(args, "backends", None) or []:
        name = f"basalt-{n}be"
        print(f"== {name}", flush=True)
        cluster = BasaltCluster(args.basalt, n)
        try:
            load_facts = load_basalt(cluster)
            results[name] = run_queries(cluster, "bench", queries_for("basalt"), args.runs,
                                        engine=name)
            results[name]["load"] = load_facts
            results[name]["setting"] = (f"1 `basalt frontend` + {n} `basalt backend`, same "
                                        "release build, each backend pinned to its core share")
        finally:
            cluster.stop()
    for peer in peers:
        print(f"== {peer}", flush=True)
        r = run_peer(peer, tables, queries_for(peer), args.runs, args.threads)
        if r is None:
            print(f"  {peer} failed to run; left out", flush=True)
            continue
        results[peer] = r
    report(suite, args, results, queries_for, title, notes, check)
    return results


def report(suite, args, results, queries_for, title, notes, check=None):
    clusters = sorted((e for e in results if e.startswith("basalt-")),
                      key=lambda e: int(e[len("basalt-"):-len("be")]))
    engines = [e for e in ["basalt"] + clusters + PEERS if e in results]
    names = [n for n, _ in queries_for("basalt")]
    sql_of = dict(queries_for(REFERENCE))
    by_engine = {e: {q["name"]: q for q in results[e]["queries"]} for e in engines}
    checks = {}
    if "basalt" in results and REFERENCE in results:
        for n in names:
            b, r = by_engine["basalt"].get(n), by_engine[REFERENCE].get(n)
            if b is None or b["error"]:
                checks[n] = (False, "error: " + (b["error"] if b else "not run"))
            elif r is None or r["error"]:
                checks[n] = (None, f"no {REFERENCE} result to check against")
            elif check is not None:
                checks[n] = check(n, b["rows"], [tuple(row) for row in r["rows"]])
            else:
                checks[n] = compare(sql_of.get(n, ""), b["rows"], r["rows"])
    lines = [f"# {title}", "",
             f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}, commit {git_commit()}",
             f"- machine: {machine()}",
             f"- method: one warm-up run, then {args.runs} runs per query; median reported; "
             f"peers use {args.threads} threads; one engine at a time",
             f"- Basalt: {build_kind(args)} build, data loaded through Stream Load, queried over the MySQL "
             "protocol with PyMySQL (time includes protocol and client row decoding)"]
    for e in engines:
        if e != "basalt":
            lines.append(f"- {e} {results[e].get('version', '')}: {results[e].get('setting', '')}")
    lines += [f"- {n}" for n in notes]
    if "basalt" in results and results["basalt"].get("load"):
        lines.append("- Basalt load: " + ", ".join(f"{k} {v}" for k, v in results["basalt"]["load"].items()))
    lines += ["", "| query | " + " | ".join(f"{e} s" for e in engines)
              + "".join(f" | basalt/{p}" for p in engines if p != "basalt") + " | check |",
              "|---" * (1 + len(engines) + len(engines) - 1 + 1) + "|"]
    for n in names:
        meds = {e: median(by_engine[e].get(n)) for e in engines}
        cells = [f"{meds[e]:.3f}" if meds[e] is not None else "error" for e in engines]
        ratios = []
        for p in engines:
            if p == "basalt":
                continue
            b, r = meds.get("basalt"), meds[p]
            ratios.append(f"{b / r:.2f}" if b and r else "-")
        ok, note = checks.get(n, (None, ""))
        check = "ok" if ok else ("-" if ok is None else "**MISMATCH**")
        if note:
            check += f" ({note})"
        lines.append(f"| {n} | " + " | ".join(cells) + "".join(f" | {r}" for r in ratios)
                     + f" | {check} |")
    # Geometric means over the queries every engine answered, so ratios compare like with like.
    common = [n for n in names if all(median(by_engine[e].get(n)) for e in engines)]
    gm = {e: geomean([median(by_engine[e][n]) for n in common]) for e in engines}
    lines += ["", f"Geometric mean over the {len(common)} queries every engine ran:", "",
              "| engine | geomean s | basalt ratio | query-phase CPU s | peak RSS MB (queries) | failed queries |",
              "|---|---|---|---|---|---|"]
    for e in engines:
        failed = [n for n in names if not median(by_engine[e].get(n))]
        ratio = gm["basalt"] / gm[e] if "basalt" in gm and gm[e] else float("nan")
        lines.append(f"| {e} | {gm[e]:.4f} | {ratio:.2f} | {results[e]['cpu_s']:.1f} | "
                     f"{results[e]['peak_rss_mb']:.0f} | {', '.join(failed) or '-'} |")
    # Pairwise: Basalt against each peer over every query both ran (a peer that cannot run
    # some queries in its dialect then does not shrink Basalt's comparison with the others).
    if "basalt" in gm:
        lines.append("")
        for p in engines:
            both = [n for n in names if median(by_engine["basalt"].get(n)) and median(by_engine[p].get(n))]
            if p == "basalt" or not both:
                continue
            ratio = (geomean([median(by_engine["basalt"][n]) for n in both])
                     / geomean([median(by_engine[p][n]) for n in both]))
            lines.append(f"- basalt/{p} over the {len(both)} queries both ran: {ratio:.2f}")
    # A cluster must answer exactly as the all-in-one server.
    for e in clusters:
        differ = [n for n in names
                  if (by_engine[e].get(n) or {}).get("rows") != (by_engine["basalt"].get(n) or {}).get("rows")
                  or (by_engine[e].get(n) or {}).get("error")]
        for n in differ:
            checks[n] = (False, f"{e} differs from the all-in-one server")
        cpu = results[e]["cpu_s"] / results["basalt"]["cpu_s"] if results["basalt"]["cpu_s"] else float("nan")
        lines.append("")
        lines.append(f"{e}: {len(names) - len(differ)} of {len(names)} answers equal the all-in-one "
                     f"server's; CPU seconds of all its processes {cpu:.2f}x the all-in-one run's")
    # What each cluster moved between its nodes per query (from the query's profile).
    if clusters:
        lines += ["", "Bytes shuffled between nodes per query (network operators' "
                  "bytes_transferred, from one profiled run):", "",
                  "| query | " + " | ".join(f"{e} MB" for e in clusters) + " |",
                  "|---" * (1 + len(clusters)) + "|"]
        for n in names:
            cells = []
            for e in clusters:
                b = (by_engine[e].get(n) or {}).get("shuffled_bytes")
                cells.append(f"{b / 1e6:.2f}" if b is not None else "-")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        totals = []
        for e in clusters:
            total = sum((by_engine[e].get(n) or {}).get("shuffled_bytes") or 0 for n in names)
            totals.append(f"{total / 1e6:.1f}")
        lines.append("| total | " + " | ".join(totals) + " |")
    mismatches = [n for n, (ok, _) in checks.items() if ok is False]
    unchecked = [n for n, (ok, _) in checks.items() if ok is None]
    matched = len(checks) - len(mismatches) - len(unchecked)
    lines += ["", f"Basalt results checked against {REFERENCE}: {matched} of {len(names)} match"
              + (f"; MISMATCH or error: {', '.join(mismatches)}" if mismatches else "")
              + (f"; not checked (no reference result): {', '.join(unchecked)}" if unchecked else "")]
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.join("bench", "results"), exist_ok=True)
    stem = os.path.join("bench", "results", f"{suite}-{datetime.date.today().isoformat()}")
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".csv", "w") as f:
        f.write("engine,query,run,seconds\n")
        for e in engines:
            for q in results[e]["queries"]:
                for i, t in enumerate(q["times"]):
                    f.write(f"{e},{q['name']},{i + 1},{t:.4f}\n")
    print(f"written {stem}.md and .csv")
    append_history(suite, engines, gm, len(common), matched, len(names), args)
    if mismatches or unchecked or len(checks) < len(names):
        sys.exit(1)


HISTORY = os.path.join("bench", "results", "history.csv")
HISTORY_COLUMNS = ["date", "suite", "commit", "build", "queries", "checked_ok", "basalt_geomean_s",
                   "duckdb_geomean_s", "chdb_geomean_s", "datafusion_geomean_s",
                   "basalt_duckdb_ratio", "basalt_chdb_ratio", "basalt_datafusion_ratio"]


def build_kind(args):
    """`debug` when the binary under test is a debug build (`target/debug/basalt`, or a copy
    with `debug` in its name), else `release`."""
    return "debug" if "debug" in os.path.basename(str(getattr(args, "basalt", ""))) \
        or "/debug/" in str(getattr(args, "basalt", "")) else "release"


def append_history(suite, engines, gm, common, matched, total, args):
    """One row per run of a suite in bench/results/history.csv (`bench/run report` plots it):
    date, commit, the geomeans over the queries every engine ran and Basalt's ratios."""
    row = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "suite": suite,
           "commit": git_commit(),
           "build": build_kind(args),
           "queries": common, "checked_ok": f"{matched}/{total}"}
    for e in ["basalt"] + PEERS:
        row[f"{e}_geomean_s"] = f"{gm[e]:.4f}" if e in gm else ""
    for p in PEERS:
        ok = "basalt" in gm and p in gm and gm[p]
        row[f"basalt_{p}_ratio"] = f"{gm['basalt'] / gm[p]:.3f}" if ok else ""
    new = not os.path.exists(HISTORY)
    with open(HISTORY, "a") as f:
        if new:
            f.write(",".join(HISTORY_COLUMNS) + "\n")
        f.write(",".join(str(row[c]) for c in HISTORY_COLUMNS) + "\n")
    print(f"appended a row to {HISTORY}")


def write_report(path, lines):
    """Writes a Markdown report and echoes it."""
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {path}")
