//! Scale-out: a cluster of real processes (one `basalt frontend`, three `basalt backend`s, each
//! with its own data directory) answers as the all-in-one server does, keeps every tablet's
//! files on the backends that hold it, and refuses strangers.

use crate::cluster_harness::{backend_port, connect_root, spawn, Cluster, SECRET};
use crate::harness::{code, exec, parse_ready_line, rows, wait_for_compaction, TestServer};
use mysql_async::Conn;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Segment files under `dir`, as paths relative to it.
fn segments(dir: &Path) -> Vec<PathBuf> {
    crate::harness::files_under(dir)
        .into_keys()
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect()
}

const SETUP: &[&str] = &[
    "CREATE DATABASE s",
    "CREATE TABLE s.orders (id INT, customer INT, status VARCHAR(10), amount BIGINT, note VARCHAR(40)) \
     DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 6",
    "CREATE TABLE s.customers (id INT, name VARCHAR(20), region VARCHAR(10)) \
     DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3 PROPERTIES ('replication_num' = '{R}')",
    "CREATE TABLE s.totals (customer INT, spent BIGINT SUM, orders BIGINT SUM) \
     AGGREGATE KEY(customer) DISTRIBUTED BY HASH(customer) BUCKETS 4",
    "INSERT INTO s.customers VALUES (1,'ann','north'),(2,'bob','south'),(3,'cy','north'),(4,'dee','east')",
    "INSERT INTO s.orders SELECT n, n % 5, IF(n % 3 = 0, 'open', 'done'), n * 7 - 300, \
     CONCAT('order ', n) FROM numbers('number' = '2000') t(n)",
    "INSERT INTO s.orders VALUES (5000, 1, 'open', 12, 'rush order'), (5001, 9, 'done', NULL, NULL)",
    "INSERT INTO s.totals SELECT customer, amount, 1 FROM s.orders WHERE amount IS NOT NULL",
    "INSERT INTO s.totals SELECT customer, amount, 1 FROM s.orders WHERE id < 100",
    // Merge-on-write: upserts, DELETE and UPDATE find the rows they replace through the
    // frontend's key index, built from the keys the backends hold.
    "CREATE TABLE s.users (id INT, name VARCHAR(10), score INT) UNIQUE KEY(id) \
     DISTRIBUTED BY HASH(id) BUCKETS 3 PROPERTIES ('replication_num' = '{R}')",
    "INSERT INTO s.users VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)",
    "INSERT INTO s.users VALUES (2, 'bb', 21), (4, 'd', 40)",
    "DELETE FROM s.users WHERE id = 3",
    "UPDATE s.users SET score = score + 1 WHERE id = 1",
];

const QUERIES: &[&str] = &[
    "SELECT COUNT(*), SUM(amount), MIN(note), MAX(amount) FROM s.orders",
    "SELECT status, COUNT(*), SUM(amount), AVG(amount) FROM s.orders GROUP BY status ORDER BY status",
    "SELECT c.region, COUNT(*), SUM(o.amount) FROM s.orders o JOIN s.customers c ON o.customer = c.id \
     GROUP BY c.region ORDER BY c.region",
    "SELECT o.id, c.name FROM s.orders o LEFT JOIN s.customers c ON o.customer = c.id \
     WHERE o.id BETWEEN 10 AND 14 OR o.id > 4999 ORDER BY o.id",
    "SELECT * FROM s.totals ORDER BY customer",
    "SELECT id, amount / 3, amount * 2 + 1 FROM s.orders WHERE note LIKE '%rush%' OR id = 7 ORDER BY id",
    "SELECT COUNT(*) FROM s.orders WHERE customer IN (SELECT id FROM s.customers WHERE region = 'north')",
    "SELECT id FROM s.customers UNION ALL SELECT customer FROM s.totals ORDER BY 1",
    "SELECT id, amount FROM s.orders ORDER BY amount DESC, id LIMIT 5",
    "SELECT COUNT(DISTINCT customer), COUNT(DISTINCT status) FROM s.orders WHERE id % 2 = 0",
    "SELECT * FROM s.users ORDER BY id",
    "SELECT name, score FROM s.users WHERE id = 2",
];

