//! Privileges through real logins: what an account without grants cannot do (read, write,
//! drop, see, load, read files), GRANT/REVOKE at each level with MySQL's and Doris's names,
//! roles and SET ROLE, SHOW GRANTS, durability across kill -9, and the delay after repeated
//! failed logins.

use crate::harness::{code, exec, rows, s, TestServer};
use mysql_async::prelude::*;
use mysql_async::Conn;
use std::time::{Duration, Instant};

/// The error code and message of a statement that must fail.
async fn refused(c: &mut Conn, sql: &str) -> (u16, String) {
    match c.query_drop(sql).await {
        Err(mysql_async::Error::Server(e)) => (e.code, e.message),
        other => panic!("{sql}: expected an error, got {other:?}"),
    }
}

async fn setup(root: &mut Conn) {
    for sql in [
        "CREATE DATABASE secret",
        "CREATE TABLE secret.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
        "CREATE TABLE secret.kv (k INT NOT NULL, v INT) UNIQUE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES (\"store_row_column\" = \"true\")",
        "INSERT INTO secret.t VALUES (1, 10), (2, 20)",
        "INSERT INTO secret.kv VALUES (1, 100)",
        "CREATE DATABASE other",
        "CREATE TABLE other.o (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
    ] {
        exec(root, sql).await;
    }
}

#[tokio::test]
async fn accounts_without_grants_can_do_nothing_to_others_data() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    setup(&mut root).await;
    let mut u = Conn::new(server.opts("u", Some("pw"), None)).await.unwrap();
    let denied = [
        ("SELECT * FROM secret.t", 1142, "SELECT command denied"),
        (
            "SELECT v FROM secret.kv WHERE k = 1",
            1142,
            "SELECT command denied",
        ),
        (
            "SELECT 1 FROM other.o WHERE EXISTS (SELECT 1 FROM secret.t)",
            1142,
            "SELECT",
        ),
        (
            "INSERT INTO secret.t VALUES (9, 9)",
            1142,
            "INSERT command denied",
        ),
        (
            "UPDATE secret.kv SET v = 0 WHERE k = 1",
            1142,
            "INSERT command denied",
        ),
        (
            "DELETE FROM secret.t WHERE k = 1",
            1142,
            "INSERT command denied",
        ),
        ("TRUNCATE TABLE secret.t", 1142, "DROP command denied"),
        ("DROP TABLE secret.t", 1142, "DROP command denied"),
        ("DROP DATABASE secret", 1044, "to database 'secret'"),
        ("CREATE DATABASE mine", 1044, "to database 'mine'"),
        (
            "CREATE TABLE secret.n (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1",
            1142,
            "CREATE",
        ),
        (
            "ALTER TABLE secret.t ADD PARTITION p VALUES LESS THAN ('1')",
            1142,
            "ALTER",
        ),
        ("DESCRIBE secret.t", 1142, "secret.t"),
        ("SHOW CREATE TABLE secret.t", 1142, "secret.t"),
        ("USE secret", 1044, "to database 'secret'"),
        ("SHOW TABLES FROM secret", 1044, "to database 'secret'"),
        ("CREATE USER 'x'@'%'", 1227, "GRANT_PRIV"),
        (
            "GRANT SELECT ON secret.* TO 'u'@'%'",
            1044,
            "to database 'secret'",
        ),
        (
            "SET GLOBAL max_prepared_stmt_count = 10",
            1227,
            "ADMIN_PRIV",
        ),
        (
            "SELECT * FROM local(\"file_path\" = \"x.csv\", \"format\" = \"csv\")",
            1227,
            "ADMIN_PRIV",
        ),
    ];
    for (sql, want, text) in denied {
        let (got, message) = refused(&mut u, sql).await;
        assert_eq!(got, want, "{sql}: {message}");
        assert!(message.contains(text), "{sql}: {message}");
    }
    // Preparing a statement reveals no columns of a table the account may not read.
    for sql in [
        "SELECT * FROM secret.t WHERE k = ?",
        "SELECT v FROM secret.kv WHERE k = ?",
    ] {
        let e = u.prep(sql).await.unwrap_err();
        assert_eq!(code(e), 1142, "{sql}");
    }
    // Connecting with a database the account may not see is refused too.
    let e = Conn::new(server.opts("u", Some("pw"), Some("secret")))
        .await
        .unwrap_err();
    assert_eq!(code(e), 1044);
    // Nothing changed, and nothing is listed.
    assert_eq!(
        rows(&mut root, "SELECT COUNT(*) FROM secret.t").await,
        vec![vec![s("2")]]
    );
    assert_eq!(
        rows(&mut u, "SHOW DATABASES").await,
        vec![vec![s("information_schema")]]
    );
    assert_eq!(
        rows(
            &mut u,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema <> 'information_schema'"
        )
        .await,
        vec![vec![s("0")]]
    );
    assert_eq!(
        rows(&mut u, "SHOW GRANTS").await,
        vec![vec![s("GRANT USAGE ON *.* TO `u`@`%`")]]
    );
}

