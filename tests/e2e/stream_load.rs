//! Stream Load through real HTTP clients (curl, and a raw socket for broken requests): headers,
//! formats, filtering and the error log, labels, authentication, atomicity and durability.

use crate::harness::*;
use mysql_async::prelude::Queryable;
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;

/// Runs `curl -u user: -T file -XPUT .../_stream_load` with `headers`; returns (HTTP status, JSON).
fn curl_load(
    server: &TestServer,
    table: &str,
    auth: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Value) {
    let file = write_body(server, body);
    let url = format!(
        "http://127.0.0.1:{}/api/sl/{table}/_stream_load",
        server.http_port
    );
    let mut cmd = Command::new("curl");
    // curl asks `Expect: 100-continue` before a large body; waiting for the server's answer
    // (rather than curl's default 1 s) keeps a busy machine from sending a body the server has
    // already refused, which would end in a broken pipe instead of the 413 under test.
    cmd.args([
        "-sS",
        "--location-trusted",
        "--expect100-timeout",
        "30",
        "-w",
        "\n%{http_code}",
    ]);
    // An empty `auth` leaves the Authorization header to `headers`.
    if !auth.is_empty() {
        cmd.args(["-u", auth]);
    }
    for (k, v) in headers {
        cmd.arg("-H").arg(format!("{k}:{v}"));
    }
    cmd.arg("-T").arg(&file).arg("-XPUT").arg(&url);
    let out = cmd.output().expect("run curl");
    assert!(
        out.status.success(),
        "curl failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (json, code) = text.rsplit_once('\n').expect("status line");
    let code: u16 = code.trim().parse().expect("status code");
    let value = serde_json::from_str(json).unwrap_or(Value::String(json.to_string()));
    (code, value)
}

fn write_body(server: &TestServer, body: &[u8]) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = server.data_dir.path().join(format!("body_{n}.dat"));
    std::fs::write(&path, body).expect("write body");
    path
}

fn load(server: &TestServer, table: &str, headers: &[(&str, &str)], body: &[u8]) -> Value {
    let (code, v) = curl_load(server, table, "root:", headers, body);
    assert_eq!(code, 200, "{v}");
    v
}

fn num(v: &Value, field: &str) -> u64 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing in {v}"))
}

fn http_get(url: &str) -> String {
    let out = Command::new("curl")
        .args(["-sS", url])
        .output()
        .expect("run curl");
    String::from_utf8_lossy(&out.stdout).to_string()
}

async fn setup(server: &TestServer) -> mysql_async::Conn {
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE sl").await;
    exec(&mut c, "USE sl").await;
    c
}

#[tokio::test]
async fn csv_load_labels_and_response_fields() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT NOT NULL, name VARCHAR(20), score DECIMAL(10,2), d DATE) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3").await;
    let body = b"1,alice,10.50,2024-01-01\n2,bob,\\N,2024-02-29\n3,carol,7,2024-03-03\n";
    let v = load(
        &server,
        "t",
        &[("label", "l1"), ("column_separator", ",")],
        body,
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(v["Label"], "l1");
    assert_eq!(v["Message"], "OK");
    assert_eq!(num(&v, "NumberTotalRows"), 3);
    assert_eq!(num(&v, "NumberLoadedRows"), 3);
    assert_eq!(num(&v, "NumberFilteredRows"), 0);
    assert_eq!(num(&v, "NumberUnselectedRows"), 0);
    assert_eq!(num(&v, "LoadBytes"), body.len() as u64);
    for f in [
        "TxnId",
        "LoadTimeMs",
        "BeginTxnTimeMs",
        "StreamLoadPutTimeMs",
        "ReadDataTimeMs",
        "WriteDataTimeMs",
        "CommitAndPublishTimeMs",
    ] {
        assert!(v[f].is_u64(), "{f} in {v}");
    }
    assert!(v.get("ErrorURL").is_none());
    assert_eq!(
        rows(&mut c, "SELECT id, name, score, d FROM t ORDER BY id").await,
        vec![
            vec![s("1"), s("alice"), s("10.50"), s("2024-01-01")],
            vec![s("2"), s("bob"), None, s("2024-02-29")],
            vec![s("3"), s("carol"), s("7.00"), s("2024-03-03")],
        ]
    );
    // The same label again: nothing is loaded, the earlier job is reported.
    let again = load(
        &server,
        "t",
        &[("label", "l1"), ("column_separator", ",")],
        body,
    );
    assert_eq!(again["Status"], "Label Already Exists", "{again}");
    assert_eq!(again["ExistingJobStatus"], "FINISHED");
    assert_eq!(again["TxnId"], v["TxnId"]);
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("3")]
    );
    // Labels survive a restart.
    let mut server = server;
    server.restart().await;
    let again = load(
        &server,
        "t",
        &[("label", "l1"), ("column_separator", ",")],
        body,
    );
    assert_eq!(again["Status"], "Label Already Exists", "{again}");
    // SHOW LOAD lists it.
    let mut c = server.connect().await;
    exec(&mut c, "USE sl").await;
    let jobs = rows(&mut c, "SHOW LOAD").await;
    assert!(
        jobs.iter()
            .any(|r| r.contains(&s("l1")) && r.contains(&s("FINISHED"))),
        "{jobs:?}"
    );
    let jobs = rows(&mut c, "SHOW STREAM LOAD").await;
    assert!(jobs.iter().any(|r| r.contains(&s("l1"))), "{jobs:?}");
}

