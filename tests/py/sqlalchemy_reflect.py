"""SQLAlchemy's MySQL reflection against Basalt: columns, primary keys and indexes of tables of
every key model, with SQLAlchemy's warnings (e.g. "Unknown schema content") made errors.

Usage: sqlalchemy_reflect.py PORT
"""
import sys
import warnings

import sqlalchemy as sa

warnings.simplefilter("error")

port = int(sys.argv[1])
root = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{port}/")
with root.connect() as c:
    c.exec_driver_sql("CREATE DATABASE reflect")
engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{port}/reflect")
with engine.connect() as c:
    c.exec_driver_sql(
        "CREATE TABLE users (id INT NOT NULL, email VARCHAR(80) NOT NULL COMMENT 'login', "
        "score DECIMAL(10, 2) DEFAULT '0', PRIMARY KEY (id))")
    c.exec_driver_sql(
        "CREATE TABLE logs (ts DATETIME, host VARCHAR(20), msg STRING) DUPLICATE KEY(ts, host) "
        "DISTRIBUTED BY HASH(host) BUCKETS 2")
    c.exec_driver_sql(
        "CREATE TABLE daily (day DATE, site VARCHAR(10), hits BIGINT SUM) AGGREGATE KEY(day, site) "
        "PARTITION BY RANGE(day) (PARTITION p1 VALUES LESS THAN ('2024-01-01')) "
        "DISTRIBUTED BY HASH(site) BUCKETS 1")
    c.exec_driver_sql(
        "CREATE TABLE uniq (k BIGINT, v VARCHAR(5)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")

inspector = sa.inspect(engine)
assert sorted(inspector.get_table_names()) == ["daily", "logs", "uniq", "users"], inspector.get_table_names()

cols = {c["name"]: c for c in inspector.get_columns("users")}
assert list(cols) == ["id", "email", "score"], list(cols)
assert isinstance(cols["id"]["type"], sa.types.Integer) and not cols["id"]["nullable"]
assert cols["email"]["type"].length == 80 and cols["email"]["comment"] == "login", cols["email"]
assert cols["score"]["type"].precision == 10 and cols["score"]["type"].scale == 2
assert cols["score"]["default"] == "'0'", cols["score"]["default"]
assert inspector.get_pk_constraint("users")["constrained_columns"] == ["id"]
assert inspector.get_pk_constraint("uniq")["constrained_columns"] == ["k"]
assert inspector.get_pk_constraint("logs")["constrained_columns"] == []
assert inspector.get_pk_constraint("daily")["constrained_columns"] == []
assert [c["name"] for c in inspector.get_columns("daily")] == ["day", "site", "hits"]
assert [c["name"] for c in inspector.get_columns("logs")] == ["ts", "host", "msg"]
assert inspector.get_foreign_keys("users") == []
assert inspector.get_table_comment("users")["text"] is None

# Reflected tables are usable through SQLAlchemy Core.
meta = sa.MetaData()
users = sa.Table("users", meta, autoload_with=engine)
with engine.begin() as c:
    c.execute(users.insert(), [{"id": 1, "email": "a@x", "score": 1.5}])
    c.execute(users.insert(), [{"id": 2, "email": "b@x"}])
with engine.connect() as c:
    rows = c.execute(sa.select(users.c.id, users.c.score).order_by(users.c.id)).all()
assert [(r[0], float(r[1])) for r in rows] == [(1, 1.5), (2, 0.0)], rows
print("ok")
