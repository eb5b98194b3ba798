//! Other real clients against the real server: PyMySQL and Debian's `mysql` (MariaDB) CLI.
//! Both must be installed (`.ci/run` installs them); a missing client fails the test.

use crate::harness::*;
use std::process::Command;

fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test]
async fn pymysql_works() {
    let server = TestServer::start().await;
    let script = repo_root().join("tests/py/clients_smoke.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(server.mysql_port.to_string())
        .output()
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "PyMySQL smoke test failed (pip install pymysql):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
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
