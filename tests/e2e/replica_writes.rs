//! Loads while backends fail (#25, the write path): one `basalt frontend` and three
//! `basalt backend`s, every tablet on all three (`replication_num = 3`). A stream of labelled
//! Stream Loads runs while one backend is killed with `kill -9`: every acknowledged load is
//! complete, no failed one is partly visible, and loads keep succeeding on the two left (a
//! majority). The killed backend restarts on its data directory and catches up (its stale
//! replicas copy what they missed from the others); then a different backend is killed and
//! every row is still there. With two of three down a load fails with a clear error naming the
//! tablet and the counts, and leaves nothing visible.

use crate::cluster_harness::{backend_port, spawn_in, Cluster, Node, SECRET};
use crate::harness::{exec, rows, try_rows};
use mysql_async::Conn;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rows each load writes: (label number, 0..ROWS, text).
const ROWS: u64 = 300;
/// Loads in the stream; the first backend is killed once `KILL_AFTER` are acknowledged.
const LOADS: u64 = 36;
const KILL_AFTER: usize = 8;

/// One Stream Load of label `l<i>`: its response's Status and Message.
fn stream_load(http_port: u16, i: u64) -> (bool, String) {
    let body: String = (0..ROWS)
        .map(|n| format!("{i},{n},load {i} row {n}\n"))
        .collect();
    let out = Command::new("curl")
        .args(["-sS", "-u", "root:", "-H", &format!("label:l{i}")])
        .args(["-H", "column_separator:,", "-T", "-"])
        .arg(format!("http://127.0.0.1:{http_port}/api/r/t/_stream_load"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(body.as_bytes())?;
            c.wait_with_output()
        })
        .expect("curl");
    let answer = String::from_utf8_lossy(&out.stdout).into_owned();
    (answer.contains("\"Status\":\"Success\""), answer)
}

/// Rows per label number, as the table holds them.
async fn rows_per_load(conn: &mut Conn) -> BTreeMap<u64, u64> {
    rows(conn, "SELECT load_no, COUNT(*) FROM r.t GROUP BY load_no")
        .await
        .into_iter()
        .map(|r| {
            let n = |i: usize| r[i].as_deref().unwrap_or("0").parse::<u64>().unwrap_or(0);
            (n(0), n(1))
        })
        .collect()
}

/// Every acknowledged load holds all its rows; every other load none. Returns the rows checked.
async fn check_loads(conn: &mut Conn, acked: &BTreeSet<u64>, when: &str) -> u64 {
    let held = rows_per_load(conn).await;
    for (load, count) in &held {
        assert!(
            acked.contains(load),
            "{when}: load {load} was not acknowledged, yet {count} of its rows are visible"
        );
    }
    let mut checked = 0;
    for load in acked {
        let count = held.get(load).copied().unwrap_or(0);
        assert_eq!(
            count, ROWS,
            "{when}: acknowledged load {load} has {count} rows"
        );
        checked += count;
    }
    // Whole rows, not only counts: the text of every row.
    let sums = rows(
        conn,
        "SELECT SUM(load_no * 1000 + n), COUNT(DISTINCT v) FROM r.t",
    )
    .await;
    let want: u64 = acked
        .iter()
        .map(|l| (0..ROWS).map(|n| l * 1000 + n).sum::<u64>())
        .sum();
    let got = sums[0][0]
        .as_deref()
        .unwrap_or("0")
        .parse::<u64>()
        .unwrap_or(0);
    assert_eq!(got, want, "{when}");
    assert_eq!(
        sums[0][1].as_deref(),
        Some(checked.to_string().as_str()),
        "{when}"
    );
    checked
}

/// The tablet health view's Total row: (TabletNum, HealthyNum, VersionIncompleteNum).
async fn tablet_health(conn: &mut Conn) -> (u64, u64, u64) {
    let all = rows(conn, "SHOW PROC '/cluster_health/tablet_health'").await;
    let total = all.last().expect("a Total row");
    let n = |i: usize| {
        total[i]
            .as_deref()
            .unwrap_or("0")
            .parse::<u64>()
            .unwrap_or(0)
    };
    (n(2), n(3), n(5))
}

/// Files under `dir` with their sizes.
fn files(dir: &Path) -> BTreeMap<PathBuf, u64> {
    crate::harness::files_under(dir)
}

/// SHOW BACKENDS' Alive column of the backend on `port`.
async fn is_alive(conn: &mut Conn, port: u16) -> bool {
    rows(conn, "SHOW BACKENDS").await.into_iter().any(|r| {
        r[2].as_deref() == Some(port.to_string().as_str()) && r[5].as_deref() == Some("true")
    })
}

fn restart(dir: tempfile::TempDir, port: u16) -> Node {
    let port_arg = port.to_string();
    spawn_in(dir, &["backend", "--port", &port_arg], SECRET, backend_port).0
}

