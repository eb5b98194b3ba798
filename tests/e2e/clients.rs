//! Other real clients against the real server: PyMySQL and Debian's `mysql` (MariaDB) CLI.
//! Both must be installed (`.ci/run` installs them); a missing client fails the test.

use crate::harness::*;
use std::process::Command;

#[tokio::test]
async fn pymysql_works() {
    let server = TestServer::start().await;
    run_python_script(
        "clients_smoke.py",
        server.mysql_port,
        "PyMySQL smoke test failed (pip install pymysql)",
    );
}

/// BIT columns reach PyMySQL as MySQL's BIT type with big-endian bytes, and VARCHAR(n) holds n
/// characters of several bytes (tests/py/bit_columns.py).
#[tokio::test]
async fn pymysql_reads_bit_columns_as_bytes() {
    let server = TestServer::start().await;
    run_python_script(
        "bit_columns.py",
        server.mysql_port,
        "BIT columns through PyMySQL",
    );
}

/// SERVER_STATUS_IN_TRANS and SERVER_STATUS_AUTOCOMMIT as PyMySQL reads them after BEGIN,
/// COMMIT, ROLLBACK, `SET autocommit`, writes with autocommit off and DDL
/// (tests/py/transaction_flags.py).
#[tokio::test]
async fn pymysql_sees_transaction_flags() {
    let server = TestServer::start().await;
    run_python_script(
        "transaction_flags.py",
        server.mysql_port,
        "transaction flags through PyMySQL",
    );
}

#[tokio::test]
async fn mariadb_cli_works() {
    let server = TestServer::start().await;
    let run = |sql: &str| {
        Command::new("mysql")
            .args(["-h127.0.0.1", "-uroot", "--batch", "--skip-column-names"])
            .arg(format!("-P{}", server.mysql_port))
            .args(["-e", sql])
            .output()
            .expect("the mysql client must be installed (apt-get install mariadb-client)")
    };
    let out = run("CREATE DATABASE cli; USE cli; CREATE TABLE t (a INT, b VARCHAR(5)) DISTRIBUTED BY HASH(a) BUCKETS 1; \
                   INSERT INTO t VALUES (1, 'x'), (2, NULL); SELECT a, b FROM t ORDER BY a;");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\tx\n2\tNULL\n");
    // The interactive client's database switch sends COM_INIT_DB and COM_FIELD_LIST.
    let out = Command::new("mysql")
        .args([
            "-h127.0.0.1",
            "-uroot",
            "--batch",
            "--skip-column-names",
            "cli",
        ])
        .arg(format!("-P{}", server.mysql_port))
        .args(["-e", "SELECT COUNT(*) FROM t"])
        .output()
        .expect("mysql client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
    let out = run("SELEC 1");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1064") && err.contains("near 'SELEC 1'"),
        "{err}"
    );
}

#[tokio::test]
async fn idle_connections_close_after_wait_timeout() {
    use mysql_async::prelude::*;
    let server = TestServer::start().await;
    let mut idle = server.connect().await;
    idle.query_drop("SET wait_timeout = 1").await.expect("set");
    let mut busy = server.connect().await;
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    // The server sent error 4031 and closed it; the driver sees the connection gone.
    idle.query_drop("SELECT 1")
        .await
        .expect_err("the idle connection was closed");
    // Other sessions keep the default (8 hours).
    let one: Option<i64> = busy.query_first("SELECT 1").await.expect("busy connection");
    assert_eq!(one, Some(1));
    let limit: Option<i64> = busy
        .query_first("SELECT @@wait_timeout")
        .await
        .expect("wait_timeout");
    assert_eq!(limit, Some(28800));
}

#[tokio::test]
async fn sleep_is_a_timer_ended_by_the_time_limit() {
    use mysql_async::prelude::*;
    let server = TestServer::start().await;
    let mut conn = server.connect().await;
    conn.query_drop("SET max_execution_time = 300")
        .await
        .expect("set");
    let started = std::time::Instant::now();
    let err = conn
        .query_drop("SELECT sleep(30)")
        .await
        .expect_err("the time limit ends it");
    assert_eq!(code(err), 3024);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Two sessions sleeping at once on a 2-core machine: each pause is a timer, not a thread.
    let (mut a, mut b) = (server.connect().await, server.connect().await);
    let started = std::time::Instant::now();
    let (x, y) = tokio::join!(
        a.query_first::<i64, _>("SELECT sleep(1)"),
        b.query_first::<i64, _>("SELECT sleep(1)")
    );
    assert_eq!((x.expect("a"), y.expect("b")), (Some(0), Some(0)));
    assert!(started.elapsed() < std::time::Duration::from_millis(1900));
}