#[tokio::test]
async fn create_table_as_select_needs_create_and_select() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    setup(&mut root).await;
    let mut u = Conn::new(server.opts("u", Some("pw"), None)).await.unwrap();
    let ctas = "CREATE TABLE other.copy AS SELECT k, v FROM secret.t";
    let (code, message) = refused(&mut u, ctas).await;
    assert_eq!(code, 1142, "{message}");
    assert!(message.contains("CREATE command denied"), "{message}");

    // CREATE on the database is not enough: the query reads `secret.t`, and the refusal
    // leaves no table behind.
    exec(&mut root, "GRANT CREATE ON other.* TO 'u'@'%'").await;
    let (code, message) = refused(&mut u, ctas).await;
    assert_eq!(code, 1142, "{message}");
    assert!(message.contains("SELECT command denied"), "{message}");
    assert_eq!(
        rows(&mut root, "SHOW TABLES FROM other").await,
        vec![vec![s("o")]]
    );

    // With SELECT on the source the new table is created and filled; loading it needs no LOAD
    // privilege of its own (a later INSERT does).
    exec(&mut root, "GRANT SELECT ON secret.t TO 'u'@'%'").await;
    u.query_drop(ctas).await.unwrap();
    assert_eq!(u.affected_rows(), 2);
    assert_eq!(
        rows(&mut root, "SELECT SUM(v) FROM other.copy").await,
        vec![vec![s("30")]]
    );
    assert_eq!(
        refused(&mut u, "INSERT INTO other.copy VALUES (3, 30)")
            .await
            .0,
        1142
    );
}

