//! A/B-experiment analytics through a real client: BITMAP, HLL and QUANTILE_STATE columns in
//! Aggregate-key tables (INSERT, Stream Load with `to_bitmap(..)` in `columns`, merges across
//! loads and compaction, restart), the Doris functions over them, statistics with Doris's
//! semantics, and query profiles.

use crate::harness::*;
use mysql_async::prelude::Queryable;
use std::process::Command;

/// The first column of every row `sql` returns (none NULL).
async fn first_column(c: &mut mysql_async::Conn, sql: &str) -> Vec<String> {
    rows(c, sql)
        .await
        .into_iter()
        .map(|r| r[0].clone().expect("a value"))
        .collect()
}

/// Stream Load of `body` into `db.table` with `headers`; returns the JSON reply.
fn stream_load(
    server: &TestServer,
    db: &str,
    table: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> serde_json::Value {
    let path = server.data_dir.path().join(format!("{table}.csv"));
    std::fs::write(&path, body).expect("write body");
    let url = format!(
        "http://127.0.0.1:{}/api/{db}/{table}/_stream_load",
        server.http_port
    );
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--location-trusted", "-u", "root:"]);
    for (k, v) in headers {
        cmd.arg("-H").arg(format!("{k}:{v}"));
    }
    let out = cmd
        .arg("-T")
        .arg(&path)
        .arg("-XPUT")
        .arg(&url)
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))
}

#[tokio::test]
async fn bitmap_and_hll_columns_merge_across_loads_and_restarts() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE ab").await;
    exec(&mut c, "USE ab").await;
    exec(
        &mut c,
        "CREATE TABLE exp_users (exp_id INT, dt DATE, users BITMAP BITMAP_UNION, \
         uv HLL HLL_UNION, clicks BIGINT SUM) \
         AGGREGATE KEY(exp_id, dt) DISTRIBUTED BY HASH(exp_id) BUCKETS 2",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO exp_users VALUES \
         (1, '2026-11-01', to_bitmap(10), hll_hash(10), 1), \
         (1, '2026-11-01', to_bitmap(11), hll_hash(11), 1), \
         (2, '2026-11-01', bitmap_from_string('1,2,3'), hll_hash(1), 5)",
    )
    .await;
    // A second load of the same keys merges its bitmaps into the stored ones.
    let reply = stream_load(
        &server,
        "ab",
        "exp_users",
        &[
            ("column_separator", ","),
            (
                "columns",
                "exp_id,dt,uid,clicks,users=to_bitmap(uid),uv=hll_hash(uid)",
            ),
        ],
        "1,2026-11-01,11,1\n1,2026-11-01,12,1\n1,2026-11-02,10,1\n2,2026-11-01,4,1\n",
    );
    assert_eq!(reply["Status"], "Success", "{reply}");
    assert_eq!(reply["NumberLoadedRows"], 4, "{reply}");
    let expect = vec![
        vec![
            s("1"),
            s("2026-11-01"),
            s("10,11,12"),
            s("3"),
            s("3"),
            s("4"),
        ],
        vec![s("1"), s("2026-11-02"), s("10"), s("1"), s("1"), s("1")],
        vec![
            s("2"),
            s("2026-11-01"),
            s("1,2,3,4"),
            s("4"),
            s("2"),
            s("6"),
        ],
    ];
    let per_key = "SELECT exp_id, dt, bitmap_to_string(users), bitmap_count(users), \
                   hll_cardinality(uv), clicks FROM exp_users ORDER BY exp_id, dt";
    assert_eq!(rows(&mut c, per_key).await, expect);
    // Unions across keys: users of experiment 1 over both days, and everyone.
    let totals = "SELECT exp_id, bitmap_union_count(users), hll_union_agg(uv), \
                  bitmap_to_string(bitmap_union(users)) FROM exp_users GROUP BY exp_id ORDER BY exp_id";
    let expect_totals = vec![
        vec![s("1"), s("3"), s("3"), s("10,11,12")],
        vec![s("2"), s("4"), s("2"), s("1,2,3,4")],
    ];
    assert_eq!(rows(&mut c, totals).await, expect_totals);
    assert_eq!(
        rows(
            &mut c,
            "SELECT intersect_count(users, dt, '2026-11-01', '2026-11-02') FROM exp_users WHERE exp_id = 1"
        )
        .await,
        vec![vec![s("1")]]
    );
    drop(c);
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE ab").await;
    assert_eq!(rows(&mut c, per_key).await, expect);
    assert_eq!(rows(&mut c, totals).await, expect_totals);
}