async fn answers(conn: &mut Conn) -> Vec<Vec<Vec<Option<String>>>> {
    let mut out = Vec::new();
    for q in QUERIES {
        out.push(rows(conn, q).await);
    }
    out
}

#[tokio::test]
async fn a_cluster_answers_as_the_single_node_does() {
    let single = TestServer::start().await;
    let cluster = Cluster::start(3);
    let mut one = single.connect().await;
    let mut many = cluster.connect().await;
    // Two replicas on the cluster; one node holds one.
    for sql in SETUP {
        exec(&mut one, &sql.replace("{R}", "1")).await;
        exec(&mut many, &sql.replace("{R}", "2")).await;
    }
    // A Stream Load through the frontend's HTTP port too.
    for port in [single.http_port, cluster.http_port] {
        let out = Command::new("curl")
            .args([
                "-sS",
                "-u",
                "root:",
                "-H",
                "label:more",
                "-H",
                "column_separator:,",
            ])
            .args([
                "-T",
                "-",
                &format!("http://127.0.0.1:{port}/api/s/orders/_stream_load"),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .expect("stdin")
                    .write_all(b"7001,2,open,5,late\n7002,3,done,6,late\n")?;
                c.wait_with_output()
            })
            .expect("curl");
        let body = String::from_utf8_lossy(&out.stdout);
        assert!(body.contains("\"Status\":\"Success\""), "{body}");
    }
    assert_eq!(answers(&mut many).await, answers(&mut one).await);

    // Every tablet's segments are on the backends that hold its replicas, none on the frontend.
    assert!(segments(cluster.frontend.dir.path()).is_empty());
    let tablets = rows(&mut many, "SHOW TABLETS FROM s.customers").await;
    let ids = rows(&mut many, "SHOW BACKENDS").await;
    let mut held_files = 0;
    for (i, (backend, _)) in cluster.backends.iter().enumerate() {
        let backend_id = ids[i][0].clone().expect("backend id");
        let files = segments(backend.dir.path());
        for t in &tablets {
            let tablet = t[0].clone().expect("tablet id");
            let holders = t[10].clone().unwrap_or_default();
            let holds = holders.split(',').any(|b| b == backend_id);
            let has = files.iter().any(|f| {
                f.iter()
                    .nth(2)
                    .is_some_and(|c| c.to_str() == Some(tablet.as_str()))
            });
            assert_eq!(
                holds, has,
                "tablet {tablet} on backend {backend_id}: {files:?}"
            );
            held_files += usize::from(has);
        }
    }
    assert_eq!(held_files, tablets.len() * 2, "replication_num = 2");
    for b in &ids {
        assert_eq!(b[5].as_deref(), Some("true"), "alive: {b:?}");
    }
    // Each backend scanned only tablets it holds (as the next heartbeat reports).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let mut holders: std::collections::HashMap<String, Vec<String>> = Default::default();
    for table in ["s.orders", "s.customers", "s.totals", "s.users"] {
        for t in rows(&mut many, &format!("SHOW TABLETS FROM {table}")).await {
            let tablet = t[0].clone().unwrap_or_default();
            let list = t[10].clone().unwrap_or_default();
            holders.insert(tablet, list.split(',').map(str::to_string).collect());
        }
    }
    for b in rows(&mut many, "SHOW BACKENDS").await {
        let backend = b[0].clone().unwrap_or_default();
        let scanned: Vec<&str> = b[12]
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter(|t| !t.is_empty())
            .collect();
        // s.orders has two loaded tablets on every backend.
        assert!(!scanned.is_empty(), "backend {backend} scanned nothing");
        for tablet in scanned {
            let owners = holders.get(tablet).cloned().unwrap_or_default();
            assert!(
                owners.contains(&backend),
                "backend {backend} scanned tablet {tablet} of {owners:?}"
            );
        }
    }

    // EXPLAIN shows the stages, their tasks and the backend of each tablet scan.
    let plan = rows(
        &mut many,
        "EXPLAIN SELECT status, COUNT(*) FROM s.orders GROUP BY status",
    )
    .await;
    let drawn = plan
        .iter()
        .find(|r| r[0].as_deref() == Some("distributed_plan"))
        .and_then(|r| r[1].clone())
        .expect("a distributed_plan row");
    assert!(
        drawn.contains("Stage 1") && drawn.contains("tasks=3"),
        "{drawn}"
    );
    for id in &ids {
        let backend = format!("backend={}", id[0].as_deref().unwrap_or_default());
        assert!(drawn.contains(&backend), "{drawn}");
    }
}

