//! Stored procedures end to end: PyMySQL reading a CALL's several result sets
//! (tests/py/procedures.py), the mysql CLI sending a body under `DELIMITER`, and procedures
//! surviving a restart and leaving with their database.

use crate::harness::*;
use std::io::Write;
use std::process::{Command, Stdio};

fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test]
async fn pymysql_reads_every_result_set_of_a_call() {
    let server = TestServer::start().await;
    let script = repo_root().join("tests/py/procedures.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(server.mysql_port.to_string())
        .output()
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "stored procedures through PyMySQL:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
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