#[tokio::test]
async fn acknowledged_loads_survive_backend_kills_and_a_restarted_backend_catches_up() {
    let mut cluster = Cluster::start(3);
    let http_port = cluster.http_port;
    let mut conn = cluster.connect().await;
    exec(&mut conn, "CREATE DATABASE r").await;
    exec(
        &mut conn,
        "CREATE TABLE r.t (load_no BIGINT, n BIGINT, v VARCHAR(40)) DUPLICATE KEY(load_no, n) \
         DISTRIBUTED BY HASH(n) BUCKETS 4 PROPERTIES ('replication_num' = '3')",
    )
    .await;

    // The stream of loads runs on its own thread; the first backend dies in the middle of it.
    let (tx, rx) = std::sync::mpsc::channel();
    let loads = std::thread::spawn(move || {
        for i in 0..LOADS {
            let (ok, answer) = stream_load(http_port, i);
            let _ = tx.send((i, ok, answer));
        }
    });
    let (mut acked, mut failed) = (BTreeSet::new(), BTreeSet::new());
    let mut killed = None;
    let mut acked_after_kill = 0;
    for (i, ok, answer) in rx {
        if ok {
            acked.insert(i);
            acked_after_kill += usize::from(killed.is_some());
        } else {
            eprintln!("load {i} failed: {answer}");
            failed.insert(i);
        }
        if killed.is_none() && acked.len() == KILL_AFTER {
            let (node, port) = cluster.backends.remove(1);
            killed = Some((node.kill(), port));
        }
    }
    loads.join().expect("load thread");
    let (killed_dir, killed_port) = killed.expect("a backend was killed");
    // Two of three hold a majority: at most the load in flight at the kill may fail.
    assert!(
        failed.len() <= 1,
        "loads failed with two of three up: {failed:?}"
    );
    assert!(
        acked_after_kill >= 20,
        "{acked_after_kill} loads after the kill"
    );
    let rows_checked = check_loads(&mut conn, &acked, "one backend killed").await;
    let (tablets, healthy, incomplete) = tablet_health(&mut conn).await;
    assert_eq!(tablets, 4);
    assert_eq!(
        healthy, 0,
        "every tablet has a replica on the killed backend"
    );
    eprintln!("with one backend down: {incomplete} tablets version-incomplete");

    // The killed backend restarts on its data directory and catches up: only what it lacks
    // is copied.
    let before = files(killed_dir.path());
    let restarted_at = Instant::now();
    let restarted = restart(killed_dir, killed_port);
    loop {
        let (tablets, healthy, _) = tablet_health(&mut conn).await;
        if healthy == tablets && is_alive(&mut conn, killed_port).await {
            break;
        }
        assert!(
            restarted_at.elapsed() < Duration::from_secs(60),
            "the restarted backend did not catch up in 60 s: {:?}",
            tablet_health(&mut conn).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let catch_up = restarted_at.elapsed();
    let after = files(restarted.dir.path());
    let copied: u64 = after
        .iter()
        .filter(|(path, _)| !before.contains_key(*path))
        .map(|(_, len)| len)
        .sum();
    let copied_files = after.keys().filter(|p| !before.contains_key(*p)).count();
    assert!(copied > 0, "the restarted backend copied nothing");
    eprintln!(
        "catch-up: {copied_files} files, {copied} bytes in {:.2} s (from a restart with {} files)",
        catch_up.as_secs_f64(),
        before.len()
    );
    cluster.backends.insert(1, (restarted, killed_port));

    // kill -9 a different backend: the caught-up one serves in its place, nothing is lost, and
    // loads go on.
    let (other, _) = cluster.backends.remove(2);
    let other_dir = other.kill();
    check_loads(&mut conn, &acked, "after the second kill").await;
    for i in LOADS..LOADS + 3 {
        let (ok, answer) = stream_load(http_port, i);
        assert!(ok, "load {i} with two of three up: {answer}");
        acked.insert(i);
    }
    let rows_after = check_loads(&mut conn, &acked, "loads after the second kill").await;

    // Two of three down: a load fails naming the tablet and the counts, and leaves nothing.
    let (third, third_port) = cluster.backends.remove(0);
    let third_dir = third.kill();
    let started = Instant::now();
    while is_alive(&mut conn, third_port).await {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "not marked dead in 5 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (ok, answer) = stream_load(http_port, 1000);
    assert!(!ok, "a load with one of three up succeeded: {answer}");
    assert!(
        answer.contains("of r.t: 1 of 3 replicas written, a majority (2) is needed")
            && answer.contains("is down"),
        "{answer}"
    );
    let err = try_rows(&mut conn, "INSERT INTO r.t VALUES (1001, 1, 'x')")
        .await
        .expect_err("an INSERT with one of three up");
    assert!(err.contains("a majority (2) is needed"), "{err}");
    // The still-live backend answers reads: exactly the acknowledged rows.
    check_loads(&mut conn, &acked, "two of three down").await;
    eprintln!(
        "figures: {} loads acknowledged ({} failed at the first kill), {} rows checked before \
         and {} after the second kill, 0 lost; catch-up {copied_files} files, {copied} bytes, \
         {:.2} s",
        acked.len(),
        failed.len(),
        rows_checked,
        rows_after,
        catch_up.as_secs_f64()
    );
    drop((other_dir, third_dir));
}