/// The schema, table (as the query names it), stored table and stored column of each result
/// column, as a client reads them from the column definitions.
async fn column_origins(conn: &mut mysql_async::Conn, sql: &str) -> Vec<String> {
    use mysql_async::prelude::*;
    let result = conn.query_iter(sql).await.expect(sql);
    let described = result
        .columns()
        .expect("a result set")
        .iter()
        .map(|c| {
            format!(
                "{}.{}({}).{}({})",
                c.schema_str(),
                c.table_str(),
                c.org_table_str(),
                c.name_str(),
                c.org_name_str()
            )
        })
        .collect();
    result.drop_result().await.expect(sql);
    described
}

/// Result columns read from a table say where they come from (schema, table alias, org_table,
/// org_name), as in MySQL: PyMySQL's DictCursor keys a join's second `value` column `b.value`
/// by it, JDBC's getTableName reads it. Computed columns name no table.
#[tokio::test]
async fn result_columns_report_the_table_they_come_from() {
    let server = TestServer::start().await;
    check_column_origins(server.connect().await).await;
}

/// The same through a frontend whose backends run the scans.
#[tokio::test]
async fn result_columns_report_the_table_they_come_from_on_a_cluster() {
    let cluster = crate::cluster_harness::Cluster::start(2);
    check_column_origins(cluster.connect().await).await;
}

async fn check_column_origins(mut conn: mysql_async::Conn) {
    use mysql_async::prelude::*;
    for sql in [
        "CREATE DATABASE origins",
        "USE origins",
        "CREATE TABLE a (id INT, `Value` INT) DISTRIBUTED BY HASH(id) BUCKETS 1",
        "CREATE TABLE b (id INT NOT NULL, value INT) UNIQUE KEY(id) \
         DISTRIBUTED BY HASH(id) BUCKETS 1",
        "INSERT INTO a VALUES (1, 11)",
        "INSERT INTO b VALUES (1, 22)",
    ] {
        conn.query_drop(sql).await.expect(sql);
    }
    assert_eq!(
        column_origins(&mut conn, "SELECT * FROM a JOIN b ON a.id = b.id").await,
        [
            "origins.a(a).id(id)",
            "origins.a(a).Value(Value)",
            "origins.b(b).id(id)",
            "origins.b(b).value(value)"
        ]
    );
    // An alias of the table and of the column; an expression; a derived table; GROUP BY.
    assert_eq!(
        column_origins(
            &mut conn,
            "SELECT x.value AS v, y.id + 1 AS next, y.id FROM a x JOIN origins.b y ON x.id = y.id"
        )
        .await,
        [
            "origins.x(a).v(Value)",
            ".().next(next)",
            "origins.y(b).id(id)"
        ]
    );
    assert_eq!(
        column_origins(
            &mut conn,
            "SELECT d.id FROM (SELECT id FROM a) d ORDER BY 1 LIMIT 5"
        )
        .await,
        ["origins.d(d).id(id)"]
    );
    assert_eq!(
        column_origins(&mut conn, "SELECT id, count(*) AS n FROM a GROUP BY id").await,
        ["origins.a(a).id(id)", ".().n(n)"]
    );
    // A string literal is named by its text, as in MySQL (`SELECT 'lit'` is `lit`).
    assert_eq!(
        column_origins(&mut conn, "SELECT 'lit', \"dq\", 7 FROM a").await,
        [".().lit(lit)", ".().dq(dq)", ".().7(7)"]
    );
    // Names written twice beside a wildcard, and expressions around it, keep the names MySQL
    // gives them (internal names and DataFusion's renderings were shown).
    assert_eq!(
        column_origins(&mut conn, "SELECT a.id, id, a.*, id * 2 FROM a").await,
        [
            "origins.a(a).id(id)",
            "origins.a(a).id(id)",
            "origins.a(a).id(id)",
            "origins.a(a).Value(Value)",
            ".().id * 2(id * 2)"
        ]
    );
    assert_eq!(
        column_origins(&mut conn, "SELECT a.id, * FROM a FULL JOIN b USING (id)").await,
        [
            "origins.a(a).id(id)",
            ".().id(id)",
            "origins.a(a).Value(Value)",
            "origins.b(b).value(value)"
        ]
    );
    // A table's columns asked for twice through wildcards.
    assert_eq!(
        column_origins(&mut conn, "SELECT *, a.* FROM a").await,
        [
            "origins.a(a).id(id)",
            "origins.a(a).Value(Value)",
            "origins.a(a).id(id)",
            "origins.a(a).Value(Value)"
        ]
    );
    // A key lookup of a UNIQUE KEY table, and a prepared statement's columns.
    assert_eq!(
        column_origins(&mut conn, "SELECT value AS w FROM b WHERE id = 1").await,
        ["origins.b(b).w(value)"]
    );
    let stmt = conn
        .prep("SELECT x.id FROM a x WHERE x.value = ?")
        .await
        .expect("prepare");
    let described: Vec<String> = stmt
        .columns()
        .iter()
        .map(|c| {
            format!(
                "{}.{}({})",
                c.schema_str(),
                c.table_str(),
                c.org_table_str()
            )
        })
        .collect();
    assert_eq!(described, ["origins.x(a)"]);
}
