#!/usr/bin/env python3
"""Differential run of MariaDB's own regression tests (mysql-test, Debian package `mariadb-test`)
against Basalt, with a MariaDB server as the oracle for MySQL semantics.

Each `.test` file is cut into statements (mysqltest's own commands such as `--error`, `let`,
`eval`, `connect` are skipped, `delimiter` is honoured); every statement runs on both servers in
a fresh database per file, and its outcome is compared: both fail, or both succeed with the same
rows (the text protocol's raw bytes; in the order given where the statement has an ORDER BY,
else as multisets). A file's score counts the statements that return rows (SELECT, SHOW, ...)
separately from the rest, because a statement's result depends on those before it: a CREATE
TABLE Basalt refuses fails every query of that table.

    python3 tests/mtr/diff_run.py --basalt 127.0.0.1:9030 --oracle 127.0.0.1:3306 \\
        --tests 'func_math,func_str,func_op' [--report out.md] [--mismatches out.jsonl]

Nothing here is Basalt's test suite: it measures the distance to MySQL's behaviour (MariaDB's,
where the two differ, it says nothing about which is right) and lists the differences.
"""

import argparse
import glob
import json
import os
import re
import sys

import pymysql

TEST_DIR = "/usr/share/mysql/mysql-test/main"

# mysqltest's commands (written without the `--` prefix too) that are no SQL.
COMMANDS = {
    "let", "eval", "echo", "if", "while", "source", "connect", "connection", "disconnect",
    "send", "reap", "sleep", "real_sleep", "exit", "die", "skip", "inc", "dec", "query",
    "query_vertical", "query_horizontal", "replace_result", "replace_column", "replace_regex",
    "sorted_result", "disable_warnings", "enable_warnings", "disable_query_log",
    "enable_query_log", "disable_result_log", "enable_result_log", "error", "vertical_results",
    "horizontal_results", "write_file", "append_file", "cat_file", "remove_file", "file_exists",
    "copy_file", "move_file", "mkdir", "rmdir", "list_files", "system", "exec", "perl",
    "shutdown_server", "wait_for_slave_to_stop", "sync_slave_with_master", "save_master_pos",
    "change_user", "character_set", "disable_abort_on_error", "enable_abort_on_error",
    "disable_ps_protocol", "enable_ps_protocol", "disable_view_protocol",
    "enable_view_protocol", "disable_metadata", "enable_metadata", "require", "result",
    "ping", "disable_reconnect", "enable_reconnect", "send_eval", "lowercase_result",
    "disable_cursor_protocol", "enable_cursor_protocol", "disable_service_connection",
    "enable_service_connection", "end", "}", "{", "else", "start_timer", "end_timer",
    "disable_info", "enable_info", "disable_parsing", "enable_parsing", "chmod",
    "dirty_close", "send_quit", "sorted_result", "partially_sorted_result", "replace_numeric_round",
    "enable_prepare_warnings", "disable_prepare_warnings", "disable_session_track_info",
    "enable_session_track_info", "remove_files_wildcard", "copy_files_wildcard",
    "disable_column_names", "enable_column_names", "change_user", "assert", "result_format",
    "delimiter_dummy", "query_get_value", "output",
}

# Statements whose effect is on the server rather than the test's data: never run.
SKIPPED = re.compile(
    r"^\s*(flush|set\s+(global|@@global)|install|uninstall|shutdown|kill|lock\s+tables?|unlock"
    r"|reset|purge|change\s+master|start\s+slave|stop\s+slave|grant|revoke|create\s+user"
    r"|drop\s+user|load\s+data|select\s+.*\binto\s+outfile|handler|xa\s|analyze|optimize"
    r"|repair|check\s+table|checksum|cache\s+index|load\s+index|backup|restore|binlog)",
    re.I | re.S,
)

ROWS = re.compile(r"^\s*\(?\s*(select|show|with|values|table|explain|describe|desc|call)\b", re.I)


def statements(path):
    """The SQL statements of a mysqltest file, in order (mysqltest's commands dropped)."""
    delimiter = ";"
    buf = []
    skip_block = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for line in lines:
        stripped = line.strip()
        if not buf:
            if not stripped or stripped.startswith("#"):
                continue
            if stripped.startswith("--"):
                words = stripped[2:].split()
                if words and words[0].lower() == "delimiter" and len(words) > 1:
                    delimiter = words[1]
                continue
            first = re.split(r"[\s(;]", stripped, maxsplit=1)[0].lower()
            if first == "delimiter":
                parts = stripped.split()
                if len(parts) > 1:
                    delimiter = parts[1].rstrip(delimiter) or parts[1]
                continue
            if first in ("if", "while"):
                skip_block += 1
                continue
            if skip_block:
                if stripped.startswith("}"):
                    skip_block -= 1
                continue
            if first in COMMANDS or first.startswith("$") or first.startswith("--"):
                # A command runs to its delimiter; skip its lines.
                if not stripped.endswith(delimiter):
                    buf = ["\0command"]
                continue
        if buf and buf[0] == "\0command":
            if stripped.endswith(delimiter):
                buf = []
            continue
        buf.append(line)
        if stripped.endswith(delimiter):
            text = "\n".join(buf).strip()
            text = text[: -len(delimiter)].strip()
            buf = []
            if text:
                yield text