#[tokio::test]
async fn a_load_that_fails_on_one_backend_leaves_nothing() {
    let mut cluster = Cluster::start(2);
    let mut conn = cluster.connect().await;
    exec(&mut conn, "CREATE DATABASE s").await;
    exec(
        &mut conn,
        "CREATE TABLE s.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4 \
         PROPERTIES ('replication_num' = '1')",
    )
    .await;
    exec(
        &mut conn,
        "INSERT INTO s.t SELECT n, n FROM numbers('number' = '100') t(n)",
    )
    .await;
    let (mut dead, _) = cluster.backends.remove(1);
    let _ = dead.child.kill();
    let _ = dead.child.wait();
    // Rows go to tablets on both backends: the write to the dead one fails the whole load.
    let err = mysql_async::prelude::Queryable::query_drop(
        &mut conn,
        "INSERT INTO s.t SELECT n + 1000, n FROM numbers('number' = '100') t(n)",
    )
    .await
    .expect_err("a backend is down");
    assert_ne!(code(err), 0);
    // And a query that needs its tablets fails; it never answers short.
    let err = mysql_async::prelude::Queryable::query_drop(&mut conn, "SELECT COUNT(*) FROM s.t")
        .await
        .expect_err("a backend is down");
    assert_ne!(code(err), 0);
    // The frontend's catalog shows only the first load.
    let counts = rows(&mut conn, "SHOW TABLETS FROM s.t").await;
    let total: u64 = counts
        .iter()
        .map(|r| r[6].as_deref().unwrap_or("0").parse::<u64>().unwrap_or(0))
        .sum();
    assert_eq!(total, 100);
    drop(dead);
}

