//! Stored procedures end to end: PyMySQL reading a CALL's several result sets
//! (tests/py/procedures.py), the mysql CLI sending a body under `DELIMITER`, and procedures
//! surviving a restart and leaving with their database; stored functions likewise.

use crate::harness::*;
use std::io::Write;
use std::process::{Command, Stdio};

#[tokio::test]
async fn pymysql_reads_every_result_set_of_a_call() {
    let server = TestServer::start().await;
    run_python_script(
        "procedures.py",
        server.mysql_port,
        "stored procedures through PyMySQL",
    );
}

#[tokio::test]
async fn mysql_cli_sends_a_body_under_delimiter() {
    let server = TestServer::start().await;
    let script = "CREATE DATABASE cli;\nUSE cli;\nDELIMITER //\n\
                  CREATE PROCEDURE two(IN k INT)\nBEGIN\n  SELECT k AS first;\n  SELECT k + 1 AS second;\nEND//\n\
                  DELIMITER ;\nCALL two(41);\n";
    let mut child = Command::new("mysql")
        .args(["-h127.0.0.1", "-uroot", "--batch"])
        .arg(format!("-P{}", server.mysql_port))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mysql client must be installed (apt-get install mariadb-client)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write the script");
    let out = child.wait_with_output().expect("mysql runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "first\n41\nsecond\n42\n");
}

#[tokio::test]
async fn procedures_survive_a_restart_and_go_with_their_database() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE keep").await;
    exec(
        &mut c,
        "CREATE PROCEDURE keep.answer(IN x INT) SELECT x * 2",
    )
    .await;
    drop(c);
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(
        rows(&mut c, "CALL keep.answer(21)").await,
        vec![vec![s("42")]]
    );
    exec(&mut c, "DROP DATABASE keep").await;
    exec(&mut c, "CREATE DATABASE keep").await;
    drop(c);
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(
        rows(
            &mut c,
            "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = 'keep'"
        )
        .await,
        vec![vec![s("0")]]
    );
}

#[tokio::test]
async fn functions_survive_a_restart_beside_a_procedure_of_their_name() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE keepf").await;
    exec(
        &mut c,
        "CREATE TABLE keepf.t (a INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1",
    )
    .await;
    exec(&mut c, "INSERT INTO keepf.t VALUES (1), (2)").await;
    exec(
        &mut c,
        "CREATE FUNCTION keepf.twice(x INT) RETURNS INT DETERMINISTIC RETURN x * 2",
    )
    .await;
    exec(&mut c, "CREATE PROCEDURE keepf.twice() SELECT 'proc'").await;
    drop(c);
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE keepf").await;
    assert_eq!(
        rows(&mut c, "SELECT a, twice(a) FROM t ORDER BY a").await,
        vec![vec![s("1"), s("2")], vec![s("2"), s("4")]]
    );
    assert_eq!(rows(&mut c, "CALL twice()").await, vec![vec![s("proc")]]);
    let create = rows(&mut c, "SHOW CREATE FUNCTION twice").await;
    assert_eq!(create[0][0], s("twice"));
    assert_eq!(
        create[0][2],
        s("CREATE DEFINER=`root`@`%` FUNCTION `twice`(x INT) RETURNS INT\n    DETERMINISTIC\nRETURN x * 2")
    );
    let status = rows(&mut c, "SHOW FUNCTION STATUS WHERE Db = 'keepf'").await;
    assert_eq!(status.len(), 1);
    assert_eq!(status[0][..3], [s("keepf"), s("twice"), s("FUNCTION")]);
    exec(&mut c, "DROP DATABASE keepf").await;
    exec(&mut c, "CREATE DATABASE keepf").await;
    drop(c);
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(
        rows(
            &mut c,
            "SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = 'keepf'"
        )
        .await,
        vec![vec![s("0")]]
    );
}

#[tokio::test]
async fn a_loop_without_end_stays_killable_and_leaves_other_sessions_alone() {
    use mysql_async::prelude::*;
    let server = TestServer::start().await;
    let mut a = server.connect().await;
    exec(&mut a, "CREATE DATABASE spin").await;
    exec(
        &mut a,
        "CREATE PROCEDURE spin.forever() BEGIN DECLARE i INT DEFAULT 0; \
         LOOP SET i = i + 1; END LOOP; END",
    )
    .await;
    let id: u32 = a
        .query_first("SELECT CONNECTION_ID()")
        .await
        .unwrap()
        .unwrap();
    let call = tokio::spawn(async move {
        let started = std::time::Instant::now();
        let e = a.query_drop("CALL spin.forever()").await.unwrap_err();
        (code(e), started.elapsed(), a)
    });
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    // Another session is answered at once while the loop runs.
    let mut b = server.connect().await;
    let started = std::time::Instant::now();
    assert_eq!(rows(&mut b, "SELECT 41 + 1").await, vec![vec![s("42")]]);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    exec(&mut b, &format!("KILL QUERY {id}")).await;
    let (killed, _, mut a) = tokio::time::timeout(std::time::Duration::from_secs(10), call)
        .await
        .expect("the KILL ends the CALL")
        .unwrap();
    assert_eq!(killed, 1317);
    // The CALL's time limit (query_timeout) stops it too.
    exec(&mut a, "SET query_timeout = 1").await;
    let e = a.query_drop("CALL spin.forever()").await.unwrap_err();
    assert_eq!(code(e), 3024);
    exec(&mut a, "SET query_timeout = 300").await;
    assert_eq!(rows(&mut a, "SELECT 1").await, vec![vec![s("1")]]);
}
