"""Stored procedures through PyMySQL: a CALL's several result sets (read with nextset()),
callproc's user variables, SHOW CREATE PROCEDURE / SHOW PROCEDURE STATUS, a body sent with
other statements in one multi-statement text, an error after a result set, and privileges.

Usage: python3 procedures.py PORT   (exits non-zero with a message on the first failure)
"""
import sys

import pymysql
from pymysql.constants import CLIENT


def connect(port, **kw):
    kw.setdefault("user", "root")
    return pymysql.connect(host="127.0.0.1", port=port, password=kw.pop("password", ""),
                           autocommit=True, **kw)


def expect_error(cur, sql, code):
    try:
        cur.execute(sql)
    except pymysql.err.MySQLError as e:
        assert e.args[0] == code, (sql, e.args)
        return
    raise AssertionError(f"expected error {code}: {sql}")


def main(port: int) -> None:
    conn = connect(port, client_flag=CLIENT.MULTI_STATEMENTS)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS pysp")
    conn.select_db("pysp")
    cur.execute("CREATE TABLE booze (name VARCHAR(20)) DISTRIBUTED BY HASH(name) BUCKETS 1")
    cur.execute("INSERT INTO booze VALUES ('a'), ('b'), ('c')")
    # One multi-statement text: the body's `;` do not end the CREATE.
    cur.execute("""
        CREATE PROCEDURE two(IN prefix VARCHAR(5))
        BEGIN
            SELECT COUNT(*) FROM booze;
            SELECT CONCAT(prefix, name) AS n FROM booze ORDER BY name;
        END;
        SELECT 'after'""")
    assert not cur.fetchall(), "the CREATE has no rows"
    assert cur.nextset()
    assert cur.fetchall() == (("after",),)
    assert not cur.nextset()

    # callproc: SET @_two_0 = 'x-', then CALL two(@_two_0); two result sets, then the CALL's OK.
    cur.callproc("two", ("x-",))
    assert cur.fetchall() == ((3,),)
    assert cur.nextset()
    assert [d[0] for d in cur.description] == ["n"], cur.description
    assert cur.fetchall() == (("x-a",), ("x-b",), ("x-c",))
    assert cur.nextset()  # the CALL's own (empty) result
    assert not cur.fetchall()
    assert not cur.nextset()
    cur.execute("SELECT @_two_0")
    assert cur.fetchone() == ("x-",)

    # The connection is in step after a CALL (PyMySQL issue 95).
    cur.execute("CALL two('y')")
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)

    # DML only: no result set, the affected rows of the last statement.
    cur.execute("CREATE PROCEDURE add_two() BEGIN INSERT INTO booze VALUES ('d'); "
                "INSERT INTO booze VALUES ('e'), ('f'); END")
    assert cur.execute("CALL add_two()") == 2
    assert cur.description is None

    # A failing statement after a result set: the result set, then the error.
    cur.execute("CREATE PROCEDURE fails() BEGIN SELECT 1; SELECT * FROM no_such_table; END")
    cur.execute("CALL fails()")
    assert cur.fetchall() == ((1,),)
    try:
        cur.nextset()
        raise AssertionError("expected the CALL's error")
    except pymysql.err.ProgrammingError as e:
        assert e.args[0] == 1146, e.args
    cur.execute("SELECT 2")
    assert cur.fetchone() == (2,)

    cur.execute("SHOW CREATE PROCEDURE two")
    name, sql_mode, text, *_ = cur.fetchone()
    assert name == "two"
    assert text.startswith("CREATE DEFINER=`root`@`") and "PROCEDURE `two`(IN prefix VARCHAR(5))\nBEGIN" in text, text
    assert text.endswith("END"), text
    cur.execute("SHOW PROCEDURE STATUS WHERE Db = 'pysp'")
    assert [d[0] for d in cur.description][:3] == ["Db", "Name", "Type"]
    assert sorted(r[1] for r in cur.fetchall()) == ["add_two", "fails", "two"]
    cur.execute("SHOW PROCEDURE STATUS LIKE 'tw%'")
    assert [r[1] for r in cur.fetchall()] == ["two"]

    # Privileges: CALL needs a privilege on the database; the body runs with its definer's
    # (SQL SECURITY DEFINER, the default) or the caller's (SQL SECURITY INVOKER).
    cur.execute("CREATE PROCEDURE add_invoker() SQL SECURITY INVOKER "
                "INSERT INTO booze VALUES ('i')")
    cur.execute("SHOW CREATE PROCEDURE add_invoker")
    assert "SQL SECURITY INVOKER" in cur.fetchone()[2]
    cur.execute("SELECT security_type, definer FROM information_schema.routines "
                "WHERE routine_schema = 'pysp' AND routine_name IN ('add_two', 'add_invoker') "
                "ORDER BY routine_name")
    assert cur.fetchall() == (("INVOKER", "root@%"), ("DEFINER", "root@%")), "routines"
    cur.execute("DROP USER IF EXISTS 'sp_user'@'%'")
    cur.execute("CREATE USER 'sp_user'@'%' IDENTIFIED BY 'pw'")
    other = connect(port, user="sp_user", password="pw")
    ocur = other.cursor()
    expect_error(ocur, "CALL pysp.two('z')", 1044)
    cur.execute("GRANT SELECT ON pysp.* TO 'sp_user'@'%'")
    ocur.execute("CALL pysp.two('z')")
    assert ocur.fetchall() == ((6,),)
    while ocur.nextset():
        pass
    # add_two is root's (DEFINER): it inserts for sp_user, who may only SELECT.
    assert ocur.execute("CALL pysp.add_two()") == 2
    expect_error(ocur, "CALL pysp.add_invoker()", 1142)
    ocur.execute("SELECT COUNT(*) FROM pysp.booze WHERE name = 'd'")
    assert ocur.fetchone() == (2,)
    # Only an administrator names another definer (MySQL's SET_USER_ID).
    cur.execute("GRANT CREATE ON pysp.* TO 'sp_user'@'%'")
    expect_error(ocur, "CREATE DEFINER = 'root'@'%' PROCEDURE pysp.mine() SELECT 1", 1227)
    ocur.execute("CREATE PROCEDURE pysp.mine() INSERT INTO booze VALUES ('m')")
    # sp_user's procedure runs with sp_user's rights, also for root.
    expect_error(cur, "CALL pysp.mine()", 1142)
    cur.execute("DROP PROCEDURE pysp.mine")
    expect_error(ocur, "DROP PROCEDURE pysp.two", 1044)
    other.close()
    cur.execute("DROP USER 'sp_user'@'%'")

    cur.execute("DROP DATABASE pysp")
    conn.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
    print("ok")
