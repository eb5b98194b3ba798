"""BIT columns through PyMySQL: MySQL's BIT type (16) with each value as ceil(n/8) big-endian
bytes, as drivers decode them (PyMySQL gives b'\\x01' for a BIT(1) holding 1), and VARCHAR(n)
holding n characters of any width.

Usage: python3 bit_columns.py PORT   (exits non-zero with a message on the first failure)
"""
import sys

import pymysql

FIELD_TYPE_BIT = 16


def main(port: int) -> None:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True, charset="utf8mb4")
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS py_bits")
        conn.select_db("py_bits")
        cur.execute("DROP TABLE IF EXISTS t")
        cur.execute("CREATE TABLE t (id INT, b BIT, b12 BIT(12), b64 BIT(64), v VARCHAR(3))")
        cur.execute("INSERT INTO t VALUES (%s, %s, %s, %s, %s)", (1, True, 0xABC, 2**64 - 1, "äöü"))
        cur.execute("INSERT INTO t VALUES (2, b'0', b'1', 0x0102, 'Ж')")
        cur.execute("INSERT INTO t VALUES (3, NULL, NULL, NULL, NULL)")
        cur.execute("SELECT b, b12, b64, v FROM t ORDER BY id")
        types = [d[1] for d in cur.description]
        assert types[:3] == [FIELD_TYPE_BIT] * 3, cur.description
        rows = cur.fetchall()
        expected = (
            (b"\x01", b"\x0a\xbc", b"\xff" * 8, "äöü"),
            (b"\x00", b"\x00\x01", b"\x00" * 6 + b"\x01\x02", "Ж"),
            (None, None, None, None),
        )
        assert rows == expected, rows
        cur.execute("SELECT b + 0, b12 + 0 FROM t WHERE id = 1")
        assert cur.fetchone() == (1, 0xABC)
        try:
            cur.execute("INSERT INTO t VALUES (4, 2, 0, 0, NULL)")
            raise AssertionError("expected 1406 for 2 in BIT(1)")
        except pymysql.err.DataError as e:
            assert e.args[0] == 1406, e.args
        try:
            cur.execute("INSERT INTO t VALUES (4, 0, 0, 0, %s)", ("äöüß",))
            raise AssertionError("expected 1406 for four characters in VARCHAR(3)")
        except pymysql.err.DataError as e:
            assert e.args[0] == 1406, e.args
        cur.execute("DROP DATABASE py_bits")
    conn.close()
    print("ok")


if __name__ == "__main__":
    main(int(sys.argv[1]))
