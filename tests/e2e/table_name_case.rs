//! `lower_case_table_names` end to end: the setting given on the command line or in the config
//! file when a data directory is created, kept by it (a start asking for another is refused),
//! and how names match under each value — through SQL and through Stream Load's URL. The
//! default (0) is tested in SQL (tests/sql/semantics/table_name_case.slt).

use crate::harness::*;
use mysql_async::prelude::Queryable;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Stream-loads `body` (CSV) into `/api/{db}/{table}`; returns the response's status field.
fn stream_load(server: &TestServer, db: &str, table: &str, body: &str) -> String {
    let path = server.data_dir.path().join(format!("{db}_{table}.csv"));
    std::fs::write(&path, body).expect("write body");
    let url = format!(
        "http://127.0.0.1:{}/api/{db}/{table}/_stream_load",
        server.http_port
    );
    let out = Command::new("curl")
        .args([
            "-sS",
            "--location-trusted",
            "-u",
            "root:",
            "-H",
            "column_separator:,",
        ])
        .arg("-T")
        .arg(&path)
        .args(["-XPUT", &url])
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    v["Status"].as_str().unwrap_or_default().to_string()
}

/// Runs `basalt server` on `data_dir` with `args`, expecting it to refuse to start; returns
/// what it wrote to stderr.
fn refused_start(data_dir: &std::path::Path, args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_basalt"))
        .args([
            "server",
            "--mysql-port",
            "0",
            "--http-port",
            "0",
            "--data-dir",
        ])
        .arg(data_dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start basalt");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("basalt started with {args:?}; it should have refused");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success(), "{status}");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read stderr");
    stderr
}

async fn setting(conn: &mut mysql_async::Conn) -> String {
    rows(conn, "SELECT @@lower_case_table_names").await[0][0]
        .clone()
        .expect("a value")
}

#[tokio::test]
async fn lower_case_table_names_1_folds_names_and_stays_with_the_data() {
    let mut server = TestServer::start_with_args(&["--lower-case-table-names", "1"]).await;
    let mut c = server.connect().await;
    assert_eq!(setting(&mut c).await, "1");
    exec(&mut c, "CREATE DATABASE NameCase").await;
    exec(&mut c, "USE NAMECASE").await;
    exec(
        &mut c,
        "CREATE TABLE Foo (Id INT, Name VARCHAR(10)) DUPLICATE KEY(Id) DISTRIBUTED BY HASH(Id) BUCKETS 1",
    )
    .await;
    // One table whatever the spelling, stored in lower case.
    let again = "CREATE TABLE FOO (x INT) DISTRIBUTED BY HASH(x) BUCKETS 1";
    assert_eq!(code(c.query_drop(again).await.unwrap_err()), 1050);
    exec(&mut c, "INSERT INTO FOO VALUES (1, 'a')").await;
    exec(&mut c, "INSERT INTO namecase.foo VALUES (2, 'b')").await;
    assert_eq!(stream_load(&server, "NAMECASE", "fOO", "3,c\n"), "Success");
    assert_eq!(
        rows(&mut c, "SELECT Foo.Id FROM NameCase.FOO ORDER BY foo.id").await,
        vec![
            vec![Some("1".into())],
            vec![Some("2".into())],
            vec![Some("3".into())]
        ]
    );
    assert_eq!(
        rows(&mut c, "SHOW TABLES").await,
        vec![vec![Some("foo".into())]]
    );
    assert_eq!(
        rows(&mut c, "SHOW DATABASES LIKE 'name%'").await,
        vec![vec![Some("namecase".into())]]
    );
    exec(&mut c, "CREATE USER casey IDENTIFIED BY 'pw'").await;
    exec(&mut c, "GRANT SELECT ON NameCase.FOO TO casey").await;
    let mut casey = mysql_async::Conn::new(server.opts("casey", Some("pw"), None))
        .await
        .expect("connect as casey");
    assert_eq!(
        rows(&mut casey, "SELECT COUNT(*) FROM NAMECASE.Foo").await,
        vec![vec![Some("3".into())]]
    );
    drop(casey);
    drop(c);

    // The data directory keeps its setting: another one is refused, none keeps it.
    server.terminate();
    let refusal = refused_start(server.data_dir.path(), &["--lower-case-table-names", "0"]);
    assert!(
        refusal.contains("initialized with lower_case_table_names = 1"),
        "{refusal}"
    );
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(setting(&mut c).await, "1");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM NAMECASE.FOO").await,
        vec![vec![Some("3".into())]]
    );
}

#[tokio::test]
async fn lower_case_table_names_2_keeps_spelling_and_matches_without_case() {
    let server = TestServer::start_with_config("lower_case_table_names = 2\n").await;
    let mut c = server.connect().await;
    assert_eq!(setting(&mut c).await, "2");
    let set = "SET GLOBAL lower_case_table_names = 0";
    assert_eq!(code(c.query_drop(set).await.unwrap_err()), 1238);
    exec(&mut c, "CREATE DATABASE Sales").await;
    let again = "CREATE DATABASE SALES";
    assert_eq!(code(c.query_drop(again).await.unwrap_err()), 1007);
    exec(&mut c, "USE sales").await;
    exec(
        &mut c,
        "CREATE TABLE Orders (Id INT) DUPLICATE KEY(Id) DISTRIBUTED BY HASH(Id) BUCKETS 1",
    )
    .await;
    exec(&mut c, "INSERT INTO ORDERS VALUES (1)").await;
    assert_eq!(stream_load(&server, "SALES", "orders", "2\n"), "Success");
    assert_eq!(
        rows(&mut c, "SELECT orders.id FROM SALES.orders ORDER BY 1").await,
        vec![vec![Some("1".into())], vec![Some("2".into())]]
    );
    // Shown as created.
    assert_eq!(
        rows(&mut c, "SHOW TABLES").await,
        vec![vec![Some("Orders".into())]]
    );
    assert_eq!(
        rows(
            &mut c,
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = 'Sales'"
        )
        .await,
        vec![vec![Some("Sales".into()), Some("Orders".into())]]
    );
}

#[tokio::test]
async fn stream_load_names_tables_exactly_by_default() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    assert_eq!(setting(&mut c).await, "0");
    exec(&mut c, "CREATE DATABASE Sales").await;
    exec(
        &mut c,
        "CREATE TABLE Sales.Orders (Id INT) DUPLICATE KEY(Id) DISTRIBUTED BY HASH(Id) BUCKETS 1",
    )
    .await;
    assert_eq!(stream_load(&server, "Sales", "orders", "1\n"), "Fail");
    assert_eq!(stream_load(&server, "sales", "Orders", "1\n"), "Fail");
    assert_eq!(stream_load(&server, "Sales", "Orders", "1\n"), "Success");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM Sales.Orders").await,
        vec![vec![Some("1".into())]]
    );
}