#[tokio::test]
async fn a_backend_refuses_a_frontend_without_the_secret() {
    let (_backend, port) = spawn(
        &["backend", "--port", "0"],
        "another-secret-entirely-42",
        backend_port,
    );
    let (_frontend, (mysql_port, _)) = spawn(
        &[
            "frontend",
            "--mysql-port",
            "0",
            "--http-port",
            "0",
            "--backends",
            &format!("127.0.0.1:{port}"),
        ],
        SECRET,
        parse_ready_line,
    );
    let mut conn = connect_root(mysql_port).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let b = rows(&mut conn, "SHOW BACKENDS").await;
        let err = b[0][9].clone().unwrap_or_default();
        if err.contains("cluster secret") {
            assert_eq!(b[0][5].as_deref(), Some("false"));
            break;
        }
        assert!(Instant::now() < deadline, "backend not refused: {b:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn backends_compact_the_tablets_they_hold() {
    let cluster = Cluster::start(2);
    let mut conn = cluster.connect().await;
    exec(&mut conn, "CREATE DATABASE c").await;
    exec(
        &mut conn,
        "CREATE TABLE c.dup (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 \
         PROPERTIES ('replication_num' = '2')",
    )
    .await;
    exec(
        &mut conn,
        "CREATE TABLE c.agg (k INT, total BIGINT SUM, high INT MAX) AGGREGATE KEY(k) \
         DISTRIBUTED BY HASH(k) BUCKETS 2",
    )
    .await;
    exec(
        &mut conn,
        "CREATE TABLE c.uniq (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 \
         PROPERTIES ('replication_num' = '2')",
    )
    .await;
    for i in 0..40 {
        exec(
            &mut conn,
            &format!("INSERT INTO c.dup VALUES ({i}, {i}), ({}, 1)", i + 100),
        )
        .await;
        exec(
            &mut conn,
            &format!("INSERT INTO c.agg VALUES ({}, {i}, {i})", i % 3),
        )
        .await;
        exec(
            &mut conn,
            &format!("INSERT INTO c.uniq VALUES ({}, {i})", i % 5),
        )
        .await;
    }
    exec(&mut conn, "DELETE FROM c.uniq WHERE k = 4").await;
    let uniq = "SELECT * FROM c.uniq ORDER BY k";
    let expected_uniq: Vec<Vec<Option<String>>> = (0..4)
        .map(|k| vec![Some(k.to_string()), Some((35 + k).to_string())])
        .collect();
    assert_eq!(rows(&mut conn, uniq).await, expected_uniq);
    let before_dup = rows(&mut conn, "SELECT COUNT(*), SUM(v) FROM c.dup").await;
    let before_agg = rows(&mut conn, "SELECT * FROM c.agg ORDER BY k").await;
    for table in ["c.dup", "c.agg", "c.uniq"] {
        let tablets = wait_for_compaction(&mut conn, table, 1, Duration::from_secs(60)).await;
        for t in &tablets {
            let version = t[3].clone().unwrap_or_default();
            assert_eq!(t[8], Some(format!("[1-{version}]")), "{table}: {t:?}");
        }
    }
    assert_eq!(
        rows(&mut conn, "SELECT COUNT(*), SUM(v) FROM c.dup").await,
        before_dup
    );
    assert_eq!(
        rows(&mut conn, "SELECT * FROM c.agg ORDER BY k").await,
        before_agg
    );
    assert_eq!(rows(&mut conn, uniq).await, expected_uniq);
    // Upserts after compaction still replace the compacted rows.
    exec(&mut conn, "INSERT INTO c.uniq VALUES (0, 100), (4, 4)").await;
    assert_eq!(
        rows(
            &mut conn,
            "SELECT k, v FROM c.uniq WHERE k IN (0, 4) ORDER BY k"
        )
        .await,
        vec![
            vec![Some("0".into()), Some("100".into())],
            vec![Some("4".into()), Some("4".into())],
        ]
    );
    assert_eq!(
        before_agg,
        vec![
            vec![Some("0".into()), Some("273".into()), Some("39".into())],
            vec![Some("1".into()), Some("247".into()), Some("37".into())],
            vec![Some("2".into()), Some("260".into()), Some("38".into())],
        ]
    );
    // Only the compacted segments remain on the backends, once no scan reads the inputs.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let files: Vec<PathBuf> = cluster
            .backends
            .iter()
            .flat_map(|(b, _)| segments(b.dir.path()))
            .collect();
        if files.iter().all(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('c'))
        }) {
            break;
        }
        assert!(Instant::now() < deadline, "inputs left behind: {files:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn point_queries_read_rows_on_the_owning_backend() {
    use mysql_async::prelude::Queryable;
    let cluster = Cluster::start(2);
    let mut conn = cluster.connect().await;
    exec(&mut conn, "CREATE DATABASE p").await;
    // One replica of each tablet, and two.
    for (table, replicas) in [("kv", 1), ("twice", 2)] {
        exec(
            &mut conn,
            &format!(
                "CREATE TABLE p.{table} (id INT, name VARCHAR(20), score DOUBLE) UNIQUE KEY(id) \
                 DISTRIBUTED BY HASH(id) BUCKETS 3 \
                 PROPERTIES ('store_row_column' = 'true', 'replication_num' = '{replicas}')"
            ),
        )
        .await;
        exec(
            &mut conn,
            &format!(
                "INSERT INTO p.{table} SELECT n, CONCAT('user ', n), n / 4 \
                 FROM numbers('number' = '60') t(n)"
            ),
        )
        .await;
        exec(
            &mut conn,
            &format!("INSERT INTO p.{table} VALUES (7, 'seven', 7.5), (70, NULL, NULL)"),
        )
        .await;
        exec(&mut conn, &format!("DELETE FROM p.{table} WHERE id = 9")).await;
    }
    let frontend_files = segments(cluster.frontend.dir.path());
    assert!(frontend_files.is_empty(), "{frontend_files:?}");
    for table in ["kv", "twice"] {
        let point = format!("SELECT name, score, id FROM p.{table} WHERE id = 7");
        let plan = rows(&mut conn, &format!("EXPLAIN {point}")).await;
        assert!(
            format!("{plan:?}").contains("SHORT-CIRCUIT"),
            "{table}: {plan:?}"
        );
        let cases = [
            point.clone(),
            format!("SELECT * FROM p.{table} WHERE id = 70"),
            format!("SELECT * FROM p.{table} WHERE id = 9"),
            format!("SELECT * FROM p.{table} WHERE id IN (1, 2, 3, 4, 5, 59, 61)"),
        ];
        let mut short = Vec::new();
        for q in &cases {
            short.push(rows(&mut conn, q).await);
        }
        exec(&mut conn, "SET enable_short_circuit_query = 0").await;
        let mut general = Vec::new();
        for q in &cases {
            general.push(rows(&mut conn, q).await);
        }
        exec(&mut conn, "SET enable_short_circuit_query = 1").await;
        let sort = |v: &mut Vec<Vec<Vec<Option<String>>>>| v.iter_mut().for_each(|r| r.sort());
        sort(&mut short);
        sort(&mut general);
        assert_eq!(short, general, "{table}");
        assert_eq!(
            short[0],
            vec![vec![
                Some("seven".into()),
                Some("7.5".into()),
                Some("7".into())
            ]]
        );
        assert!(short[2].is_empty(), "deleted row: {:?}", short[2]);
        assert_eq!(short[3].len(), 6);

        // A prepared statement binds, looks up on the backend and encodes binary rows.
        let stmt = conn
            .prep(format!("SELECT name, score FROM p.{table} WHERE id = ?"))
            .await
            .expect("prepare");
        for id in [7, 30, 9] {
            let row: Option<(Option<String>, Option<f64>)> =
                conn.exec_first(&stmt, (id,)).await.expect("execute");
            let expected = match id {
                7 => Some((Some("seven".to_string()), Some(7.5))),
                30 => Some((Some("user 30".to_string()), Some(7.5))),
                _ => None,
            };
            assert_eq!(row, expected, "{table} id {id}");
        }
        // An upsert moves the key's live row; the next lookup reads the new one.
        exec(
            &mut conn,
            &format!("INSERT INTO p.{table} VALUES (30, 'thirty', 0)"),
        )
        .await;
        let row: Option<(Option<String>, Option<f64>)> =
            conn.exec_first(&stmt, (30,)).await.expect("execute");
        assert_eq!(row, Some((Some("thirty".to_string()), Some(0.0))));
    }
}

