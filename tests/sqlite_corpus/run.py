#!/usr/bin/env python3
"""SQLite's sqllogictest corpus (https://sqlite.org/sqllogictest, mirrored on GitHub as
gregrahn/sqllogictest) run against Basalt over the MySQL protocol, as the corpus runs on MySQL:
records marked `onlyif mysql` run, `skipif mysql` ones do not. Nothing here is Basalt's test
suite: the expected rows are SQLite's (checked by the corpus's authors against MySQL, PostgreSQL
and others), so the score measures how far Basalt's answers are from a reference nobody here
wrote, and the report lists every query whose rows differ.

    python3 tests/sqlite_corpus/run.py --host 127.0.0.1 --port 9030 \\
        --corpus /path/to/sqllogictest/test select1.test random/aggregates/slt_good_0.test ...

Each file runs in a fresh database. A query's values are formatted as the corpus writes them
(integers in decimal, reals with three decimals, NULL, `(empty)` for an empty string), sorted
as its record says (nosort, rowsort, valuesort), and compared one by one, or by the MD5 of the
values when the expected result is a hash.
"""

import argparse
import hashlib
import json
import os
import sys
from decimal import Decimal

import pymysql


def records(lines):
    """The file's records: (kind, header tokens, sql, expected lines, line number)."""
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i].rstrip("\n")
        if not line.strip() or line.startswith("#"):
            i += 1
            continue
        start = i
        conditions = []
        while line.startswith(("skipif", "onlyif")):
            conditions.append(line.split()[:2])
            i += 1
            line = lines[i].rstrip("\n")
        head = line.split()
        i += 1
        if head[0] == "hash-threshold" or head[0] == "halt":
            yield head[0], head, "", [], conditions, start + 1
            continue
        sql = []
        while i < n and lines[i].strip() and lines[i].rstrip("\n") != "----":
            sql.append(lines[i].rstrip("\n"))
            i += 1
        expected = []
        if i < n and lines[i].rstrip("\n") == "----":
            i += 1
            while i < n and lines[i].strip():
                expected.append(lines[i].rstrip("\n"))
                i += 1
        yield head[0], head, "\n".join(sql), expected, conditions, start + 1


def runs_on_mysql(conditions):
    for kind, engine in conditions:
        if kind == "skipif" and engine == "mysql":
            return False
        if kind == "onlyif" and engine != "mysql":
            return False
    return True


def formatted(value, kind):
    if value is None:
        return "NULL"
    if kind == "I":
        if isinstance(value, (bytes, bytearray)):
            value = value.decode("utf-8", "replace")
        try:
            return str(int(Decimal(str(value)).to_integral_value(rounding="ROUND_DOWN")))
        except Exception:
            return "0"
    if kind == "R":
        try:
            return "%.3f" % float(value)
        except Exception:
            return "0.000"
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    text = str(value)
    if text == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in text)


def run_file(conn, path, name, threshold_default, mismatches):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    database = "slt_" + "".join(c if c.isalnum() else "_" for c in name)[-50:]
    cur = conn.cursor()
    cur.execute(f"DROP DATABASE IF EXISTS {database}")
    cur.execute(f"CREATE DATABASE {database}")
    cur.execute(f"USE {database}")
    threshold = threshold_default
    score = {"queries": 0, "same": 0, "wrong": 0, "error": 0, "statements": 0, "statement_same": 0}
    for kind, head, sql, expected, conditions, line in records(lines):
        if kind == "halt":
            if runs_on_mysql(conditions):
                break
            continue
        if kind == "hash-threshold":
            threshold = int(head[1])
            continue
        if not runs_on_mysql(conditions):
            continue
        if kind == "statement":
            score["statements"] += 1
            want_ok = head[1] == "ok"
            try:
                cur.execute(sql)
                ok = True
            except Exception:
                ok = False
            if ok == want_ok:
                score["statement_same"] += 1
            continue
        if kind != "query":
            continue
        score["queries"] += 1
        types = head[1]
        sort = head[2] if len(head) > 2 else "nosort"
        try:
            cur.execute(sql)
            rows = cur.fetchall()
        except Exception as e:
            score["error"] += 1
            mismatches.append({"file": name, "line": line, "sql": sql, "error": str(e)[:300]})
            continue
        values_rows = [[formatted(v, types[j] if j < len(types) else "T") for j, v in
                        enumerate(r)] for r in rows]
        if sort == "rowsort":
            values_rows.sort()
        values = [v for r in values_rows for v in r]
        if sort == "valuesort":
            values.sort()
        if len(expected) == 1 and " values hashing to " in expected[0]:
            count, digest = expected[0].split(" values hashing to ")
            got = hashlib.md5("".join(v + "\n" for v in values).encode()).hexdigest()
            same = int(count) == len(values) and got == digest.strip()
        else:
            want = expected
            # A result may be written one row per line (values separated by spaces).
            if len(want) != len(values) and values_rows and len(want) == len(values_rows):
                want = [v for w in want for v in w.split(" ")]
            same = want == values
        if same:
            score["same"] += 1
        else:
            score["wrong"] += 1
            shown = values if len(values) <= 30 else values[:30] + ["..."]
            mismatches.append({"file": name, "line": line, "sql": sql,
                               "expected": expected[:30], "got": shown})
    cur.execute(f"DROP DATABASE IF EXISTS {database}")
    return score


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9030)
    p.add_argument("--user", default="root")
    p.add_argument("--corpus", required=True, help="the corpus's test/ directory")
    p.add_argument("--mismatches", help="JSON lines of the queries whose rows differ")
    p.add_argument("files", nargs="+", help="test files, relative to --corpus")
    args = p.parse_args()
    total = {}
    out = open(args.mismatches, "w") if args.mismatches else None
    for name in args.files:
        mismatches = []
        conn = pymysql.connect(host=args.host, port=args.port, user=args.user, autocommit=True,
                               read_timeout=600)
        try:
            score = run_file(conn, os.path.join(args.corpus, name), name, 8, mismatches)
        except Exception as e:
            print(f"{name}: stopped: {e}", file=sys.stderr)
            continue
        finally:
            conn.close()
        print(f"{name}: queries {score['same']}/{score['queries']} (wrong {score['wrong']}, "
              f"error {score['error']}), statements {score['statement_same']}/"
              f"{score['statements']}", flush=True)
        for k, v in score.items():
            total[k] = total.get(k, 0) + v
        if out:
            for m in mismatches:
                out.write(json.dumps(m) + "\n")
            out.flush()
    print(f"files {len(args.files)}: queries same {total.get('same', 0)}/"
          f"{total.get('queries', 0)}, wrong {total.get('wrong', 0)}, error "
          f"{total.get('error', 0)}; statements {total.get('statement_same', 0)}/"
          f"{total.get('statements', 0)}")


if __name__ == "__main__":
    main()
