//! Workload groups and the process list through the MySQL protocol: the DDL and its checks,
//! SHOW WORKLOAD GROUPS and information_schema, choosing a group, durability, admission
//! (max_concurrency, max_queue_size, queue_timeout) with limits changed while queries wait,
//! SHOW PROCESSLIST, active_queries and KILL.

use crate::harness::{code, exec, rows, s, TestServer};
use mysql_async::prelude::*;
use mysql_async::Conn;
use std::time::Duration;

/// SHOW WORKLOAD GROUPS as (name, column -> value).
async fn group_row(c: &mut Conn, name: &str) -> Option<Vec<(String, Option<String>)>> {
    let result: Vec<mysql_async::Row> = c.query("SHOW WORKLOAD GROUPS").await.unwrap();
    result.into_iter().find_map(|r| {
        let cols: Vec<String> = r
            .columns_ref()
            .iter()
            .map(|c| c.name_str().to_string())
            .collect();
        let values: Vec<Option<String>> = (0..r.len())
            .map(|i| match r.as_ref(i) {
                Some(mysql_async::Value::Bytes(b)) => Some(String::from_utf8_lossy(b).into()),
                Some(mysql_async::Value::Int(v)) => Some(v.to_string()),
                _ => None,
            })
            .collect();
        (values[1].as_deref() == Some(name)).then(|| cols.into_iter().zip(values).collect())
    })
}

fn field(row: &[(String, Option<String>)], name: &str) -> Option<String> {
    row.iter()
        .find(|(c, _)| c == name)
        .and_then(|(_, v)| v.clone())
}

async fn error_text(c: &mut Conn, sql: &str) -> (u16, String) {
    match c.query_drop(sql).await {
        Err(mysql_async::Error::Server(e)) => (e.code, e.message),
        other => panic!("{sql}: expected a server error, got {other:?}"),
    }
}

#[tokio::test]
async fn workload_group_ddl_show_and_choice() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    let normal = group_row(&mut c, "normal").await.expect("normal exists");
    assert_eq!(field(&normal, "memory_limit"), s("30%"));
    exec(
        &mut c,
        "CREATE WORKLOAD GROUP g1 PROPERTIES ('memory_limit'='20%', 'max_concurrency'='5', \
         'cpu_hard_limit'='50%')",
    )
    .await;
    exec(&mut c, "CREATE WORKLOAD GROUP IF NOT EXISTS g1").await;
    let g1 = group_row(&mut c, "g1").await.expect("g1 listed");
    assert_eq!(field(&g1, "max_concurrency"), s("5"));
    assert_eq!(field(&g1, "cpu_hard_limit"), s("50%"));
    assert_eq!(field(&g1, "running_query_num"), s("0"));
    assert_eq!(
        rows(
            &mut c,
            "SELECT max_concurrency, memory_limit FROM information_schema.workload_groups \
             WHERE name = 'g1'"
        )
        .await,
        vec![vec![s("5"), s("20%")]]
    );

    // Clear errors for bad values, unknown properties, sums over 100%, and `normal`.
    let (_, m) = error_text(
        &mut c,
        "CREATE WORKLOAD GROUP g2 PROPERTIES ('max_concurrency'='-3')",
    )
    .await;
    assert!(m.contains("max_concurrency"), "{m}");
    let (_, m) = error_text(&mut c, "CREATE WORKLOAD GROUP g2 PROPERTIES ('speed'='1')").await;
    assert!(m.contains("unknown workload group property 'speed'"), "{m}");
    let (_, m) = error_text(
        &mut c,
        "ALTER WORKLOAD GROUP g1 PROPERTIES ('memory_limit'='71%')",
    )
    .await;
    assert!(m.contains("over 100%"), "{m}");
    let (_, m) = error_text(&mut c, "DROP WORKLOAD GROUP normal").await;
    assert!(m.contains("cannot be dropped"), "{m}");
    let (_, m) = error_text(&mut c, "SET workload_group = 'nope'").await;
    assert!(m.contains("nope"), "{m}");
    assert!(
        group_row(&mut c, "g2").await.is_none(),
        "failed CREATEs leave nothing"
    );

    // A session in g1 runs its queries there; ALTER applies; the group survives kill -9.
    exec(&mut c, "SET workload_group = 'g1'").await;
    assert_eq!(rows(&mut c, "SELECT 1 + 1").await, vec![vec![s("2")]]);
    assert_eq!(
        rows(&mut c, "SELECT @@workload_group").await,
        vec![vec![s("g1")]]
    );
    exec(
        &mut c,
        "ALTER WORKLOAD GROUP g1 PROPERTIES ('max_concurrency'='7', 'queue_timeout'='250')",
    )
    .await;
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    let g1 = group_row(&mut c, "g1").await.expect("g1 after restart");
    assert_eq!(field(&g1, "max_concurrency"), s("7"));
    assert_eq!(field(&g1, "queue_timeout"), s("250"));
    assert_eq!(field(&g1, "memory_limit"), s("20%"));
    exec(&mut c, "DROP WORKLOAD GROUP g1").await;
    exec(&mut c, "DROP WORKLOAD GROUP IF EXISTS g1").await;
    assert!(group_row(&mut c, "g1").await.is_none());
    // Only root manages workload groups.
    exec(&mut c, "CREATE USER 'u'@'%'").await;
    let mut u = mysql_async::Conn::new(server.opts("u", None, None))
        .await
        .unwrap();
    let e = u.query_drop("CREATE WORKLOAD GROUP g3").await.unwrap_err();
    assert_eq!(code(e), 1227);
}

