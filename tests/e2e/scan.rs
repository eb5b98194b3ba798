//! Scans through the decoded column cache: repeated queries, zone-map pruning of row groups,
//! delete bitmaps over cached columns, and the Parquet path that `pushdown_filters` selects.

use crate::harness::*;
use mysql_async::Conn;

/// The number after `name=` in an EXPLAIN ANALYZE line (metrics summed over partitions).
fn metric(line: &str, name: &str) -> Option<u64> {
    let start = line.find(&format!("{name}="))? + name.len() + 1;
    let digits: String = line[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

async fn plan_lines(c: &mut Conn, sql: &str) -> Vec<String> {
    rows(c, sql)
        .await
        .into_iter()
        .flat_map(|r| r.into_iter().flatten())
        .flat_map(|cell| cell.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

fn scan_line(plan: &[String]) -> String {
    plan.iter()
        .find(|l| l.contains("SegmentScanExec"))
        .unwrap_or_else(|| panic!("no SegmentScanExec in {plan:#?}"))
        .clone()
}

/// `u`: a one-bucket UNIQUE KEY(k) table holding (1, 1) .. (10, 1) in one segment.
async fn create_unique_u_with_ten_rows(c: &mut Conn) {
    exec(
        c,
        "CREATE TABLE u (k INT NOT NULL, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    let values: Vec<String> = (1..=10).map(|k| format!("({k}, 1)")).collect();
    exec(c, &format!("INSERT INTO u VALUES {}", values.join(", "))).await;
}

#[tokio::test]
async fn cached_scans_prune_row_groups_and_repeat_exactly() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sc").await;
    exec(&mut c, "USE sc").await;
    exec(
        &mut c,
        "CREATE TABLE t (k INT NOT NULL, v BIGINT, name VARCHAR(20)) DUPLICATE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    // Three loads with disjoint key ranges: three segments, one row group each.
    for load in 0..3 {
        let values: Vec<String> = (1..=1000)
            .map(|i| {
                let k = load * 1000 + i;
                format!("({k}, {}, 'n{k:05}')", k * 2)
            })
            .collect();
        exec(
            &mut c,
            &format!("INSERT INTO t VALUES {}", values.join(", ")),
        )
        .await;
    }
    let query = "SELECT COUNT(*), SUM(v), MIN(name) FROM t WHERE k > 2500";
    let expected = vec![vec![s("500"), s("2750500"), s("n02501")]];
    assert_eq!(rows(&mut c, query).await, expected);
    // Only the last load's row group can hold k > 2500.
    let plan = plan_lines(&mut c, &format!("EXPLAIN {query}")).await;
    assert!(scan_line(&plan).contains("row_groups=1/3"), "{plan:#?}");
    // The first run decoded the columns; now they come from the cache.
    let plan = plan_lines(&mut c, &format!("EXPLAIN ANALYZE {query}")).await;
    let scan = scan_line(&plan);
    assert!(metric(&scan, "cache_hits").unwrap_or(0) >= 2, "{scan}");
    assert_eq!(metric(&scan, "cache_misses").unwrap_or(0), 0, "{scan}");
    assert_eq!(rows(&mut c, query).await, expected);
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), SUM(v) FROM t").await,
        vec![vec![s("3000"), s("9003000")]]
    );
    // Late materialization in the Parquet reader takes the Parquet path, with the same answer.
    exec(
        &mut c,
        "SET datafusion.execution.parquet.pushdown_filters = true",
    )
    .await;
    let plan = plan_lines(&mut c, &format!("EXPLAIN {query}")).await;
    assert!(
        !plan.iter().any(|l| l.contains("SegmentScanExec")),
        "{plan:#?}"
    );
    assert_eq!(rows(&mut c, query).await, expected);
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn equal_leading_keys_and_a_range_on_the_next_give_one_run() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sk").await;
    exec(&mut c, "USE sk").await;
    exec(
        &mut c,
        "CREATE TABLE ev (e INT, d DATE, g INT, v BIGINT) DUPLICATE KEY(e, d, g) \
         DISTRIBUTED BY HASH(v) BUCKETS 1",
    )
    .await;
    // Sorted by (e, d, g); some NULL days sort first inside each e.
    exec(
        &mut c,
        "INSERT INTO ev SELECT CAST(v % 7 AS INT), CASE WHEN v % 97 = 0 THEN CAST(NULL AS DATE) \
         ELSE CAST(DATE '2024-06-01' + CAST(v % 30 AS INT) AS DATE) END, CAST((v / 1000) % 3 AS INT), v \
         FROM generate_series(1, 300000) AS g(v)",
    )
    .await;
    // Each answer equals the one through expressions the key bounds do not read.
    let cases = [
        (
            "e = 3 AND d BETWEEN '2024-06-05' AND '2024-06-09'",
            "e + 0 = 3 AND d + INTERVAL 0 DAY BETWEEN '2024-06-05' AND '2024-06-09'",
        ),
        (
            "e = 3 AND d = '2024-06-05' AND g = 2",
            "e + 0 = 3 AND d + INTERVAL 0 DAY = '2024-06-05' AND g + 0 = 2",
        ),
        (
            "e = 3 AND d = '2024-06-05' AND g > 0",
            "e + 0 = 3 AND d + INTERVAL 0 DAY = '2024-06-05' AND g + 0 > 0",
        ),
        (
            "e = 0 AND d < '2024-06-03'",
            "e + 0 = 0 AND d + INTERVAL 0 DAY < '2024-06-03'",
        ),
        (
            "e = 6 AND d > '2024-06-29'",
            "e + 0 = 6 AND d + INTERVAL 0 DAY > '2024-06-29'",
        ),
        (
            "e >= 5 AND d = '2024-06-05'",
            "e + 0 >= 5 AND d + INTERVAL 0 DAY = '2024-06-05'",
        ),
        (
            "e IN (5, 1, 3, 1) AND d BETWEEN '2024-06-05' AND '2024-06-07'",
            "e + 0 IN (5, 1, 3) AND d + INTERVAL 0 DAY BETWEEN '2024-06-05' AND '2024-06-07'",
        ),
        (
            "e IN (2, 4) AND d IN ('2024-06-05', '2024-06-20') AND g IN (0, 2)",
            "e + 0 IN (2, 4) AND d + INTERVAL 0 DAY IN ('2024-06-05', '2024-06-20') AND g + 0 IN (0, 2)",
        ),
        (
            "(e = 6 OR e = 2) AND d >= '2024-06-28'",
            "(e + 0 = 6 OR e + 0 = 2) AND d + INTERVAL 0 DAY >= '2024-06-28'",
        ),
        // No such e: nothing.
        (
            "e = 9 AND d = '2024-06-05'",
            "e + 0 = 9 AND d + INTERVAL 0 DAY = '2024-06-05'",
        ),
    ];
    for (fast, reference) in cases {
        let expect = rows(
            &mut c,
            &format!("SELECT COUNT(*), SUM(v) FROM ev WHERE {reference}"),
        )
        .await;
        let empty = reference.starts_with("e + 0 = 9");
        assert_eq!(expect[0][0] == s("0"), empty, "{reference}: {expect:?}");
        for _ in 0..2 {
            let sql = format!("SELECT COUNT(*), SUM(v) FROM ev WHERE {fast}");
            assert_eq!(rows(&mut c, &sql).await, expect, "{sql}");
        }
    }
    // The scan hands on exactly the rows of (3, 2024-06-05, 2), not their row groups'.
    let plan = plan_lines(
        &mut c,
        "EXPLAIN ANALYZE SELECT COUNT(*) FROM ev WHERE e = 3 AND d = '2024-06-05' AND g = 2",
    )
    .await;
    let expect = rows(
        &mut c,
        "SELECT COUNT(*) FROM ev WHERE e + 0 = 3 AND d + INTERVAL 0 DAY = '2024-06-05' AND g + 0 = 2",
    )
    .await;
    let scan = scan_line(&plan);
    assert_eq!(
        metric(&scan, "output_rows").map(|n| n.to_string()),
        expect[0][0],
        "{scan}"
    );
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn replaced_unique_rows_stay_hidden_in_cached_columns() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE su").await;
    exec(&mut c, "USE su").await;
    create_unique_u_with_ten_rows(&mut c).await;
    // Warm the cache with the first segment's columns.
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), SUM(v) FROM u").await,
        vec![vec![s("10"), s("10")]]
    );
    // Replacing keys 1..5 marks their old rows in the first segment's delete bitmap.
    exec(
        &mut c,
        "INSERT INTO u VALUES (1, 100), (2, 100), (3, 100), (4, 100), (5, 100)",
    )
    .await;
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), SUM(v) FROM u").await,
        vec![vec![s("10"), s("505")]]
    );
    let plan = plan_lines(&mut c, "EXPLAIN SELECT SUM(v) FROM u").await;
    assert!(scan_line(&plan).contains("segments=2"), "{plan:#?}");
    assert_eq!(
        rows(&mut c, "SELECT k, v FROM u WHERE k IN (1, 6) ORDER BY k").await,
        vec![vec![s("1"), s("100")], vec![s("6"), s("1")]]
    );
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn wide_filtered_scans_use_late_materialization() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sw").await;
    exec(&mut c, "USE sw").await;
    let columns: Vec<String> = (1..=20).map(|i| format!("c{i} INT")).collect();
    exec(
        &mut c,
        &format!(
            "CREATE TABLE w (k INT NOT NULL, {}) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
            columns.join(", ")
        ),
    )
    .await;
    let rows_sql: Vec<String> = (1..=100)
        .map(|k| {
            let vals: Vec<String> = (1..=20).map(|i| (k * i).to_string()).collect();
            format!("({k}, {})", vals.join(", "))
        })
        .collect();
    exec(
        &mut c,
        &format!("INSERT INTO w VALUES {}", rows_sql.join(", ")),
    )
    .await;
    // All 21 columns with a filter: the Parquet reader decodes c1.. only for matching rows.
    let wide = "SELECT * FROM w WHERE k = 7";
    let plan = plan_lines(&mut c, &format!("EXPLAIN {wide}")).await;
    assert!(
        !plan.iter().any(|l| l.contains("SegmentScanExec")),
        "{plan:#?}"
    );
    let r = rows(&mut c, wide).await;
    assert_eq!(r.len(), 1);
    assert_eq!(r[0][0], s("7"));
    assert_eq!(r[0][20], s("140"));
    // A few columns, or no filter: the column cache.
    for narrow in ["SELECT k, c20 FROM w WHERE k = 7", "SELECT * FROM w"] {
        let plan = plan_lines(&mut c, &format!("EXPLAIN {narrow}")).await;
        scan_line(&plan);
    }
    assert_eq!(
        rows(&mut c, "SELECT k, c20 FROM w WHERE k = 7").await,
        vec![vec![s("7"), s("140")]]
    );
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn scans_read_only_the_run_of_rows_within_key_bounds() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sk").await;
    exec(&mut c, "USE sk").await;
    exec(
        &mut c,
        "CREATE TABLE t (k INT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(v) BUCKETS 1",
    )
    .await;
    // One sorted segment of three row groups; every 100th row has a NULL key (sorted first).
    exec(
        &mut c,
        "INSERT INTO t SELECT CASE WHEN v % 100 = 0 THEN CAST(NULL AS INT) \
         ELSE CAST(v % 1000 AS INT) END, v FROM generate_series(1, 300000) AS g(v)",
    )
    .await;
    let cases = [
        ("k = 517", "300", "45005100"),
        ("k BETWEEN 10 AND 19", "3000", "448543500"),
        ("19 >= k AND k >= 10 AND v > 0", "3000", "448543500"),
        ("k > 998", "300", "45149700"),
        ("k < 1", "0", "NULL"),
        ("k IS NULL", "3000", "450150000"),
    ];
    for _ in 0..2 {
        // The second round reads the cached columns.
        for (cond, count, sum) in cases {
            let sql = format!("SELECT COUNT(*), SUM(v) FROM t WHERE {cond}");
            let sum = if sum == "NULL" { None } else { s(sum) };
            assert_eq!(rows(&mut c, &sql).await, vec![vec![s(count), sum]], "{sql}");
        }
    }
    // The scan hands on only the run of rows with k = 517, not its row groups' 300,000 rows.
    let plan = plan_lines(
        &mut c,
        "EXPLAIN ANALYZE SELECT COUNT(*), SUM(v) FROM t WHERE k = 517",
    )
    .await;
    let scan = scan_line(&plan);
    assert_eq!(metric(&scan, "output_rows"), Some(300), "{scan}");

    // Rows replaced in a Unique table stay hidden inside a key run.
    create_unique_u_with_ten_rows(&mut c).await;
    exec(&mut c, "INSERT INTO u VALUES (3, 100), (4, 100), (5, 100)").await;
    // The second case has several runs (an IN list) and the replaced rows' mask together.
    let cases = [
        ("k >= 3 AND k <= 7", "5", "302"),
        ("k IN (9, 4, 1, 3)", "4", "202"),
    ];
    for _ in 0..2 {
        for (cond, count, sum) in cases {
            let sql = format!("SELECT COUNT(*), SUM(v) FROM u WHERE {cond}");
            assert_eq!(
                rows(&mut c, &sql).await,
                vec![vec![s(count), s(sum)]],
                "{sql}"
            );
        }
    }
    c.disconnect().await.unwrap();
}
