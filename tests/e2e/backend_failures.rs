//! Reads while backends fail (#25): one `basalt frontend` and three `basalt backend`s, every
//! tablet on all three (`replication_num = 3`). A backend killed with `kill -9` or frozen
//! with SIGSTOP costs no answer: queries (aggregates, joins, point queries on a Unique
//! table) answer correctly right away (the frontend runs a query again without a backend that
//! stopped answering) and after the heartbeats mark it dead, which SHOW BACKENDS shows within
//! 5 s; with two of three down the third answers alone; a query in flight when its backend
//! dies answers or fails clearly within seconds; with all three down reads fail at once
//! naming the table.

use crate::cluster_harness::{
    backend_port, spawn_backend, spawn_in, spawn_under, Cluster, Node, SECRET,
};
use crate::harness::{exec, rows, try_rows};
use mysql_async::Conn;
use std::time::{Duration, Instant};

const SETUP: &[&str] = &[
    "CREATE DATABASE f",
    "CREATE TABLE f.orders (id INT, customer INT, amount BIGINT, note VARCHAR(20)) \
     DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 6 PROPERTIES ('replication_num' = '3')",
    "CREATE TABLE f.customers (id INT, region VARCHAR(10)) \
     DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3 PROPERTIES ('replication_num' = '3')",
    "CREATE TABLE f.users (id INT, name VARCHAR(20), score INT) UNIQUE KEY(id) \
     DISTRIBUTED BY HASH(id) BUCKETS 4 \
     PROPERTIES ('replication_num' = '3', 'store_row_column' = 'true')",
    "INSERT INTO f.orders SELECT n, n % 10, n * 3, CONCAT('o', n) FROM numbers('number' = '20000') t(n)",
    "INSERT INTO f.customers SELECT n, IF(n % 2 = 0, 'even', 'odd') FROM numbers('number' = '10') t(n)",
    "INSERT INTO f.users SELECT n, CONCAT('user ', n), n FROM numbers('number' = '500') t(n)",
    "INSERT INTO f.users VALUES (7, 'seven', 70)",
];

/// Queries and the answers they must give (computed from the loaded data).
fn expected() -> Vec<(&'static str, Vec<Vec<Option<String>>>)> {
    let row = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
    // Orders 0..20000: amount 3n, customer n % 10; even customers are 'even'.
    let sum_all: u64 = (0..20000u64).map(|n| n * 3).sum();
    let sum_even: u64 = (0..20000u64).filter(|n| n % 2 == 0).map(|n| n * 3).sum();
    let (all, even, odd) = (
        sum_all.to_string(),
        sum_even.to_string(),
        (sum_all - sum_even).to_string(),
    );
    vec![
        (
            "SELECT COUNT(*), SUM(amount), MAX(note) FROM f.orders",
            vec![row(&["20000", &all, "o9999"])],
        ),
        (
            "SELECT c.region, COUNT(*), SUM(o.amount) FROM f.orders o JOIN f.customers c \
             ON o.customer = c.id GROUP BY c.region ORDER BY c.region",
            vec![row(&["even", "10000", &even]), row(&["odd", "10000", &odd])],
        ),
        (
            "SELECT name, score FROM f.users WHERE id = 7",
            vec![row(&["seven", "70"])],
        ),
        (
            "SELECT id, name FROM f.users WHERE id IN (3, 499, 1000) ORDER BY id",
            vec![row(&["3", "user 3"]), row(&["499", "user 499"])],
        ),
        (
            "SELECT COUNT(*), SUM(score) FROM f.users",
            vec![row(&[
                "500",
                &((0..500u64).sum::<u64>() - 7 + 70).to_string(),
            ])],
        ),
    ]
}

async fn loaded_cluster() -> (Cluster, Conn) {
    let cluster = Cluster::start(3);
    let mut conn = cluster.connect().await;
    for sql in SETUP {
        exec(&mut conn, sql).await;
    }
    (cluster, conn)
}

/// Every query answers as expected, each within `limit`.
async fn check_answers(conn: &mut Conn, limit: Duration, when: &str) {
    for (sql, want) in expected() {
        let started = Instant::now();
        let got = try_rows(conn, sql)
            .await
            .unwrap_or_else(|e| panic!("{when}: {sql}: {e}"));
        let took = started.elapsed();
        assert_eq!(got, want, "{when}: {sql}");
        assert!(took < limit, "{when}: {sql} took {took:?}");
    }
}

/// SHOW BACKENDS' Alive column, by backend port.
async fn alive(conn: &mut Conn) -> Vec<(u16, bool)> {
    rows(conn, "SHOW BACKENDS")
        .await
        .into_iter()
        .map(|r| {
            let port = r[2].as_deref().unwrap_or("0").parse().unwrap_or(0);
            (port, r[5].as_deref() == Some("true"))
        })
        .collect()
}

