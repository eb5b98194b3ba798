//! MySQL's own tools against the real server: Debian's `mysqldump` dumps a database of every key
//! model and type (with secondary indexes, foreign keys, ENUM/SET columns and odd names), `mysql` restores the dump into a second, empty server, and both must then
//! hold the same rows and the same definitions; SQLAlchemy reflects tables of every key model
//! (tests/py/sqlalchemy_reflect.py); PyMySQL's own test suite runs (tests/py/pymysql_suite.py).
//! The tools must be installed (`scripts/test` installs them).

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
               SELECT id, doc, tags, attrs, pos, hex(raw), hex(fixed), hex(body), opens, seen \
                 FROM documents ORDER BY id; \
               SELECT * FROM line_items ORDER BY order_id, line; \
               SELECT id, b + 0, bin(b12), hex(b64), word FROM flags ORDER BY id; \
               SHOW CREATE TABLE flags; \
               SHOW CREATE TABLE line_items; \
               SHOW CREATE TABLE users; SHOW CREATE TABLE numbers; SHOW CREATE TABLE visits; \
               SHOW CREATE TABLE events; SHOW CREATE TABLE regions; SHOW CREATE TABLE documents; \
               SELECT * FROM `b authors` ORDER BY id; SELECT * FROM a_books ORDER BY id; \
               SHOW CREATE TABLE `b authors`; SHOW CREATE TABLE a_books; \
               SELECT constraint_name, referenced_table_name, delete_rule FROM \
                 information_schema.referential_constraints WHERE constraint_schema = 'dumped' \
                 ORDER BY constraint_name;";
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
    assert!(expected.contains("DEADBEEF00") && expected.contains(r#"["p", null, "q's"]"#));
    assert!(expected.contains("other\t5\t7\t1"), "{expected}");
    assert!(
        expected.contains("1\t1\t101010111100\tFFFFFFFFFFFFFFFF\täöü"),
        "{expected}"
    );
    assert!(expected.contains("`b12` bit(12) NULL"), "{expected}");
    // Indexes, foreign keys, odd names and ENUM/SET as MySQL's SHOW CREATE TABLE writes them.
    for line in [
        "`na``me` varchar(30) NULL",
        "`kind` enum('person','it''s a group') NOT NULL DEFAULT 'person'",
        "`tags` set('x','y') NULL",
        "UNIQUE KEY `uq_email` (`email`)",
        "KEY `ix (na``me)` (`na``me`(10),`kind`) COMMENT 'by name'",
        "KEY `ix_title` (`title`)",
        "KEY `co_author` (`co_author`)",
        "CONSTRAINT `a_books_ibfk_1` FOREIGN KEY (`co_author`) REFERENCES `b authors` (`id`)",
        "CONSTRAINT `fk_author` FOREIGN KEY (`author_id`) REFERENCES `b authors` (`id`) ON DELETE CASCADE",
        "1\tann\ta@x\tperson\tx,y",
        "fk_author\tb authors\tCASCADE",
        // A line break in a comment is escaped (the mysql client prints the backslash doubled).
        "COMMENT 'two\\\\nlines'",
    ] {
        assert!(expected.contains(line), "{line} in {expected}");
    }

    // --hex-blob writes BIT and byte-string values as 0x.. literals.
    for options in [&[][..], &["--single-transaction"][..], &["--hex-blob"][..]] {
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
        assert!(text.contains("('first',2,100,1)"), "{text}");

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

/// PyMySQL's own test suite (tests/py/pymysql_suite.py: the sdist from PyPI, cached under the
/// target dir) must keep at least the passes its floor records; it lists each failure with the
/// Basalt gap behind it.
#[tokio::test]
async fn pymysql_own_test_suite() {
    let server = TestServer::start().await;
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pymysql");
    let out = Command::new("python3")
        .arg(repo_root().join("tests/py/pymysql_suite.py"))
        .arg(server.mysql_port.to_string())
        .arg("--cache")
        .arg(&cache)
        .output()
        .expect("python3 must be installed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "PyMySQL's suite failed (pip install pytest; PyPI must be reachable):\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = stdout.lines().find(|l| l.starts_with("pymysql suite: "));
    println!("{}", summary.expect("the suite's summary line"));
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

#[tokio::test]
async fn load_data_local_infile_through_the_mysql_client() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let tsv = dir.path().join("rows.tsv");
    std::fs::write(
        &tsv,
        "1\tann\t2024-01-01\n2\t\\N\t2024-01-02\n3\tcé\n4\tx\t2024-01-04\textra\n",
    )
    .expect("write");
    let csv = dir.path().join("rows.csv");
    std::fs::write(
        &csv,
        "id,name,day\r\n10,\"x,y\",2024-02-01\r\n11,z,2024-02-02\r\n",
    )
    .expect("write");
    let count = || {
        ok(
            mysql(
                server.mysql_port,
                &["ld", "-e", "SELECT count(*) FROM t"],
                None,
            ),
            "count",
        )
    };
    let load = |sql: String| {
        mysql(
            server.mysql_port,
            &["--local-infile=1", "-vv", "ld", "-e", &sql],
            None,
        )
    };
    ok(
        mysql(
            server.mysql_port,
            &[
                "-e",
                "CREATE DATABASE ld; CREATE TABLE ld.t (id INT, name VARCHAR(10), day DATE) \
                     DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
            ],
            None,
        ),
        "creating the table",
    );
    // MySQL's defaults: tab-separated, `\N` is NULL; a short line loads NULL for the rest and
    // a long one its first fields (MySQL's rule for LOAD DATA).
    let out = ok(
        load(format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE t",
            tsv.display()
        )),
        "LOAD DATA (tsv)",
    );
    assert!(out.contains("Records: 4  Deleted: 0  Skipped: 0"), "{out}");
    let out = ok(
        load(format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' \
             LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES (id, name, @d) SET day = date_add(@d, INTERVAL 1 DAY)",
            csv.display()
        )),
        "LOAD DATA (csv)",
    );
    assert!(out.contains("Records: 2"), "{out}");
    let rows = ok(
        mysql(
            server.mysql_port,
            &["ld", "-e", "SELECT * FROM t ORDER BY id"],
            None,
        ),
        "reading",
    );
    assert_eq!(
        rows,
        "1\tann\t2024-01-01\n2\tNULL\t2024-01-02\n3\tcé\tNULL\n4\tx\t2024-01-04\n\
         10\tx,y\t2024-02-02\n11\tz\t2024-02-03\n"
    );
    // MySQL's escapes work in every field: `\t` and `\n` are a tab and a newline, `\\` a
    // backslash, and an escaped separator is data (MariaDB loads the same bytes).
    let escaped = dir.path().join("escaped.tsv");
    std::fs::write(
        &escaped,
        "30\tA\\tB\t2024-03-01\n31\tline\\nbreak\t\\N\n32\tx\\\\y\t2024-03-03\n33\ttab\\\tin\t2024-03-04\n",
    )
    .expect("write");
    let out = ok(
        load(format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE t",
            escaped.display()
        )),
        "LOAD DATA (escapes)",
    );
    assert!(out.contains("Records: 4"), "{out}");
    let rows = ok(
        mysql(
            server.mysql_port,
            &[
                "ld",
                "-e",
                "SELECT id, hex(name), day FROM t WHERE id >= 30 ORDER BY id",
            ],
            None,
        ),
        "reading the escaped rows",
    );
    assert_eq!(
        rows,
        "30\t410942\t2024-03-01\n31\t6C696E650A627265616B\tNULL\n32\t785C79\t2024-03-03\n\
         33\t74616209696E\t2024-03-04\n"
    );
    ok(
        mysql(
            server.mysql_port,
            &["ld", "-e", "DELETE FROM t WHERE id >= 30"],
            None,
        ),
        "removing the escaped rows",
    );
    // Inside a transaction a load is staged as an INSERT is: with autocommit off (PyMySQL's
    // default) ROLLBACK undoes the load and the INSERT before it, COMMIT publishes both, and
    // the loading session reads both before either.
    let one = dir.path().join("one.tsv");
    std::fs::write(&one, "41\tloaded\t2024-04-01\n").expect("write");
    let out = ok(
        load(format!(
            "SET autocommit = 0; INSERT INTO t VALUES (40, 'staged', NULL); \
             LOAD DATA LOCAL INFILE '{}' INTO TABLE t; SELECT count(*) FROM t; ROLLBACK",
            one.display()
        )),
        "LOAD DATA with autocommit off, rolled back",
    );
    assert!(out.contains("Records: 1"), "{out}");
    assert!(
        out.contains("\n8\n"),
        "the session reads its staged load: {out}"
    );
    assert_eq!(count(), "6\n");
    let out = ok(
        load(format!(
            "BEGIN; INSERT INTO t VALUES (40, 'staged', NULL); \
             LOAD DATA LOCAL INFILE '{}' INTO TABLE t; \
             SELECT count(*) FROM t; COMMIT",
            one.display()
        )),
        "LOAD DATA in a transaction, committed",
    );
    assert!(out.contains("\n8\n"), "{out}");
    assert_eq!(count(), "8\n");
    ok(
        mysql(
            server.mysql_port,
            &["ld", "-e", "DELETE FROM t WHERE id >= 40"],
            None,
        ),
        "removing the rows of the transaction",
    );
    // A file the client cannot read fails on the client's side; the server is still in step.
    let out = load("LOAD DATA LOCAL INFILE '/nonexistent/file' INTO TABLE t; SELECT 1".into());
    assert!(!out.status.success());
    assert_eq!(count(), "6\n");
    // A row that does not convert fails the whole load (nothing is published).
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, "20\tok\t2024-01-01\nnot-a-number\tno\t2024-01-01\n").expect("write");
    let out = load(format!(
        "LOAD DATA LOCAL INFILE '{}' INTO TABLE t",
        bad.display()
    ));
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(count(), "6\n");
    // Without the client's consent there is no file to read.
    let out = mysql(
        server.mysql_port,
        &[
            "--local-infile=0",
            "ld",
            "-e",
            &format!("LOAD DATA LOCAL INFILE '{}' INTO TABLE t", tsv.display()),
        ],
        None,
    );
    assert!(!out.status.success());
}

