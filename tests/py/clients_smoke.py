"""Drives a running Basalt server with PyMySQL the way Python applications do.

Usage: python3 clients_smoke.py PORT   (exits non-zero with a message on the first failure)
"""
import sys

import pymysql


def main(port: int) -> None:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
    with conn.cursor() as cur:
        cur.execute("SELECT @@version_comment")
        assert "Basalt" in cur.fetchone()[0]
        cur.execute("CREATE DATABASE IF NOT EXISTS py")
        conn.select_db("py")  # COM_INIT_DB
        cur.execute(
            "CREATE TABLE IF NOT EXISTS t (id INT NOT NULL, name VARCHAR(20), amount DECIMAL(10,2), d DATE, ts DATETIME) "
            "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2"
        )
        # PyMySQL interpolates parameters client-side into the text protocol.
        cur.executemany(
            "INSERT INTO t VALUES (%s, %s, %s, %s, %s)",
            [(1, "ann", "1.50", "2024-01-02", "2024-01-02 03:04:05"), (2, "bo'b", None, None, None)],
        )
        cur.execute("SELECT id, name, amount, d, ts FROM t ORDER BY id")
        rows = cur.fetchall()
        import datetime
        import decimal

        assert rows[0] == (1, "ann", decimal.Decimal("1.50"), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5)), rows
        assert rows[1] == (2, "bo'b", None, None, None), rows
        cur.execute("SELECT name FROM t WHERE id = %s", (2,))
        assert cur.fetchone() == ("bo'b",)
        try:
            cur.execute("SELECT * FROM no_such_table")
            raise AssertionError("expected an error")
        except pymysql.err.ProgrammingError as e:
            assert e.args[0] == 1146, e.args
        # pandas' to_sql quotes mixed-case names; reading back must give them as created.
        cur.execute("CREATE TABLE `Users` (`UserId` INT, `DisplayName` VARCHAR(20)) DISTRIBUTED BY HASH(`UserId`) BUCKETS 1")
        cur.execute("INSERT INTO `Users` (`UserId`, `DisplayName`) VALUES (1, 'x')")
        cur.execute("SELECT * FROM `Users`")
        assert [d[0] for d in cur.description] == ["UserId", "DisplayName"], cur.description
        cur.execute("SELECT userid, `DISPLAYNAME` AS Shown FROM Users")
        assert [d[0] for d in cur.description] == ["userid", "Shown"], cur.description
        assert cur.fetchall() == ((1, "x"),)
        conn.ping()
        cur.execute("DROP DATABASE py")
    conn.close()
    multi_statements(port)
    try:
        pymysql.connect(host="127.0.0.1", port=port, user="root", password="wrong")
        raise AssertionError("expected access denied")
    except pymysql.err.OperationalError as e:
        assert e.args[0] == 1045, e.args
    print("ok")


def multi_statements(port: int) -> None:
    """CLIENT_MULTI_STATEMENTS: one result per statement, in order, up to the first error."""
    from pymysql.constants import CLIENT

    conn = pymysql.connect(
        host="127.0.0.1", port=port, user="root", autocommit=True, client_flag=CLIENT.MULTI_STATEMENTS
    )
    with conn.cursor() as cur:
        cur.execute(
            "CREATE DATABASE ms; USE ms; CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 1;"
            "INSERT INTO t VALUES (1), (2); SELECT COUNT(*) FROM t; SELECT ';' AS `x;y` -- a; comment"
        )
        results = [(cur.rowcount, cur.fetchall())]
        while cur.nextset():
            results.append((cur.rowcount, cur.fetchall()))
        assert [r[1] for r in results[-2:]] == [((2,),), ((";",),)], results
        assert results[3][0] == 2, results  # the INSERT's affected rows
        assert len(results) == 6, results
        try:
            cur.execute("SELECT 1; SELECT * FROM nope; DROP DATABASE ms")
            while cur.nextset():
                pass
            raise AssertionError("expected an error")
        except pymysql.err.ProgrammingError as e:
            assert e.args[0] == 1146, e.args
        # The statement after the error did not run, and the connection is usable.
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone() == (2,)
        cur.execute("DROP DATABASE ms")
        # The OK packet counts the note a no-op DROP leaves; show_warnings() reads it.
        cur.execute("DROP DATABASE IF EXISTS ms")
        assert conn.show_warnings() == (("Note", 1008, "Can't drop database 'ms'; database doesn't exist"),)
        assert cur._result.warning_count == 1
    # The NO_BACKSLASH_ESCAPES status flag tells the client how to escape quotes.
    with conn.cursor() as cur:
        assert conn.escape("it's") == "'it\\'s'"
        cur.execute("SET sql_mode = 'NO_BACKSLASH_ESCAPES'")
        assert conn.escape("it's") == "'it''s'"
        cur.execute("SELECT %s", ("back\\slash's",))
        assert cur.fetchone() == ("back\\slash's",)
        cur.execute("SET sql_mode = DEFAULT")
        assert conn.escape("it's") == "'it\\'s'"
    # COM_PROCESS_KILL (PyMySQL's Connection.kill) ends another connection.
    victim = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
    conn.kill(victim.thread_id())
    try:
        victim.cursor().execute("SELECT 1")
        raise AssertionError("the killed connection still answers")
    except pymysql.err.OperationalError:
        pass
    conn.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
