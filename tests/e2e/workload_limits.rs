//! Workload group CPU and read-IO limits and live usage, through the MySQL protocol and
//! `/metrics`: a group with `cpu_hard_limit` uses no more than its share of the cores while its
//! query runs (as `information_schema.active_queries` and `workload_group_resource_usage`
//! report it live), and a group with `read_bytes_per_second` reads no faster than that.
//!
//! Only bounds that a slow or busy machine cannot break are asserted: a throttled query may be
//! slower than its limit allows, never faster.

use crate::harness::{exec, rows, TestServer};
use mysql_async::prelude::*;
use std::time::{Duration, Instant};

/// CPU-bound work without a table (a few hundred ms of CPU in a debug build).
const HEAVY: &str = "SELECT COUNT(DISTINCT v % 1000003), SUM(v * 7 % 13) \
                     FROM generate_series(1, 3000000) AS t(v)";

/// Ten times [`HEAVY`]: long enough for policies to act while it runs.
const LONG: &str = "SELECT COUNT(DISTINCT v % 1000003), SUM(v * 7 % 13) \
                    FROM generate_series(1, 30000000) AS t(v)";

fn cores() -> f64 {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64
}

/// `workload_group_resource_usage` for `group`: (CPU_USAGE_PERCENT, CPU_TIME_MS,
/// LOCAL_SCAN_BYTES, LOCAL_SCAN_BYTES_PER_SECOND).
async fn group_usage(c: &mut mysql_async::Conn, group: &str) -> (f64, u64, u64, u64) {
    let r = rows(
        c,
        &format!(
            "SELECT cpu_usage_percent, cpu_time_ms, local_scan_bytes, local_scan_bytes_per_second \
             FROM information_schema.workload_group_resource_usage \
             WHERE workload_group_name = '{group}'"
        ),
    )
    .await;
    let v = |i: usize| r[0][i].as_deref().unwrap_or("0").to_string();
    (
        v(0).parse().unwrap(),
        v(1).parse().unwrap(),
        v(2).parse().unwrap(),
        v(3).parse().unwrap(),
    )
}

