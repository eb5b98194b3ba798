//! Temporary tables end with their session: on COM_QUIT, on a connection that drops without
//! one (a client process that exits), on COM_RESET_CONNECTION, and — after a crash — at the
//! next server start. Each time the catalog entry and the table's files are gone.

use crate::harness::*;
use mysql_async::prelude::*;
use mysql_async::Conn;
use std::time::{Duration, Instant};

/// The segment files under the data directory.
fn parquet_files(server: &TestServer) -> usize {
    files_under(server.data_dir.path())
        .keys()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .count()
}

/// Tables the catalog holds in database `tmp`, hidden ones included (SHOW PROC '/dbs').
async fn catalog_tables(conn: &mut Conn) -> String {
    let dbs = rows(conn, "SHOW PROC '/dbs'").await;
    let tmp = dbs
        .iter()
        .find(|r| r[1].as_deref() == Some("tmp"))
        .expect("database tmp");
    tmp[2].clone().expect("TableNum")
}

/// Waits until the catalog holds `tables` tables in `tmp` and the data directory `files`
/// segment files (a session ends after its connection does).
async fn wait_until_back(server: &TestServer, conn: &mut Conn, tables: &str, files: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = (catalog_tables(conn).await, parquet_files(server));
        if now == (tables.to_string(), files) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "temporary table left behind: {now:?}, expected ({tables}, {files})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create_temporary(conn: &mut Conn) {
    exec(conn, "CREATE TEMPORARY TABLE tt (a INT, b VARCHAR(20))").await;
    exec(conn, "INSERT INTO tt VALUES (1, 'one'), (2, 'two')").await;
    assert_eq!(rows(conn, "SELECT count(*) FROM tt").await[0][0], s("2"));
    let shown = rows(conn, "SHOW CREATE TABLE tt").await;
    assert_eq!(shown[0][0], s("tt"));
    let ddl = shown[0][1].clone().unwrap_or_default();
    assert!(ddl.starts_with("CREATE TEMPORARY TABLE `tt` ("), "{ddl}");
}

#[tokio::test]
async fn temporary_tables_end_with_their_session() {
    let mut server = TestServer::start().await;
    let mut admin = server.connect().await;
    exec(&mut admin, "CREATE DATABASE tmp").await;
    exec(
        &mut admin,
        "CREATE TABLE tmp.p (a INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1",
    )
    .await;
    exec(&mut admin, "INSERT INTO tmp.p VALUES (1)").await;
    let files = parquet_files(&server);
    assert_eq!(catalog_tables(&mut admin).await, "1");

    // COM_QUIT.
    let mut a = Conn::new(server.opts("root", None, Some("tmp")))
        .await
        .unwrap();
    create_temporary(&mut a).await;
    assert_eq!(catalog_tables(&mut admin).await, "2");
    assert!(parquet_files(&server) > files);
    a.disconnect().await.unwrap();
    wait_until_back(&server, &mut admin, "1", files).await;

    // A client that goes away without COM_QUIT.
    run_python_script(
        "temporary_table_abandoned.py",
        server.mysql_port,
        "a temporary table created, then the connection dropped",
    );
    wait_until_back(&server, &mut admin, "1", files).await;

    // COM_RESET_CONNECTION drops them too (the connection stays).
    let mut b = Conn::new(server.opts("root", None, Some("tmp")))
        .await
        .unwrap();
    create_temporary(&mut b).await;
    b.reset().await.unwrap();
    wait_until_back(&server, &mut admin, "1", files).await;
    let e = b.query_drop("SELECT * FROM tmp.tt").await.unwrap_err();
    assert_eq!(code(e), 1146);

    // A crash: the next start drops what the session left.
    let mut c = Conn::new(server.opts("root", None, Some("tmp")))
        .await
        .unwrap();
    create_temporary(&mut c).await;
    drop(admin);
    server.kill9();
    std::mem::forget(c);
    server.restart().await;
    let mut admin = server.connect().await;
    wait_until_back(&server, &mut admin, "1", files).await;
    assert_eq!(
        rows(&mut admin, "SELECT * FROM tmp.p").await,
        vec![vec![s("1")]]
    );
}

/// Another session cannot reach a temporary table by its hidden name (connection ids are
/// public and the counter small, so the name is easy to guess): every such name is 1146.
#[tokio::test]
async fn hidden_names_are_no_way_into_another_sessions_temporary_table() {
    let server = TestServer::start().await;
    let mut admin = server.connect().await;
    exec(&mut admin, "CREATE DATABASE tmp").await;
    let mut owner = Conn::new(server.opts("root", None, Some("tmp")))
        .await
        .unwrap();
    create_temporary(&mut owner).await;
    let id = rows(&mut owner, "SELECT CONNECTION_ID()").await[0][0]
        .clone()
        .expect("connection id");
    let mut other = server.connect().await;
    for n in 1..=20 {
        for sql in [
            format!("SELECT * FROM tmp.__basalt_temporary_{id}_{n}"),
            format!("SELECT * FROM tmp.`__BASALT_TEMPORARY_{id}_{n}`"),
            format!("INSERT INTO tmp.__basalt_temporary_{id}_{n} VALUES (3, 'three')"),
            format!("CREATE TABLE tmp.copy AS SELECT * FROM tmp.__basalt_temporary_{id}_{n}"),
        ] {
            let e = other.query_drop(&sql).await.unwrap_err();
            assert_eq!(code(e), 1146, "{sql}");
        }
    }
    // The owner's own table is untouched and still its own.
    assert_eq!(
        rows(&mut owner, "SELECT count(*) FROM tt").await[0][0],
        s("2")
    );
}