#[tokio::test]
async fn quantile_state_columns_merge_across_loads_compaction_and_restarts() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE q").await;
    exec(&mut c, "USE q").await;
    exec(
        &mut c,
        "CREATE TABLE latency (page INT, ms QUANTILE_STATE QUANTILE_UNION NOT NULL) \
         AGGREGATE KEY(page) DISTRIBUTED BY HASH(page) BUCKETS 1",
    )
    .await;
    // Page 1 gets 1..5 ms by INSERT, then 6..10 by Stream Loads (one rowset each); page 2
    // gets 10,000 values, kept as a t-digest.
    exec(
        &mut c,
        "INSERT INTO latency VALUES (1, to_quantile_state(1, 2048)), (1, to_quantile_state(2)), \
         (1, to_quantile_state(3)), (1, to_quantile_state(4)), (1, to_quantile_state(5))",
    )
    .await;
    for ms in 6..=10 {
        let reply = stream_load(
            &server,
            "q",
            "latency",
            &[
                ("column_separator", ","),
                ("columns", "page,v,ms=to_quantile_state(v, 2048)"),
            ],
            &format!("1,{ms}\n"),
        );
        assert_eq!(reply["Status"], "Success", "{reply}");
    }
    exec(
        &mut c,
        "INSERT INTO latency SELECT 2, to_quantile_state(number) FROM numbers('number' = '10000')",
    )
    .await;
    // Exact values interpolate (5.5 between 5 and 6, 9.1 between 9 and 10); the digest keeps
    // the least and greatest values and estimates the rest (checked to the hundred).
    let percentiles = "SELECT page, quantile_percent(ms, 0), quantile_percent(ms, 1), \
                       IF(page = 1, quantile_percent(ms, 0.5), round(quantile_percent(ms, 0.5) / 100)), \
                       IF(page = 1, quantile_percent(ms, 0.9), round(quantile_percent(ms, 0.9) / 100)) \
                       FROM latency ORDER BY page";
    let expect = vec![
        vec![s("1"), s("1"), s("10"), s("5.5"), s("9.1")],
        vec![s("2"), s("0"), s("9999"), s("50"), s("90")],
    ];
    assert_eq!(rows(&mut c, percentiles).await, expect);
    // Merge-on-read and compaction give the same answers, and so does a restart.
    wait_for_compaction(&mut c, "latency", 1, std::time::Duration::from_secs(60)).await;
    assert_eq!(rows(&mut c, percentiles).await, expect);
    drop(c);
    server.kill9();
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE q").await;
    assert_eq!(rows(&mut c, percentiles).await, expect);
    assert_eq!(
        rows(
            &mut c,
            "SELECT quantile_percent(quantile_union(ms), 0.5) FROM latency WHERE page = 1"
        )
        .await,
        vec![vec![s("5.5")]]
    );
    // Bytes that are no state, and text loaded straight into the column, are refused.
    let err = c
        .query_drop("INSERT INTO latency VALUES (3, 'abc')")
        .await
        .expect_err("text into a QUANTILE_STATE column");
    assert!(err.to_string().contains("to_quantile_state"), "{err}");
    let reply = stream_load(
        &server,
        "q",
        "latency",
        &[("column_separator", ","), ("columns", "page,ms")],
        "3,5\n",
    );
    assert_eq!(reply["Status"], "Fail", "{reply}");
}

