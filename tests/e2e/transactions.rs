//! Transactions over two real connections: uncommitted writes stay invisible to the other
//! session, COMMIT makes all of them visible at once and survives kill -9, ROLLBACK and
//! disconnect leave nothing (in the tables or on disk), and a COMMIT that would lose another
//! session's change fails with 1213.

use crate::harness::*;
use mysql_async::prelude::*;

fn parquet_files(dir: &std::path::Path) -> usize {
    fn walk(dir: &std::path::Path, n: &mut usize) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, n);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(dir, &mut n);
    n
}

#[tokio::test]
async fn transactions_are_isolated_atomic_and_durable() {
    let mut server = TestServer::start().await;
    let mut a = server.connect().await;
    let mut b = server.connect().await;
    exec(&mut a, "CREATE DATABASE tx").await;
    exec(
        &mut a,
        "CREATE TABLE tx.d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 \
         PROPERTIES ('disable_auto_compaction' = 'true')",
    )
    .await;
    exec(
        &mut a,
        "CREATE TABLE tx.u (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 \
         PROPERTIES ('disable_auto_compaction' = 'true')",
    )
    .await;
    exec(&mut a, "INSERT INTO tx.u VALUES (1, 1), (2, 2)").await;
    let files_before = parquet_files(server.data_dir.path());

    // ROLLBACK leaves nothing, in the tables or on disk.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "INSERT INTO tx.d VALUES (1, 10), (2, 20)").await;
    exec(&mut a, "UPDATE tx.u SET v = 100 WHERE k = 1").await;
    assert_eq!(
        rows(&mut b, "SELECT COUNT(*) FROM tx.d").await[0][0],
        s("0")
    );
    assert_eq!(
        rows(&mut b, "SELECT v FROM tx.u WHERE k = 1").await[0][0],
        s("1")
    );
    assert_eq!(
        rows(&mut a, "SELECT COUNT(*) FROM tx.d").await[0][0],
        s("2")
    );
    exec(&mut a, "ROLLBACK").await;
    assert_eq!(
        rows(&mut a, "SELECT COUNT(*) FROM tx.d").await[0][0],
        s("0")
    );
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(parquet_files(server.data_dir.path()), files_before);

    // A disconnect discards the open transaction as well.
    let mut c = server.connect().await;
    exec(&mut c, "BEGIN").await;
    exec(&mut c, "INSERT INTO tx.d VALUES (7, 7)").await;
    c.disconnect().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        rows(&mut b, "SELECT COUNT(*) FROM tx.d").await[0][0],
        s("0")
    );
    assert_eq!(parquet_files(server.data_dir.path()), files_before);

    // COMMIT publishes both tables at once.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "INSERT INTO tx.d VALUES (1, 10), (2, 20)").await;
    exec(&mut a, "DELETE FROM tx.u WHERE k = 2").await;
    let seen = rows(
        &mut b,
        "SELECT (SELECT COUNT(*) FROM tx.d), (SELECT COUNT(*) FROM tx.u)",
    )
    .await;
    assert_eq!(seen, vec![vec![s("0"), s("2")]]);
    exec(&mut a, "COMMIT").await;
    let seen = rows(
        &mut b,
        "SELECT (SELECT COUNT(*) FROM tx.d), (SELECT COUNT(*) FROM tx.u)",
    )
    .await;
    assert_eq!(seen, vec![vec![s("2"), s("1")]]);

    // Appends to a Duplicate table by two transactions both survive.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "INSERT INTO tx.d VALUES (3, 30)").await;
    exec(&mut b, "INSERT INTO tx.d VALUES (4, 40)").await;
    exec(&mut a, "COMMIT").await;
    assert_eq!(
        rows(&mut b, "SELECT SUM(v) FROM tx.d").await[0][0],
        s("100")
    );

    // A Unique table changed by another session since the transaction wrote it: 1213.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "INSERT INTO tx.u VALUES (1, 111)").await;
    exec(&mut b, "INSERT INTO tx.u VALUES (1, 222)").await;
    let e = a.query_drop("COMMIT").await.unwrap_err();
    assert_eq!(code(e), 1213);
    assert_eq!(
        rows(&mut b, "SELECT v FROM tx.u WHERE k = 1").await[0][0],
        s("222")
    );
    // The failed COMMIT ended the transaction: the session reads the published rows.
    assert_eq!(
        rows(&mut a, "SELECT v FROM tx.u WHERE k = 1").await[0][0],
        s("222")
    );

    // An acknowledged COMMIT survives kill -9; an open transaction does not.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "INSERT INTO tx.d VALUES (5, 50)").await;
    exec(&mut a, "INSERT INTO tx.u VALUES (5, 50)").await;
    exec(&mut a, "COMMIT").await;
    exec(&mut b, "BEGIN").await;
    exec(&mut b, "INSERT INTO tx.d VALUES (6, 60)").await;
    drop(a);
    drop(b);
    server.kill9();
    server.restart().await;
    let mut a = server.connect().await;
    assert_eq!(
        rows(&mut a, "SELECT SUM(v) FROM tx.d").await[0][0],
        s("150")
    );
    assert_eq!(
        rows(&mut a, "SELECT COUNT(*) FROM tx.u WHERE k = 5").await[0][0],
        s("1")
    );
    a.disconnect().await.unwrap();
}