def connect(address, database=None):
    host, port = address.rsplit(":", 1)
    return pymysql.connect(
        host=host, port=int(port), user="root", password="", database=database,
        conv={}, autocommit=True, read_timeout=20, write_timeout=20, charset="utf8mb4",
    )


def outcome(conn, sql):
    """('rows', [...]) / ('ok', affected) / ('error', code) of one statement."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            if cur.description is None:
                return ("ok", None)
            rows = [tuple(v if v is None else (v if isinstance(v, str) else v.decode("utf-8", "replace")) for v in r) for r in cur.fetchall()]
            return ("rows", rows)
    except pymysql.err.MySQLError as e:
        code = e.args[0] if e.args else 0
        message = str(e.args[1]) if len(e.args) > 1 else ""
        return ("error", code, message[:200])
    except Exception as e:  # a broken connection, a value pymysql cannot read
        return ("error", f"client: {type(e).__name__}", str(e)[:200])


def broken(result):
    """True when a statement's connection is gone (the client's error, or MySQL's 2006/2013)."""
    return result[0] == "error" and (str(result[1]).startswith("client") or result[1] in (0, 2006, 2013))


def same_rows(sql, got, want):
    """Rows equal in order, or as multisets when the statement does not ORDER BY (MySQL gives
    such rows in no defined order)."""
    if got == want:
        return True
    if re.search(r"\border\s+by\b", sql, re.I):
        return False
    key = lambda row: tuple("\0" if v is None else v for v in row)
    return sorted(got, key=key) == sorted(want, key=key)


def run_file(name, basalt, oracle, mismatches):
    db = "mtr_" + re.sub(r"\W", "_", name)
    conns = []
    for address in (basalt, oracle):
        c = connect(address)
        outcome(c, f"DROP DATABASE IF EXISTS {db}")
        outcome(c, f"CREATE DATABASE {db}")
        outcome(c, f"USE {db}")
        conns.append(c)
    b, o = conns
    score = {"queries": 0, "queries_same": 0, "others": 0, "others_same": 0}
    for sql in statements(os.path.join(TEST_DIR, name + ".test")):
        if SKIPPED.match(sql) or "$" in sql:
            continue
        if re.match(r"^\s*(use|create\s+database|drop\s+database)\b", sql, re.I):
            continue
        got = outcome(b, sql)
        want = outcome(o, sql)
        # Reconnect after a broken connection and carry on.
        try:
            if broken(got):
                b = connect(basalt, db)
            if broken(want):
                o = connect(oracle, db)
        except Exception:
            break
        kind = "queries" if ROWS.match(sql) else "others"
        score[kind] += 1
        same = got[0] == want[0] and (got[0] != "rows" or same_rows(sql, got[1], want[1]))
        if got[0] == "error" and want[0] == "error":
            same = True
        if same:
            score[kind + "_same"] += 1
        elif mismatches is not None:
            mismatches.write(json.dumps({
                "file": name, "sql": sql[:2000], "basalt": repr(got)[:600],
                "mariadb": repr(want)[:600],
            }) + "\n")
    for c in (b, o):
        outcome(c, f"DROP DATABASE IF EXISTS {db}")
        c.close()
    return score


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--basalt", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--tests", default="func_*", help="comma-separated names or globs")
    ap.add_argument("--report")
    ap.add_argument("--mismatches")
    args = ap.parse_args()
    names = []
    for pattern in args.tests.split(","):
        for path in sorted(glob.glob(os.path.join(TEST_DIR, pattern.strip() + ".test"))):
            names.append(os.path.basename(path)[:-5])
    out = open(args.mismatches, "w") if args.mismatches else None
    total = {"queries": 0, "queries_same": 0, "others": 0, "others_same": 0}
    lines = ["| file | queries same | other statements same |", "|---|---|---|"]
    for name in names:
        try:
            s = run_file(name, args.basalt, args.oracle, out)
        except Exception as e:
            print(f"{name}: runner error {e}", file=sys.stderr)
            continue
        for k in total:
            total[k] += s[k]
        lines.append(f"| {name} | {s['queries_same']}/{s['queries']} | {s['others_same']}/{s['others']} |")
        print(f"{name}: queries {s['queries_same']}/{s['queries']}, others {s['others_same']}/{s['others']}", flush=True)
    summary = (f"files {len(names)}: queries same {total['queries_same']}/{total['queries']}, "
               f"other statements same {total['others_same']}/{total['others']}")
    lines.append("")
    lines.append(summary)
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines) + "\n")
    print(summary)


if __name__ == "__main__":
    main()