#[tokio::test]
async fn grants_and_roles_open_exactly_what_they_name() {
    let mut server = TestServer::start().await;
    let mut root = server.connect().await;
    setup(&mut root).await;
    let mut u = Conn::new(server.opts("u", Some("pw"), None)).await.unwrap();

    // Database level, MySQL's name: reads everywhere in `secret`, nothing else. A running
    // session sees the grant from its next statement.
    exec(&mut root, "GRANT SELECT ON secret.* TO 'u'@'%'").await;
    assert_eq!(
        rows(&mut u, "SELECT SUM(v) FROM secret.t").await,
        vec![vec![s("30")]]
    );
    assert_eq!(
        rows(&mut u, "SELECT v FROM secret.kv WHERE k = 1").await,
        vec![vec![s("100")]]
    );
    assert_eq!(
        refused(&mut u, "INSERT INTO secret.t VALUES (3, 30)")
            .await
            .0,
        1142
    );
    assert_eq!(refused(&mut u, "SELECT * FROM other.o").await.0, 1142);
    exec(&mut u, "USE secret").await;
    assert_eq!(
        rows(&mut u, "SHOW DATABASES").await,
        vec![vec![s("information_schema")], vec![s("secret")]]
    );

    // Table level through a role, Doris's name; SET ROLE switches it off and on.
    exec(&mut root, "CREATE ROLE loader").await;
    exec(&mut root, "GRANT LOAD_PRIV ON secret.t TO ROLE 'loader'").await;
    exec(&mut root, "GRANT 'loader' TO 'u'@'%'").await;
    exec(&mut u, "INSERT INTO t VALUES (3, 30)").await;
    assert_eq!(
        refused(&mut u, "INSERT INTO kv VALUES (2, 2)").await.0,
        1142
    );
    exec(&mut u, "SET ROLE NONE").await;
    assert_eq!(
        refused(&mut u, "INSERT INTO t VALUES (4, 40)").await.0,
        1142
    );
    exec(&mut u, "SET ROLE DEFAULT").await;
    exec(&mut u, "INSERT INTO t VALUES (4, 40)").await;
    assert_eq!(refused(&mut u, "SET ROLE nosuch").await.0, 3530);
    assert_eq!(
        rows(&mut u, "SHOW GRANTS").await,
        vec![
            vec![s("GRANT USAGE ON *.* TO `u`@`%`")],
            vec![s("GRANT SELECT ON `secret`.* TO `u`@`%`")],
            vec![s("GRANT `loader`@`%` TO `u`@`%`")],
        ]
    );
    // Granting needs GRANT_PRIV; WITH GRANT OPTION gives it at that level, for the
    // privileges the grantor holds there.
    assert_eq!(
        refused(&mut u, "GRANT SELECT ON secret.t TO 'u'@'%'")
            .await
            .0,
        1142
    );
    exec(&mut root, "CREATE USER 'v'@'%'").await;
    exec(
        &mut root,
        "GRANT SELECT ON other.* TO 'u'@'%' WITH GRANT OPTION",
    )
    .await;
    exec(&mut u, "GRANT SELECT ON other.o TO 'v'@'%'").await;
    assert_eq!(
        refused(&mut u, "GRANT DROP ON other.o TO 'v'@'%'").await.0,
        1142
    );
    exec(
        &mut root,
        "REVOKE SELECT, GRANT OPTION ON other.* FROM 'u'@'%'",
    )
    .await;
    assert_eq!(
        refused(&mut root, "GRANT SELECT ON secret.* TO 'ghost'@'%'")
            .await
            .0,
        1133
    );
    assert_eq!(
        refused(&mut root, "GRANT ADMIN_PRIV ON secret.* TO 'u'@'%'")
            .await
            .0,
        1144
    );

    // Grants and roles survive kill -9.
    server.kill9();
    server.restart().await;
    let mut root = server.connect().await;
    let mut u = Conn::new(server.opts("u", Some("pw"), Some("secret")))
        .await
        .unwrap();
    exec(&mut u, "INSERT INTO t VALUES (5, 50)").await;
    assert_eq!(
        rows(&mut u, "SELECT COUNT(*) FROM t").await,
        vec![vec![s("5")]]
    );

    // REVOKE and DROP ROLE take them back.
    exec(&mut root, "REVOKE SELECT ON secret.* FROM 'u'@'%'").await;
    assert_eq!(refused(&mut u, "SELECT COUNT(*) FROM t").await.0, 1142);
    exec(&mut root, "DROP ROLE loader").await;
    assert_eq!(
        refused(&mut u, "INSERT INTO t VALUES (6, 60)").await.0,
        1142
    );
    // ALL at *.* opens everything but the administrator's privileges.
    exec(&mut root, "GRANT ALL ON *.* TO 'u'@'%'").await;
    exec(&mut u, "CREATE DATABASE mine").await;
    exec(&mut u, "DROP TABLE other.o").await;
    assert_eq!(refused(&mut u, "CREATE USER 'x'@'%'").await.0, 1227);
}

#[tokio::test]
async fn repeated_failed_logins_are_delayed_but_local_root_is_not() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    exec(&mut root, "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'").await;
    for _ in 0..3 {
        let e = Conn::new(server.opts("u", Some("bad"), None))
            .await
            .unwrap_err();
        assert_eq!(code(e), 1045);
    }
    // The fourth failure in a row waits at least a second before it is answered.
    let started = Instant::now();
    let e = Conn::new(server.opts("u", Some("bad"), None))
        .await
        .unwrap_err();
    assert_eq!(code(e), 1045);
    assert!(started.elapsed() >= Duration::from_millis(900));
    // The right password still works (after the delay), and clears the count.
    Conn::new(server.opts("u", Some("pw"), None)).await.unwrap();
    // root from this machine is never delayed.
    for _ in 0..5 {
        let e = Conn::new(server.opts("root", Some("bad"), None))
            .await
            .unwrap_err();
        assert_eq!(code(e), 1045);
    }
    let started = Instant::now();
    let _ = Conn::new(server.opts("root", Some("bad"), None)).await;
    assert!(started.elapsed() < Duration::from_millis(900));
    root.ping().await.unwrap();
}