#[tokio::test]
async fn a_consistent_snapshot_reads_every_table_as_it_was() {
    use mysql_async::prelude::*;
    let server = TestServer::start().await;
    let mut dump = server.connect().await;
    let mut load = server.connect().await;
    load.query_drop(
        "CREATE DATABASE snap; USE snap; \
         CREATE TABLE orders (id INT, total INT, PRIMARY KEY (id)); \
         CREATE TABLE lines (id INT, n INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1; \
         INSERT INTO orders VALUES (1, 10); INSERT INTO lines VALUES (1, 10)",
    )
    .await
    .expect("setup");
    dump.query_drop("USE snap").await.expect("use");
    dump.query_drop("START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */")
        .await
        .expect("snapshot");
    // Loads into both tables after the snapshot, and a compaction's worth of versions.
    for i in 2..8 {
        load.query_drop(format!(
            "INSERT INTO orders VALUES ({i}, {i}); INSERT INTO lines VALUES ({i}, {i})"
        ))
        .await
        .expect("load");
    }
    load.query_drop("UPDATE orders SET total = 0 WHERE id = 1")
        .await
        .expect("update");
    let orders: Vec<(i64, i64)> = dump
        .query("SELECT id, total FROM orders ORDER BY id")
        .await
        .expect("orders");
    let lines: Option<i64> = dump
        .query_first("SELECT count(*) FROM lines")
        .await
        .expect("lines");
    let point: Option<i64> = dump
        .query_first("SELECT total FROM orders WHERE id = 1")
        .await
        .expect("point read");
    assert_eq!(orders, vec![(1, 10)]);
    assert_eq!(lines, Some(1));
    assert_eq!(point, Some(10), "a point read inside the snapshot");
    dump.query_drop("COMMIT").await.expect("commit");
    let lines: Option<i64> = dump
        .query_first("SELECT count(*) FROM lines")
        .await
        .expect("lines");
    let point: Option<i64> = dump
        .query_first("SELECT total FROM orders WHERE id = 1")
        .await
        .expect("point read");
    assert_eq!((lines, point), (Some(7), Some(0)));
}