#[tokio::test]
async fn authentication_and_unknown_objects() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
    )
    .await;
    exec(&mut c, "CREATE USER 'loader'@'%' IDENTIFIED BY 'pw'").await;
    let body = b"1\t2\n";
    let (code, _) = curl_load(&server, "t", "loader:wrong", &[], body);
    assert_eq!(code, 401);
    let (code, _) = curl_load(&server, "t", "nobody:", &[], body);
    assert_eq!(code, 401);
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("0")]
    );
    // An account without LOAD_PRIV on the table is refused before anything is read.
    let (code, v) = curl_load(&server, "t", "loader:pw", &[], body);
    assert_eq!((code, v["Status"].as_str()), (200, Some("Fail")), "{v}");
    assert!(
        v["Message"]
            .as_str()
            .unwrap()
            .contains("INSERT command denied to user 'loader'"),
        "{v}"
    );
    exec(&mut c, "GRANT LOAD_PRIV ON sl.t TO 'loader'@'%'").await;
    let (code, v) = curl_load(&server, "t", "loader:pw", &[], body);
    assert_eq!((code, v["Status"].as_str()), (200, Some("Success")), "{v}");
    // `Basic base64("root")` without the colon is malformed, not a password-less root.
    let (code, _) = curl_load(
        &server,
        "t",
        "",
        &[("Authorization", "Basic cm9vdA==")],
        body,
    );
    assert_eq!(code, 401);
    // Labels follow Doris's rule.
    let v = load(&server, "t", &[("label", "no spaces/allowed")], body);
    assert_eq!(v["Status"], "Fail", "{v}");
    assert!(
        v["Message"]
            .as_str()
            .unwrap()
            .contains("Label format error"),
        "{v}"
    );
    let v = load(&server, "missing", &[], body);
    assert_eq!(v["Status"], "Fail");
    assert!(
        v["Message"].as_str().unwrap().contains("doesn't exist"),
        "{v}"
    );
    // A data column that is not a table column is skipped (as in Doris); a computed one must exist.
    let v = load(&server, "t", &[("columns", "id, skipped")], body);
    assert_eq!(v["Status"], "Success", "{v}");
    let v = load(&server, "t", &[("columns", "id, v, nope = id")], body);
    assert_eq!(v["Status"], "Fail");
    assert!(v["Message"].as_str().unwrap().contains("nope"), "{v}");
    let v = load(&server, "t", &[("columns", "id, x, v = x + ")], body);
    assert_eq!(v["Status"], "Fail", "{v}");
    let v = load(&server, "t", &[("format", "orc")], body);
    assert_eq!(v["Status"], "Fail", "{v}");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), COUNT(v) FROM t").await[0],
        vec![s("2"), s("1")]
    );
}

#[tokio::test]
async fn filtered_rows_ratio_and_error_log() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT NOT NULL, v TINYINT, s VARCHAR(3)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    // Row 2 has too few fields, row 3 a NULL key, row 4 a too long string; strict mode off
    // makes 'x' a NULL (kept).
    let body = b"1,5,ab\n2,6\n\\N,7,cd\n4,8,toolong\n5,x,ok\n6,9,ok\n";
    let over = load(
        &server,
        "t",
        &[("column_separator", ","), ("max_filter_ratio", "0.4")],
        body,
    );
    assert_eq!(over["Status"], "Fail", "{over}");
    assert!(
        over["Message"]
            .as_str()
            .unwrap()
            .contains("too many filtered rows"),
        "{over}"
    );
    assert_eq!(num(&over, "NumberFilteredRows"), 3);
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("0")]
    );

    let ok = load(
        &server,
        "t",
        &[("column_separator", ","), ("max_filter_ratio", "0.5")],
        body,
    );
    assert_eq!(ok["Status"], "Success", "{ok}");
    assert_eq!(num(&ok, "NumberTotalRows"), 6);
    assert_eq!(num(&ok, "NumberLoadedRows"), 3);
    assert_eq!(num(&ok, "NumberFilteredRows"), 3);
    let url = ok["ErrorURL"].as_str().expect("ErrorURL");
    let log = http_get(url);
    assert!(log.contains("less than schema column number"), "{log}");
    assert!(log.contains("NOT NULL"), "{log}");
    assert!(log.contains("longer than"), "{log}");
    assert!(log.contains("4,8,toolong"), "{log}");
    assert_eq!(
        rows(&mut c, "SELECT id, v FROM t ORDER BY id").await,
        vec![
            vec![s("1"), s("5")],
            vec![s("5"), None],
            vec![s("6"), s("9")]
        ]
    );
    // Strict mode filters the unconvertible value instead.
    exec(&mut c, "TRUNCATE TABLE t").await;
    let strict = load(
        &server,
        "t",
        &[
            ("column_separator", ","),
            ("max_filter_ratio", "1"),
            ("strict_mode", "true"),
        ],
        body,
    );
    assert_eq!(num(&strict, "NumberFilteredRows"), 4, "{strict}");
    assert!(http_get(strict["ErrorURL"].as_str().unwrap()).contains("cannot be converted"));
    // Every row filtered with ratio 1: success with nothing loaded.
    let all_bad = load(
        &server,
        "t",
        &[("column_separator", ","), ("max_filter_ratio", "1")],
        b"a\nb\n",
    );
    assert_eq!(all_bad["Status"], "Success", "{all_bad}");
    assert_eq!(num(&all_bad, "NumberLoadedRows"), 0);
    // A guessed error log name is refused.
    let base = url.split("?file=").next().unwrap();
    assert!(!http_get(&format!("{base}?file=error_log_1_0000000000000000")).contains("Reason"));
    assert!(!http_get(&format!("{base}?file=../meta/catalog.redb")).contains("Reason"));
}