/// Waits until SHOW BACKENDS says backend `port` is `up`; returns how long that took.
async fn wait_alive(conn: &mut Conn, port: u16, up: bool, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        if alive(conn).await.contains(&(port, up)) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "backend {port} not Alive={up} within {limit:?}: {:?}",
            alive(conn).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Starts a killed backend again on its port and data directory.
fn restart(dir: tempfile::TempDir, port: u16) -> Node {
    let port_arg = port.to_string();
    spawn_in(dir, &["backend", "--port", &port_arg], SECRET, backend_port).0
}

fn signal(node: &Node, signal: &str) {
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(node.child.id().to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal}");
}

#[tokio::test]
async fn reads_answer_while_backends_die() {
    let (mut cluster, mut conn) = loaded_cluster().await;
    check_answers(&mut conn, Duration::from_secs(10), "all up").await;

    // kill -9 one: the next queries are answered at once (run again without it), before
    // and after the heartbeats mark it dead.
    let (first, first_port) = cluster.backends.remove(1);
    let first_dir = first.kill();
    check_answers(&mut conn, Duration::from_secs(5), "one killed").await;
    let took = wait_alive(&mut conn, first_port, false, Duration::from_secs(5)).await;
    eprintln!("backend {first_port} shown dead after {took:?}");
    check_answers(&mut conn, Duration::from_secs(5), "one dead").await;

    // Two of three down: the last holds a replica of every tablet.
    let (second, second_port) = cluster.backends.remove(0);
    let second_dir = second.kill();
    check_answers(&mut conn, Duration::from_secs(5), "two killed").await;
    wait_alive(&mut conn, second_port, false, Duration::from_secs(5)).await;
    check_answers(&mut conn, Duration::from_secs(5), "two dead").await;

    // All three down: reads fail at once, naming the table and the down backends.
    let (third, third_port) = cluster.backends.remove(0);
    let third_dir = third.kill();
    wait_alive(&mut conn, third_port, false, Duration::from_secs(5)).await;
    for sql in [
        "SELECT COUNT(*) FROM f.orders",
        "SELECT name FROM f.users WHERE id = 8",
    ] {
        let started = Instant::now();
        let err = try_rows(&mut conn, sql)
            .await
            .expect_err("no backend is up");
        assert!(started.elapsed() < Duration::from_secs(3), "{sql}");
        assert!(
            err.contains("1105") && err.contains("no readable replica on a live backend"),
            "{sql}: {err}"
        );
        assert!(
            err.contains("`f`.`orders`") || err.contains("`f`.`users`"),
            "{err}"
        );
        assert!(err.contains(&format!("{first_port}) is down")), "{err}");
    }
    // Constant queries need no backend.
    assert_eq!(
        rows(&mut conn, "SELECT 1 + 1").await,
        vec![vec![Some("2".into())]]
    );

    // They come back (same ports and data): marked alive, every answer as before.
    let mut back = Vec::new();
    for (dir, port) in [
        (first_dir, first_port),
        (second_dir, second_port),
        (third_dir, third_port),
    ] {
        back.push(restart(dir, port));
        wait_alive(&mut conn, port, true, Duration::from_secs(10)).await;
    }
    check_answers(&mut conn, Duration::from_secs(10), "restarted").await;
}

#[tokio::test]
async fn a_frozen_backend_does_not_hang_queries() {
    let (cluster, mut conn) = loaded_cluster().await;
    check_answers(&mut conn, Duration::from_secs(10), "all up").await;
    let (frozen, port) = &cluster.backends[2];
    signal(frozen, "STOP");
    // Its connections stop answering pings: queries give up on it within seconds and run
    // again on the others.
    check_answers(&mut conn, Duration::from_secs(12), "one frozen").await;
    let took = wait_alive(&mut conn, *port, false, Duration::from_secs(5)).await;
    eprintln!("frozen backend {port} shown dead after {took:?} more");
    check_answers(&mut conn, Duration::from_secs(3), "one frozen, marked dead").await;
    signal(frozen, "CONT");
    wait_alive(&mut conn, *port, true, Duration::from_secs(10)).await;
    check_answers(&mut conn, Duration::from_secs(10), "thawed").await;
}

/// A query that runs for seconds (a many-to-many join), and its answer.
const LONG_QUERY: &str =
    "SELECT COUNT(*), SUM(a.amount) FROM f.orders a JOIN f.orders b ON a.id % 2 = b.id % 2";

fn long_answer() -> Vec<Vec<Option<String>>> {
    // 2 classes of 10000 orders each: every order pairs with 10000.
    let sum: u64 = (0..20000u64).map(|n| n * 3 * 10000).sum();
    vec![vec![
        Some((20000u64 * 10000).to_string()),
        Some(sum.to_string()),
    ]]
}

#[tokio::test]
async fn a_query_in_flight_when_its_backend_fails_answers_or_fails_clearly() {
    let (mut cluster, mut conn) = loaded_cluster().await;
    let started = Instant::now();
    assert_eq!(rows(&mut conn, LONG_QUERY).await, long_answer());
    eprintln!(
        "the long query takes {:?} with every backend up",
        started.elapsed()
    );
    for (round, how) in ["KILL", "STOP"].into_iter().enumerate() {
        let mut other = cluster.connect().await;
        let running = tokio::spawn(async move {
            let result = try_rows(&mut other, LONG_QUERY).await;
            (result, Instant::now())
        });
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let (victim, _) = &cluster.backends[round];
        signal(victim, how);
        let failed_at = Instant::now();
        let (result, done) = tokio::time::timeout(Duration::from_secs(30), running)
            .await
            .unwrap_or_else(|_| panic!("{how}: the query hangs"))
            .expect("query task");
        assert!(
            done > failed_at,
            "{how}: the query ended before the failure"
        );
        let after = done.saturating_duration_since(failed_at);
        let outcome = match result {
            Ok(got) => {
                assert_eq!(got, long_answer(), "{how}");
                "answered".to_string()
            }
            // A killed backend's query has sent no row (one aggregate row, at its end): it
            // runs again on the live replicas and answers.
            Err(e) if how == "KILL" => panic!("{how}: the query was not run again: {e}"),
            Err(e) => {
                assert!(
                    e.contains("stopped answering") && after < Duration::from_secs(10),
                    "{how}: after {after:?}: {e}"
                );
                e
            }
        };
        eprintln!("{how}: the query in flight ended {after:?} after the failure: {outcome}");
        // The rest keep answering. A live backend that ran the long query's share on a busy
        // two-core machine may have missed heartbeats meanwhile (it was once shown dead with
        // the other two, and the reads failed): it must be shown alive again first.
        for (_, port) in cluster.backends.iter().skip(round + 1) {
            wait_alive(&mut conn, *port, true, Duration::from_secs(20)).await;
        }
        check_answers(&mut conn, Duration::from_secs(12), how).await;
    }
    let (stopped, _) = cluster.backends.remove(1);
    signal(&stopped, "CONT");
}

/// A short run of the fault-injection runner (tests/fault/run.py; run it with more rounds by
/// hand): backends killed and restarted under labelled Stream Loads and queries, then a backend
/// added (tablets rebalanced onto it) and another decommissioned, then every acknowledged
/// label checked.
#[test]
fn fault_injection_loses_no_acknowledged_load() {
    let runner = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fault/run.py");
    let out = std::process::Command::new("python3")
        .arg(&runner)
        .args(["--rounds", "4", "--moves", "1", "--seed", "25"])
        .args(["--basalt", env!("CARGO_BIN_EXE_basalt")])
        .output()
        .expect("python3 must be installed");
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{report}");
    assert!(report.contains("rows lost: 0,"), "{report}");
}

/// How to start a process on the first core alone (so it runs one thread per runtime, and a
/// few queries keep it busy), and whether that is so: without `taskset` it starts directly.
fn one_core() -> (&'static [&'static str], bool) {
    let taskset = std::process::Command::new("taskset")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if taskset {
        (&["taskset", "-c", "0"], true)
    } else {
        (&[], false)
    }
}

