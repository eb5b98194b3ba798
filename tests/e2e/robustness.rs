//! Bad or hostile input gets a clear error for its own session and the server keeps serving.

use crate::harness::*;
use mysql_async::prelude::*;
use std::io::{Read, Write};

#[tokio::test]
async fn deep_expressions_do_not_crash_the_server() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE r").await;
    exec(
        &mut c,
        "CREATE TABLE r.u (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    exec(&mut c, "INSERT INTO r.u VALUES (1, 1), (2, 2)").await;
    let ors: Vec<String> = (0..2500).map(|i| format!("k = {i}")).collect();
    let sql = format!("SELECT COUNT(*) FROM r.u WHERE {}", ors.join(" OR "));
    assert_eq!(rows(&mut c, &sql).await[0][0], s("2"));
    let too_deep = format!("SELECT {}", vec!["1"; 20_000].join(" + "));
    assert!(c.query_drop(too_deep).await.is_err());
    assert_eq!(rows(&mut c, "SELECT 1 FROM DUAL").await[0][0], s("1"));
    c.disconnect().await.unwrap();
}

/// Statements shaped to exhaust the stack or the planner are refused with a clear error at
/// once, and the server goes on answering.
#[tokio::test]
async fn oversized_statements_get_clear_errors() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    let error_of = |e: mysql_async::Error| match e {
        mysql_async::Error::Server(e) => (e.code, e.message),
        other => panic!("{other:?}"),
    };
    let union = vec!["SELECT 1"; 10_000].join(" UNION ALL ");
    let (code, message) = error_of(c.query_drop(&union).await.unwrap_err());
    assert_eq!(code, 1473, "{message}");
    assert!(message.contains("UNION"), "{message}");
    let number = format!("SELECT {}", "9".repeat(1 << 20));
    assert_eq!(error_of(c.query_drop(&number).await.unwrap_err()).0, 1473);
    let wide = format!("SELECT {}", vec!["?"; 70_000].join(","));
    assert_eq!(error_of(c.prep(&wide).await.unwrap_err()).0, 1390);
    let prepare = format!("PREPARE p FROM '{wide}'");
    assert_eq!(error_of(c.query_drop(&prepare).await.unwrap_err()).0, 1390);
    // Balanced, a long OR chain is fine.
    let ors: Vec<String> = (0..5_000).map(|i| format!("{i} = 7")).collect();
    let sql = format!("SELECT COUNT(*) WHERE {}", ors.join(" OR "));
    assert_eq!(rows(&mut c, &sql).await[0][0], s("1"));
    assert_eq!(rows(&mut c, "SELECT 1").await[0][0], s("1"));
}

/// Statements large enough to plan for seconds (a UNION of 1,000 arms of 80 columns, within
/// every limit) are planned one at a time off the execution threads: with as many of them
/// sent at once as there are execution threads, other sessions' queries are answered before
/// any of them is done.
#[tokio::test]
async fn large_statements_do_not_starve_other_sessions() {
    let server = TestServer::start().await;
    let arm = format!(
        "SELECT {}",
        (0..80).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
    );
    let large = vec![arm; 1000].join(" UNION ALL ");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let mut planning = Vec::new();
    for _ in 0..threads {
        let opts = server.opts("root", None, None);
        let large = large.clone();
        planning.push(tokio::spawn(async move {
            let mut c = mysql_async::Conn::new(opts).await.unwrap();
            // A debug build on a busy machine may plan this for longer than Doris's 30 s.
            c.query_drop("SET enable_nereids_timeout = false")
                .await
                .unwrap();
            let rows: Vec<mysql_async::Row> = c.query(&large).await.unwrap();
            rows.len()
        }));
    }
    // Past parsing: the large statements are being planned.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    // Each on a new connection: logging in needs the execution threads too.
    for _ in 0..5 {
        let mut c = server.connect().await;
        let n = rows(&mut c, "SELECT COUNT(*) FROM generate_series(1, 1000)").await;
        assert_eq!(n[0][0], s("1000"));
    }
    assert!(
        planning.iter().all(|p| !p.is_finished()),
        "a large statement finished before the small queries were answered"
    );
    for p in planning {
        assert_eq!(p.await.unwrap(), 1000);
    }
}