#[tokio::test]
async fn columns_where_partitions_and_csv_options() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (k1 INT, k2 VARCHAR(10), v BIGINT, d DATE, note VARCHAR(50) DEFAULT 'none') DUPLICATE KEY(k1) \
                  PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01')) \
                  DISTRIBUTED BY HASH(k1) BUCKETS 2").await;
    // Derived columns and a temporary column, a filter, and rows outside every partition.
    let body = b"1|a|10|2024-01-05\n2|b|20|2024-02-05\n3|c|30|2024-01-06\n4|d|40|2025-01-01\n";
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", "|"),
            ("columns", "k1, k2, tmp, d, v = tmp * 2"),
            ("where", "k1 <> 3"),
            ("max_filter_ratio", "0.5"),
        ],
        body,
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(num(&v, "NumberUnselectedRows"), 1);
    assert_eq!(num(&v, "NumberFilteredRows"), 1);
    assert_eq!(num(&v, "NumberLoadedRows"), 2);
    assert!(http_get(v["ErrorURL"].as_str().unwrap()).contains("no partition"));
    assert_eq!(
        rows(&mut c, "SELECT k1, k2, v, note FROM t ORDER BY k1").await,
        vec![
            vec![s("1"), s("a"), s("20"), s("none")],
            vec![s("2"), s("b"), s("40"), s("none")]
        ]
    );
    // A derived column that fails for one row (here a cast of a non-number) filters that row
    // with the error as its reason; the other rows load.
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", "|"),
            (
                "columns",
                "k1, k2, tmp, d, v = CAST(IF(tmp = 0, 'x', 100 DIV tmp) AS BIGINT)",
            ),
            ("max_filter_ratio", "0.5"),
        ],
        b"5|e|4|2024-01-07\n6|f|0|2024-01-08\n",
    );
    assert_eq!(
        (num(&v, "NumberLoadedRows"), num(&v, "NumberFilteredRows")),
        (1, 1),
        "{v}"
    );
    assert!(http_get(v["ErrorURL"].as_str().unwrap()).contains("column 'v'"));
    assert_eq!(
        rows(&mut c, "SELECT v FROM t WHERE k1 >= 5").await,
        vec![vec![s("25")]]
    );
    // Derived columns compute as queries do: integer overflow filters the row (1690) instead
    // of wrapping, and a division by zero is NULL.
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", "|"),
            (
                "columns",
                "k1, k2, tmp, d, v = 9223372036854775807 + IF(tmp = 0, 1, 0) - 9223372036854775800",
            ),
            ("max_filter_ratio", "0.5"),
        ],
        b"7|g|4|2024-01-07\n8|h|0|2024-01-08\n",
    );
    assert_eq!(
        (num(&v, "NumberLoadedRows"), num(&v, "NumberFilteredRows")),
        (1, 1),
        "{v}"
    );
    assert!(http_get(v["ErrorURL"].as_str().unwrap()).contains("out of range"));
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", "|"),
            ("columns", "k1, k2, tmp, d, v = 100 DIV tmp"),
        ],
        b"9|i|0|2024-01-09\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT k1, v FROM t WHERE k1 >= 7 ORDER BY k1").await,
        vec![vec![s("7"), s("7")], vec![s("9"), None]]
    );
    // `partitions`: rows of other partitions are filtered.
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", "|"),
            ("columns", "k1,k2,v,d"),
            ("partitions", "p2"),
            ("max_filter_ratio", "0.9"),
        ],
        b"10|x|1|2024-01-10\n11|y|2|2024-02-10\n",
    );
    assert_eq!(
        (num(&v, "NumberLoadedRows"), num(&v, "NumberFilteredRows")),
        (1, 1),
        "{v}"
    );
    let v = load(&server, "t", &[("partitions", "p9")], b"");
    assert_eq!(v["Status"], "Fail");
    // csv_with_names maps by the header; enclose/escape; skip_lines; CRLF; hex separators.
    exec(&mut c, "TRUNCATE TABLE t").await;
    let v = load(
        &server,
        "t",
        &[
            ("format", "csv_with_names"),
            ("column_separator", ","),
            ("enclose", "\""),
            ("escape", "\\"),
        ],
        b"d,k1,note\r\n2024-01-01,1,\"hello, \\\"world\\\"\"\r\n2024-01-02,2,\"multi\nline\"\r\n",
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(
        rows(&mut c, "SELECT k1, note FROM t ORDER BY k1").await,
        vec![
            vec![s("1"), s("hello, \"world\"")],
            vec![s("2"), s("multi\nline")]
        ]
    );
    let v = load(
        &server,
        "t",
        &[
            ("skip_lines", "2"),
            ("column_separator", "\\x01"),
            ("line_delimiter", "\\x02"),
            ("columns", "k1,d"),
        ],
        b"junk\x02junk\x025\x012024-01-03\x02",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT d FROM t WHERE k1 = 5").await,
        vec![vec![s("2024-01-03")]]
    );
}

