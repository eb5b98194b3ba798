//! Data serving: server-side prepared statements over the binary protocol, SQL-level PREPARE,
//! MySQL-style DDL (AUTO_INCREMENT, PRIMARY KEY, ENGINE, CREATE INDEX), and the short-circuit
//! path for primary-key point queries on Unique tables with a row store.

use crate::harness::{code, exec, rows, s, TestServer};
use mysql_async::prelude::*;
use mysql_async::{Conn, Row, Value};

/// EXPLAIN's plan text, all lines joined.
async fn explain(c: &mut Conn, sql: &str) -> String {
    rows(c, &format!("EXPLAIN {sql}"))
        .await
        .into_iter()
        .map(|r| r.into_iter().flatten().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn prepared_statements_use_the_binary_protocol() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE d").await;
    exec(&mut c, "USE d").await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, tiny TINYINT, small SMALLINT, big BIGINT, f FLOAT, \
         dbl DOUBLE, dec DECIMAL(10,2), day DATE, ts DATETIME(6), name VARCHAR(20), \
         flag BOOLEAN, big_int LARGEINT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 \
         PROPERTIES(\"replication_num\" = \"1\")",
    )
    .await;
    // A prepared INSERT with typed parameters, including text that needs quoting and NULLs.
    let insert = "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    c.exec_drop(
        insert,
        (
            1,
            -5i8,
            300i16,
            9_000_000_000i64,
            1.5f32,
            2.25f64,
            "12.34",
            mysql_async::Value::Date(2024, 2, 29, 0, 0, 0, 0),
            mysql_async::Value::Date(2024, 2, 29, 13, 5, 9, 120),
            "it's \\ \"quoted\"",
            true,
            "170141183460469231731687303715884105727",
        ),
    )
    .await
    .unwrap();
    c.exec_drop(
        insert,
        (
            2,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
            Value::NULL,
        ),
    )
    .await
    .unwrap();

    // Binary result rows: each column decodes to its typed value.
    let row: Row = c
        .exec_first("SELECT * FROM t WHERE id = ?", (1,))
        .await
        .unwrap()
        .expect("row 1");
    assert_eq!(row.get::<i32, _>(0), Some(1));
    assert_eq!(row.get::<i8, _>(1), Some(-5));
    assert_eq!(row.get::<i16, _>(2), Some(300));
    assert_eq!(row.get::<i64, _>(3), Some(9_000_000_000));
    assert_eq!(row.get::<f32, _>(4), Some(1.5));
    assert_eq!(row.get::<f64, _>(5), Some(2.25));
    assert_eq!(row.get::<String, _>(6).as_deref(), Some("12.34"));
    assert_eq!(row.as_ref(7), Some(&Value::Date(2024, 2, 29, 0, 0, 0, 0)));
    assert_eq!(
        row.as_ref(8),
        Some(&Value::Date(2024, 2, 29, 13, 5, 9, 120))
    );
    assert_eq!(
        row.get::<String, _>(9).as_deref(),
        Some("it's \\ \"quoted\"")
    );
    assert_eq!(row.get::<bool, _>(10), Some(true));
    assert_eq!(
        row.get::<String, _>(11).as_deref(),
        Some("170141183460469231731687303715884105727")
    );
    let nulls: Row = c
        .exec_first("SELECT * FROM t WHERE id = ?", (2,))
        .await
        .unwrap()
        .expect("row 2");
    assert_eq!(nulls.as_ref(0), Some(&Value::Int(2)));
    for i in 1..nulls.len() {
        assert_eq!(nulls.as_ref(i), Some(&Value::NULL), "column {i}");
    }

    // Statements can be closed and prepared again; parameter counts are checked.
    let stmt = c
        .prep("SELECT name FROM t WHERE id = ? OR id = ?")
        .await
        .unwrap();
    assert_eq!(stmt.num_params(), 2);
    assert_eq!(stmt.columns().len(), 1);
    let names: Vec<Option<String>> = c.exec(&stmt, (1, 2)).await.unwrap();
    assert_eq!(names.len(), 2);
    c.close(stmt).await.unwrap();
    let again = c
        .prep("SELECT name FROM t WHERE id = ? OR id = ?")
        .await
        .unwrap();
    let names: Vec<Option<String>> = c.exec(&again, (1, 5)).await.unwrap();
    assert_eq!(names, vec![s("it's \\ \"quoted\"")]);

    // A syntax error or unknown table fails at prepare time.
    assert_eq!(code(c.prep("SELEC ?").await.unwrap_err()), 1064);
    assert_eq!(
        code(c.prep("SELECT * FROM nope WHERE a = ?").await.unwrap_err()),
        1146
    );
    // Prepared DDL and SET work too.
    c.exec_drop("SET @x = ?", (7,)).await.unwrap();
    assert_eq!(rows(&mut c, "SELECT @x").await, vec![vec![s("7")]]);
}

