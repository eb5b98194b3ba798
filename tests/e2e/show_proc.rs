//! Doris's SHOW PROC through real logins: walking /dbs down to a partition's tablets with the
//! ids read on the way, /frontends naming the ports the server listens on, who may run it,
//! and /backends, /statistic and tablet replicas on a cluster.

use crate::cluster_harness::Cluster;
use crate::harness::{code, exec, rows, s, TestServer};
use mysql_async::prelude::*;
use mysql_async::Conn;

async fn setup(conn: &mut Conn) {
    for sql in [
        "CREATE DATABASE procdb",
        "CREATE TABLE procdb.t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) \
         (PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (20)) \
         DISTRIBUTED BY HASH(k) BUCKETS 2",
        "INSERT INTO procdb.t VALUES (1, 1), (2, 2), (15, 3)",
    ] {
        exec(conn, sql).await;
    }
}

/// The value of column `i` in the row whose column `key_col` is `key`.
fn cell(rows: &[Vec<Option<String>>], key_col: usize, key: &str, i: usize) -> String {
    rows.iter()
        .find(|r| r[key_col].as_deref() == Some(key))
        .and_then(|r| r[i].clone())
        .unwrap_or_else(|| panic!("no {key} in {rows:?}"))
}

/// Walks /dbs → the database → the table → its partitions → p1's index → its tablets, and
/// returns p1's tablet rows.
async fn walk_to_tablets(conn: &mut Conn) -> Vec<Vec<Option<String>>> {
    let dbs = rows(conn, "SHOW PROC '/dbs'").await;
    let db_id = cell(&dbs, 1, "procdb", 0);
    assert_eq!(cell(&dbs, 1, "procdb", 2), "1", "TableNum: {dbs:?}");

    let tables = rows(conn, &format!("SHOW PROC '/dbs/{db_id}'")).await;
    let table_id = cell(&tables, 1, "t", 0);
    let row = tables.iter().find(|r| r[1] == s("t")).unwrap();
    // IndexNum, PartitionColumnName, PartitionNum, State, Type.
    assert_eq!(row[2..7], [s("1"), s("k"), s("2"), s("NORMAL"), s("OLAP")]);

    let nodes = rows(conn, &format!("SHOW PROC '/dbs/{db_id}/{table_id}'")).await;
    assert_eq!(nodes, vec![vec![s("partitions")]]);

    let partitions = rows(
        conn,
        &format!("SHOW PROC '/dbs/{db_id}/{table_id}/partitions'"),
    )
    .await;
    assert_eq!(partitions.len(), 2, "{partitions:?}");
    let p1 = cell(&partitions, 1, "p1", 0);
    // RowCount, as SHOW PARTITIONS counts it.
    assert_eq!(cell(&partitions, 1, "p1", 7), "2");

    let indexes = rows(
        conn,
        &format!("SHOW PROC '/dbs/{db_id}/{table_id}/partitions/{p1}'"),
    )
    .await;
    assert_eq!(indexes.len(), 1, "{indexes:?}");
    let index_id = indexes[0][0].clone().unwrap();

    let tablets = rows(
        conn,
        &format!("SHOW PROC '/dbs/{db_id}/{table_id}/partitions/{p1}/{index_id}'"),
    )
    .await;
    let total: i64 = tablets
        .iter()
        .map(|r| r[5].as_deref().unwrap().parse::<i64>().unwrap())
        .sum();
    assert!(total >= 2, "p1's rows on its tablets: {tablets:?}");

    let wrong = conn
        .query_drop(format!(
            "SHOW PROC '/dbs/{db_id}/{table_id}/partitions/{p1}/{}'",
            index_id.parse::<u64>().unwrap() + 1
        ))
        .await
        .unwrap_err();
    assert_eq!(code(wrong), 1105);
    tablets
}

#[tokio::test]
async fn show_proc_walks_from_databases_to_tablets() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    setup(&mut root).await;
    let tablets = walk_to_tablets(&mut root).await;
    // One server holds every tablet: one row per tablet, no backend.
    assert_eq!(tablets.len(), 2, "{tablets:?}");
    assert!(tablets.iter().all(|r| r[2].is_none()), "{tablets:?}");

    let frontends = rows(&mut root, "SHOW PROC '/frontends'").await;
    assert_eq!(frontends.len(), 1);
    let fe = &frontends[0];
    assert_eq!(fe[3], Some(server.http_port.to_string()), "HttpPort");
    assert_eq!(fe[4], Some(server.mysql_port.to_string()), "QueryPort");
    assert_eq!(
        (fe[7].as_deref(), fe[8].as_deref()),
        (Some("FOLLOWER"), Some("true"))
    );

    let queries = rows(&mut root, "SHOW PROC '/current_queries'").await;
    assert!(
        queries
            .iter()
            .any(|r| r[7].as_deref() == Some("SHOW PROC '/current_queries'")),
        "{queries:?}"
    );

    let statistic = rows(&mut root, "SHOW PROC '/statistic'").await;
    let total = statistic.last().unwrap();
    // DbId, DbName (the count of databases), TableNum, PartitionNum, IndexNum, TabletNum.
    assert_eq!(
        total[..6],
        [s("Total"), s("1"), s("1"), s("2"), s("1"), s("4")]
    );

    // ADMIN_PRIV or NODE_PRIV, as Doris asks.
    exec(&mut root, "CREATE USER 'plain'@'%' IDENTIFIED BY 'pw'").await;
    exec(&mut root, "CREATE USER 'node'@'%' IDENTIFIED BY 'pw'").await;
    exec(&mut root, "GRANT NODE_PRIV ON *.* TO 'node'@'%'").await;
    let mut plain = Conn::new(server.opts("plain", Some("pw"), None))
        .await
        .unwrap();
    let denied = plain.query_drop("SHOW PROC '/dbs'").await.unwrap_err();
    assert_eq!(code(denied), 1227);
    let mut node = Conn::new(server.opts("node", Some("pw"), None))
        .await
        .unwrap();
    assert_eq!(rows(&mut node, "SHOW PROC '/'").await.len(), 10);
}