#[tokio::test]
async fn json_parquet_and_compressed_bodies() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id BIGINT, name VARCHAR(20), amount DOUBLE) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    let v = load(
        &server,
        "t",
        &[("format", "json"), ("read_json_by_line", "true")],
        b"{\"id\": 1, \"name\": \"a\", \"amount\": 1.5}\n{\"ID\": 2, \"name\": null}\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    let v = load(
        &server,
        "t",
        &[("format", "json"), ("strip_outer_array", "true")],
        br#"[{"id": 3, "name": "c"}, {"id": 4, "amount": 2}]"#,
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    let v = load(
        &server,
        "t",
        &[
            ("format", "json"),
            ("jsonpaths", r#"["$.k", "$.info.n"]"#),
            ("columns", "id, name"),
            ("json_root", "$.data"),
            ("strip_outer_array", "true"),
        ],
        br#"{"data": [{"k": 5, "info": {"n": "e"}}]}"#,
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    let v = load(&server, "t", &[("format", "json")], br#"[{"id": 9}]"#);
    assert_eq!(v["Status"], "Fail", "array without strip_outer_array: {v}");
    assert_eq!(
        rows(&mut c, "SELECT id, name, amount FROM t ORDER BY id").await,
        vec![
            vec![s("1"), s("a"), s("1.5")],
            vec![s("2"), None, None],
            vec![s("3"), s("c"), None],
            vec![s("4"), None, s("2")],
            vec![s("5"), s("e"), None],
        ]
    );
    // Parquet, matched by column name.
    let parquet = {
        use arrow::array::{Float64Array, Int64Array, StringArray};
        use std::sync::Arc;
        let batch = arrow::record_batch::RecordBatch::try_from_iter(vec![
            (
                "AMOUNT",
                Arc::new(Float64Array::from(vec![10.0, 20.0])) as arrow::array::ArrayRef,
            ),
            ("id", Arc::new(Int64Array::from(vec![100, 101]))),
            ("name", Arc::new(StringArray::from(vec!["p", "q"]))),
        ])
        .unwrap();
        let mut buf = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        buf
    };
    let v = load(&server, "t", &[("format", "parquet")], &parquet);
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT SUM(amount) FROM t WHERE id >= 100").await,
        vec![vec![s("30")]]
    );
    let v = load(
        &server,
        "t",
        &[("format", "parquet")],
        b"not parquet at all",
    );
    assert_eq!(v["Status"], "Fail", "{v}");
    // gzip and zstd bodies.
    let csv = b"200\tg\t1\n201\tg\t2\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(csv).unwrap();
    let v = load(
        &server,
        "t",
        &[("compress_type", "gz")],
        &gz.finish().unwrap(),
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    let zst = zstd::encode_all(&b"300\tz\t1\n"[..], 3).unwrap();
    let v = load(&server, "t", &[("compress_type", "zstd")], &zst);
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    let v = load(
        &server,
        "t",
        &[("compress_type", "gz")],
        b"plain text, not gzip",
    );
    assert_eq!(v["Status"], "Fail", "{v}");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t WHERE id >= 200").await,
        vec![vec![s("3")]]
    );
}

#[tokio::test]
async fn merge_types_on_unique_tables() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE u (k INT NOT NULL, v VARCHAR(10) NOT NULL) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2").await;
    load(
        &server,
        "u",
        &[("column_separator", ",")],
        b"1,a\n2,b\n3,c\n4,d\n",
    );
    let v = load(
        &server,
        "u",
        &[
            ("column_separator", ","),
            ("merge_type", "DELETE"),
            ("columns", "k"),
        ],
        b"2\n9\n",
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(
        rows(&mut c, "SELECT k FROM u ORDER BY k").await,
        vec![vec![s("1")], vec![s("3")], vec![s("4")]]
    );
    let v = load(
        &server,
        "u",
        &[
            ("column_separator", ","),
            ("merge_type", "MERGE"),
            ("delete", "v = 'del'"),
        ],
        b"1,del\n5,e\n3,cc\n",
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(
        rows(&mut c, "SELECT k, v FROM u ORDER BY k").await,
        vec![
            vec![s("3"), s("cc")],
            vec![s("4"), s("d")],
            vec![s("5"), s("e")]
        ]
    );
    // Within one load the later row wins: insert then delete, delete then insert.
    load(
        &server,
        "u",
        &[
            ("column_separator", ","),
            ("merge_type", "MERGE"),
            ("delete", "v = 'del'"),
        ],
        b"6,x\n6,del\n4,del\n4,back\n",
    );
    assert_eq!(
        rows(&mut c, "SELECT k, v FROM u ORDER BY k").await,
        vec![
            vec![s("3"), s("cc")],
            vec![s("4"), s("back")],
            vec![s("5"), s("e")]
        ]
    );
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM u").await,
        vec![vec![s("3")]]
    );
    // Deletes survive a restart (the index is rebuilt from segments and bitmaps).
    let mut server = server;
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(
        rows(&mut c, "SELECT k FROM sl.u ORDER BY k").await,
        vec![vec![s("3")], vec![s("4")], vec![s("5")]]
    );
    exec(
        &mut c,
        "CREATE TABLE sl.d (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    let v = load(&server, "d", &[("merge_type", "DELETE")], b"1\n");
    assert_eq!(v["Status"], "Fail", "{v}");
}

/// Sends a raw HTTP request; returns the response text (empty if the server closed early).
fn raw_http(port: u16, head: &str, body: &[u8], close_early: bool) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    if close_early {
        s.shutdown(std::net::Shutdown::Write).ok();
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

#[tokio::test]
async fn truncated_chunked_and_expect_continue_bodies() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT, v VARCHAR(100)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    let auth = "cm9vdDo="; // root:
                           // Content-Length promises more than is sent: the load fails and leaves nothing.
    let head = format!(
        "PUT /api/sl/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\nlabel: cut\r\nContent-Length: 1000\r\n\r\n"
    );
    let port = server.http_port;
    tokio::task::spawn_blocking(move || raw_http(port, &head, b"1\ta\n2\tb\n", true))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("0")]
    );
    // The label of the failed load is free again.
    let v = load(&server, "t", &[("label", "cut")], b"1\ta\n");
    assert_eq!(v["Status"], "Success", "{v}");
    // Chunked transfer and Expect: 100-continue with a body over 1 MB, through curl.
    let mut big = Vec::new();
    for i in 0..50_000 {
        big.extend_from_slice(format!("{i}\tsome text to make the body bigger {i}\n").as_bytes());
    }
    let v = load(
        &server,
        "t",
        &[("Transfer-Encoding", "chunked"), ("Expect", "100-continue")],
        &big,
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 50_000, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*), COUNT(DISTINCT id) FROM t").await[0],
        vec![s("50001"), s("50000")]
    );
    // A rejected password never reads the body.
    let (code, _) = curl_load(
        &server,
        "t",
        "root:bad",
        &[("Expect", "100-continue")],
        &big,
    );
    assert_eq!(code, 401);
}

#[tokio::test]
async fn kill9_during_and_after_loads() {
    let mut server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, v VARCHAR(100)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4",
    )
    .await;
    let v = load(&server, "t", &[("label", "acked")], b"1\ta\n2\tb\n");
    assert_eq!(v["Status"], "Success");
    // A load whose body is still streaming when the server dies.
    let port = server.http_port;
    let head = "PUT /api/sl/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cm9vdDo=\r\nlabel: torn\r\nTransfer-Encoding: chunked\r\n\r\n".to_string();
    let sender = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.write_all(head.as_bytes()).unwrap();
        for i in 0..2000u32 {
            let mut chunk = String::new();
            for j in 0..500u32 {
                chunk.push_str(&format!("{}\tx\n", 10 + i * 500 + j));
            }
            if s.write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())
                .is_err()
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    server.kill9();
    let _ = sender.join();
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(
        rows(&mut c, "SELECT id, v FROM sl.t ORDER BY id").await,
        vec![vec![s("1"), s("a")], vec![s("2"), s("b")]]
    );
    // The torn load's label was never taken; the acknowledged one still is.
    let v = load(&server, "t", &[("label", "torn")], b"3\tc\n");
    assert_eq!(v["Status"], "Success", "{v}");
    let v = load(&server, "t", &[("label", "acked")], b"4\td\n");
    assert_eq!(v["Status"], "Label Already Exists", "{v}");
}

/// Header values are UTF-8 text (a `where` may compare with non-ASCII text); invalid UTF-8 and
/// Doris headers that would change the load's meaning are refused, never ignored.
#[tokio::test]
async fn non_ascii_and_unsupported_headers() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT, v VARCHAR(100)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    let v = load(
        &server,
        "t",
        &[("where", "v = 'grüße'")],
        "1\tgrüße\n2\tgruesse\n".as_bytes(),
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    assert_eq!(num(&v, "NumberUnselectedRows"), 1, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT id, v FROM t").await,
        vec![vec![s("1"), s("grüße")]]
    );
    // A `where` header in Latin-1 is not UTF-8: refused, nothing loaded.
    let mut head = b"PUT /api/sl/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cm9vdDo=\r\nwhere: v = 'gr\xfc\xdfe'\r\nContent-Length: 8\r\nConnection: close\r\n\r\n".to_vec();
    head.extend_from_slice(b"3\tgr\n4\tx\n");
    let port = server.http_port;
    let response = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.write_all(&head).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    assert!(response.contains("not valid UTF-8"), "{response}");
    for (name, value) in [
        ("two_phase_commit", "true"),
        ("partial_columns", "true"),
        ("function_column.sequence_col", "id"),
        ("hidden_columns", "__DORIS_DELETE_SIGN__"),
    ] {
        let v = load(&server, "t", &[(name, value)], b"5\ty\n");
        assert_eq!(v["Status"], "Fail", "{name}: {v}");
        assert!(
            v["Message"]
                .as_str()
                .unwrap_or("")
                .contains("not supported"),
            "{v}"
        );
    }
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("1")]
    );
}