#[tokio::test]
async fn reset_connection_forgets_prepared_statements() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    // SQL-level PREPARE/EXECUTE is in tests/sql/serving; here, what only a driver can do.
    exec(&mut c, "PREPARE e FROM 'SELECT 3'").await;
    assert_eq!(rows(&mut c, "EXECUTE e").await, vec![vec![s("3")]]);
    // COM_RESET_CONNECTION forgets them.
    c.reset().await.unwrap();
    assert_eq!(code(c.query_drop("EXECUTE e").await.unwrap_err()), 1243);
}

/// What ORMs bind in the binary protocol: LIMIT/OFFSET as parameters (SQLAlchemy and others
/// bind MySQL's "to the end" count 18446744073709551615 as an unsigned integer) and a LIKE
/// pattern built from a parameter with its own escape character.
#[tokio::test]
async fn bound_limits_and_like_patterns() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE orm").await;
    exec(&mut c, "USE orm").await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, s VARCHAR(20)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO t VALUES (1, 'ab%cd'), (2, 'abxcd'), (3, 'b')",
    )
    .await;
    let ids: Vec<i32> = c
        .exec(
            "SELECT id FROM t ORDER BY id LIMIT ?, ?",
            (1, 18446744073709551615u64),
        )
        .await
        .unwrap();
    assert_eq!(ids, vec![2, 3]);
    let ids: Vec<i32> = c
        .exec("SELECT id FROM t ORDER BY id LIMIT ? OFFSET ?", (1, 2))
        .await
        .unwrap();
    assert_eq!(ids, vec![3]);
    let ids: Vec<i32> = c
        .exec(
            "SELECT id FROM t WHERE s LIKE concat('%', ?, '%') ESCAPE '/' ORDER BY id",
            ("b/%c",),
        )
        .await
        .unwrap();
    assert_eq!(ids, vec![1]);
}

