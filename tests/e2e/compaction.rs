//! Background compaction through the real server: many single-row loads into each key model
//! settle into one rowset per tablet with the same results, kill -9 while compaction runs loses
//! nothing and leaves no stray files, and loads fail fast (never hang) past the version bound.

use crate::harness::*;
use mysql_async::prelude::*;
use mysql_async::Conn;
use std::collections::BTreeMap;
use std::time::Duration;

const SETTLE: Duration = Duration::from_secs(90);

/// Expected contents of the three test tables, kept in step with what was inserted.
#[derive(Default)]
struct Expected {
    /// Duplicate keys: every row.
    dup: Vec<(i64, i64)>,
    /// Unique keys: the newest value per key.
    uniq: BTreeMap<i64, (i64, String)>,
    /// Aggregate keys: SUM, MAX, REPLACE per key.
    agg: BTreeMap<i64, (i64, i64, String)>,
}

impl Expected {
    fn dup_rows(&self) -> Vec<Vec<Option<String>>> {
        let mut rows = self.dup.clone();
        rows.sort();
        rows.iter()
            .map(|(k, v)| vec![s(&k.to_string()), s(&v.to_string())])
            .collect()
    }

    fn uniq_rows(&self) -> Vec<Vec<Option<String>>> {
        self.uniq
            .iter()
            .map(|(k, (v, t))| vec![s(&k.to_string()), s(&v.to_string()), s(t)])
            .collect()
    }

    fn agg_rows(&self) -> Vec<Vec<Option<String>>> {
        self.agg
            .iter()
            .map(|(k, (sum, max, r))| {
                vec![
                    s(&k.to_string()),
                    s(&sum.to_string()),
                    s(&max.to_string()),
                    s(r),
                ]
            })
            .collect()
    }
}

async fn create_tables(c: &mut Conn, db: &str) {
    exec(c, &format!("CREATE DATABASE {db}")).await;
    exec(
        c,
        &format!(
            "CREATE TABLE {db}.dup (k BIGINT, v BIGINT) DUPLICATE KEY(k) \
             DISTRIBUTED BY HASH(k) BUCKETS 2"
        ),
    )
    .await;
    exec(
        c,
        &format!(
            "CREATE TABLE {db}.uniq (k BIGINT, v BIGINT, t VARCHAR(20)) UNIQUE KEY(k) \
             DISTRIBUTED BY HASH(k) BUCKETS 2"
        ),
    )
    .await;
    exec(
        c,
        &format!(
            "CREATE TABLE {db}.agg (k BIGINT, total BIGINT SUM, top BIGINT MAX, \
             last VARCHAR(20) REPLACE) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"
        ),
    )
    .await;
}

/// Single-row INSERTs `from..to` into the three tables, keys repeating so Unique rows are
/// overwritten and Aggregate rows merged.
async fn insert_rows(c: &mut Conn, db: &str, from: i64, to: i64, e: &mut Expected) {
    for i in from..to {
        let k = i % 37;
        exec(c, &format!("INSERT INTO {db}.dup VALUES ({k}, {i})")).await;
        e.dup.push((k, i));
        let t = format!("u{i}");
        exec(
            c,
            &format!("INSERT INTO {db}.uniq VALUES ({k}, {i}, '{t}')"),
        )
        .await;
        e.uniq.insert(k, (i, t));
        let top = (i * 7919) % 1000;
        let r = format!("r{i}");
        exec(
            c,
            &format!("INSERT INTO {db}.agg VALUES ({k}, {i}, {top}, '{r}')"),
        )
        .await;
        let entry = e.agg.entry(k).or_insert((0, i64::MIN, String::new()));
        entry.0 += i;
        entry.1 = entry.1.max(top);
        entry.2 = r;
    }
}