#[tokio::test]
async fn show_proc_on_a_cluster_lists_its_backends_and_replicas() {
    let cluster = Cluster::start(2);
    let mut conn = cluster.connect().await;
    setup(&mut conn).await;
    // SHOW BACKENDS' rows (ids and hosts; heartbeat times tick between the statements).
    let backends = rows(&mut conn, "SHOW PROC '/backends'").await;
    let shown = rows(&mut conn, "SHOW BACKENDS").await;
    let key = |r: &Vec<Option<String>>| (r[0].clone(), r[1].clone(), r[2].clone());
    assert_eq!(
        backends.iter().map(key).collect::<Vec<_>>(),
        shown.iter().map(key).collect::<Vec<_>>()
    );
    assert_eq!(backends.len(), 2, "{backends:?}");
    let ids: Vec<String> = backends.iter().map(|r| r[0].clone().unwrap()).collect();

    let tablets = walk_to_tablets(&mut conn).await;
    assert!(!tablets.is_empty());
    for r in &tablets {
        let backend = r[2].clone().expect("a replica's backend");
        assert!(ids.contains(&backend), "{backend} not in {ids:?}");
    }
    let statistic = rows(&mut conn, "SHOW PROC '/statistic'").await;
    let total = statistic.last().unwrap();
    assert_eq!(total[5], s("4"), "TabletNum: {statistic:?}");
    assert_eq!(total[7], s("0"), "UnhealthyTabletNum: {statistic:?}");
}

/// The column names of a statement's result.
async fn column_names(conn: &mut Conn, sql: &str) -> Vec<String> {
    let result = conn.query_iter(sql).await.unwrap();
    let names = result
        .columns_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    result.drop_result().await.unwrap();
    names
}

#[tokio::test]
async fn show_proc_jobs_counts_loads_and_names_doris_columns() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    setup(&mut root).await;
    // A Stream Load is a recorded load job.
    let csv = server.data_dir.path().join("jobs.csv");
    std::fs::write(&csv, "3,3\n4,4\n").unwrap();
    let out = std::process::Command::new("curl")
        .args(["-sS", "--location-trusted", "-u", "root:"])
        .args(["-H", "column_separator:,", "-H", "label:jobs_one", "-T"])
        .arg(&csv)
        .arg("-XPUT")
        .arg(format!(
            "http://127.0.0.1:{}/api/procdb/t/_stream_load",
            server.http_port
        ))
        .output()
        .expect("curl must be installed");
    let body = String::from_utf8_lossy(&out.stdout);
    assert!(body.contains("\"Success\""), "{body}");
    // By name as well as by id.
    let counts = rows(&mut root, "SHOW PROC '/jobs/procdb'").await;
    assert_eq!(
        counts[0],
        [s("load"), s("0"), s("0"), s("1"), s("0"), s("1")],
        "{counts:?}"
    );
    let loads = rows(&mut root, "SHOW PROC '/jobs/procdb/load'").await;
    assert_eq!(loads.len(), 1, "{loads:?}");
    assert_eq!(loads[0][1], s("jobs_one"), "{loads:?}");
    for (kind, first, count) in [
        ("delete", "TableName", 5),
        ("rollup", "JobId", 12),
        ("schema_change", "JobId", 13),
        ("export", "JobId", 12),
    ] {
        let sql = format!("SHOW PROC '/jobs/procdb/{kind}'");
        let names = column_names(&mut root, &sql).await;
        assert_eq!(
            (names[0].as_str(), names.len()),
            (first, count),
            "{kind}: {names:?}"
        );
        assert!(rows(&mut root, &sql).await.is_empty(), "{kind}");
    }
    assert_eq!(
        column_names(&mut root, "SHOW PROC '/jobs/procdb/schema_change'").await[..5],
        [
            "JobId",
            "TableName",
            "CreateTime",
            "FinishTime",
            "IndexName"
        ]
    );
    assert_eq!(
        column_names(&mut root, "SHOW PROC '/jobs/procdb/delete'").await,
        [
            "TableName",
            "PartitionName",
            "CreateTime",
            "DeleteCondition",
            "State"
        ]
    );
}