/// The MySQL DDL sysbench uses: AUTO_INCREMENT ids, PRIMARY KEY, ENGINE, CREATE INDEX, and
/// transactions that are accepted (each statement stays atomic).
#[tokio::test]
async fn mysql_style_tables_with_auto_increment() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sb").await;
    exec(&mut c, "USE sb").await;
    exec(
        &mut c,
        "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) \
         /*! ENGINE = innodb */",
    )
    .await;
    exec(&mut c, "BEGIN").await;
    let result = c
        .query_iter(
            "INSERT INTO sbtest1(k, c, pad) VALUES (10, 'a', 'x'), (20, 'b', 'y'), (30, 'c', 'z')",
        )
        .await
        .unwrap();
    assert_eq!(result.affected_rows(), 3);
    assert_eq!(result.last_insert_id(), Some(1));
    drop(result);
    exec(&mut c, "COMMIT").await;
    assert_eq!(
        rows(&mut c, "SELECT LAST_INSERT_ID()").await,
        vec![vec![s("1")]]
    );
    exec(&mut c, "CREATE INDEX k_1 ON sbtest1(k)").await;
    // MySQL's error for an index on a column the table lacks: 1072 (Key column doesn't exist).
    assert_eq!(
        code(
            c.query_drop("CREATE INDEX k_2 ON sbtest1(nope)")
                .await
                .unwrap_err()
        ),
        1072
    );
    // An explicit id moves the counter past it; 0 and NULL generate.
    exec(&mut c, "INSERT INTO sbtest1(id, k) VALUES (100, 1)").await;
    exec(
        &mut c,
        "INSERT INTO sbtest1(id, k) VALUES (0, 2), (NULL, 3)",
    )
    .await;
    assert_eq!(
        rows(&mut c, "SELECT LAST_INSERT_ID()").await,
        vec![vec![s("101")]]
    );
    assert_eq!(
        rows(&mut c, "SELECT id, k FROM sbtest1 ORDER BY id").await,
        vec![
            vec![s("1"), s("10")],
            vec![s("2"), s("20")],
            vec![s("3"), s("30")],
            vec![s("100"), s("1")],
            vec![s("101"), s("2")],
            vec![s("102"), s("3")],
        ]
    );
    // Reserved values are never handed out again after a restart.
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE sb").await;
    exec(&mut c, "INSERT INTO sbtest1(k) VALUES (4)").await;
    let ids = rows(&mut c, "SELECT id FROM sbtest1 WHERE k = 4").await;
    let id: i64 = ids[0][0].as_deref().unwrap().parse().unwrap();
    assert!(id > 102, "id {id} after restart");
    exec(&mut c, "START TRANSACTION").await;
    exec(&mut c, "ROLLBACK").await;
}

#[tokio::test]
async fn point_queries_take_the_short_circuit_path() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE d").await;
    exec(&mut c, "USE d").await;
    exec(
        &mut c,
        "CREATE TABLE users (id BIGINT NOT NULL AUTO_INCREMENT, name VARCHAR(20), \
         score DOUBLE, born DATE, PRIMARY KEY (id)) ENGINE=InnoDB",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO users (name, score, born) VALUES ('ann', 1.5, '1990-01-02'), \
         ('bob', NULL, NULL), ('cy', 3.0, '2000-12-31')",
    )
    .await;
    let plan = explain(&mut c, "SELECT name FROM users WHERE id = 2").await;
    assert!(plan.contains("SHORT-CIRCUIT"), "{plan}");
    // Not point queries: a range, a non-key filter, an aggregate.
    for q in [
        "SELECT name FROM users WHERE id > 2",
        "SELECT name FROM users WHERE id = 2 AND score > 1",
        "SELECT COUNT(*) FROM users WHERE id = 2",
    ] {
        let plan = explain(&mut c, q).await;
        assert!(!plan.contains("SHORT-CIRCUIT"), "{q}: {plan}");
    }

    // Text protocol, prepared, and with the short-circuit off: the same answers.
    let expect_bob = vec![vec![s("2"), s("bob"), None, None]];
    assert_eq!(
        rows(&mut c, "SELECT * FROM users WHERE id = 2").await,
        expect_bob
    );
    let row: Row = c
        .exec_first("SELECT id, name, score, born FROM users WHERE id = ?", (1,))
        .await
        .unwrap()
        .expect("row 1");
    assert_eq!(
        row.unwrap(),
        vec![
            Value::Int(1),
            Value::Bytes(b"ann".to_vec()),
            Value::Double(1.5),
            Value::Date(1990, 1, 2, 0, 0, 0, 0)
        ]
    );
    // A missing key returns no row; a key of the wrong kind goes the general way.
    let none: Option<(i64,)> = c
        .exec_first("SELECT id FROM users WHERE id = ?", (42,))
        .await
        .unwrap();
    assert_eq!(none, None);
    let by_text: Vec<(String,)> = c
        .exec("SELECT name FROM users WHERE id = ?", ("3",))
        .await
        .unwrap();
    assert_eq!(by_text, vec![("cy".to_string(),)]);
    assert_eq!(
        rows(
            &mut c,
            "SELECT u.name AS n FROM users u WHERE u.id IN (3, 1, 3, 99) ORDER BY n"
        )
        .await,
        vec![vec![s("ann")], vec![s("cy")]]
    );
    exec(&mut c, "SET enable_short_circuit_query = 0").await;
    assert_eq!(
        rows(&mut c, "SELECT * FROM users WHERE id = 2").await,
        expect_bob
    );
    let plan = explain(&mut c, "SELECT name FROM users WHERE id = 2").await;
    assert!(!plan.contains("SHORT-CIRCUIT"), "{plan}");
    exec(&mut c, "SET enable_short_circuit_query = 1").await;

    // New loads replace rows: the lookup (and its cache) sees the new value at once.
    let stmt = c.prep("SELECT name FROM users WHERE id = ?").await.unwrap();
    let before: Option<String> = c.exec_first(&stmt, (2,)).await.unwrap();
    assert_eq!(before.as_deref(), Some("bob"));
    exec(&mut c, "INSERT INTO users (id, name) VALUES (2, 'bobby')").await;
    let after: Option<String> = c.exec_first(&stmt, (2,)).await.unwrap();
    assert_eq!(after.as_deref(), Some("bobby"));

    // After a restart the index is rebuilt and rows come from the row store.
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE d").await;
    let name: Option<String> = c
        .exec_first("SELECT name FROM users WHERE id = ?", (2,))
        .await
        .unwrap();
    assert_eq!(name.as_deref(), Some("bobby"));
    assert_eq!(
        rows(&mut c, "SELECT name, born FROM users WHERE id = 3").await,
        vec![vec![s("cy"), s("2000-12-31")]]
    );
}