/// A statement past its time limit fails with 3024 naming the limit, whether it is still
/// planning (`nereids_timeout_second`) or running (`max_execution_time`, `query_timeout`,
/// `insert_timeout`); the session and the server go on.
#[tokio::test]
async fn statements_past_their_time_limits_fail_with_3024() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    let error_of = |e: mysql_async::Error| match e {
        mysql_async::Error::Server(e) => (e.code, e.message),
        other => panic!("{other:?}"),
    };
    let endless = "SELECT COUNT(*) FROM generate_series(1, 1000000000000)";
    for (set, named) in [
        (
            "SET max_execution_time = 300",
            "max_execution_time = 300 ms",
        ),
        ("SET query_timeout = 1", "query_timeout = 1 s"),
    ] {
        exec(&mut c, set).await;
        let started = std::time::Instant::now();
        let (code, message) = error_of(c.query_drop(endless).await.unwrap_err());
        assert_eq!(code, 3024, "{message}");
        assert!(message.contains(named), "{message}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        exec(&mut c, "SET max_execution_time = 0").await;
        exec(&mut c, "SET query_timeout = 900").await;
    }
    exec(&mut c, "CREATE DATABASE tl").await;
    exec(
        &mut c,
        "CREATE TABLE tl.t (k BIGINT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    exec(&mut c, "SET insert_timeout = 1").await;
    let (code, message) = error_of(
        c.query_drop("INSERT INTO tl.t SELECT value, value FROM generate_series(1, 1000000000000)")
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 3024, "{message}");
    assert!(message.contains("insert_timeout = 1 s"), "{message}");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM tl.t").await[0][0],
        s("0")
    );

    // Planning: a statement that plans for seconds, given one second.
    let arm = format!(
        "SELECT {}",
        (0..80).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
    );
    let large = vec![arm; 1000].join(" UNION ALL ");
    exec(&mut c, "SET nereids_timeout_second = 1").await;
    let (code, message) = error_of(c.query_drop(&large).await.unwrap_err());
    assert_eq!(code, 3024, "{message}");
    assert!(
        message.contains("nereids_timeout_second = 1 s"),
        "{message}"
    );
    // The lane it planned in is free again: the same statement plans with the limit lifted.
    exec(&mut c, "SET enable_nereids_timeout = false").await;
    let answered: Vec<mysql_async::Row> = c.query(&large).await.unwrap();
    assert_eq!(answered.len(), 1000);
    assert_eq!(rows(&mut c, "SELECT 1").await[0][0], s("1"));
}

/// A query that panics inside the engine (here an Arrow string array past 2 GiB) fails with an
/// error; it never ends as a short or empty result.
#[tokio::test]
async fn a_panic_while_computing_rows_is_an_error_not_a_short_result() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE p").await;
    exec(
        &mut c,
        "CREATE TABLE p.big (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO p.big SELECT v, v + 0 FROM generate_series(1, 2300) AS t(v)",
    )
    .await;
    let result = c
        .query::<i64, _>("SELECT count(repeat('y', 1000000)) FROM p.big")
        .await;
    match result {
        Ok(rows) => assert_eq!(rows, vec![2300], "a result must be complete"),
        Err(mysql_async::Error::Server(e)) => assert_eq!(e.code, 1105, "{e:?}"),
        Err(other) => panic!("{other:?}"),
    }
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM p.big").await[0][0],
        s("2300")
    );
}