#[tokio::test]
async fn sketch_columns_reject_what_they_cannot_hold() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE ab").await;
    exec(&mut c, "USE ab").await;
    for (ddl, expect) in [
        (
            "CREATE TABLE t1 (b BITMAP, k INT) DUPLICATE KEY(b) DISTRIBUTED BY HASH(k) BUCKETS 1",
            "value columns",
        ),
        (
            "CREATE TABLE t2 (k INT, b BITMAP SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
            "use BITMAP_UNION",
        ),
        (
            "CREATE TABLE t3 (k INT, h INT HLL_UNION) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
            "HLL_UNION",
        ),
    ] {
        let err = c.query_drop(ddl).await.expect_err(ddl);
        assert!(err.to_string().contains(expect), "{ddl}: {err}");
    }
    exec(
        &mut c,
        "CREATE TABLE u (k INT, b BITMAP BITMAP_UNION) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    // Text loaded straight into a BITMAP column is refused with the way to do it, and nothing
    // is written.
    let reply = stream_load(
        &server,
        "ab",
        "u",
        &[("column_separator", ","), ("columns", "k,b")],
        "1,5\n",
    );
    assert_eq!(reply["Status"], "Fail", "{reply}");
    assert!(
        reply["Message"]
            .as_str()
            .unwrap_or("")
            .contains("to_bitmap"),
        "{reply}"
    );
    let err = c
        .query_drop("INSERT INTO u VALUES (1, 'not a bitmap')")
        .await
        .expect_err("raw text into a bitmap column");
    assert!(err.to_string().contains("not a serialized bitmap"), "{err}");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM u").await,
        vec![vec![s("0")]]
    );
}

#[tokio::test]
async fn query_profiles_show_each_operator() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE ab").await;
    exec(&mut c, "USE ab").await;
    exec(
        &mut c,
        "CREATE TABLE ev (g INT, u BIGINT, url VARCHAR(100)) DUPLICATE KEY(g) \
         DISTRIBUTED BY HASH(u) BUCKETS 2",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO ev VALUES (1, 1, 'https://a.com/x.html'), (1, 2, 'https://b.com/y'), \
         (2, 3, 'https://a.com/z.html')",
    )
    .await;
    // Off by default: nothing is kept.
    exec(&mut c, "SELECT COUNT(*) FROM ev").await;
    assert!(rows(&mut c, "SHOW QUERY PROFILE").await.is_empty());
    exec(&mut c, "SET enable_profile = true").await;
    assert_eq!(
        rows(
            &mut c,
            "SELECT g, COUNT(*) FROM ev WHERE url LIKE '%.html' GROUP BY g ORDER BY g"
        )
        .await,
        vec![vec![s("1"), s("1")], vec![s("2"), s("1")]]
    );
    // The profile is stored when the statement's stream is dropped on the server, which may be
    // a moment after the client has read the last row.
    let mut list = rows(&mut c, "SHOW QUERY PROFILE '/'").await;
    for _ in 0..50 {
        if !list.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        list = rows(&mut c, "SHOW QUERY PROFILE '/'").await;
    }
    assert_eq!(list.len(), 1, "{list:?}");
    let id = list[0][0].clone().expect("query id");
    assert!(list[0][3]
        .as_deref()
        .unwrap_or("")
        .contains("LIKE '%.html'"));
    assert_eq!(list[0][6], s("OK"));
    let ops = rows(&mut c, &format!("SHOW QUERY PROFILE '/{id}'")).await;
    assert!(ops.len() >= 3, "{ops:?}");
    // The root is the sort and returns the 2 groups; some scan read the 3 stored rows.
    assert_eq!(ops[0][1], None);
    assert_eq!(ops[0][4], s("2"), "{ops:?}");
    let scan = ops
        .iter()
        .find(|r| r[2].as_deref().unwrap_or("").contains("SegmentScan"))
        .unwrap_or_else(|| panic!("no scan in {ops:?}"));
    assert_eq!(scan[4], s("3"), "{scan:?}");
    let scanned: u64 = scan[7].as_deref().unwrap_or("0").parse().unwrap();
    assert!(scanned > 0, "{scan:?}");
    let err = c
        .query_drop("SHOW QUERY PROFILE '/nope'")
        .await
        .expect_err("unknown profile");
    assert!(err.to_string().contains("Unknown query profile"), "{err}");
    // EXPLAIN ANALYZE shows the same per-operator figures.
    let explain = rows(
        &mut c,
        "EXPLAIN ANALYZE SELECT COUNT(*) FROM ev WHERE g = 1",
    )
    .await;
    let text: String = explain
        .iter()
        .flat_map(|r| r.iter().flatten().cloned())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("output_rows"), "{text}");
    assert!(text.contains("bytes_scanned"), "{text}");
}