/// Rowsets per tablet of a table, as SHOW TABLETS gives them.
async fn rowset_counts(conn: &mut mysql_async::Conn, table: &str) -> Vec<String> {
    rows(conn, &format!("SHOW TABLETS FROM {table}"))
        .await
        .into_iter()
        .map(|r| r[4].clone().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_compaction_during_a_transaction_does_not_fail_its_commit() {
    let server = TestServer::start().await;
    let mut a = server.connect().await;
    let mut b = server.connect().await;
    exec(
        &mut b,
        "CREATE DATABASE cx; CREATE TABLE cx.u (k INT, v INT) UNIQUE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    // Two small rowsets: the tablet compacts them once it has been quiet for a second.
    exec(&mut b, "INSERT INTO cx.u VALUES (1, 10), (2, 20), (3, 30)").await;
    exec(&mut b, "INSERT INTO cx.u VALUES (4, 40), (5, 50)").await;
    // The transaction replaces rows of both rowsets, deletes one and adds one.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "UPDATE cx.u SET v = v + 1 WHERE k IN (1, 4)").await;
    exec(&mut a, "DELETE FROM cx.u WHERE k = 2").await;
    exec(&mut a, "INSERT INTO cx.u VALUES (6, 60), (5, 51)").await;
    assert_eq!(
        rowset_counts(&mut b, "cx.u").await,
        vec!["2".to_string()],
        "compacted before the transaction wrote: the test proves nothing"
    );
    wait_for_compaction(&mut b, "cx.u", 1, std::time::Duration::from_secs(60)).await;
    exec(&mut a, "COMMIT").await;
    let expected = vec![
        vec![s("1"), s("11")],
        vec![s("3"), s("30")],
        vec![s("4"), s("41")],
        vec![s("5"), s("51")],
        vec![s("6"), s("60")],
    ];
    for conn in [&mut a, &mut b] {
        assert_eq!(
            rows(conn, "SELECT k, v FROM cx.u ORDER BY k").await,
            expected
        );
    }
    // The key index follows: a later upsert replaces the committed rows once.
    exec(&mut b, "INSERT INTO cx.u VALUES (1, 12), (5, 52)").await;
    assert_eq!(
        rows(&mut a, "SELECT count(*), sum(v) FROM cx.u").await[0],
        vec![s("5"), s("195")]
    );
    // A user write in between is still a conflict.
    exec(&mut a, "BEGIN").await;
    exec(&mut a, "INSERT INTO cx.u VALUES (7, 70)").await;
    exec(&mut b, "INSERT INTO cx.u VALUES (8, 80)").await;
    let e = a.query_drop("COMMIT").await.unwrap_err();
    assert_eq!(code(e), 1213);
}

/// Background compaction merging rowsets as often as it can: two threads, woken every 10 ms
/// besides after every publish (small rowsets merge at once in runs of four).
const EAGER_COMPACTION: &str = "compaction_threads = 2\ncompaction_interval_ms = 10\n";

/// A session alone on a Unique table, autocommit off as ORMs (SQLAlchemy) run it: many small
/// transactions, each read and committed while compaction merges the rowsets they read. A
/// compaction is not another session's write: no COMMIT may fail with 1213.
#[tokio::test]
async fn a_lone_sessions_commits_never_conflict_with_background_compaction() {
    let server = TestServer::start_with_config(EAGER_COMPACTION).await;
    let mut a = server.connect().await;
    exec(
        &mut a,
        "CREATE DATABASE lc; CREATE TABLE lc.t (id INT NOT NULL, x INT) UNIQUE KEY(id) \
         DISTRIBUTED BY HASH(id) BUCKETS 2",
    )
    .await;
    exec(&mut a, "INSERT INTO lc.t VALUES (1000000, 0)").await;
    exec(&mut a, "SET autocommit = 0").await;
    const ROUNDS: usize = 150;
    let statements = |i: usize| {
        [
            "DELETE FROM lc.t WHERE id < 1000000".to_string(),
            format!("INSERT INTO lc.t (id, x) VALUES (1, {i}), (2, {i}), (3, {i})"),
            "UPDATE lc.t SET x = x + 1 WHERE id = 2".to_string(),
        ]
    };
    let (mut commits, mut failures) = (0, Vec::new());
    for i in 0..ROUNDS {
        for sql in statements(i) {
            exec(&mut a, &sql).await;
            commits += 1;
            if let Err(e) = a.query_drop("COMMIT").await {
                failures.push(format!("round {i}, COMMIT after {sql}: {e}"));
                exec(&mut a, "ROLLBACK").await;
            }
        }
    }
    // Compaction ran meanwhile: far fewer rowsets than the commits made.
    let counts = rowset_counts(&mut a, "lc.t").await;
    assert!(
        counts
            .iter()
            .all(|c| c.parse::<usize>().unwrap_or(usize::MAX) < 40),
        "compaction did not keep up, the test proves nothing: rowsets per tablet {counts:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {commits} commits failed: {failures:#?}",
        failures.len()
    );
    exec(&mut a, "COMMIT").await;
    let last = (ROUNDS - 1).to_string();
    let bumped = ROUNDS.to_string();
    assert_eq!(
        rows(&mut a, "SELECT id, x FROM lc.t ORDER BY id").await,
        vec![
            vec![s("1"), s(&last)],
            vec![s("2"), s(&bumped)],
            vec![s("3"), s(&last)],
            vec![s("1000000"), s("0")],
        ]
    );
}

/// Compaction rebasing does not hide real conflicts: two transactions updating the same key
/// of a Unique table, the later COMMIT fails with 1213 and the earlier one's row stays.
#[tokio::test]
async fn two_transactions_updating_one_key_still_conflict_under_compaction() {
    let server = TestServer::start_with_config(EAGER_COMPACTION).await;
    let mut a = server.connect().await;
    let mut b = server.connect().await;
    exec(
        &mut a,
        "CREATE DATABASE kc; CREATE TABLE kc.t (id INT NOT NULL, x INT) UNIQUE KEY(id) \
         DISTRIBUTED BY HASH(id) BUCKETS 1",
    )
    .await;
    for i in 0..6 {
        exec(&mut a, &format!("INSERT INTO kc.t VALUES ({i}, 0)")).await;
    }
    for conn in [&mut a, &mut b] {
        exec(conn, "SET autocommit = 0").await;
    }
    for round in 1..=5 {
        exec(&mut a, &format!("UPDATE kc.t SET x = {round} WHERE id = 1")).await;
        exec(
            &mut b,
            &format!("UPDATE kc.t SET x = -{round} WHERE id = 1"),
        )
        .await;
        exec(&mut a, "COMMIT").await;
        let e = b.query_drop("COMMIT").await.unwrap_err();
        assert_eq!(code(e), 1213, "round {round}");
        exec(&mut b, "ROLLBACK").await;
        assert_eq!(
            rows(&mut b, "SELECT x FROM kc.t WHERE id = 1").await,
            vec![vec![s(&round.to_string())]]
        );
        exec(&mut b, "COMMIT").await;
    }
}