async fn check_contents(c: &mut Conn, db: &str, e: &Expected) {
    assert_eq!(
        rows(c, &format!("SELECT k, v FROM {db}.dup ORDER BY k, v")).await,
        e.dup_rows(),
        "duplicate-key table"
    );
    assert_eq!(
        rows(c, &format!("SELECT k, v, t FROM {db}.uniq ORDER BY k")).await,
        e.uniq_rows(),
        "unique-key table"
    );
    assert_eq!(
        rows(
            c,
            &format!("SELECT k, total, top, last FROM {db}.agg ORDER BY k")
        )
        .await,
        e.agg_rows(),
        "aggregate-key table"
    );
}

fn num(v: &Option<String>) -> u64 {
    v.as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("not a number: {v:?}"))
}

/// Segment files on disk under the data directory.
fn segment_files(dir: &std::path::Path) -> u64 {
    fn walk(dir: &std::path::Path) -> u64 {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        let p = e.path();
                        if p.is_dir() {
                            walk(&p)
                        } else {
                            1
                        }
                    })
                    .sum()
            })
            .unwrap_or(0)
    }
    walk(&dir.join("data"))
}

/// Waits (briefly: a publish deletes the replaced files right after the catalog commit) until the
/// segment files on disk are exactly those SHOW TABLETS counts.
async fn files_match_catalog(c: &mut Conn, server: &TestServer, tables: &[&str]) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut referenced = 0;
        for table in tables {
            referenced += rows(c, &format!("SHOW TABLETS FROM {table}"))
                .await
                .iter()
                .map(|t| num(&t[5]))
                .sum::<u64>();
        }
        let on_disk = segment_files(server.data_dir.path());
        if on_disk == referenced {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{on_disk} segment files on disk, {referenced} referenced"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn many_small_loads_settle_into_one_rowset_per_tablet() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    let mut e = Expected::default();
    create_tables(&mut c, "cmp").await;
    insert_rows(&mut c, "cmp", 0, 210, &mut e).await;
    check_contents(&mut c, "cmp", &e).await;
    for table in ["cmp.dup", "cmp.uniq", "cmp.agg"] {
        let tablets = wait_for_compaction(&mut c, table, 1, SETTLE).await;
        let mut versions = 0;
        for t in &tablets {
            // One rowset now covers every version the tablet's loads published.
            let version = num(&t[3]);
            versions += version;
            assert_eq!(num(&t[4]), 1, "{table}: {t:?}");
            assert_eq!(t[8], s(&format!("[1-{version}]")), "{table}: {t:?}");
            assert_eq!(num(&t[9]), 0, "{table}: deleted rows are dropped: {t:?}");
        }
        assert_eq!(versions, 210, "{table}: every insert was one version");
    }
    check_contents(&mut c, "cmp", &e).await;
    // Compacted Aggregate tablets are read without merge-on-read.
    let plan = rows(&mut c, "EXPLAIN SELECT * FROM cmp.agg").await;
    let text: Vec<String> = plan.iter().filter_map(|r| r[1].clone()).collect();
    assert!(
        text.iter().any(|l| l.contains("merge-on-read tablets=0")),
        "{text:?}"
    );
    // No file outlives compaction once no query reads it.
    files_match_catalog(&mut c, &server, &["cmp.dup", "cmp.uniq", "cmp.agg"]).await;
    // Unique rows replaced after compaction are still replaced once.
    exec(&mut c, "INSERT INTO cmp.uniq VALUES (3, -3, 'after')").await;
    e.uniq.insert(3, (-3, "after".into()));
    exec(&mut c, "INSERT INTO cmp.agg VALUES (3, 1, 5000, 'after')").await;
    let entry = e.agg.get_mut(&3).expect("key 3");
    entry.0 += 1;
    entry.1 = entry.1.max(5000);
    entry.2 = "after".into();
    check_contents(&mut c, "cmp", &e).await;
    c.disconnect().await.unwrap();
}

/// Waits until a compaction output file is being written (a `c<id>_<n>.parquet.tmp` file: loads
/// name theirs by load id); false if none appears within `timeout`.
async fn wait_for_compaction_output(dir: &std::path::Path, timeout: Duration) -> bool {
    fn find(dir: &std::path::Path) -> bool {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries.flatten().any(|e| {
                    let p = e.path();
                    let name = e.file_name().to_string_lossy().into_owned();
                    if p.is_dir() {
                        find(&p)
                    } else {
                        name.starts_with('c') && name.ends_with(".parquet.tmp")
                    }
                })
            })
            .unwrap_or(false)
    }
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if find(&dir.join("data")) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    false
}