#[tokio::test]
async fn ilike_and_key_filters_on_merged_tablets() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE ab").await;
    exec(&mut c, "USE ab").await;
    exec(
        &mut c,
        "CREATE TABLE ev (k INT, url VARCHAR(100)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO ev VALUES (1, 'https://SHOP.example.com'), (2, 'https://example.com/Workshop'), \
         (3, 'https://example.com/sho-p'), (4, NULL), (5, 'Ünïcode shop')",
    )
    .await;
    // ILIKE '%word%' (the SIMD path) agrees with ILIKE's meaning, NULLs included.
    for (sql, expect) in [
        (
            "SELECT k FROM ev WHERE url ILIKE '%sHoP%' ORDER BY k",
            vec!["1", "2", "5"],
        ),
        (
            "SELECT k FROM ev WHERE url NOT ILIKE '%shop%' ORDER BY k",
            vec!["3"],
        ),
        (
            "SELECT k FROM ev WHERE url ILIKE '%sho_p%' ORDER BY k",
            vec!["3"],
        ),
        (
            "SELECT k FROM ev WHERE url LIKE '%shop%' ORDER BY k",
            vec!["2", "5"],
        ),
    ] {
        assert_eq!(first_column(&mut c, sql).await, expect, "{sql}");
    }
    assert_eq!(
        rows(
            &mut c,
            "SELECT url ILIKE '%SHOP%', NULL ILIKE '%a%' FROM ev WHERE k = 1"
        )
        .await,
        vec![vec![s("1"), None]]
    );
    // An Aggregate-key table read before compaction merges per key; filters on keys are
    // applied before the merge and give the same answers as after it.
    exec(
        &mut c,
        "CREATE TABLE agg (e INT, d DATE, n BIGINT SUM, users BITMAP BITMAP_UNION) \
         AGGREGATE KEY(e, d) DISTRIBUTED BY HASH(e) BUCKETS 1",
    )
    .await;
    for i in 0..3 {
        exec(
            &mut c,
            &format!(
                "INSERT INTO agg VALUES (1, '2026-11-01', 1, to_bitmap({i})), \
                 (1, '2026-11-02', 10, to_bitmap({})), (2, '2026-11-01', 100, to_bitmap(7))",
                i + 10
            ),
        )
        .await;
    }
    for (sql, expect) in [
        (
            "SELECT d, n, bitmap_to_string(users) FROM agg WHERE e = 1 ORDER BY d",
            vec![
                vec![s("2026-11-01"), s("3"), s("0,1,2")],
                vec![s("2026-11-02"), s("30"), s("10,11,12")],
            ],
        ),
        (
            "SELECT e, n FROM agg WHERE d = '2026-11-01' AND n > 5 ORDER BY e",
            vec![vec![s("2"), s("300")]],
        ),
        (
            "SELECT e, d FROM agg WHERE n = 3",
            vec![vec![s("1"), s("2026-11-01")]],
        ),
        (
            "SELECT bitmap_union_count(users) FROM agg WHERE e = 1 AND d >= '2026-11-01'",
            vec![vec![s("6")]],
        ),
    ] {
        assert_eq!(rows(&mut c, sql).await, expect, "{sql}");
    }
    // When the tablet is still merged on read, the key filter goes below the merge.
    let plan: String = rows(&mut c, "EXPLAIN SELECT n FROM agg WHERE e = 1 AND n > 0")
        .await
        .into_iter()
        .flat_map(|r| r.into_iter().flatten())
        .collect::<Vec<_>>()
        .join("\n");
    if plan.contains("TabletMergeExec") {
        assert!(plan.contains("key_filter=e@0 = 1"), "{plan}");
        assert!(!plan.contains("key_filter=e@0 = 1 AND"), "{plan}");
    }
}