#[tokio::test]
async fn unauthenticated_clients_cannot_send_huge_packets() {
    let server = TestServer::start().await;
    let mut sock = std::net::TcpStream::connect(("127.0.0.1", server.mysql_port)).unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut greeting = [0u8; 4];
    sock.read_exact(&mut greeting).unwrap();
    let len = greeting[0] as usize | (greeting[1] as usize) << 8 | (greeting[2] as usize) << 16;
    let mut body = vec![0u8; len];
    sock.read_exact(&mut body).unwrap();
    // Claim a 16 MB login packet: the server refuses and closes instead of reserving memory.
    sock.write_all(&[0xff, 0xff, 0xff, 0x01]).unwrap();
    let mut rest = Vec::new();
    let _ = sock.read_to_end(&mut rest);
    assert!(
        rest.is_empty() || rest[4] == 0xff,
        "expected an error packet or a closed connection"
    );
    let mut c = server.connect().await;
    assert_eq!(rows(&mut c, "SELECT 1").await[0][0], s("1"));
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_its_query() {
    let server = TestServer::start().await;
    let opts = server.opts("root", None, None);
    let runaway = tokio::spawn(async move {
        let mut c = mysql_async::Conn::new(opts).await.unwrap();
        let _ = c
            .query_drop("SELECT COUNT(*) FROM generate_series(1, 100000000000)")
            .await;
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    runaway.abort(); // drops the connection mid-query
    let _ = runaway.await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let before = server.cpu_seconds();
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let used = server.cpu_seconds() - before;
    // A query still running would burn about a core: ~2 s of CPU in 2 s.
    assert!(
        used < 0.5,
        "server kept working after the client left: {used:.2} CPU s in 2 s"
    );
    let mut c = server.connect().await;
    assert_eq!(rows(&mut c, "SELECT 1").await[0][0], s("1"));
    c.disconnect().await.unwrap();
}

/// LARGEINT keys hash to one bucket like any other key (values are in tests/sql/types).
#[tokio::test]
async fn largeint_keys_prune_buckets() {
    let server = TestServer::start().await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE li").await;
    exec(&mut c, "USE li").await;
    exec(&mut c, "CREATE TABLE t (id LARGEINT NOT NULL, v LARGEINT SUM) AGGREGATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4").await;
    exec(
        &mut c,
        "INSERT INTO t VALUES (170141183460469231731687303715884105727, 1), (-170141183460469231731687303715884105728, 2), (0, 3)",
    )
    .await;
    let plan = rows(
        &mut c,
        "EXPLAIN SELECT * FROM t WHERE id = -170141183460469231731687303715884105728",
    )
    .await;
    let text: Vec<String> = plan.iter().filter_map(|r| r[1].clone()).collect();
    assert!(text.iter().any(|l| l.contains("tablets=1/4")), "{text:?}");
    c.disconnect().await.unwrap();
}

/// `max_connections` client sessions at most (1040 past it), with one more kept for an
/// administrator.
#[tokio::test]
async fn max_connections_leaves_one_for_the_administrator() {
    let server = TestServer::start().await;
    let mut root = server.connect().await;
    exec(&mut root, "CREATE USER 'u'@'%'").await;
    exec(&mut root, "SET GLOBAL max_connections = 2").await;
    let u1 = mysql_async::Conn::new(server.opts("u", None, None))
        .await
        .unwrap();
    let e = mysql_async::Conn::new(server.opts("u", None, None))
        .await
        .unwrap_err();
    assert_eq!(code(e), 1040);
    let root2 = server.connect().await;
    let e = mysql_async::Conn::new(server.opts("root", None, None))
        .await
        .unwrap_err();
    assert_eq!(code(e), 1040);
    // A closed session frees its slot.
    u1.disconnect().await.unwrap();
    root2.disconnect().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let u2 = mysql_async::Conn::new(server.opts("u", None, None))
        .await
        .unwrap();
    u2.disconnect().await.unwrap();
    exec(&mut root, "SET GLOBAL max_connections = 1024").await;
}

/// A client that never finishes its request headers is disconnected (the HTTP port has a header
/// timeout, which also ends idle keep-alive connections); others are served meanwhile.
#[tokio::test]
async fn half_sent_http_requests_are_closed() {
    let server = TestServer::start().await;
    let mut stalled: Vec<std::net::TcpStream> = (0..20)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", server.http_port)).unwrap();
            s.write_all(b"PUT /api/d/t/_stream_load HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            s
        })
        .collect();
    // Others are served while those wait.
    let health = std::process::Command::new("curl")
        .args([
            "-sS",
            &format!("http://127.0.0.1:{}/api/health", server.http_port),
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&health.stdout).contains("OK"));
    for s in &mut stalled {
        s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        let mut buf = Vec::new();
        // The server closes the connection (EOF, possibly after a 408 response).
        let read = s.read_to_end(&mut buf);
        assert!(read.is_ok(), "still open after 30 s: {read:?}");
    }
}

/// A bounded stream of random and mutated packets on both ports (more with
/// `BASALT_FUZZ_CASES`): the server answers `SELECT 1` and `/api/health` afterwards.
#[tokio::test]
async fn fuzzed_hostile_clients_on_both_ports_leave_the_server_serving() {
    use rand::{Rng, SeedableRng};
    let server = TestServer::start().await;
    let cases: usize = std::env::var("BASALT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let seed: u64 = std::env::var("BASALT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let http_heads: [&[u8]; 4] = [
        b"PUT /api/d/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cm9vdDo=\r\nContent-Length: 5\r\n\r\n1\t2\n",
        b"GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /api/_load_error_log?file=../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
        b"PUT /api/%00/%ff/_stream_load HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nfffffff\r\n",
    ];
    for case in 0..cases {
        let mysql = rng.random_bool(0.5);
        let port = if mysql {
            server.mysql_port
        } else {
            server.http_port
        };
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        let mut bytes: Vec<u8> = if mysql {
            // A framed packet with a random body, or noise.
            let body: Vec<u8> = (0..rng.random_range(0..200))
                .map(|_| rng.random())
                .collect();
            let mut p = (body.len() as u32).to_le_bytes()[..3].to_vec();
            p.push(rng.random_range(0..3));
            p.extend(body);
            p
        } else {
            http_heads[rng.random_range(0..http_heads.len())].to_vec()
        };
        for _ in 0..rng.random_range(0..6) {
            if !bytes.is_empty() {
                let i = rng.random_range(0..bytes.len());
                bytes[i] = rng.random();
            }
        }
        let _ = s.write_all(&bytes);
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        let _ = case;
    }
    let mut c = server.connect().await;
    assert_eq!(rows(&mut c, "SELECT 1").await[0][0], s("1"), "seed {seed}");
    let health = std::process::Command::new("curl")
        .args([
            "-sS",
            &format!("http://127.0.0.1:{}/api/health", server.http_port),
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&health.stdout).contains("OK"),
        "seed {seed}"
    );
}
