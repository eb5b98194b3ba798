//! JSON columns across segment forms through a real server: a data directory whose JSON
//! segments were written as text (every Basalt before `json_binary_segments`) keeps answering
//! byte for byte once the server writes binary segments beside them; Unique-key replacement,
//! background compaction of both forms together and restarts change nothing a client sees, and
//! the JSON path functions read both forms as binary documents.

use crate::harness::{exec, rows, s, wait_for_compaction, TestServer};
use mysql_async::Conn;
use std::time::Duration;

const TEXT_FORM: &str = "json_binary_segments = false\ncompaction_threads = 0\n";
const BINARY_FORM: &str =
    "json_binary_segments = true\ncompaction_threads = 1\ncompaction_interval_ms = 10\n";

/// What every check expects: documents, path lookups, Doris's typed extraction and a
/// comparison on an extracted value.
async fn check(c: &mut Conn) {
    assert_eq!(
        rows(c, "SELECT id, doc FROM js.t ORDER BY id").await,
        vec![
            vec![
                s("1"),
                s(r#"{"name":"ann","tags":["a","b"],"age":31,"n":[2.50,1e+2,-0]}"#)
            ],
            vec![s("2"), s(r#"{"z":{"y":[true,null,"x\"y"]},"a":5}"#)],
            vec![s("3"), None],
            vec![s("4"), s("18446744073709551615")],
            vec![s("5"), s(r#"{"name":"eve","tags":[],"age":7}"#)],
        ]
    );
    assert_eq!(
        rows(
            c,
            "SELECT id, doc->'$.name', doc->>'$.name', json_extract(doc, '$.tags[last]'), \
             json_keys(doc), get_json_int(doc, '$.age') FROM js.t WHERE id IN (1, 5) ORDER BY id"
        )
        .await,
        vec![
            vec![
                s("1"),
                s(r#""ann""#),
                s("ann"),
                s(r#""b""#),
                s(r#"["name","tags","age","n"]"#),
                s("31")
            ],
            vec![
                s("5"),
                s(r#""eve""#),
                s("eve"),
                None,
                s(r#"["name","tags","age"]"#),
                s("7")
            ],
        ]
    );
    assert_eq!(
        rows(
            c,
            "SELECT count(*) FROM js.t WHERE json_extract(doc, '$.a') = 5 OR json_extract(doc, '$.age') = 31"
        )
        .await,
        vec![vec![s("2")]]
    );
    // That filter walks the documents in binary form, whichever form each segment holds; so
    // do json_length and json_keys under a sort (a plan without a repartition).
    for query in [
        "EXPLAIN SELECT count(*) FROM js.t WHERE json_extract(doc, '$.a') = 5",
        "EXPLAIN SELECT id, json_length(doc), json_keys(doc) FROM js.t ORDER BY id",
    ] {
        let plan = rows(c, query).await;
        assert!(
            plan.iter()
                .flatten()
                .flatten()
                .any(|line| line.contains("binary_json=[doc]")),
            "{query}: {plan:?}"
        );
    }
}

#[tokio::test]
async fn text_json_segments_keep_answering_beside_binary_ones_through_compaction_and_restarts() {
    let mut server = TestServer::start_with_config(TEXT_FORM).await;
    let mut c = server.connect().await;
    exec(&mut c, "CREATE DATABASE js").await;
    exec(
        &mut c,
        "CREATE TABLE js.t (id INT, doc JSON) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
    )
    .await;
    // Text segments, as the server wrote them before binary JSON.
    exec(
        &mut c,
        r#"INSERT INTO js.t VALUES (1, '{"name": "ann", "tags": ["a", "b"], "age": 31, "n": [2.50, 1e2, -0]}'), (2, '"replaced"'), (3, NULL)"#,
    )
    .await;
    exec(
        &mut c,
        "INSERT INTO js.t VALUES (4, '18446744073709551615')",
    )
    .await;
    drop(c);
    // Binary segments from here on: a row replacing a text one, and a new row.
    server.set_config(BINARY_FORM);
    server.restart().await;
    let mut c = server.connect().await;
    exec(
        &mut c,
        r#"INSERT INTO js.t VALUES (2, '{"z": {"y": [true, null, "x\\"y"]}, "a": 5}'), (5, '{"name": "eve", "tags": [], "age": 7}')"#,
    )
    .await;
    // Invalid JSON is still refused.
    let err = mysql_async::prelude::Queryable::query_drop(
        &mut c,
        "INSERT INTO js.t VALUES (6, '{name: 1}')",
    )
    .await
    .expect_err("invalid JSON");
    assert_eq!(crate::harness::code(err), 3140);
    check(&mut c).await;
    wait_for_compaction(&mut c, "js.t", 1, Duration::from_secs(60)).await;
    check(&mut c).await;
    drop(c);
    server.restart().await;
    let mut c = server.connect().await;
    check(&mut c).await;
    // And back: a server writing text again reads the binary segments.
    drop(c);
    server.set_config(TEXT_FORM);
    server.restart().await;
    let mut c = server.connect().await;
    check(&mut c).await;
}