#[tokio::test]
async fn composite_keys_on_a_partitioned_table() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE d").await;
    exec(&mut c, "USE d").await;
    exec(
        &mut c,
        "CREATE TABLE ev (day DATE NOT NULL, user_id VARCHAR(32) NOT NULL, v INT) \
         UNIQUE KEY(day, user_id) \
         PARTITION BY RANGE(day) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), \
                                  PARTITION p2 VALUES LESS THAN ('2024-03-01')) \
         DISTRIBUTED BY HASH(user_id) BUCKETS 4 \
         PROPERTIES (\"replication_num\" = \"1\", \"store_row_column\" = \"true\", \
                     \"enable_unique_key_merge_on_write\" = \"true\")",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO ev VALUES ('2024-01-05', 'u1', 1), ('2024-02-05', 'u1', 2), \
         ('2024-02-05', 'u2', 3)",
    )
    .await;
    let q = "SELECT v FROM ev WHERE user_id = 'u1' AND day = '2024-02-05'";
    let plan = explain(&mut c, q).await;
    assert!(plan.contains("SHORT-CIRCUIT"), "{plan}");
    assert_eq!(rows(&mut c, q).await, vec![vec![s("2")]]);
    let got: Vec<(i32,)> = c
        .exec(
            "SELECT v FROM ev WHERE day = ? AND user_id = ?",
            (Value::Date(2024, 1, 5, 0, 0, 0, 0), "u1"),
        )
        .await
        .unwrap();
    assert_eq!(got, vec![(1,)]);
    // A day in no partition, and a key fixed only in part, find nothing / go the general way.
    let none: Vec<(i32,)> = c
        .exec(
            "SELECT v FROM ev WHERE day = ? AND user_id = ?",
            ("2030-01-01", "u1"),
        )
        .await
        .unwrap();
    assert!(none.is_empty());
    let partial = "SELECT v FROM ev WHERE user_id = 'u2'";
    assert!(!explain(&mut c, partial).await.contains("SHORT-CIRCUIT"));
    assert_eq!(rows(&mut c, partial).await, vec![vec![s("3")]]);
}