/// A backend started on the first core alone.
fn one_core_backend() -> ((Node, u16), bool) {
    let (launcher, pinned) = one_core();
    let dir = tempfile::tempdir().expect("tempdir");
    let node = spawn_under(
        launcher,
        dir,
        &["backend", "--port", "0"],
        SECRET,
        backend_port,
    );
    (node, pinned)
}

/// A backend whose cores are all busy running queries still answers heartbeats: the frontend
/// never calls it dead, and every query answers, while fourteen joins run on it at once (its
/// fragments have a runtime of their own; on the runtime that answers heartbeats they left
/// them waiting for seconds, the frontend called the backend dead, and the joins failed with
/// "no readable replica on a live backend").
#[tokio::test]
async fn a_backend_busy_with_queries_still_answers_heartbeats() {
    let (backend, pinned) = one_core_backend();
    let cluster = Cluster::start_on(vec![backend], "");
    let mut conn = cluster.connect().await;
    for sql in [
        "CREATE DATABASE h",
        "CREATE TABLE h.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4 \
         PROPERTIES ('replication_num' = '1')",
        "INSERT INTO h.t SELECT n, n % 1000 FROM numbers('number' = '300000') t(n)",
    ] {
        exec(&mut conn, sql).await;
    }
    // 42858 rows with k % 7 = 0, each joined to the 300 rows of its v.
    let join = "SELECT COUNT(*), SUM(a.k + b.k) FROM h.t a JOIN h.t b ON a.v = b.v \
                WHERE a.k % 7 = 0";
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..14 {
        let mut c = cluster.connect().await;
        let stop = stop.clone();
        load.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                answers.push(try_rows(&mut c, join).await);
            }
            answers
        }));
    }
    let started = Instant::now();
    let mut polls = Vec::new();
    while started.elapsed() < Duration::from_secs(12) {
        polls.push(alive(&mut conn).await[0].1);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answers = Vec::new();
    for task in load {
        answers.extend(task.await.expect("load task"));
    }
    let dead = polls.iter().filter(|up| !**up).count();
    assert_eq!(
        dead,
        0,
        "the busy backend (pinned to one core: {pinned}) was called dead in {dead} of {} \
         looks at SHOW BACKENDS",
        polls.len()
    );
    // The 300 rows of v = r have k = r + 1000 i, i < 300.
    let sum: u64 = (0..300_000u64)
        .filter(|k| k % 7 == 0)
        .map(|k| 300 * k + 300 * (k % 1000) + 1000 * (0..300u64).sum::<u64>())
        .sum();
    let want = vec![vec![Some((42858 * 300).to_string()), Some(sum.to_string())]];
    for answer in &answers {
        assert_eq!(answer.as_ref(), Ok(&want), "a join under load");
    }
}