/// A server stopped (SIGTERM) while a body is still arriving must not load the part it has:
/// the request is abandoned, and an abandoned body is not a complete one.
#[tokio::test]
async fn shutdown_during_a_streaming_body_loads_nothing() {
    let mut server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, v VARCHAR(100)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2",
    )
    .await;
    let port = server.http_port;
    let head = "PUT /api/sl/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cm9vdDo=\r\nlabel: stalled\r\nTransfer-Encoding: chunked\r\n\r\n".to_string();
    let (sent_tx, sent_rx) = std::sync::mpsc::channel();
    let sender = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.write_all(head.as_bytes()).unwrap();
        // Whole lines, then the client stalls with the body unfinished.
        let chunk: String = (0..1000).map(|i| format!("{i}\tx\n")).collect();
        s.write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())
            .unwrap();
        sent_tx.send(()).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    });
    sent_rx.recv().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    server.terminate();
    let response = sender.join().unwrap();
    assert!(!response.contains("\"Success\""), "{response}");
    server.restart().await;
    let mut c = server.connect().await;
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM sl.t").await[0],
        vec![s("0")]
    );
    let v = load(&server, "t", &[("label", "stalled")], b"1\ta\n");
    assert_eq!(v["Status"], "Success", "{v}");
}

#[tokio::test]
async fn oversize_bodies_are_refused() {
    let server = TestServer::start_with_config("stream_load_max_mb = 1\n").await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT, v VARCHAR(100)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    let mut big = Vec::new();
    let mut i = 0;
    while big.len() < (3 << 20) / 2 {
        big.extend_from_slice(format!("{i}\tpadding padding padding padding\n").as_bytes());
        i += 1;
    }
    // Declared too large: refused before the body is read.
    let (code, v) = curl_load(&server, "t", "root:", &[], &big);
    assert_eq!(code, 413, "{v}");
    assert_eq!(v["Status"], "Fail");
    // Chunked, so the size shows only while streaming: the load fails and leaves nothing.
    let (code, v) = curl_load(
        &server,
        "t",
        "root:",
        &[("Transfer-Encoding", "chunked")],
        &big,
    );
    assert_eq!(code, 200);
    assert_eq!(v["Status"], "Fail", "{v}");
    assert!(
        v["Message"]
            .as_str()
            .unwrap()
            .contains("stream_load_max_mb"),
        "{v}"
    );
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("0")]
    );
    // Under the limit it loads.
    let v = load(&server, "t", &[], b"1\tsmall\n");
    assert_eq!(v["Status"], "Success", "{v}");
}

