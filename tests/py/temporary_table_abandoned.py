"""Creates a temporary table with rows, then leaves without COM_QUIT: the process exits at
once, so the server sees the connection drop (tests/e2e/temporary_tables.rs checks the table
and its files are gone). Usage: temporary_table_abandoned.py PORT"""
import os
import sys

import pymysql

conn = pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="root", database="tmp")
cur = conn.cursor()
cur.execute("CREATE TEMPORARY TABLE gone (a INT, b VARCHAR(20))")
cur.execute("INSERT INTO gone VALUES (1, 'one'), (2, 'two')")
cur.execute("SELECT count(*) FROM gone")
assert cur.fetchone()[0] == 2
sys.stdout.flush()
# No COM_QUIT, no close(): the socket goes with the process.
os._exit(0)