/// A frontend whose cores are all busy with queries it runs itself still hears its backend:
/// while fourteen joins of its own table function keep its one core busy, it never calls the
/// backend dead (heartbeats are asked on a thread of their own; on the frontend's runtime their
/// answers waited behind the joins' work, the frontend called the live backend dead, and a read
/// of a table failed with "backend .. is down"), and a query of a table keeps answering.
#[tokio::test(flavor = "multi_thread")]
async fn a_busy_frontend_still_hears_its_backends() {
    let (launcher, pinned) = one_core();
    let cluster = Cluster::start_under(launcher, vec![spawn_backend()], "");
    let mut conn = cluster.connect().await;
    for sql in [
        "CREATE DATABASE h",
        "CREATE TABLE h.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 \
         PROPERTIES ('replication_num' = '1')",
        "INSERT INTO h.t SELECT n, n % 10 FROM numbers('number' = '1000') t(n)",
    ] {
        exec(&mut conn, sql).await;
    }
    // Runs whole on the frontend: no table is read. 42858 rows with n % 7 = 0, each joined
    // to the 300 rows of its n % 1000.
    let join = "SELECT COUNT(*), SUM(a.n + b.n) FROM numbers('number' = '300000') a(n) \
                JOIN numbers('number' = '300000') b(n) ON a.n % 1000 = b.n % 1000 \
                WHERE a.n % 7 = 0";
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answers = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let run = |sql: &'static str, mut c: Conn| {
        let (stop, answers) = (stop.clone(), answers.clone());
        tokio::spawn(async move {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let answer = try_rows(&mut c, sql).await;
                answers.lock().expect("answers").push((sql, answer));
            }
        })
    };
    // Every connection is opened first: a handshake waits behind the joins too.
    let mut conns = Vec::new();
    for _ in 0..15 {
        conns.push(cluster.connect().await);
    }
    let read = "SELECT COUNT(*), SUM(v) FROM h.t";
    let reads = run(read, conns.pop().expect("a connection"));
    let joins: Vec<_> = conns.into_iter().map(|c| run(join, c)).collect();
    tokio::time::sleep(Duration::from_secs(40)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    // The joins in flight are left to the frontend's end; the reads finish theirs.
    for task in joins {
        task.abort();
    }
    reads.await.expect("read task");
    let called_dead: Vec<String> = cluster
        .frontend
        .warnings
        .lock()
        .expect("warnings")
        .iter()
        .filter(|line| line.contains("heartbeats") || line.contains("marked dead"))
        .cloned()
        .collect();
    assert!(
        called_dead.is_empty(),
        "the busy frontend (pinned to one core: {pinned}) called its backend dead: \
         {called_dead:?}"
    );
    let sum: u64 = (0..300_000u64)
        .filter(|n| n % 7 == 0)
        .map(|n| 300 * n + 300 * (n % 1000) + 1000 * (0..300u64).sum::<u64>())
        .sum();
    let joined = vec![vec![Some((42858 * 300).to_string()), Some(sum.to_string())]];
    let counted = vec![vec![Some("1000".to_string()), Some("4500".to_string())]];
    let answers = answers.lock().expect("answers").clone();
    assert!(
        answers.iter().any(|(sql, _)| *sql == read),
        "no read answered"
    );
    for (sql, answer) in &answers {
        let want = if *sql == read { &counted } else { &joined };
        assert_eq!(answer.as_ref(), Ok(want), "{sql} under load");
    }
}