#[tokio::test]
async fn admission_queue_limits_and_live_changes() {
    let server = TestServer::start().await;
    let mut admin = server.connect().await;
    exec(
        &mut admin,
        "CREATE WORKLOAD GROUP q PROPERTIES ('max_concurrency'='1', 'max_queue_size'='1', \
         'queue_timeout'='60000')",
    )
    .await;
    let in_group = || async {
        let mut c = server.connect().await;
        exec(&mut c, "SET workload_group = 'q'").await;
        c
    };
    // A holds the group's only slot: its large result is read one row, then left unread.
    let mut a = in_group().await;
    let mut big = a
        .query_iter("SELECT value, repeat('x', 60) FROM generate_series(1, 3000000)")
        .await
        .unwrap();
    let first: Option<mysql_async::Row> = big.next().await.unwrap();
    assert!(first.is_some());

    // B waits in the queue; C finds the queue full at once.
    let mut b = in_group().await;
    let waiting = tokio::spawn(async move {
        let r: Result<Vec<(i64,)>, _> = b.query("SELECT 41 + 1").await;
        r
    });
    loop {
        let q = group_row(&mut admin, "q").await.unwrap();
        if field(&q, "waiting_query_num") == s("1") {
            assert_eq!(field(&q, "running_query_num"), s("1"));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut c = in_group().await;
    let (number, m) = error_text(&mut c, "SELECT 1").await;
    assert_eq!(m, "query waiting queue is full, queue length=1", "{number}");

    // Raising max_concurrency lets B in without waiting for A.
    exec(
        &mut admin,
        "ALTER WORKLOAD GROUP q PROPERTIES ('max_concurrency'='2', 'queue_timeout'='300')",
    )
    .await;
    let got = waiting.await.unwrap().unwrap();
    assert_eq!(got, vec![(42,)]);

    // With both slots taken, a queued query times out after queue_timeout.
    let mut d = in_group().await;
    let mut also_big = d
        .query_iter("SELECT value, repeat('y', 60) FROM generate_series(1, 3000000)")
        .await
        .unwrap();
    let _: Option<mysql_async::Row> = also_big.next().await.unwrap();
    let (_, m) = error_text(&mut c, "SELECT 1").await;
    assert_eq!(m, "query queue timeout, timeout: 300 ms");
    let q = group_row(&mut admin, "q").await.unwrap();
    assert_eq!(field(&q, "waiting_query_num"), s("0"));
    assert_eq!(field(&q, "running_query_num"), s("2"));
    // Other groups are not held up.
    assert_eq!(rows(&mut admin, "SELECT 5").await, vec![vec![s("5")]]);
}

#[tokio::test]
async fn processlist_and_kill() {
    let server = TestServer::start().await;
    let mut admin = server.connect().await;
    let mut a = server.connect().await;
    let a_id = a.id();
    let mut big = a
        .query_iter("SELECT value, repeat('z', 60) FROM generate_series(1, 3000000)")
        .await
        .unwrap();
    let first: Option<mysql_async::Row> = big.next().await.unwrap();
    assert!(first.is_some());

    // The running statement is listed, with its text and workload group.
    let list = rows(&mut admin, "SHOW FULL PROCESSLIST").await;
    let a_row = list
        .iter()
        .find(|r| r[0] == s(&a_id.to_string()))
        .expect("A is listed");
    assert_eq!(a_row[4], s("Query"), "{a_row:?}");
    assert!(a_row[7]
        .as_deref()
        .unwrap_or("")
        .contains("generate_series"));
    let active = rows(
        &mut admin,
        &format!(
            "SELECT workload_group, sql FROM information_schema.active_queries \
             WHERE connection_id = {a_id}"
        ),
    )
    .await;
    assert_eq!(active.len(), 1, "{active:?}");
    assert_eq!(active[0][0], s("normal"));

    // Other users may not kill root's statements; unknown ids are 1094.
    exec(&mut admin, "CREATE USER 'u'@'%'").await;
    let mut u = mysql_async::Conn::new(server.opts("u", None, None))
        .await
        .unwrap();
    let e = u
        .query_drop(format!("KILL QUERY {a_id}"))
        .await
        .unwrap_err();
    assert_eq!(code(e), 1095);
    let e = admin.query_drop("KILL 999999").await.unwrap_err();
    assert_eq!(code(e), 1094);

    // KILL QUERY ends A's statement with 1317; A's connection goes on working.
    exec(&mut admin, &format!("KILL QUERY {a_id}")).await;
    let mut seen = 1u64;
    let failure = loop {
        let next: Result<Option<mysql_async::Row>, _> = big.next().await;
        match next {
            Ok(Some(_)) => seen += 1,
            Ok(None) => panic!("the result ended normally after {seen} rows"),
            Err(e) => break e,
        }
    };
    assert!(seen < 3_000_000);
    assert_eq!(code(failure), 1317);
    drop(big);
    assert_eq!(rows(&mut a, "SELECT 7").await, vec![vec![s("7")]]);
    let list = rows(&mut admin, "SHOW PROCESSLIST").await;
    let a_row = list.iter().find(|r| r[0] == s(&a_id.to_string())).unwrap();
    assert_eq!(a_row[4], s("Sleep"));

    // KILL CONNECTION closes an idle connection at once.
    exec(&mut admin, &format!("KILL {a_id}")).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let list = rows(&mut admin, "SHOW PROCESSLIST").await;
        if !list.iter().any(|r| r[0] == s(&a_id.to_string())) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "A is still listed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(a.query_drop("SELECT 1").await.is_err());
}

#[tokio::test]
async fn group_memory_limits_fail_the_query_not_the_server() {
    let server = TestServer::start_with_config("mem_limit = \"1GB\"\n").await;
    let mut c = server.connect().await;
    exec(
        &mut c,
        "CREATE WORKLOAD GROUP small PROPERTIES ('memory_limit'='1%', \
         'enable_memory_overcommit'='false')",
    )
    .await;
    // A hash join's build side (1M rows) needs far more than 1% of 1 GB.
    let join = "SELECT COUNT(*) FROM generate_series(1, 1000000) a \
                JOIN generate_series(1, 1000000) b ON a.value = b.value";
    exec(&mut c, "SET workload_group = 'small'").await;
    let (number, m) = error_text(&mut c, join).await;
    assert!(m.contains("MEM_LIMIT_EXCEEDED"), "{number}: {m}");
    assert!(m.contains("workload group 'small'"), "{m}");
    assert!(m.contains("group limit"), "{m}");
    // The same query in `normal` (30%, overcommit) succeeds; the server is fine.
    exec(&mut c, "SET workload_group = 'normal'").await;
    assert_eq!(rows(&mut c, join).await, vec![vec![s("1000000")]]);
    // Raising the limit (ALTER, live) lets it run in `small` too.
    exec(
        &mut c,
        "ALTER WORKLOAD GROUP small PROPERTIES ('memory_limit'='40%')",
    )
    .await;
    exec(&mut c, "SET workload_group = 'small'").await;
    assert_eq!(rows(&mut c, join).await, vec![vec![s("1000000")]]);
}

#[tokio::test]
async fn the_largest_query_gives_way_when_memory_runs_out() {
    let server = TestServer::start_with_config("mem_limit = \"1GB\"\n").await;
    let mut admin = server.connect().await;
    exec(
        &mut admin,
        "CREATE WORKLOAD GROUP tight PROPERTIES ('memory_limit'='4%', \
         'enable_memory_overcommit'='false', 'queue_timeout'='5000')",
    )
    .await;
    let in_group = || async {
        let mut c = server.connect().await;
        exec(&mut c, "SET workload_group = 'tight'").await;
        c
    };
    // A builds a large hash table (which cannot spill; about 33 MB, under the 90% of the
    // 43 MB limit at which new queries wait) and keeps it while its result is left unread
    // after the first row. Its rows are wide (about 150 MB in all, computed after the join),
    // so no socket buffer can take the whole result and let A finish early.
    let mut a = in_group().await;
    let mut big = a
        .query_iter(
            "SELECT a.value, repeat('x', 100) FROM generate_series(1, 1500000) a \
             JOIN generate_series(1, 1500000) b ON a.value = b.value",
        )
        .await
        .unwrap();
    let first: Option<mysql_async::Row> = big.next().await.unwrap();
    assert!(first.is_some());
    let held = || async {
        let mut admin = server.connect().await;
        let r = rows(
            &mut admin,
            "SELECT memory_usage_bytes FROM information_schema.workload_group_resource_usage \
             WHERE workload_group_name = 'tight'",
        )
        .await;
        r[0][0].as_deref().unwrap_or("0").parse::<u64>().unwrap()
    };
    let a_bytes = held().await;
    assert!(a_bytes > 30 << 20, "A holds {a_bytes} bytes");
    // B's smaller join does not fit beside A: A, the largest, is cancelled and B runs.
    let mut b = in_group().await;
    let got: Vec<(i64,)> = b
        .query(
            "SELECT COUNT(*) FROM generate_series(1, 600000) a \
             JOIN generate_series(1, 600000) b ON a.value = b.value",
        )
        .await
        .unwrap();
    assert_eq!(got, vec![(600000,)]);
    let mut a_error = None;
    loop {
        match big.next().await {
            Ok(Some(_)) => continue,
            Ok(None) => break,
            Err(e) => {
                a_error = Some(e.to_string());
                break;
            }
        }
    }
    let m = a_error.expect("A was cancelled");
    assert!(
        m.contains("MEM_LIMIT_EXCEEDED")
            && m.contains("largest query of workload group 'tight'")
            && m.contains("group limit"),
        "{m}"
    );
}

#[tokio::test]
async fn decoding_a_scan_counts_against_the_group_and_the_cache_yields_to_queries() {
    // The column cache may not outgrow mem_limit, which queries share with it.
    let server =
        TestServer::start_with_config("mem_limit = \"64MB\"\ncolumn_cache_mb = 1024\n").await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE m").await;
    exec(
        &mut c,
        "CREATE TABLE m.wide (k INT, s VARCHAR(300)) DUPLICATE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    // 200,000 rows of 200 bytes: a 128K-row group decodes to about 26 MB.
    exec(
        &mut c,
        "INSERT INTO m.wide SELECT value, repeat('x', 200) FROM generate_series(1, 200000)",
    )
    .await;
    exec(
        &mut c,
        "CREATE WORKLOAD GROUP scant PROPERTIES ('memory_limit'='4%', \
         'enable_memory_overcommit'='false')",
    )
    .await;
    let scan = "SELECT COUNT(*) FROM m.wide WHERE s LIKE '%y%'";
    // 4% of 64 MB is under 3 MB: the decode does not fit, and says so.
    exec(&mut c, "SET workload_group = 'scant'").await;
    let (number, m) = error_text(&mut c, scan).await;
    assert!(m.contains("MEM_LIMIT_EXCEEDED"), "{number}: {m}");
    assert!(m.contains("workload group 'scant'"), "{m}");
    // In `normal` it runs, and its decoded columns stay in the cache.
    exec(&mut c, "SET workload_group = 'normal'").await;
    assert_eq!(rows(&mut c, scan).await, vec![vec![s("0")]]);
    // A join that needs about half of mem_limit still runs beside the cached columns (about
    // 40 MB): the cache gives memory back.
    let join = "SELECT COUNT(*) FROM generate_series(1, 1500000) a \
                JOIN generate_series(1, 1500000) b ON a.value = b.value";
    assert_eq!(rows(&mut c, join).await, vec![vec![s("1500000")]]);
    assert_eq!(rows(&mut c, scan).await, vec![vec![s("0")]]);
}

#[tokio::test]
async fn memory_a_query_freed_goes_back_to_the_os() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    let before = server.resident_bytes();
    // About 900 MB at its peak: ten million distinct strings in a hash table. The peak is
    // sampled while it runs (memory may start going back before the answer arrives).
    let big = "SELECT COUNT(DISTINCT concat('abcdefghijklmnop', value)) \
               FROM generate_series(1, 10000000)";
    let query = rows(&mut c, big);
    tokio::pin!(query);
    let mut peak = before;
    let answer = loop {
        tokio::select! {
            answer = &mut query => break answer,
            _ = tokio::time::sleep(Duration::from_millis(50)) => {
                peak = peak.max(server.resident_bytes());
            }
        }
    };
    assert_eq!(answer, vec![vec![s("10000000")]]);
    assert!(
        peak > before + 300_000_000,
        "the query should have grown the process: {before} -> {peak}"
    );
    // Within a few seconds of the query's end, most of it is returned.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let now = server.resident_bytes();
        if now < before + (peak - before) / 3 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "resident memory stayed at {now} bytes (before the query {before}, peak {peak})"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