#[tokio::test]
async fn workload_groups_apply_and_report_on_every_backend() {
    use mysql_async::prelude::Queryable;
    let cluster = Cluster::start(2);
    let mut conn = cluster.connect().await;
    exec(&mut conn, "CREATE DATABASE w").await;
    exec(
        &mut conn,
        "CREATE TABLE w.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4",
    )
    .await;
    exec(
        &mut conn,
        "INSERT INTO w.t SELECT n, n % 1000 FROM numbers('number' = '200000') t(n)",
    )
    .await;
    exec(
        &mut conn,
        "CREATE WORKLOAD GROUP wg PROPERTIES ('cpu_hard_limit' = '50%')",
    )
    .await;
    exec(&mut conn, "SET workload_group = 'wg'").await;
    for _ in 0..3 {
        assert_eq!(
            rows(&mut conn, "SELECT COUNT(*) FROM w.t WHERE v % 7 = 1").await,
            vec![vec![Some("28600".into())]]
        );
    }
    // Each backend ran the scans in the group, under its limit, and says so with its next
    // heartbeat; the frontend is node 0.
    let ids: Vec<String> = rows(&mut conn, "SHOW BACKENDS")
        .await
        .into_iter()
        .map(|b| b[0].clone().unwrap_or_default())
        .collect();
    let usage = "SELECT be_id, cpu_limit_percent, cpu_time_ms, local_scan_bytes \
                 FROM information_schema.workload_group_resource_usage \
                 WHERE workload_group_name = 'wg' ORDER BY be_id";
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = rows(&mut conn, usage).await;
        let on_backends: Vec<&Vec<Option<String>>> = r
            .iter()
            .filter(|row| ids.contains(row[0].as_ref().unwrap_or(&String::new())))
            .collect();
        let busy = |row: &&Vec<Option<String>>| {
            let n = |i: usize| -> u64 { row[i].as_deref().unwrap_or("0").parse().unwrap_or(0) };
            row[1].as_deref() == Some("50") && n(2) > 0 && n(3) > 0
        };
        if r.first().and_then(|row| row[0].as_deref()) == Some("0")
            && on_backends.len() == ids.len()
            && on_backends.iter().all(busy)
        {
            break;
        }
        assert!(Instant::now() < deadline, "usage per node: {r:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // A profile shows each backend's part, and the query's totals add every node's.
    exec(&mut conn, "SET enable_profile = true").await;
    assert_eq!(
        rows(&mut conn, "SELECT SUM(v) FROM w.t").await,
        vec![vec![Some("99900000".into())]]
    );
    exec(&mut conn, "SET enable_profile = false").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let list = rows(&mut conn, "SHOW QUERY PROFILE").await;
        if let Some(p) = list
            .into_iter()
            .find(|p| p[3].as_deref() == Some("SELECT SUM(v) FROM w.t"))
        {
            break p;
        }
        assert!(Instant::now() < deadline, "no profile");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        listed[9].as_deref(),
        Some("200000"),
        "scan rows: {listed:?}"
    );
    let id = listed[0].clone().unwrap_or_default();
    let per_backend: Vec<Vec<Option<String>>> =
        rows(&mut conn, &format!("SHOW QUERY PROFILE '/{id}'"))
            .await
            .into_iter()
            .filter(|r| r[2].as_deref().is_some_and(|o| o.starts_with("Backend ")))
            .collect();
    assert_eq!(per_backend.len(), ids.len(), "{per_backend:?}");
    let scanned: u64 = per_backend
        .iter()
        .map(|r| r[4].as_deref().unwrap_or("0").parse::<u64>().unwrap_or(0))
        .sum();
    assert_eq!(scanned, 200_000);
    assert!(
        per_backend
            .iter()
            .all(|r| r[10].as_deref().is_some_and(|m| m.contains("wall_ms="))),
        "{per_backend:?}"
    );

    // While a query runs, active_queries adds what the backends have used so far (the
    // frontend scans nothing itself). The query is held running by a client that stops
    // reading its large result, whatever the machine's speed.
    let mut slow = cluster.connect().await;
    let slow_id = slow.id();
    let mut result = slow
        .query_iter("SELECT k, v, REPEAT('x', 200) FROM w.t")
        .await
        .expect("start the query");
    let first: Option<mysql_async::Row> = result.next().await.expect("first row");
    assert!(first.is_some());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let r = rows(
            &mut conn,
            &format!(
                "SELECT scan_rows FROM information_schema.active_queries \
                 WHERE connection_id = {slow_id}"
            ),
        )
        .await;
        let seen: u64 = r
            .first()
            .and_then(|row| row[0].as_deref())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if seen > 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "active_queries never showed the backends' scans: {r:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let rest: Vec<mysql_async::Row> = result.collect().await.expect("the rest");
    assert_eq!(rest.len() + 1, 200_000);
    drop(result);

    // The query's memory limit holds on the backends: a wide aggregation over it fails alone.
    exec(&mut conn, "SET exec_mem_limit = 1048576").await;
    let wide = "SELECT COUNT(*) FROM (SELECT k, v, COUNT(*) FROM w.t GROUP BY k, v) x";
    let err = conn
        .query_drop(wide)
        .await
        .expect_err("over exec_mem_limit");
    assert!(err.to_string().contains("MEM_LIMIT_EXCEEDED"), "{err}");
    exec(&mut conn, "SET exec_mem_limit = 2147483648").await;
    assert_eq!(
        rows(&mut conn, wide).await,
        vec![vec![Some("200000".into())]]
    );

    // A workload policy judges the whole query: rows scanned on the backends count.
    exec(
        &mut conn,
        "CREATE WORKLOAD POLICY big_scans CONDITIONS(be_scan_rows > 1000) ACTIONS(cancel_query)",
    )
    .await;
    let mut scanner = cluster.connect().await;
    let scanner_id = scanner.id();
    let mut result = scanner
        .query_iter("SELECT k, v, REPEAT('x', 200) FROM w.t")
        .await
        .expect("start the query");
    let _first: Option<mysql_async::Row> = result.next().await.expect("first row");
    // The policy ends the statement as soon as the backends' heartbeats show its scans (the
    // figures active_queries shows); it looks every 100 ms.
    let deadline = Instant::now() + Duration::from_secs(30);
    let scanned = format!(
        "SELECT scan_rows > 1000 FROM information_schema.active_queries \
         WHERE connection_id = {scanner_id}"
    );
    while rows(&mut conn, &scanned).await != vec![vec![Some("1".into())]] {
        assert!(
            Instant::now() < deadline,
            "the backends' scans never showed"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rest: Result<Vec<mysql_async::Row>, _> = result.collect().await;
    let err = rest.expect_err("cancelled by the policy");
    assert!(err.to_string().contains("big_scans"), "{err}");
    drop(scanner);
    exec(&mut conn, "DROP WORKLOAD POLICY big_scans").await;
}

#[tokio::test]
async fn tables_wait_for_a_backend_to_hold_them() {
    let (_frontend, (mysql_port, _)) = spawn(
        &["frontend", "--mysql-port", "0", "--http-port", "0"],
        SECRET,
        parse_ready_line,
    );
    let mut conn = connect_root(mysql_port).await;
    exec(&mut conn, "CREATE DATABASE e").await;
    let create =
        "CREATE TABLE e.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2";
    let err = mysql_async::prelude::Queryable::query_drop(&mut conn, create)
        .await
        .expect_err("no backend to hold the tablets");
    assert!(
        err.to_string().contains("ALTER SYSTEM ADD BACKEND"),
        "{err}"
    );
    let (_backend, port) = spawn(&["backend", "--port", "0"], SECRET, backend_port);
    exec(
        &mut conn,
        &format!("ALTER SYSTEM ADD BACKEND \"127.0.0.1:{port}\""),
    )
    .await;
    exec(&mut conn, create).await;
    exec(&mut conn, "INSERT INTO e.t VALUES (1, 10), (2, 20)").await;
    assert_eq!(
        rows(&mut conn, "SELECT SUM(v) FROM e.t").await,
        vec![vec![Some("30".into())]]
    );
    // One backend runs the whole query as one task, its scans included; only the answer
    // crosses to the frontend (no shuffle between tasks of one backend).
    let group = "SELECT v, COUNT(*) FROM e.t GROUP BY v ORDER BY v";
    assert_eq!(
        rows(&mut conn, group).await,
        vec![
            vec![Some("10".into()), Some("1".into())],
            vec![Some("20".into()), Some("1".into())]
        ]
    );
    let plan = rows(&mut conn, &format!("EXPLAIN {group}")).await;
    let distributed = plan
        .iter()
        .find(|r| r[0].as_deref() == Some("distributed_plan"))
        .and_then(|r| r[1].clone())
        .expect("a distributed plan");
    assert!(distributed.contains("Stage 1 ── tasks=1"), "{distributed}");
    assert!(distributed.contains("TabletScanExec"), "{distributed}");
    assert!(!distributed.contains("NetworkShuffleExec"), "{distributed}");
    assert!(!distributed.contains("Stage 2"), "{distributed}");
}

#[tokio::test]
async fn a_restarted_frontend_has_orphaned_segments_removed() {
    let cluster = Cluster::start(1);
    let mut conn = cluster.connect().await;
    exec(&mut conn, "CREATE DATABASE o").await;
    exec(
        &mut conn,
        "CREATE TABLE o.t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 \
         PROPERTIES ('store_row_column' = 'true')",
    )
    .await;
    exec(&mut conn, "INSERT INTO o.t VALUES (1, 10), (2, 20)").await;
    drop(conn);
    let Cluster {
        frontend, backends, ..
    } = cluster;
    let frontend_dir = frontend.kill();
    // What a frontend that died mid-load or mid-compaction leaves on a backend: files no
    // catalog names, beside the tablet's own and in a tablet that no longer exists.
    let backend_dir = backends[0].0.dir.path().to_path_buf();
    let kept = segments(&backend_dir);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let tablet_dir = backend_dir.join(kept[0].parent().expect("tablet directory"));
    // Files are named by the load (or compaction) id that wrote them, from the catalog's
    // counter: orphans have ids the counter has passed.
    let load_id: u64 = kept[0]
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('_').next())
        .and_then(|id| id.parse().ok())
        .expect("a load id");
    assert!(load_id > 2, "{kept:?}");
    let orphans = [
        tablet_dir.join(format!("{}_0.parquet", load_id - 1)),
        tablet_dir.join(format!("{}_0.rows", load_id - 1)),
        tablet_dir.join(format!("c{}_0.parquet", load_id - 2)),
        backend_dir.join(format!("data/424242/424243/{}_0.parquet", load_id - 1)),
    ];
    // A file with an id the counter has not reached could be a load running right now.
    let future = tablet_dir.join(format!("{}_0.parquet", load_id + 1_000_000));
    for file in orphans.iter().chain([&future]) {
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, b"left behind").expect("write orphan");
    }
    let (_frontend, (mysql_port, _)) = crate::cluster_harness::spawn_in(
        frontend_dir,
        &["frontend", "--mysql-port", "0", "--http-port", "0"],
        SECRET,
        parse_ready_line,
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while orphans.iter().any(|o| o.exists()) {
        assert!(Instant::now() < deadline, "orphans left: {orphans:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(future.exists());
    std::fs::remove_file(&future).expect("remove");
    assert_eq!(segments(&backend_dir), kept);
    let mut conn = connect_root(mysql_port).await;
    assert_eq!(
        rows(&mut conn, "SELECT * FROM o.t ORDER BY k").await,
        vec![
            vec![Some("1".into()), Some("10".into())],
            vec![Some("2".into()), Some("20".into())],
        ]
    );
    // A point query reads the kept row store.
    assert_eq!(
        rows(&mut conn, "SELECT v FROM o.t WHERE k = 2").await,
        vec![vec![Some("20".into())]]
    );
}