#[tokio::test]
async fn names_and_types_header_and_timeout() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT, v VARCHAR(10)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    let v = load(
        &server,
        "t",
        &[
            ("format", "csv_with_names_and_types"),
            ("column_separator", ","),
        ],
        b"v,id\nvarchar,int\nx,1\ny,2\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT id, v FROM t ORDER BY id").await,
        vec![vec![s("1"), s("x")], vec![s("2"), s("y")]]
    );
    // A body that takes longer than `timeout` seconds: the load fails and leaves nothing.
    let port = server.http_port;
    let response = tokio::task::spawn_blocking(move || {
        let mut sock = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        sock.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
        let head = "PUT /api/sl/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cm9vdDo=\r\ntimeout: 1\r\nlabel: slow\r\nTransfer-Encoding: chunked\r\n\r\n";
        let _ = sock.write_all(head.as_bytes());
        for i in 0..25 {
            let line = format!("{}\tslow\n", 100 + i);
            if sock.write_all(format!("{:x}\r\n{line}\r\n", line.len()).as_bytes()).is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = sock.write_all(b"0\r\n\r\n");
        let mut out = String::new();
        let _ = sock.read_to_string(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(response.contains("timed out"), "{response}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("2")]
    );
    let v = load(&server, "t", &[("label", "slow")], b"3\tz\n");
    assert_eq!(
        v["Status"], "Success",
        "the timed-out load's label is free: {v}"
    );
}

#[tokio::test]
async fn a_failing_batch_stops_a_large_load_without_hanging() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2",
    )
    .await;
    // Far more data than the work queues hold; every batch fails while being computed.
    let mut big = Vec::with_capacity(40 << 20);
    for i in 0..4_000_000u32 {
        big.extend_from_slice(format!("{i}\t{i}\n").as_bytes());
    }
    let started = std::time::Instant::now();
    let v = load(
        &server,
        "t",
        &[("columns", "id, x, v = CAST(concat('x', id) AS INT)")],
        &big,
    );
    assert_eq!(v["Status"], "Fail", "{v}");
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
    assert_eq!(
        rows(&mut c, "SELECT COUNT(*) FROM t").await[0],
        vec![s("0")]
    );
}

#[tokio::test]
async fn auto_increment_and_point_queries_after_loads() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE ai (id BIGINT NOT NULL AUTO_INCREMENT, name VARCHAR(10) NOT NULL, \
         PRIMARY KEY (id)) ENGINE=InnoDB",
    )
    .await;
    // Left out of `columns`, the AUTO_INCREMENT column gets new ids; given, it is kept.
    let v = load(
        &server,
        "ai",
        &[("column_separator", ","), ("columns", "name")],
        b"a\nb\nc\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 3, "{v}");
    let v = load(
        &server,
        "ai",
        &[("column_separator", ",")],
        b"100,x\n\\N,y\n0,z\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 3, "{v}");
    let got = rows(&mut c, "SELECT id, name FROM ai ORDER BY id").await;
    let ids: Vec<i64> = got
        .iter()
        .map(|r| r[0].as_deref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(&ids[..3], &[1, 2, 3], "{got:?}");
    assert_eq!(ids[3], 100);
    assert!(
        ids[4] > 100 && ids[5] > ids[4],
        "ids after an explicit one: {got:?}"
    );
    exec(&mut c, "INSERT INTO ai (name) VALUES ('sql')").await;
    let last: Vec<(i64,)> = c.query("SELECT LAST_INSERT_ID()").await.unwrap();
    assert!(last[0].0 > ids[5], "{last:?} after {ids:?}");

    // A Stream Load DELETE is seen at once by the point-query path (and its row cache).
    let q = "SELECT name FROM ai WHERE id = 2";
    assert!(rows(&mut c, &format!("EXPLAIN {q}"))
        .await
        .iter()
        .any(|r| r[1].as_deref().unwrap_or("").contains("SHORT-CIRCUIT")));
    assert_eq!(rows(&mut c, q).await, vec![vec![s("b")]]);
    let v = load(
        &server,
        "ai",
        &[
            ("column_separator", ","),
            ("merge_type", "DELETE"),
            ("columns", "id"),
        ],
        b"2\n",
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert!(rows(&mut c, q).await.is_empty());
}

/// JSON, ARRAY, MAP, STRUCT and byte-string columns through Stream Load (CSV text in Doris's
/// literal forms, JSON sub-documents), the binary protocol with MySQL's column types, a restart
/// and compaction of a Unique table.
#[tokio::test]
async fn json_nested_and_binary_columns() {
    use mysql_async::consts::ColumnType;
    let mut server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT NOT NULL, tags ARRAY<INT>, attrs MAP<STRING, INT>, pos STRUCT<x:INT, y:STRING>, doc JSON, raw VARBINARY(4)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    // Row 3's document is not JSON and row 4's bytes are too long: both are filtered.
    let csv = b"1|[1, 2]|{\"a\": 1}|{\"x\": 1, \"y\": \"p\"}|{\"k\": [true]}|ab\n2|['3']|{b: 2}|\\N|\"s\"|\\N\n3|[]|{}|\\N|{bad|x\n4|[]|{}|\\N|1|12345\n";
    let v = load(
        &server,
        "t",
        &[("column_separator", "|"), ("max_filter_ratio", "0.5")],
        csv,
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    assert_eq!(num(&v, "NumberFilteredRows"), 2, "{v}");
    let json = br#"{"id": 5, "tags": [5, null], "attrs": {"c": 3}, "pos": {"x": 5, "y": "q"}, "doc": {"deep": {"n": 1}}, "raw": "zz"}"#;
    let v = load(&server, "t", &[("format", "json")], json);
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    let expected = vec![
        vec![
            s("1"),
            s("[1, 2]"),
            s("{\"a\":1}"),
            s("{\"x\":1, \"y\":\"p\"}"),
            s("{\"k\":[true]}"),
            s("ab"),
        ],
        vec![s("2"), s("[3]"), s("{\"b\":2}"), None, s("\"s\""), None],
        vec![
            s("5"),
            s("[5, null]"),
            s("{\"c\":3}"),
            s("{\"x\":5, \"y\":\"q\"}"),
            s("{\"deep\":{\"n\":1}}"),
            s("zz"),
        ],
    ];
    let query = "SELECT id, tags, attrs, pos, doc, raw FROM t ORDER BY id";
    assert_eq!(rows(&mut c, query).await, expected);

    // The binary protocol (a prepared statement) gives the same values, and MySQL's types:
    // JSON as JSON, bytes as a BLOB of the binary character set.
    let result: Vec<mysql_async::Row> = c
        .exec(
            "SELECT doc, raw, doc->>'$.deep.n' FROM t WHERE id = ?",
            (5,),
        )
        .await
        .expect("prepared select");
    let columns = result[0].columns_ref();
    assert_eq!(columns[0].column_type(), ColumnType::MYSQL_TYPE_JSON);
    assert_eq!(columns[1].column_type(), ColumnType::MYSQL_TYPE_BLOB);
    assert_eq!(columns[1].character_set(), 63);
    let values: (String, Vec<u8>, String) = mysql_async::from_row(result[0].clone());
    assert_eq!(
        values,
        ("{\"deep\":{\"n\":1}}".into(), b"zz".to_vec(), "1".into())
    );
    c.exec_drop(
        "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
        (
            6,
            "[6]",
            "{\"d\": 6}",
            "{\"x\": 6, \"y\": \"r\"}",
            "[6]",
            vec![0u8, 255],
        ),
    )
    .await
    .expect("prepared insert");
    let err = c
        .exec_drop("INSERT INTO t (id, doc) VALUES (?, ?)", (7, "{not json"))
        .await
        .expect_err("invalid JSON");
    assert_eq!(code(err), 3140);

    // Everything survives a restart, and compaction of the Unique table keeps the last rows.
    drop(c);
    server.restart().await;
    let mut c = server.connect().await;
    exec(&mut c, "USE sl").await;
    let mut after = expected.clone();
    after.push(vec![
        s("6"),
        s("[6]"),
        s("{\"d\":6}"),
        s("{\"x\":6, \"y\":\"r\"}"),
        s("[6]"),
        Some(String::from_utf8_lossy(&[0u8, 255]).into_owned()),
    ]);
    assert_eq!(rows(&mut c, query).await, after);
    for round in 0..6 {
        exec(
            &mut c,
            &format!("INSERT INTO t VALUES (1, [{round}], map('r', {round}), struct({round}, 'z'), '{{\"r\": {round}}}', 'r')"),
        )
        .await;
    }
    wait_for_compaction(&mut c, "t", 1, std::time::Duration::from_secs(90)).await;
    assert_eq!(
        rows(&mut c, "SELECT tags, attrs, pos, doc FROM t WHERE id = 1").await,
        vec![vec![
            s("[5]"),
            s("{\"r\":5}"),
            s("{\"x\":5, \"y\":\"z\"}"),
            s("{\"r\":5}")
        ]]
    );
}

/// DATE and DATETIME columns read MySQL's forms (`2012/12/31`, `20240105`, two-digit years);
/// a value that is no date is NULL without strict mode and a filtered row with it.
#[tokio::test]
async fn dates_in_mysql_forms() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE d (id INT NOT NULL, d DATE, t DATETIME) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    let body = b"1,2012/12/31,2012^12^31 11+30+45\n2,24.1.5,20240105101112\n3,garbage,2024-02-30 10:00:00\n";
    let lenient = load(&server, "d", &[("column_separator", ",")], body);
    assert_eq!(lenient["Status"], "Success", "{lenient}");
    assert_eq!(num(&lenient, "NumberLoadedRows"), 3);
    assert_eq!(
        rows(&mut c, "SELECT id, d, t FROM d ORDER BY id").await,
        vec![
            vec![s("1"), s("2012-12-31"), s("2012-12-31 11:30:45")],
            vec![s("2"), s("2024-01-05"), s("2024-01-05 10:11:12")],
            vec![s("3"), None, None],
        ]
    );
    let strict = load(
        &server,
        "d",
        &[
            ("column_separator", ","),
            ("strict_mode", "true"),
            ("max_filter_ratio", "0.5"),
        ],
        body,
    );
    assert_eq!(strict["Status"], "Success", "{strict}");
    assert_eq!(num(&strict, "NumberLoadedRows"), 2);
    assert_eq!(num(&strict, "NumberFilteredRows"), 1);
}

/// JSON numbers keep every digit on their way into DECIMAL, LARGEINT and BIGINT columns (a
/// parser that reads numbers as doubles would round them, or store NULL where the rounded text
/// is no longer a decimal), and a JSON column keeps the number as written.
#[tokio::test]
async fn json_numbers_keep_their_digits() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE n (id INT NOT NULL, d DECIMAL(38, 9), big LARGEINT, b BIGINT, f DOUBLE, doc JSON) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1").await;
    let json = br#"[{"id": 1, "d": 12345678901234567.123456789, "big": 123456789012345678901234567890, "b": 9007199254740993, "f": 0.1, "doc": {"n": 123456789012345678901234567890, "x": 1.5}},
{"id": 2, "d": -0.000000001, "big": -170141183460469231731687303715884105728, "b": -9223372036854775808, "f": 1e300, "doc": [9007199254740993]}]"#;
    let v = load(
        &server,
        "n",
        &[("format", "json"), ("strip_outer_array", "true")],
        json,
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT id, d, big, b, f, doc FROM n ORDER BY id").await,
        vec![
            vec![
                s("1"),
                s("12345678901234567.123456789"),
                s("123456789012345678901234567890"),
                s("9007199254740993"),
                s("0.1"),
                s(r#"{"n":123456789012345678901234567890,"x":1.5}"#),
            ],
            vec![
                s("2"),
                s("-0.000000001"),
                s("-170141183460469231731687303715884105728"),
                s("-9223372036854775808"),
                s("1e300"),
                s("[9007199254740993]"),
            ],
        ]
    );
    // In strict mode a number past the column's range is a filtered row, never a rounded value.
    let v = load(
        &server,
        "n",
        &[("format", "json"), ("strict_mode", "true")],
        br#"{"id": 3, "big": 170141183460469231731687303715884105728}"#,
    );
    assert_eq!(v["Status"], "Fail", "{v}");
}

#[tokio::test]
async fn ip_addresses_from_csv_and_json() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE ip (id INT NOT NULL, a IPV4, b IPV6 NOT NULL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2").await;
    // No address: NULL (filtered where the column is NOT NULL); a blank value is NULL.
    let body = b"1,192.168.0.1,2001:DB8::1\n2,bad,::ffff:1.2.3.4\n3,10.0.0.1,zz\n4,,::\n";
    let lenient = load(
        &server,
        "ip",
        &[("column_separator", ","), ("max_filter_ratio", "0.5")],
        body,
    );
    assert_eq!(lenient["Status"], "Success", "{lenient}");
    assert_eq!(num(&lenient, "NumberLoadedRows"), 3);
    assert_eq!(num(&lenient, "NumberFilteredRows"), 1);
    assert_eq!(
        rows(&mut c, "SELECT id, a, b FROM ip ORDER BY id").await,
        vec![
            vec![s("1"), s("192.168.0.1"), s("2001:db8::1")],
            vec![s("2"), None, s("::ffff:1.2.3.4")],
            vec![s("4"), None, s("::")],
        ]
    );
    // Strict mode filters every row with text that is no address.
    let strict = load(
        &server,
        "ip",
        &[
            ("column_separator", ","),
            ("strict_mode", "true"),
            ("max_filter_ratio", "1"),
        ],
        body,
    );
    assert_eq!(strict["Status"], "Success", "{strict}");
    assert_eq!(num(&strict, "NumberLoadedRows"), 2);
    assert_eq!(num(&strict, "NumberFilteredRows"), 2);
    let json = br#"[{"id": 5, "a": "8.8.8.8", "b": "2001:4860:4860::8888"}]"#;
    let v = load(
        &server,
        "ip",
        &[("format", "json"), ("strip_outer_array", "true")],
        json,
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(
        rows(&mut c, "SELECT a, b FROM ip WHERE a = '8.8.8.8'").await,
        vec![vec![s("8.8.8.8"), s("2001:4860:4860::8888")]]
    );
}

/// A MySQL table whose PRIMARY KEY does not lead its columns takes CSV without a `columns`
/// header in its declared order (as SELECT * and INSERT without a column list show it), and
/// CSV with names by name.
#[tokio::test]
async fn csv_columns_follow_the_declared_order_of_a_mysql_primary_key_table() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE people (name VARCHAR(20), id INT, age INT, PRIMARY KEY (id))",
    )
    .await;
    let v = load(
        &server,
        "people",
        &[("column_separator", ",")],
        b"ann,1,30\nbob,2,40\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    let v = load(
        &server,
        "people",
        &[("column_separator", ","), ("format", "csv_with_names")],
        b"age,id,name\n41,2,bea\n",
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");
    assert_eq!(
        rows(&mut c, "SELECT * FROM people ORDER BY id").await,
        vec![
            vec![s("ann"), s("1"), s("30")],
            vec![s("bea"), s("2"), s("41")]
        ]
    );
}

#[tokio::test]
async fn json_values_into_variant_columns() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE ev (k INT, v VARIANT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
    )
    .await;
    // An object or array goes in as it is, a string is parsed, text that is no JSON is NULL.
    let body = br#"{"k": 1, "v": {"a": 1, "b": {"c": "x"}, "arr": [1, 2]}}
{"k": 2, "v": "{\"a\": 2}"}
{"k": 3, "v": 123}
{"k": 4, "v": "hello"}
{"k": 5, "v": null}
{"k": 6, "v": [1, "two"]}
"#;
    let v = load(
        &server,
        "ev",
        &[("format", "json"), ("read_json_by_line", "true")],
        body,
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(num(&v, "NumberLoadedRows"), 6);
    assert_eq!(
        rows(
            &mut c,
            "SELECT k, v, v['b']['c'], v['a'] + 1 FROM ev ORDER BY k"
        )
        .await,
        vec![
            vec![
                s("1"),
                s(r#"{"a":1,"b":{"c":"x"},"arr":[1,2]}"#),
                s("x"),
                s("2")
            ],
            vec![s("2"), s(r#"{"a":2}"#), None, s("3")],
            vec![s("3"), s("123"), None, None],
            vec![s("4"), None, None, None],
            vec![s("5"), None, None, None],
            vec![s("6"), s(r#"[1,"two"]"#), None, None],
        ]
    );
    // A NOT NULL VARIANT filters the rows whose value is no JSON document.
    exec(&mut c, "CREATE TABLE ev_strict (k INT, v VARIANT NOT NULL) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1").await;
    let v = load(
        &server,
        "ev_strict",
        &[
            ("format", "json"),
            ("read_json_by_line", "true"),
            ("max_filter_ratio", "0.5"),
        ],
        b"{\"k\": 1, \"v\": {\"a\": 1}}\n{\"k\": 2, \"v\": \"hello\"}\n",
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(num(&v, "NumberLoadedRows"), 1);
    assert_eq!(num(&v, "NumberFilteredRows"), 1);
    assert_eq!(
        rows(&mut c, "SELECT k, v FROM ev_strict").await,
        vec![vec![s("1"), s(r#"{"a":1}"#)]]
    );
}

/// BIT(n) columns take numbers from Stream Load (a value wider than n bits filters its row) and
/// VARCHAR(n) n characters of any width; the binary protocol sends BIT values as MySQL's BIT
/// type with ceil(n / 8) big-endian bytes, as the text protocol does.
#[tokio::test]
async fn bit_columns_and_character_lengths() {
    use mysql_async::consts::ColumnType;
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE t (id INT NOT NULL, b BIT(12), v VARCHAR(2)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1").await;
    // Row 2's 4096 needs 13 bits, row 3's text is three characters.
    let csv = "1,2748,äö\n2,4096,ab\n3,7,äöü\n4,\\N,Ж\n";
    let v = load(
        &server,
        "t",
        &[("column_separator", ","), ("max_filter_ratio", "0.5")],
        csv.as_bytes(),
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(num(&v, "NumberLoadedRows"), 2, "{v}");
    assert_eq!(num(&v, "NumberFilteredRows"), 2, "{v}");
    let json = r#"[{"id": 5, "b": 1, "v": "Жй"}, {"id": 6, "b": 8192, "v": "x"}]"#;
    let v = load(
        &server,
        "t",
        &[
            ("format", "json"),
            ("strip_outer_array", "true"),
            ("max_filter_ratio", "0.5"),
        ],
        json.as_bytes(),
    );
    assert_eq!(num(&v, "NumberLoadedRows"), 1, "{v}");

    let text: Vec<mysql_async::Row> = c
        .query("SELECT b, v FROM t ORDER BY id")
        .await
        .expect("text select");
    let binary: Vec<mysql_async::Row> = c
        .exec("SELECT b, v FROM t WHERE id > ? ORDER BY id", (0,))
        .await
        .expect("prepared select");
    for result in [text, binary] {
        assert_eq!(
            result[0].columns_ref()[0].column_type(),
            ColumnType::MYSQL_TYPE_BIT
        );
        let values: Vec<(Option<Vec<u8>>, String)> =
            result.into_iter().map(mysql_async::from_row).collect();
        assert_eq!(
            values,
            vec![
                (Some(vec![0x0a, 0xbc]), "äö".to_string()),
                (None, "Ж".to_string()),
                (Some(vec![0x00, 0x01]), "Жй".to_string()),
            ]
        );
    }
}

/// Generated columns are computed from the loaded ones (they need not be among the load's
/// columns, even when NOT NULL), on a Duplicate and a Unique table.
#[tokio::test]
async fn generated_columns_are_computed() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(&mut c, "CREATE TABLE g (id INT, v INT, total INT AS (id + v) STORED NOT NULL, tag VARCHAR(10) GENERATED ALWAYS AS (concat('#', id)) VIRTUAL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1").await;
    exec(
        &mut c,
        "CREATE TABLE u (id INT PRIMARY KEY, v INT, twice INT AS (v * 2))",
    )
    .await;
    let body = b"1,2\n3,4\n";
    for table in ["g", "u"] {
        let v = load(
            &server,
            table,
            &[("column_separator", ","), ("columns", "id,v")],
            body,
        );
        assert_eq!(v["Status"], "Success", "{v}");
        assert_eq!(num(&v, "NumberLoadedRows"), 2);
    }
    assert_eq!(
        rows(&mut c, "SELECT id, total, tag FROM g ORDER BY id").await,
        vec![vec![s("1"), s("3"), s("#1")], vec![s("3"), s("7"), s("#3")]]
    );
    assert_eq!(
        rows(&mut c, "SELECT id, twice FROM u ORDER BY id").await,
        vec![vec![s("1"), s("4")], vec![s("3"), s("8")]]
    );
}

/// Doris's `temporary_partitions` header: rows go only into the named temporary partitions,
/// which the table's queries do not read until REPLACE PARTITION swaps them in; a row outside
/// them is filtered like a row in no partition.
#[tokio::test]
async fn temporary_partitions_header_loads_into_temporary_partitions() {
    let server = TestServer::start().await;
    let mut c = setup(&server).await;
    exec(
        &mut c,
        "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) \
         (PARTITION p1 VALUES LESS THAN (10)) DISTRIBUTED BY HASH(k) BUCKETS 2",
    )
    .await;
    exec(&mut c, "INSERT INTO t VALUES (1, 1)").await;
    exec(
        &mut c,
        "ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES LESS THAN (10)",
    )
    .await;
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", ","),
            ("temporary_partitions", "tp1"),
            ("max_filter_ratio", "0.5"),
        ],
        b"2,20\n3,30\n40,400\n",
    );
    assert_eq!(v["Status"], "Success", "{v}");
    assert_eq!(
        (num(&v, "NumberLoadedRows"), num(&v, "NumberFilteredRows")),
        (2, 1),
        "{v}"
    );
    assert_eq!(rows(&mut c, "SELECT sum(v) FROM t").await[0][0], s("1"));
    assert_eq!(
        rows(&mut c, "SELECT sum(v) FROM t TEMPORARY PARTITION (tp1)").await[0][0],
        s("50")
    );
    // A partition that is not temporary is no target of the header, nor both headers at once.
    let v = load(
        &server,
        "t",
        &[("column_separator", ","), ("temporary_partitions", "p1")],
        b"4,4\n",
    );
    assert_eq!(v["Status"], "Fail", "{v}");
    let v = load(
        &server,
        "t",
        &[
            ("column_separator", ","),
            ("temporary_partitions", "tp1"),
            ("partitions", "p1"),
        ],
        b"4,4\n",
    );
    assert_eq!(v["Status"], "Fail", "{v}");
    exec(
        &mut c,
        "ALTER TABLE t REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp1)",
    )
    .await;
    assert_eq!(rows(&mut c, "SELECT sum(v) FROM t").await[0][0], s("50"));
}