/// `(id, name, n)` of every row, by id.
async fn kv_rows(c: &mut Conn) -> Vec<(i32, String, Option<i32>)> {
    c.query("SELECT id, name, n FROM kv ORDER BY id")
        .await
        .unwrap()
}

#[tokio::test]
async fn delete_and_update_on_unique_tables() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE d").await;
    exec(&mut c, "USE d").await;
    exec(
        &mut c,
        "CREATE TABLE kv (id INT NOT NULL, name VARCHAR(10) NOT NULL, n INT, \
         PRIMARY KEY (id)) ENGINE=InnoDB",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO kv VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'd', 40), \
         (5, 'e', 50), (6, 'f', NULL)",
    )
    .await;
    // Warm the row cache for a key that is about to change.
    let point = c.prep("SELECT name, n FROM kv WHERE id = ?").await.unwrap();
    let two: Option<(String, i32)> = c.exec_first(&point, (2,)).await.unwrap();
    assert_eq!(two, Some(("b".to_string(), 20)));

    // DELETE by key, by a general predicate, and through a prepared statement.
    c.query_drop("DELETE FROM kv WHERE id = 2").await.unwrap();
    assert_eq!(c.affected_rows(), 1);
    let gone: Option<(String, i32)> = c.exec_first(&point, (2,)).await.unwrap();
    assert_eq!(gone, None);
    c.query_drop("DELETE FROM kv WHERE n >= 40 AND name <> 'e'")
        .await
        .unwrap();
    assert_eq!(c.affected_rows(), 1, "only row 4 matches");
    c.exec_drop("DELETE FROM kv WHERE id = ?", (42,))
        .await
        .unwrap();
    assert_eq!(c.affected_rows(), 0, "a missing key deletes nothing");
    assert_eq!(
        kv_rows(&mut c).await,
        vec![
            (1, "a".into(), Some(10)),
            (3, "c".into(), Some(30)),
            (5, "e".into(), Some(50)),
            (6, "f".into(), None)
        ]
    );

    // UPDATE with expressions over the old row, IN lists, ORDER BY + LIMIT, and prepared.
    c.query_drop("UPDATE kv SET n = n + 1, name = CONCAT(name, '!') WHERE id IN (1, 3)")
        .await
        .unwrap();
    assert_eq!(c.affected_rows(), 2);
    assert!(c.info().contains("Rows matched: 2"), "info: {}", c.info());
    let one: Option<(String, i32)> = c.exec_first(&point, (1,)).await.unwrap();
    assert_eq!(one, Some(("a!".to_string(), 11)));
    c.query_drop("UPDATE kv SET n = 0 WHERE n IS NOT NULL ORDER BY id DESC LIMIT 1")
        .await
        .unwrap();
    assert_eq!(c.affected_rows(), 1);
    c.exec_drop("UPDATE kv SET name = ? WHERE id = ?", ("z", 6))
        .await
        .unwrap();
    let expected = vec![
        (1, "a!".to_string(), Some(11)),
        (3, "c!".to_string(), Some(31)),
        (5, "e".to_string(), Some(0)),
        (6, "z".to_string(), None),
    ];
    assert_eq!(kv_rows(&mut c).await, expected);

    // Errors of DELETE and UPDATE are in tests/sql/dml; here, the point path, compaction,
    // durability and concurrency.
    // Many small changes compact into one rowset; the point path and scans still agree.
    for i in 0..6 {
        c.exec_drop("UPDATE kv SET n = ? WHERE id = 6", (i,))
            .await
            .unwrap();
    }
    crate::harness::wait_for_compaction(&mut c, "kv", 1, std::time::Duration::from_secs(60)).await;
    let six: Option<(String, i32)> = c.exec_first(&point, (6,)).await.unwrap();
    assert_eq!(six, Some(("z".to_string(), 5)));
    c.query_drop("DELETE FROM kv WHERE id = 6").await.unwrap();

    // Deletes and updates are durable: after kill -9 the same rows come back.
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE d").await;
    assert_eq!(kv_rows(&mut c).await, expected[..3].to_vec());
    let gone: Option<(String, i32)> = c
        .exec_first("SELECT name, n FROM kv WHERE id = ?", (6,))
        .await
        .unwrap();
    assert_eq!(gone, None);
    // DELETE without WHERE empties the table.
    c.query_drop("DELETE FROM kv").await.unwrap();
    assert_eq!(c.affected_rows(), 3);
    assert!(kv_rows(&mut c).await.is_empty());

    // UPDATEs of one table from several sessions do not lose each other's changes.
    exec(&mut c, "INSERT INTO kv VALUES (1, 'a', 0)").await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let mut conn = server.connect().await;
        sessions.push(tokio::spawn(async move {
            for _ in 0..10 {
                conn.query_drop("UPDATE d.kv SET n = n + 1 WHERE id = 1")
                    .await
                    .unwrap();
            }
        }));
    }
    for s in sessions {
        s.await.unwrap();
    }
    assert_eq!(kv_rows(&mut c).await, vec![(1, "a".to_string(), Some(30))]);
}

