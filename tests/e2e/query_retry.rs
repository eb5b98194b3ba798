//! A query whose backend is killed while it runs (#25): one `basalt frontend` and three
//! `basalt backend`s, every tablet on all three (`replication_num = 3`), several connections
//! running queries in a loop while a backend is `kill -9`'d (twice, a different one each
//! time). A query that has sent the client no row when its backend dies is run again on the
//! live replicas and answers correctly; only a query that had already sent rows may fail, and
//! then clearly, naming the backend.
//!
//! The queries that must never fail answer nothing before they have read all their input
//! (aggregates, sorted results), so no row of theirs can have reached the client when a
//! backend died mid-query.

use crate::cluster_harness::{backend_port, spawn_in, Cluster, Node, SECRET};
use crate::harness::{exec, rows, try_rows};
use mysql_async::Conn;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROWS: u64 = 20000;

const SETUP: &[&str] = &[
    "CREATE DATABASE r",
    "CREATE TABLE r.orders (id INT, customer INT, amount BIGINT) DUPLICATE KEY(id) \
     DISTRIBUTED BY HASH(id) BUCKETS 6 PROPERTIES ('replication_num' = '3')",
    "INSERT INTO r.orders SELECT n, n % 10, n * 3 FROM numbers('number' = '20000') t(n)",
];

type Answer = Vec<Vec<Option<String>>>;

/// Queries that send no row before reading all their input, and their answers.
fn whole_queries() -> Vec<(&'static str, Answer)> {
    let text = |v: u64| Some(v.to_string());
    let sum: u64 = (0..ROWS).map(|n| n * 3).sum();
    let by_customer: Answer = (0..10u64)
        .map(|c| {
            let amounts = (0..ROWS).filter(|n| n % 10 == c).map(|n| n * 3);
            vec![text(c), text(ROWS / 10), text(amounts.sum())]
        })
        .collect();
    vec![
        (
            "SELECT COUNT(*), SUM(amount) FROM r.orders",
            vec![vec![text(ROWS), text(sum)]],
        ),
        (
            "SELECT customer, COUNT(*), SUM(amount) FROM r.orders GROUP BY customer \
             ORDER BY customer",
            by_customer,
        ),
        // A shuffle: both sides are repartitioned over the backends.
        (
            "SELECT COUNT(*), SUM(a.amount) FROM r.orders a JOIN r.orders b ON a.id = b.customer",
            vec![vec![
                text(ROWS),
                text((0..10u64).map(|c| c * 3 * (ROWS / 10)).sum()),
            ]],
        ),
    ]
}

/// What the query loops saw.
#[derive(Default, Debug)]
struct Tally {
    answered: u64,
    /// Failures of queries that could not have sent a row: each one is a missing retry.
    failed: Vec<String>,
    wrong: Vec<String>,
}

/// Runs the queries in a loop on a connection of its own until `stop`, counting each right
/// answer in `progress` as it comes.
async fn query_loop(cluster_port: u16, stop: Arc<AtomicBool>, progress: Arc<AtomicU64>) -> Tally {
    let mut conn = crate::cluster_harness::connect_root(cluster_port).await;
    let queries = whole_queries();
    let mut tally = Tally::default();
    'outer: while !stop.load(Ordering::Relaxed) {
        for (sql, want) in &queries {
            if stop.load(Ordering::Relaxed) {
                break 'outer;
            }
            match try_rows(&mut conn, sql).await {
                Ok(got) if &got == want => {
                    tally.answered += 1;
                    progress.fetch_add(1, Ordering::Relaxed);
                }
                Ok(got) => tally.wrong.push(format!("{sql}: {got:?}")),
                Err(e) => {
                    tally.failed.push(format!("{sql}: {e}"));
                    // The connection may be gone with the error; a new one for the rest.
                    conn = crate::cluster_harness::connect_root(cluster_port).await;
                }
            }
        }
    }
    tally
}

fn restart(dir: tempfile::TempDir, port: u16) -> Node {
    let port_arg = port.to_string();
    spawn_in(dir, &["backend", "--port", &port_arg], SECRET, backend_port).0
}

/// Waits until the query loops have answered `more` queries past `since` (a slow, busy
/// machine takes longer; a cluster that stopped answering fails here).
async fn wait_answered(progress: &AtomicU64, since: u64, more: u64) {
    let started = Instant::now();
    while progress.load(Ordering::Relaxed) < since + more {
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "only {} queries answered in 90 s after a kill",
            progress.load(Ordering::Relaxed) - since
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until SHOW BACKENDS says the backend on `port` is alive.
async fn wait_alive(conn: &mut Conn, port: u16) {
    let started = Instant::now();
    loop {
        let up = rows(conn, "SHOW BACKENDS").await.iter().any(|r| {
            r[2].as_deref() == Some(port.to_string().as_str()) && r[5].as_deref() == Some("true")
        });
        if up {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "backend {port} not back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn queries_in_flight_at_a_kill_are_run_again_on_live_replicas() {
    let mut cluster = Cluster::start(3);
    let mut conn = cluster.connect().await;
    for sql in SETUP {
        exec(&mut conn, sql).await;
    }
    for (sql, want) in whole_queries() {
        assert_eq!(rows(&mut conn, sql).await, want, "{sql}");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicU64::new(0));
    let loops: Vec<_> = (0..4)
        .map(|_| {
            tokio::spawn(query_loop(
                cluster.mysql_port,
                stop.clone(),
                progress.clone(),
            ))
        })
        .collect();

    // Two kills, a different backend each time; the first comes back in between.
    let mut kills = 0;
    for victim in [0usize, 1] {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let (node, port) = cluster.backends.remove(victim);
        let at_kill = progress.load(Ordering::Relaxed);
        let dir = node.kill();
        kills += 1;
        // Past the heartbeats' verdict, queries running all along, and some answered since.
        tokio::time::sleep(Duration::from_secs(4)).await;
        wait_answered(&progress, at_kill, 8).await;
        if victim == 0 {
            let node = restart(dir, port);
            wait_alive(&mut conn, port).await;
            cluster.backends.insert(victim, (node, port));
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);

    let mut total = Tally::default();
    for each in loops {
        let tally = tokio::time::timeout(Duration::from_secs(60), each)
            .await
            .expect("a query loop hangs")
            .expect("query loop");
        total.answered += tally.answered;
        total.failed.extend(tally.failed);
        total.wrong.extend(tally.wrong);
    }
    eprintln!(
        "{kills} kills: {} queries answered, {} failed, {} wrong",
        total.answered,
        total.failed.len(),
        total.wrong.len()
    );
    for failure in &total.failed {
        eprintln!("failed: {failure}");
    }
    assert!(total.wrong.is_empty(), "wrong answers: {:?}", total.wrong);
    assert!(
        total.failed.is_empty(),
        "queries that had sent no row failed instead of running again: {:?}",
        total.failed
    );
    assert!(total.answered >= 16, "{} answered", total.answered);
}