#[tokio::test]
async fn cpu_hard_limit_holds_and_usage_is_live() {
    let server = TestServer::start().await;
    let mut admin = server.connect().await;
    // About a fifth of one core, whatever the number of cores.
    let limit_percent = (20.0 / cores()).round().max(1.0);
    exec(
        &mut admin,
        &format!("CREATE WORKLOAD GROUP slow PROPERTIES ('cpu_hard_limit' = '{limit_percent}%')"),
    )
    .await;

    let mut worker = server.connect().await;
    exec(&mut worker, "SET workload_group = 'slow'").await;
    let worker_id = worker.id();
    let started = Instant::now();
    let query = tokio::spawn(async move {
        let r: Vec<(i64, i64)> = worker.query(HEAVY).await.unwrap();
        (r, started.elapsed())
    });

    // While it runs, active_queries shows its CPU time growing and the group's usage shows it
    // at (about) its limit.
    let mut seen_cpu_ms = 0i64;
    let mut seen_percent = 0f64;
    while !query.is_finished() {
        let r = rows(
            &mut admin,
            &format!(
                "SELECT workload_group, cpu_time_ms, query_time_ms \
                 FROM information_schema.active_queries WHERE connection_id = {worker_id}"
            ),
        )
        .await;
        if let Some(row) = r.first() {
            assert_eq!(row[0].as_deref(), Some("slow"));
            seen_cpu_ms = seen_cpu_ms.max(row[1].as_deref().unwrap().parse().unwrap());
        }
        seen_percent = seen_percent.max(group_usage(&mut admin, "slow").await.0);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (result, wall) = query.await.unwrap();
    // 3,000,000 values: v % 1000003 takes 1,000,003 distinct values; v*7%13 sums to a fixed total.
    assert_eq!(result[0].0, 1_000_003);
    assert!(seen_cpu_ms > 0, "active_queries never showed CPU time");
    assert!(
        seen_percent > 0.0,
        "resource usage never showed the group busy"
    );

    let (_, cpu_ms, _, _) = group_usage(&mut admin, "slow").await;
    let used = cpu_ms as f64 / 1000.0 / (wall.as_secs_f64() * cores());
    assert!(
        cpu_ms > 100 && used < limit_percent / 100.0 * 1.5,
        "group used {used:.3} of all cores ({cpu_ms} ms CPU in {wall:?}); limit {limit_percent}%"
    );
    // The same figures on /metrics.
    let metrics = reqwest_metrics(server.http_port).await;
    assert!(
        metrics.contains("basalt_workload_group_cpu_seconds_total{group=\"slow\"}"),
        "{metrics}"
    );
}

/// GET /metrics with curl (a real HTTP client, as the Stream Load tests use).
async fn reqwest_metrics(port: u16) -> String {
    let out = tokio::process::Command::new("curl")
        .args(["-s", &format!("http://127.0.0.1:{port}/metrics")])
        .output()
        .await
        .expect("curl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn read_bytes_per_second_paces_scans() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE d").await;
    exec(&mut c, "USE d").await;
    exec(
        &mut c,
        "CREATE TABLE t (id BIGINT NOT NULL, pad VARCHAR(200)) DUPLICATE KEY(id) \
         DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1')",
    )
    .await;
    // md5 hex text compresses about 3:1: about 3.5 MB of segment data.
    exec(
        &mut c,
        "INSERT INTO t SELECT v, concat(md5(CAST(v AS VARCHAR)), md5(CAST(v + 1 AS VARCHAR)), \
         md5(CAST(v + 2 AS VARCHAR)), md5(CAST(v + 3 AS VARCHAR))) \
         FROM generate_series(1, 80000) AS g(v)",
    )
    .await;
    let limit = 1024 * 1024;
    exec(
        &mut c,
        &format!("CREATE WORKLOAD GROUP io PROPERTIES ('read_bytes_per_second' = '{limit}')"),
    )
    .await;
    exec(&mut c, "SET workload_group = 'io'").await;
    let started = Instant::now();
    let distinct: Vec<i64> = c.query("SELECT COUNT(DISTINCT pad) FROM t").await.unwrap();
    let wall = started.elapsed();
    assert_eq!(distinct, vec![80000]);
    let (_, _, read, _) = group_usage(&mut c, "io").await;
    assert!(
        read > 2 * limit,
        "the scan read only {read} bytes from storage"
    );
    // Reads are paid after the fact, with a 50 ms burst: all but the last read and the burst
    // are paced.
    let floor = (read - limit) as f64 / limit as f64 * 0.9;
    assert!(
        wall.as_secs_f64() >= floor,
        "{read} bytes at {limit} B/s took only {wall:?}"
    );
}

/// The workload group active_queries shows for a connection, while it runs a statement.
async fn running_group(c: &mut mysql_async::Conn, connection: u32) -> Option<String> {
    let r = rows(
        c,
        &format!(
            "SELECT workload_group FROM information_schema.active_queries \
             WHERE connection_id = {connection}"
        ),
    )
    .await;
    r.first().and_then(|row| row[0].clone())
}

#[tokio::test]
async fn policies_move_and_cancel_running_queries() {
    let mut server = TestServer::start().await;
    let mut admin = server.connect().await;
    exec(
        &mut admin,
        "CREATE WORKLOAD GROUP batch PROPERTIES ('cpu_hard_limit' = '20%')",
    )
    .await;
    exec(
        &mut admin,
        "CREATE WORKLOAD POLICY to_batch CONDITIONS(query_time > 300) \
         ACTIONS(move_query_to_group 'batch') \
         PROPERTIES ('workload_group' = 'normal', 'priority' = '5')",
    )
    .await;

    // A long query of `normal` is moved to `batch` while it runs, and still succeeds.
    let mut worker = server.connect().await;
    let worker_id = worker.id();
    let query = tokio::spawn(async move {
        let r: Vec<(i64, i64)> = worker.query(LONG).await.unwrap();
        r
    });
    let mut groups_seen = Vec::new();
    while !query.is_finished() {
        if let Some(g) = running_group(&mut admin, worker_id).await {
            if groups_seen.last() != Some(&g) {
                groups_seen.push(g);
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(query.await.unwrap()[0].0, 1_000_003);
    assert_eq!(
        groups_seen.last().map(String::as_str),
        Some("batch"),
        "{groups_seen:?}"
    );

    // A policy on a user's queries cancels them, saying why.
    exec(&mut admin, "CREATE USER 'etl'@'%'").await;
    exec(
        &mut admin,
        "CREATE WORKLOAD POLICY stop_etl CONDITIONS(username = 'etl', query_time > 200) \
         ACTIONS(cancel_query) PROPERTIES ('priority' = '9')",
    )
    .await;
    let mut etl = mysql_async::Conn::new(server.opts("etl", None, None))
        .await
        .unwrap();
    let started = Instant::now();
    match etl.query_drop(LONG).await {
        Err(mysql_async::Error::Server(e)) => {
            assert_eq!(e.code, 1317, "{e:?}");
            assert!(
                e.message.contains("workload policy 'stop_etl'"),
                "{}",
                e.message
            );
        }
        other => panic!("expected the policy to cancel the query, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    // The connection stays usable; a short statement is not affected.
    let one: Vec<i64> = etl.query("SELECT 1").await.unwrap();
    assert_eq!(one, vec![1]);

    let listed = rows(
        &mut admin,
        "SELECT name, `condition`, action, priority, enabled, workload_group \
         FROM information_schema.workload_policy ORDER BY priority DESC",
    )
    .await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    let tables = rows(&mut admin, "SHOW TABLES FROM information_schema").await;
    for t in [
        "workload_group_resource_usage",
        "workload_policy",
        "active_queries",
    ] {
        assert!(
            tables
                .iter()
                .any(|r| r[0].as_deref().is_some_and(|n| n.eq_ignore_ascii_case(t))),
            "{t}: {tables:?}"
        );
    }
    assert_eq!(listed[0][0].as_deref(), Some("stop_etl"));
    assert_eq!(
        listed[0][1].as_deref(),
        Some("username = etl, query_time > 200")
    );
    assert_eq!(listed[1][2].as_deref(), Some("move_query_to_group 'batch'"));
    assert_eq!(listed[1][5].as_deref(), Some("normal"));

    // Bad policies are clear errors.
    for (sql, needle) in [
        (
            "CREATE WORKLOAD POLICY p CONDITIONS(cpu_time > 1) ACTIONS(cancel_query)",
            "unknown condition metric",
        ),
        (
            "CREATE WORKLOAD POLICY p CONDITIONS(query_time > 1) ACTIONS(move_query_to_group 'nope')",
            "nope",
        ),
        (
            "CREATE WORKLOAD POLICY stop_etl CONDITIONS(query_time > 1) ACTIONS(cancel_query)",
            "already exists",
        ),
        ("ALTER WORKLOAD POLICY stop_etl PROPERTIES ('priority' = 'high')", "priority"),
        ("DROP WORKLOAD POLICY nope", "does not exist"),
    ] {
        match admin.query_drop(sql).await {
            Err(mysql_async::Error::Server(e)) => {
                assert!(e.message.contains(needle), "{sql}: {}", e.message)
            }
            other => panic!("{sql}: expected an error, got {other:?}"),
        }
    }

    // Policies are durable; a disabled one does nothing.
    exec(
        &mut admin,
        "ALTER WORKLOAD POLICY stop_etl PROPERTIES ('enabled' = 'false')",
    )
    .await;
    server.kill9();
    server.restart().await;
    let mut admin = server.connect().await;
    let enabled = rows(
        &mut admin,
        "SELECT enabled FROM information_schema.workload_policy WHERE name = 'stop_etl'",
    )
    .await;
    assert_eq!(enabled, vec![vec![Some("false".to_string())]]);
    exec(&mut admin, "DROP WORKLOAD POLICY to_batch").await;
    let mut etl = mysql_async::Conn::new(server.opts("etl", None, None))
        .await
        .unwrap();
    let r: Vec<(i64, i64)> = etl.query(LONG).await.unwrap();
    assert_eq!(r[0].0, 1_000_003);
    exec(&mut admin, "DROP WORKLOAD POLICY stop_etl").await;
    exec(&mut admin, "DROP WORKLOAD POLICY IF EXISTS stop_etl").await;
}

#[tokio::test]
async fn workload_group_usage_privileges_and_default_group() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    exec(&mut root, "CREATE USER 'ann'@'%'").await;
    exec(&mut root, "CREATE WORKLOAD GROUP g1").await;
    let ann = || mysql_async::Conn::new(server.opts("ann", None, None));
    let mut a = ann().await.unwrap();
    let denied = a.query_drop("SET workload_group = 'g1'").await.unwrap_err();
    match denied {
        mysql_async::Error::Server(e) => {
            assert_eq!(e.code, 1227);
            assert!(e.message.contains("USAGE_PRIV"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    exec(&mut a, "SET workload_group = 'normal'").await;
    // Only root grants, and only to existing users and groups.
    assert!(a
        .query_drop("GRANT USAGE_PRIV ON WORKLOAD GROUP 'g1' TO 'ann'@'%'")
        .await
        .is_err());
    assert!(root
        .query_drop("GRANT USAGE_PRIV ON WORKLOAD GROUP 'nope' TO 'ann'@'%'")
        .await
        .is_err());
    assert!(root
        .query_drop("GRANT USAGE_PRIV ON WORKLOAD GROUP 'g1' TO 'bob'@'%'")
        .await
        .is_err());
    exec(
        &mut root,
        "GRANT USAGE_PRIV ON WORKLOAD GROUP 'g1' TO 'ann'@'%'",
    )
    .await;
    exec(&mut a, "SET workload_group = 'g1'").await;
    // A default group: later sessions start in it.
    exec(&mut a, "SET PROPERTY 'default_workload_group' = 'g1'").await;
    assert!(a
        .query_drop("SET PROPERTY FOR 'root' 'default_workload_group' = 'g1'")
        .await
        .is_err());
    let mut a2 = ann().await.unwrap();
    let group: Vec<String> = a2.query("SELECT @@workload_group").await.unwrap();
    assert_eq!(group, vec!["g1".to_string()]);
    // Revoked: new sessions fall back to normal, and g1 can no longer be chosen.
    exec(
        &mut root,
        "REVOKE USAGE_PRIV ON WORKLOAD GROUP 'g1' FROM 'ann'@'%'",
    )
    .await;
    let mut a3 = ann().await.unwrap();
    let group: Vec<String> = a3.query("SELECT @@workload_group").await.unwrap();
    assert_eq!(group, vec!["normal".to_string()]);
    assert!(a3.query_drop("SET workload_group = 'g1'").await.is_err());
    // Root may use any group; '%' grants them all.
    exec(&mut root, "SET workload_group = 'g1'").await;
    exec(
        &mut root,
        "GRANT USAGE_PRIV ON WORKLOAD GROUP '%' TO 'ann'@'%'",
    )
    .await;
    exec(&mut a3, "SET workload_group = 'g1'").await;
}
