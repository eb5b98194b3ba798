//! MySQL's own tools against the real server: Debian's `mysqldump` dumps a database of every key
//! model and type, `mysql` restores the dump into a second, empty server, and both must then
//! hold the same rows and the same definitions; SQLAlchemy reflects tables of every key model
//! (tests/py/sqlalchemy_reflect.py). The tools must be installed (`scripts/test` installs them).

use crate::harness::*;
use std::process::{Command, Output, Stdio};

fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mysql(port: u16, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new("mysql")
        .args(["-h127.0.0.1", "-uroot", "--batch", "--skip-column-names"])
        .arg(format!("-P{port}"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the mysql client must be installed (apt-get install mariadb-client)");
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write to mysql");
    }
    child.wait_with_output().expect("mysql")
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every table's rows (in a stable order) and definition, as the `mysql` client prints them.
fn contents(port: u16) -> String {
    let sql = "SELECT * FROM users ORDER BY id; \
               SELECT * FROM numbers ORDER BY k, c; \
               SELECT k, bitmap_to_string(uv), hll_cardinality(approx), n, last FROM visits ORDER BY k; \
               SELECT * FROM events ORDER BY id; \
               SELECT * FROM regions ORDER BY code; \
               SELECT * FROM active_users ORDER BY id; \
               SHOW CREATE TABLE users; SHOW CREATE TABLE numbers; SHOW CREATE TABLE visits; \
               SHOW CREATE TABLE events; SHOW CREATE TABLE regions;";
    ok(
        mysql(port, &["dumped", "-e", sql], None),
        "reading the tables",
    )
}

#[tokio::test]
async fn mysqldump_round_trip() {
    let source = TestServer::start().await;
    let setup = std::fs::read(repo_root().join("tests/tools/dump_source.sql")).expect("setup sql");
    ok(
        mysql(source.mysql_port, &[], Some(&setup)),
        "creating the source tables",
    );
    let expected = contents(source.mysql_port);
    assert!(expected.contains("5,70000") && expected.contains("1,2,3,4294967296"));

    for options in [&[][..], &["--single-transaction"][..]] {
        let dump = Command::new("mysqldump")
            .args(["-h127.0.0.1", "-uroot"])
            .arg(format!("-P{}", source.mysql_port))
            .args(options)
            .args(["--databases", "dumped"])
            .output()
            .expect("mysqldump must be installed (apt-get install mariadb-client)");
        assert!(
            dump.status.success(),
            "mysqldump {options:?} failed:\n{}",
            String::from_utf8_lossy(&dump.stderr)
        );
        let text = String::from_utf8_lossy(&dump.stdout);
        assert!(text.contains("INSERT INTO `numbers` VALUES"), "{text}");

        let target = TestServer::start().await;
        ok(
            mysql(target.mysql_port, &[], Some(&dump.stdout)),
            "restoring the dump",
        );
        assert_eq!(
            contents(target.mysql_port),
            expected,
            "the restored database differs (mysqldump {options:?})"
        );
    }
}

#[tokio::test]
async fn sqlalchemy_reflects_every_key_model() {
    let server = TestServer::start().await;
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/sqlalchemy_reflect.py"))
        .arg(server.mysql_port.to_string())
        .output()
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "SQLAlchemy reflection failed (pip install sqlalchemy pymysql):\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// MySQL Connector/J's jar: `BASALT_CONNECTOR_J` (set by `scripts/test`, which downloads it
/// from Maven Central and checks its SHA-1).
fn connector_j() -> String {
    std::env::var("BASALT_CONNECTOR_J")
        .expect("BASALT_CONNECTOR_J must name MySQL Connector/J's jar (scripts/test downloads it)")
}

#[tokio::test]
async fn connector_j_database_metadata() {
    let jar = connector_j();
    // Both of Connector/J's metadata paths: SHOW statements, and information_schema queries.
    for properties in ["useInformationSchema=false", "useInformationSchema=true"] {
        let server = TestServer::start().await;
        let out = Command::new("java")
            .args(["-cp", &jar])
            .arg(repo_root().join("tests/jdbc/MetadataCheck.java"))
            .arg(server.mysql_port.to_string())
            .arg(properties)
            .output()
            .expect("a JDK must be installed (scripts/test installs one)");
        assert!(
            out.status.success(),
            "Connector/J metadata ({properties}) failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