#[tokio::test]
async fn unsigned_columns_over_the_binary_protocol_and_a_restart() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE u").await;
    exec(&mut c, "USE u").await;
    exec(
        &mut c,
        "CREATE TABLE kv (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, tiny TINYINT UNSIGNED, \
         small SMALLINT UNSIGNED, word INT UNSIGNED) \
         PROPERTIES (\"store_row_column\" = \"true\")",
    )
    .await;
    // Typed parameters over the binary protocol, the largest of each type among them.
    let insert = "INSERT INTO kv VALUES (?, ?, ?, ?)";
    c.exec_drop(insert, (u64::MAX, u8::MAX, u16::MAX, u32::MAX))
        .await
        .unwrap();
    c.exec_drop(insert, (7u64, 0u8, 1u16, 2u32)).await.unwrap();
    // A negative parameter is out of an unsigned column's range: MySQL's 1264.
    let refused = c.exec_drop(insert, (8u64, -1i8, 1u16, 2u32)).await;
    assert_eq!(code(refused.unwrap_err()), 1264);

    let point = "SELECT id, tiny, small, word FROM kv WHERE id = ?";
    assert!(
        explain(&mut c, "SELECT id FROM kv WHERE id = 18446744073709551615")
            .await
            .contains("SHORT-CIRCUIT")
    );
    for _ in 0..2 {
        // Binary result rows carry MySQL's UNSIGNED flag, so the values decode as unsigned.
        let row: Row = c
            .exec_first(point, (u64::MAX,))
            .await
            .unwrap()
            .expect("row");
        for column in row.columns_ref() {
            assert!(
                column
                    .flags()
                    .contains(mysql_async::consts::ColumnFlags::UNSIGNED_FLAG),
                "{column:?}"
            );
        }
        assert_eq!(row.as_ref(0), Some(&Value::UInt(u64::MAX)));
        assert_eq!(row.get::<u8, _>(1), Some(u8::MAX));
        assert_eq!(row.get::<u16, _>(2), Some(u16::MAX));
        assert_eq!(row.get::<u32, _>(3), Some(u32::MAX));
        let seven: Option<(u64, u8, u16, u32)> = c.exec_first(point, (7u64,)).await.unwrap();
        assert_eq!(seven, Some((7, 0, 1, 2)));
        // The text protocol gives the same values; the table survives a restart unchanged.
        let text: Vec<(u64, u32)> = c
            .query("SELECT id, word FROM kv ORDER BY id")
            .await
            .unwrap();
        assert_eq!(text, vec![(7, 2), (u64::MAX, u32::MAX)]);
        drop(c);
        server.restart().await;
        c = server.connect().await;
        exec(&mut c, "USE u").await;
    }
}