/// crash.big holds `rows` rows: 1..=150000 repeated, v = 3k.
async fn check_big(c: &mut Conn, rows_loaded: u64) {
    let loads = rows_loaded / 150_000;
    let got = rows(
        c,
        "SELECT COUNT(*), SUM(v), COUNT(DISTINCT k) FROM crash.big",
    )
    .await;
    let sum = loads * 3 * 150_000 * 150_001 / 2;
    assert_eq!(
        got[0],
        vec![
            s(&rows_loaded.to_string()),
            s(&sum.to_string()),
            s(if loads == 0 { "0" } else { "150000" })
        ]
    );
}

#[tokio::test]
async fn kill9_during_compaction_loses_nothing() {
    let mut server = TestServer::start().await;
    let mut c = server.connect().await;
    let mut e = Expected::default();
    create_tables(&mut c, "crash").await;
    exec(
        &mut c,
        "CREATE TABLE crash.big (k BIGINT, v BIGINT) DUPLICATE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    let mut next = 0;
    let mut big_rows = 0u64;
    let mut caught_writing = 0;
    // Each round loads a burst of small loads, then four big ones (a size tier that compacts
    // for long enough to be cut), and kills the server: while a compaction writes its output
    // (seen as a compaction's temporary file), or after a fixed delay.
    for round in 0..4 {
        insert_rows(&mut c, "crash", next, next + 60, &mut e).await;
        next += 60;
        for _ in 0..4 {
            exec(
                &mut c,
                "INSERT INTO crash.big SELECT value, value * 3 FROM generate_series(1, 150000)",
            )
            .await;
            big_rows += 150_000;
        }
        drop(c);
        if round % 2 == 0 {
            if wait_for_compaction_output(server.data_dir.path(), Duration::from_secs(30)).await {
                caught_writing += 1;
            }
        } else {
            tokio::time::sleep(Duration::from_millis(150 * round)).await;
        }
        server.kill9();
        server.restart().await;
        c = server.connect().await;
        check_contents(&mut c, "crash", &e).await;
        check_big(&mut c, big_rows).await;
    }
    assert!(
        caught_writing > 0,
        "no kill landed while a compaction was writing its output"
    );
    for table in ["crash.dup", "crash.uniq", "crash.agg", "crash.big"] {
        wait_for_compaction(&mut c, table, 1, SETTLE).await;
    }
    check_contents(&mut c, "crash", &e).await;
    check_big(&mut c, big_rows).await;
    // Files of interrupted compactions (unpublished outputs, or inputs not yet deleted) are gone.
    files_match_catalog(
        &mut c,
        &server,
        &["crash.dup", "crash.uniq", "crash.agg", "crash.big"],
    )
    .await;
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn loads_fail_fast_when_compaction_cannot_keep_up() {
    // Compaction off, so versions pile up.
    let mut server =
        TestServer::start_with_config("compaction_threads = 0\nmax_tablet_versions = 20\n").await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE lim").await;
    exec(
        &mut c,
        "CREATE TABLE lim.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    for i in 0..20 {
        exec(&mut c, &format!("INSERT INTO lim.t VALUES ({i}, {i})")).await;
    }
    let started = std::time::Instant::now();
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        c.query_drop("INSERT INTO lim.t VALUES (20, 20)"),
    )
    .await
    .expect("the load must fail fast, not hang")
    .unwrap_err();
    let message = err.to_string();
    assert_eq!(code(err), 1637);
    assert!(
        message.contains("too many versions in tablet")
            && message.contains("(21 > 20)")
            && message.contains("retry later"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM lim.t").await[0][0],
        s("20")
    );
    // With compaction back on, the tablet is compacted and loads are accepted again.
    drop(c);
    server.set_config("max_tablet_versions = 20\n");
    server.terminate();
    server.restart().await;
    let mut c = server.connect().await;
    wait_for_compaction(&mut c, "lim.t", 1, SETTLE).await;
    exec(&mut c, "INSERT INTO lim.t VALUES (20, 20)").await;
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), SUM(v) FROM lim.t").await[0],
        vec![s("21"), s("210")]
    );
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn one_large_load_of_overlapping_segments_is_sorted_once_loads_stop() {
    // A segment is flushed once 500 rows are buffered (each 8192-row batch of the INSERT):
    // one INSERT writes one rowset of several segments whose keys overlap, which an
    // Aggregate table would otherwise merge on every read.
    let server = TestServer::start_with_config("write_buffer_rows = 500\n").await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE ov").await;
    exec(
        &mut c,
        "CREATE TABLE ov.agg (k INT, n BIGINT SUM) AGGREGATE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO ov.agg SELECT CAST(v % 100 AS INT), 1 FROM generate_series(1, 50000) AS g(v)",
    )
    .await;
    let tablets = rows(&mut c, "SHOW TABLETS FROM ov.agg").await;
    assert_eq!(num(&tablets[0][4]), 1, "one rowset: {tablets:?}");
    assert!(num(&tablets[0][5]) > 1, "several segments: {tablets:?}");
    let expect: Vec<Vec<Option<String>>> = (0..100)
        .map(|k| vec![s(&k.to_string()), s("500")])
        .collect();
    assert_eq!(
        rows(&mut c, "SELECT k, n FROM ov.agg ORDER BY k").await,
        expect
    );
    // The quiet tablet's rowset is rewritten into one sorted, aggregated segment.
    let deadline = std::time::Instant::now() + SETTLE;
    loop {
        let tablets = rows(&mut c, "SHOW TABLETS FROM ov.agg").await;
        if num(&tablets[0][5]) == 1 {
            assert_eq!(num(&tablets[0][4]), 1, "{tablets:?}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not compacted: {tablets:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let plan = rows(&mut c, "EXPLAIN SELECT * FROM ov.agg").await;
    let text: Vec<String> = plan.iter().filter_map(|r| r[1].clone()).collect();
    assert!(
        text.iter().any(|l| l.contains("merge-on-read tablets=0")),
        "{text:?}"
    );
    assert_eq!(
        rows(&mut c, "SELECT k, n FROM ov.agg ORDER BY k").await,
        expect
    );
}

/// Doris's table property `disable_auto_compaction`: background compaction leaves the table's
/// rowsets alone (while it merges another table's at once), until ALTER TABLE sets it false.
#[tokio::test]
async fn disable_auto_compaction_keeps_background_compaction_off_a_table() {
    let server = TestServer::start_with_config("compaction_interval_ms = 10\n").await;
    let mut c = server.connect().await;
    exec(
        &mut c,
        "CREATE DATABASE dac; \
         CREATE TABLE dac.off (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 \
         PROPERTIES (\"disable_auto_compaction\" = \"true\"); \
         CREATE TABLE dac.on (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    const LOADS: usize = 8;
    for i in 0..LOADS {
        exec(&mut c, &format!("INSERT INTO dac.off VALUES ({i}, {i})")).await;
        exec(&mut c, &format!("INSERT INTO dac.on VALUES ({i}, {i})")).await;
    }
    wait_for_compaction(&mut c, "dac.on", 1, SETTLE).await;
    // Compaction had every chance: it merged the other table, loaded at the same time.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let counts: Vec<Option<String>> = rows(&mut c, "SHOW TABLETS FROM dac.off")
        .await
        .into_iter()
        .map(|r| r[4].clone())
        .collect();
    assert_eq!(counts, vec![s(&LOADS.to_string())]);
    exec(
        &mut c,
        "ALTER TABLE dac.off SET (\"disable_auto_compaction\" = \"false\")",
    )
    .await;
    wait_for_compaction(&mut c, "dac.off", 1, SETTLE).await;
    assert_eq!(
        rows(&mut c, "SELECT count(*), sum(v) FROM dac.off").await,
        vec![vec![s(&LOADS.to_string()), s("28")]]
    );
}
