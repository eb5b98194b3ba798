"""The 43 ClickBench queries (queries.sql: ClickBench's duckdb/queries.sql, one per line) and the
few per-engine spellings they need, each with the same meaning:

- duckdb: the text as is.
- basalt (MySQL dialect): STRLEN -> OCTET_LENGTH (byte length, as STRLEN; MySQL's LENGTH is
  bytes too, but Basalt's LENGTH counts characters), and in query 29 the regex and its `\\1`
  written with doubled backslashes, since MySQL string literals take `\\` as an escape
  (ClickBench's Doris queries do the same for `\\1`); Q24's `SELECT *` lists the columns in
  ClickBench's order, because Basalt (like Doris) puts the key columns first in the table
  (basalt_ddl.sql), which would otherwise reorder the result's columns.
- chdb (ClickHouse): STRLEN -> length (bytes in ClickHouse; ClickBench's clickhouse/queries.sql),
  and Q4's AVG(UserID) as AVG(toFloat64(UserID)): ClickHouse sums an Int64 column in Int64 and
  wraps on overflow (the generated UserIDs are large and positive, so the plain AVG is wrong);
  DataFusion averages Int64 in Float64 too.
- datafusion: column names double-quoted (DataFusion folds unquoted identifiers to lower case)
  and STRLEN -> octet_length, as ClickBench's datafusion/queries.sql.

Names are Q1..Q43 (line numbers of queries.sql; ClickBench's own result files count from 0).

    sys.path.insert(0, "bench/clickbench"); from queries import queries
    for name, sql in queries("basalt"): ...      (or load this file with importlib)
"""

import os
import re

ENGINES = ("basalt", "duckdb", "chdb", "datafusion")
HERE = os.path.dirname(os.path.abspath(__file__))

_COLUMN_CACHE = []


def _columns():
    if not _COLUMN_CACHE:
        # The schema lives with the generator; load it by path so this module works however
        # it is imported (bench/clickbench has no __init__.py).
        import importlib.util  # noqa: PLC0415

        spec = importlib.util.spec_from_file_location(
            "clickbench_generate", os.path.join(HERE, "generate.py"))
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        _COLUMN_CACHE.extend(n for n, _ in gen.COLUMNS)
    return _COLUMN_CACHE


def standard():
    """[(name, sql)] exactly as in queries.sql (without the trailing semicolon)."""
    with open(os.path.join(HERE, "queries.sql")) as f:
        lines = [line.strip() for line in f if line.strip()]
    assert len(lines) == 43, f"expected 43 queries, found {len(lines)}"
    return [(f"Q{i + 1}", line.rstrip(";")) for i, line in enumerate(lines)]


def _outside_literals(sql, fn):
    """Applies fn to the parts of sql that are not inside '...' literals."""
    parts = re.split(r"('(?:[^']|'')*')", sql)
    return "".join(p if i % 2 else fn(p) for i, p in enumerate(parts))


def _basalt(sql):
    if sql.startswith("SELECT * FROM hits "):
        sql = "SELECT " + ", ".join(_columns()) + sql[len("SELECT *"):]
    sql = _outside_literals(sql, lambda s: re.sub(r"\bSTRLEN\(", "OCTET_LENGTH(", s))
    # Backslashes inside literals are escapes in MySQL: double them to keep the same text.
    return re.sub(r"'(?:[^']|'')*'", lambda m: m.group(0).replace("\\", "\\\\"), sql)


def _chdb(sql):
    sql = sql.replace("AVG(UserID)", "AVG(toFloat64(UserID))")
    return _outside_literals(sql, lambda s: re.sub(r"\bSTRLEN\(", "length(", s))


def _datafusion(sql):
    names = "|".join(sorted(_columns(), key=len, reverse=True))
    pattern = re.compile(rf'(?<![\w"])({names})(?![\w"])')

    def fix(s):
        s = re.sub(r"\bSTRLEN\(", "octet_length(", s)
        return pattern.sub(r'"\1"', s)

    return _outside_literals(sql, fix)


VARIANTS = {"duckdb": lambda s: s, "basalt": _basalt, "chdb": _chdb, "datafusion": _datafusion}


def queries(engine):
    """[(name, sql)] for `engine` (one of ENGINES), in order."""
    if engine not in VARIANTS:
        raise ValueError(f"unknown engine {engine!r}; expected one of {ENGINES}")
    return [(name, VARIANTS[engine](sql)) for name, sql in standard()]


if __name__ == "__main__":
    import sys

    for name, sql in queries(sys.argv[1] if len(sys.argv) > 1 else "duckdb"):
        print(f"{name}: {sql}")
