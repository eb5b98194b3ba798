"""The transaction status flags of a running Basalt server, as PyMySQL reads them (issue #23).

Usage: python3 transaction_flags.py PORT   (exits non-zero with a message on the first failure)

Every OK and EOF packet carries SERVER_STATUS_IN_TRANS (0x0001) and SERVER_STATUS_AUTOCOMMIT
(0x0002); PyMySQL keeps the last ones in `server_status` and answers `get_autocommit()` from
them. The expected values are MariaDB 10.11's for the same statements.
"""
import sys

import pymysql

IN_TRANS = 0x0001
AUTOCOMMIT = 0x0002


def main(port: int) -> None:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
    cur = conn.cursor()

    def flags(sql: str) -> int:
        cur.execute(sql)
        cur.fetchall()
        return conn.server_status & (IN_TRANS | AUTOCOMMIT)

    def expect(sql: str, want: int) -> None:
        got = flags(sql)
        assert got == want, f"{sql!r}: status flags {got:#06x}, expected {want:#06x}"

    expect("CREATE DATABASE IF NOT EXISTS txflags", AUTOCOMMIT)
    conn.select_db("txflags")
    expect("CREATE TABLE IF NOT EXISTS t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 1", AUTOCOMMIT)
    assert conn.get_autocommit() is True

    # An explicit transaction: open from BEGIN (reads and writes inside keep it) to COMMIT.
    expect("BEGIN", AUTOCOMMIT | IN_TRANS)
    expect("SELECT 1", AUTOCOMMIT | IN_TRANS)
    expect("INSERT INTO t VALUES (1)", AUTOCOMMIT | IN_TRANS)
    expect("COMMIT", AUTOCOMMIT)
    expect("START TRANSACTION", AUTOCOMMIT | IN_TRANS)
    expect("SAVEPOINT s1", AUTOCOMMIT | IN_TRANS)
    expect("ROLLBACK", AUTOCOMMIT)
    expect("START TRANSACTION WITH CONSISTENT SNAPSHOT", AUTOCOMMIT | IN_TRANS)
    expect("COMMIT", AUTOCOMMIT)

    # autocommit off: the flag goes, @@autocommit reads 0, the driver sees it.
    expect("SET autocommit = 0", 0)
    cur.execute("SELECT @@autocommit, @@session.autocommit")
    assert cur.fetchone() == (0, 0)
    assert conn.get_autocommit() is False
    # Reads open no transaction (as in MariaDB); the first write does, until COMMIT/ROLLBACK.
    expect("SELECT * FROM t", 0)
    expect("INSERT INTO t VALUES (2)", IN_TRANS)
    expect("SELECT COUNT(*) FROM t", IN_TRANS)
    expect("COMMIT", 0)
    expect("INSERT INTO t VALUES (3)", IN_TRANS)
    expect("ROLLBACK", 0)
    # DDL commits implicitly.
    expect("INSERT INTO t VALUES (4)", IN_TRANS)
    expect("CREATE TABLE IF NOT EXISTS t2 (a INT) DISTRIBUTED BY HASH(a) BUCKETS 1", 0)
    # Turning autocommit back on commits the open transaction.
    expect("INSERT INTO t VALUES (5)", IN_TRANS)
    expect("SET autocommit = 1", AUTOCOMMIT)
    assert conn.get_autocommit() is True
    # ... but only when it was off: inside BEGIN it changes nothing.
    expect("BEGIN", AUTOCOMMIT | IN_TRANS)
    expect("SET autocommit = 1", AUTOCOMMIT | IN_TRANS)
    expect("COMMIT", AUTOCOMMIT)
    # A failed write opens nothing.
    expect("SET autocommit = 0", 0)
    try:
        cur.execute("INSERT INTO no_such_table VALUES (1)")
        raise AssertionError("expected an error")
    except pymysql.err.ProgrammingError:
        pass
    expect("SELECT 1", 0)
    expect("SET autocommit = 1", AUTOCOMMIT)

    # The driver's own calls: begin(), commit(), rollback(), autocommit().
    conn.begin()
    assert conn.server_status & IN_TRANS
    conn.rollback()
    assert not conn.server_status & IN_TRANS
    conn.autocommit(False)
    assert conn.get_autocommit() is False
    cur.execute("INSERT INTO t VALUES (6)")
    assert conn.server_status & IN_TRANS
    conn.commit()
    assert not conn.server_status & IN_TRANS
    conn.autocommit(True)
    assert conn.get_autocommit() is True

    # COM_RESET_CONNECTION ends the transaction (PyMySQL has no call for it; a new connection
    # starts outside one).
    conn2 = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=False)
    assert conn2.get_autocommit() is False
    assert not conn2.server_status & IN_TRANS
    conn2.close()

    cur.execute("DROP DATABASE txflags")
    conn.close()
    print("transaction flags: ok")


if __name__ == "__main__":
    main(int(sys.argv[1]))
