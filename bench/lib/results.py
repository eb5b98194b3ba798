"""Query results made comparable across engines (numbers, dates, text), and the check that
Basalt's result matches the reference engine's."""

import datetime
import decimal
import math
import re


def normalize_value(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v  # exactly: ids such as UserID exceed a double's 53 bits
    if isinstance(v, (float, decimal.Decimal)):
        return float(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, str):
        return v.rstrip(" ")
    return str(v)


def normalize_rows(rows):
    return [tuple(normalize_value(v) for v in row) for row in rows]


def _values_match(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        # TPC-H allows rounding differences of a cent in money; averages and ratios compare
        # relatively.
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=0.01)
    if isinstance(a, float) != isinstance(b, float):
        # A number one engine returns as text (e.g. a DECIMAL rendered by a driver).
        try:
            return _values_match(float(a), float(b))
        except (TypeError, ValueError):
            return False
    return a == b


def _rows_match(r1, r2):
    return len(r1) == len(r2) and all(_values_match(a, b) for a, b in zip(r1, r2))


def _sort_key(row):
    return tuple((v is None, "" if v is None else (round(v, 2) if isinstance(v, float) else v))
                 for v in row)


def has_top_level_order_by(sql):
    """True if the outermost query ends with ORDER BY (then row order is part of the answer)."""
    depth = 0
    last_order = -1
    text = re.sub(r"'[^']*'", "''", sql.lower())
    for m in re.finditer(r"[()]|\border\s+by\b", text):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0:
            last_order = m.start()
    return last_order >= 0


def compare(sql, got, want):
    """(ok, note) for `got` against `want` (both normalized). Rows that an ORDER BY leaves tied
    may come in any order: a permutation of the expected rows passes, noted as such."""
    if len(got) != len(want):
        return False, f"{len(got)} rows, expected {len(want)}"
    if has_top_level_order_by(sql):
        for i, (g, w) in enumerate(zip(got, want)):
            if not _rows_match(g, w):
                if _multiset_match(got, want):
                    return True, "same rows, tied rows in another order"
                return False, f"row {i}: got {g}, expected {w}"
        return True, ""
    if _multiset_match(got, want):
        return True, ""
    return False, "rows differ (unordered comparison)"


def _multiset_match(got, want):
    g = sorted(got, key=_sort_key)
    w = sorted(want, key=_sort_key)
    return all(_rows_match(a, b) for a, b in zip(g, w))
