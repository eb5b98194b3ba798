//! Fuzzing the SQL front end: mutated statements (literals, columns, operators and functions
//! swapped for others of their kind, many of them hostile; tokens dropped, repeated, swapped;
//! statements spliced) go through parse, plan and execution
//! against a real engine on a temporary data directory. Each must end within its timeout with a
//! result or an error; a panic or a hang fails the test with the seed and the statement.
//!
//! Load bodies (CSV, JSON lines, JSON arrays, Parquet; mutated bytes, chunked anywhere) go
//! through Stream Load: each ends with a result, and exactly the rows it reports loaded appear.
//!
//! `BASALT_FUZZ_CASES` (default 300; a third of it for loads) sets the count, `BASALT_FUZZ_SEED`
//! replays a run.

use crate::engine::QueryEngine;
use crate::Output;
use basalt_common::config::Config;
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

const SEEDS: &[&str] = &[
    "SELECT k, v, s FROM t WHERE k > 1 AND v < 10.5 ORDER BY k DESC LIMIT 3",
    "SELECT k % 3 AS g, COUNT(*), SUM(v), AVG(v), MIN(s), MAX(d) FROM t GROUP BY k % 3 HAVING COUNT(*) > 0",
    "SELECT a.k, b.s FROM t a JOIN t b ON a.k = b.k LEFT JOIN u ON u.id = a.k WHERE b.v IS NOT NULL",
    "SELECT k, (SELECT MAX(v) FROM t) FROM t WHERE k > (SELECT MIN(id) FROM u)",
    "SELECT * FROM t WHERE k IN (SELECT id FROM u WHERE name LIKE 'a%') OR EXISTS (SELECT 1 FROM u)",
    "WITH c AS (SELECT k, v FROM t) SELECT c.k, SUM(c.v) OVER (PARTITION BY c.k ORDER BY c.v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM c",
    "SELECT CASE WHEN k = 1 THEN 'one' WHEN k = 2 THEN 'two' ELSE concat('n', k) END FROM t",
    "SELECT CAST(k AS VARCHAR(3)) a, CAST(v AS DECIMAL(10, 2)) b, CAST(d AS DATE) c, CAST(k AS DOUBLE) e FROM t",
    "SELECT date_add(d, INTERVAL 1 DAY), d - INTERVAL 3 MONTH, datediff(d, '2020-01-01'), year(d) FROM t",
    "SELECT substr(s, 2, 3), upper(s), length(s), replace(s, 'a', 'b'), repeat(s, 3), lpad(s, 5, '*') FROM t",
    "SELECT k FROM t UNION ALL SELECT id FROM u UNION SELECT 3 ORDER BY 1",
    "SELECT 9223372036854775800 + k, -k, k * 2, k DIV 2, v / 2, k % 2 FROM t",
    "SELECT COUNT(DISTINCT s), bitmap_union_count(to_bitmap(k)), hll_union_agg(hll_hash(s)) FROM t",
    "SELECT ifnull(v, 0), coalesce(s, 'x'), nullif(k, 2), if(k > 1, 'a', 'b'), greatest(k, 3), least(v, 1) FROM t",
    "SELECT k, ROW_NUMBER() OVER (ORDER BY v), RANK() OVER (PARTITION BY s ORDER BY k), LAG(v, 1) OVER (ORDER BY k) FROM t",
    "SELECT * FROM (SELECT k, v FROM t ORDER BY v LIMIT 2) x JOIN u ON x.k = u.id",
    "SELECT k FROM t WHERE s BETWEEN 'a' AND 'z' AND d >= '2020-01-01' AND v NOT IN (1, 2, 3)",
    "INSERT INTO t VALUES (10, 1.5, 'ten', '2021-03-04')",
    "INSERT INTO u SELECT k, s FROM t WHERE k < 3",
    "SELECT ? + 1, ?",
    "SELECT round(v, 2), floor(v), ceil(v), abs(-k), sqrt(k), pow(k, 2), ln(k), mod(k, 3) FROM t",
    "SELECT date_format(d, '%Y'), unix_timestamp(d), from_unixtime(0), now() > d FROM t",
];

const NOISE: &[&str] = &[
    "(",
    ")",
    ",",
    "*",
    "+",
    "-",
    "/",
    "%",
    "=",
    "<>",
    "<=",
    "NULL",
    "NOT",
    "AND",
    "OR",
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP BY",
    "ORDER BY",
    "LIMIT",
    "UNION",
    "JOIN",
    "ON",
    "IN",
    "EXISTS",
    "CASE",
    "WHEN",
    "THEN",
    "END",
    "OVER",
    "PARTITION BY",
    "INTERVAL",
    "DAY",
    "CAST",
    "AS",
    "?",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "-0",
    "0",
    "0.0000000000000000000000000001",
    "''",
    "'\\''",
    "'9999-12-31'",
    "'0000-00-00'",
    "x'ff'",
    "DISTINCT",
    "ALL",
    "k",
    "v",
    "s",
    "d",
    "t",
    "u",
    "id",
    "name",
    "count(*)",
    "sum(k)",
    "repeat('x', 100000)",
    "((((",
    "))))",
    ";",
    "@a",
    "@@version",
    "`t`",
    "\"s\"",
    "/*!80000 1 */",
];

fn cases() -> usize {
    std::env::var("BASALT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn rng() -> (StdRng, u64) {
    let seed = std::env::var("BASALT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    (StdRng::seed_from_u64(seed), seed)
}

/// Splits SQL into rough tokens: words, numbers, quoted strings and single punctuation.
fn tokens(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_alphanumeric() || c == '_' || c == '.' {
            let mut w = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() || c == '_' || c == '.' {
                    w.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(w);
        } else if c == '\'' {
            let mut w = String::from(chars.next().unwrap_or('\''));
            for c in chars.by_ref() {
                w.push(c);
                if c == '\'' {
                    break;
                }
            }
            out.push(w);
        } else {
            out.push(chars.next().map(String::from).unwrap_or_default());
        }
    }
    out
}

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2147483647",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "1e308",
    "-1e-308",
    "0.5",
    "99999999999999999999.99",
    "NULL",
];
const STRINGS: &[&str] = &[
    "''",
    "'a'",
    "'%'",
    "'_'",
    "'9999-12-31'",
    "'0000-00-00'",
    "'2020-02-30'",
    "'abc\\'",
    "'\u{e9}t\u{e9}'",
    "'1e400'",
    "NULL",
    "'-0'",
];
const COLUMNS: &[&str] = &[
    "k",
    "v",
    "s",
    "d",
    "NULL",
    "(k + 1)",
    "CAST(s AS INT)",
    "-v",
    "(SELECT 1)",
    "?",
    "@x",
];
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "DIV", "=", "<>", "<", ">=", "AND", "OR", "XOR", "LIKE", "||", "&",
    "<<",
];
const FUNCTIONS: &[&str] = &[
    "abs",
    "concat",
    "substr",
    "length",
    "upper",
    "round",
    "sum",
    "count",
    "max",
    "avg",
    "ifnull",
    "date_add",
    "year",
    "repeat",
    "lpad",
    "cast",
    "to_bitmap",
    "hll_hash",
    "coalesce",
    "greatest",
    "from_unixtime",
    "bitmap_count",
    "array_repeat",
    "split_part",
    "md5",
    "nosuch",
];

fn pick<'a>(rng: &mut StdRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

/// What kind of token `t` is, to replace it with one of its kind.
fn same_kind<'a>(rng: &mut StdRng, t: &str, next: Option<&str>) -> Option<&'a str> {
    let first = t.chars().next()?;
    if first.is_ascii_digit() {
        Some(pick(rng, NUMBERS))
    } else if first == '\'' {
        Some(pick(rng, STRINGS))
    } else if next == Some("(") && first.is_alphabetic() {
        Some(pick(rng, FUNCTIONS))
    } else if ["k", "v", "s", "d", "id", "name"].contains(&t) {
        Some(pick(rng, COLUMNS))
    } else if OPERATORS.contains(&t) {
        Some(pick(rng, OPERATORS))
    } else {
        None
    }
}

/// One or two edits of a seed statement: mostly a token replaced by another of its kind (the
/// statement stays valid SQL and reaches planning and execution), sometimes a structural edit
/// (tokens dropped, repeated, swapped, noise inserted, another statement spliced in).
fn mutate(rng: &mut StdRng) -> String {
    let mut t = tokens(pick(rng, SEEDS));
    for _ in 0..rng.random_range(1..3) {
        if t.is_empty() {
            break;
        }
        let i = rng.random_range(0..t.len());
        if rng.random_range(0..4) > 0 {
            // Up to a few tries to find a token with a kind.
            for _ in 0..8 {
                let i = rng.random_range(0..t.len());
                let next = t.get(i + 1).map(String::as_str);
                if let Some(r) = same_kind(rng, &t[i], next) {
                    t[i] = r.to_string();
                    break;
                }
            }
            continue;
        }
        match rng.random_range(0..5) {
            0 => {
                t.remove(i);
            }
            1 => {
                let copy = t[i].clone();
                t.insert(i, copy);
            }
            2 => {
                let j = rng.random_range(0..t.len());
                t.swap(i, j);
            }
            3 => t.insert(i, pick(rng, NOISE).to_string()),
            _ => {
                let other = tokens(pick(rng, SEEDS));
                let j = rng.random_range(0..other.len());
                t.truncate(i);
                t.extend(other[j..].iter().cloned());
            }
        }
    }
    t.join(" ")
}

/// How far a statement got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Outcome {
    /// Refused while parsing or planning (with a MySQL error code).
    Refused,
    /// Planned and ran to an answer (rows or a count).
    Answered,
    /// Planned, then failed while running (overflow, division, a bad cast...).
    FailedRunning,
}

async fn run(engine: &Arc<QueryEngine>, sql: &str) -> Result<Outcome, String> {
    let session = engine.new_session(1, "root", "localhost");
    engine
        .use_database(&session, "fz")
        .map_err(|e| e.to_string())?;
    match engine.execute(&session, sql).await {
        Ok(Output::Rows { mut stream, .. }) => {
            while let Some(batch) = stream.next().await {
                if batch.is_err() {
                    return Ok(Outcome::FailedRunning);
                }
            }
            Ok(Outcome::Answered)
        }
        Ok(_) => Ok(Outcome::Answered),
        Err(e) => {
            if std::env::var("BASALT_FUZZ_VERBOSE").is_ok() {
                eprintln!("refused: {e}: {sql}");
            }
            Ok(Outcome::Refused)
        }
    }
}

/// A real engine on a temporary data directory, after `setup` ran as root.
async fn engine_after(setup: &[&str]) -> (tempfile::TempDir, Arc<QueryEngine>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let engine = QueryEngine::open_local(&config).expect("engine");
    let session = engine.new_session(1, "root", "localhost");
    for sql in setup {
        engine.execute(&session, sql).await.expect(sql);
    }
    (dir, engine)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutated_sql_never_panics_or_hangs() {
    let (_dir, engine) = engine_after(&[
        "CREATE DATABASE fz",
        "CREATE TABLE fz.t (k INT, v DOUBLE, s VARCHAR(20), d DATE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2",
        "CREATE TABLE fz.u (id INT NOT NULL, name VARCHAR(10)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
        "INSERT INTO fz.t VALUES (1, 1.5, 'abc', '2020-01-01'), (2, NULL, 'b', '2021-06-30'), (3, -2.25, NULL, NULL)",
        "INSERT INTO fz.u VALUES (1, 'ann'), (3, 'al')",
    ])
    .await;
    // The seeds themselves are valid: every mutation starts from SQL that runs.
    let mut broken = Vec::new();
    for sql in SEEDS.iter().filter(|s| !s.contains('?')) {
        if run(&engine, sql).await != Ok(Outcome::Answered) {
            broken.push(*sql);
        }
    }
    assert!(broken.is_empty(), "seeds that do not run: {broken:#?}");
    let (mut rng, seed) = rng();
    let mut failures = Vec::new();
    let mut outcomes: std::collections::HashMap<Outcome, usize> = Default::default();
    let n = cases();
    for _ in 0..n {
        let sql = mutate(&mut rng);
        let task = tokio::spawn({
            let engine = engine.clone();
            let sql = sql.clone();
            async move { run(&engine, &sql).await }
        });
        match tokio::time::timeout(Duration::from_secs(20), task).await {
            Ok(Ok(Ok(outcome))) => *outcomes.entry(outcome).or_default() += 1,
            Ok(Ok(Err(e))) => failures.push(format!("setup failed: {e}")),
            Ok(Err(e)) => failures.push(format!("panicked ({e}): {sql}")),
            Err(_) => failures.push(format!("no answer in 20 s: {sql}")),
        }
    }
    eprintln!("{n} mutated statements (seed {seed}): {outcomes:?}");
    assert!(
        failures.is_empty(),
        "{} of {n} statements failed (BASALT_FUZZ_SEED={seed}):\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The mutations must keep some statements valid, or only the parser is being fuzzed.
    let answered = outcomes.get(&Outcome::Answered).copied().unwrap_or(0);
    assert!(answered * 10 >= n, "only {answered} of {n} statements ran");
}

/// A load body: rows of (k INT, v DOUBLE, s VARCHAR, d DATE) in `format`, some of them odd.
fn load_body(rng: &mut StdRng, format: &str) -> Vec<u8> {
    let rows = rng.random_range(0..40);
    let values: Vec<(String, String, String, String)> = (0..rows)
        .map(|_| {
            (
                pick(
                    rng,
                    &["1", "-7", "2147483647", "2147483648", "x", "", "3.5", "\\N"],
                )
                .to_string(),
                pick(
                    rng,
                    &["1.5", "-0", "1e308", "1e999", "nan", "abc", "", "\\N"],
                )
                .to_string(),
                pick(
                    rng,
                    &[
                        "a",
                        "",
                        "\u{e9}t\u{e9}",
                        "a,b",
                        "\"q\"",
                        "012345678901234567890123",
                        "\\N",
                    ],
                )
                .to_string(),
                pick(
                    rng,
                    &[
                        "2020-01-01",
                        "9999-12-31",
                        "2020-02-30",
                        "0000-00-00",
                        "x",
                        "\\N",
                    ],
                )
                .to_string(),
            )
        })
        .collect();
    match format {
        "csv" => values
            .iter()
            .map(|(k, v, s, d)| format!("{k},{v},{s},{d}\n"))
            .collect::<String>()
            .into_bytes(),
        "parquet" => parquet_body(&values),
        _ => {
            let json = |x: &str| -> String {
                if x == "\\N" {
                    "null".into()
                } else if x.parse::<f64>().is_ok() && rng_free_numeric(x) {
                    x.to_string()
                } else {
                    format!("{x:?}")
                }
            };
            let objects: Vec<String> = values
                .iter()
                .map(|(k, v, s, d)| {
                    format!(
                        "{{\"k\": {}, \"v\": {}, \"s\": {}, \"d\": {}}}",
                        json(k),
                        json(v),
                        json(s),
                        json(d)
                    )
                })
                .collect();
            if format == "json_lines" {
                objects.join("\n").into_bytes()
            } else {
                format!("[{}]", objects.join(",")).into_bytes()
            }
        }
    }
}

/// Numbers JSON can carry as they are (not `nan`, `inf` or out-of-range exponents).
fn rng_free_numeric(x: &str) -> bool {
    x.parse::<f64>().is_ok_and(f64::is_finite) && !x.is_empty()
}

/// The rows as a Parquet file with all-string columns (the load converts them).
fn parquet_body(values: &[(String, String, String, String)]) -> Vec<u8> {
    use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
    use datafusion::parquet::arrow::ArrowWriter;
    let column = |f: fn(&(String, String, String, String)) -> &String| -> ArrayRef {
        Arc::new(
            values
                .iter()
                .map(|r| Some(f(r).as_str()).filter(|x| *x != "\\N"))
                .collect::<StringArray>(),
        )
    };
    let batch = RecordBatch::try_from_iter([
        ("k", column(|r| &r.0)),
        ("v", column(|r| &r.1)),
        ("s", column(|r| &r.2)),
        ("d", column(|r| &r.3)),
    ])
    .expect("batch");
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    out
}

/// Bytes flipped, cut short, duplicated or replaced by noise (or left alone).
fn mutate_bytes(rng: &mut StdRng, mut v: Vec<u8>) -> Vec<u8> {
    match rng.random_range(0..6) {
        0 if !v.is_empty() => {
            for _ in 0..rng.random_range(1..6) {
                let i = rng.random_range(0..v.len());
                v[i] = rng.random();
            }
        }
        1 => v.truncate(rng.random_range(0..=v.len())),
        2 if !v.is_empty() => {
            let i = rng.random_range(0..v.len());
            let j = rng.random_range(i..v.len());
            let copy = v[i..j].to_vec();
            v.splice(i..i, copy);
        }
        3 => {
            v = (0..rng.random_range(0..256))
                .map(|_| rng.random())
                .collect()
        }
        _ => {}
    }
    v
}

async fn count_rows(engine: &Arc<QueryEngine>, table: &str) -> i64 {
    use datafusion::arrow::array::Int64Array;
    let session = engine.new_session(1, "root", "localhost");
    let Ok(Output::Rows { mut stream, .. }) = engine
        .execute(&session, &format!("SELECT COUNT(*) FROM {table}"))
        .await
    else {
        panic!("count of {table}");
    };
    let mut n = 0;
    while let Some(batch) = stream.next().await {
        let batch = batch.expect("count batch");
        if let Some(c) = batch.column(0).as_any().downcast_ref::<Int64Array>() {
            n += c.iter().flatten().sum::<i64>();
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutated_load_bodies_load_all_or_nothing() {
    let (_dir, engine) = engine_after(&[
        "CREATE DATABASE fz",
        "CREATE TABLE fz.l (k INT, v DOUBLE, s VARCHAR(20), d DATE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2",
    ])
    .await;
    let (mut rng, seed) = rng();
    let n = cases() / 3;
    let mut failures = Vec::new();
    let mut outcomes: std::collections::HashMap<(&str, bool), usize> = Default::default();
    for case in 0..n {
        let format = pick(&mut rng, &["csv", "json_lines", "json_array", "parquet"]);
        let body = load_body(&mut rng, format);
        let body = mutate_bytes(&mut rng, body);
        let mut headers = vec![(
            "max_filter_ratio".to_string(),
            pick(&mut rng, &["0", "0.5", "1"]).to_string(),
        )];
        match format {
            "csv" => headers.push(("column_separator".into(), ",".into())),
            "parquet" => headers.push(("format".into(), "parquet".into())),
            "json_lines" => {
                headers.push(("format".into(), "json".into()));
                headers.push(("read_json_by_line".into(), "true".into()));
            }
            _ => {
                headers.push(("format".into(), "json".into()));
                headers.push(("strip_outer_array".into(), "true".into()));
            }
        }
        // The body arrives in chunks cut anywhere.
        let mut chunks = Vec::new();
        let mut rest = bytes::Bytes::from(body.clone());
        while !rest.is_empty() {
            let at = rng.random_range(1..=rest.len().min(64));
            chunks.push(Ok(rest.split_to(at)));
        }
        let before = count_rows(&engine, "fz.l").await;
        let request = basalt_load::StreamLoadRequest {
            database: "fz".into(),
            table: "l".into(),
            user: "root".into(),
            host: "localhost".into(),
            headers,
            base_url: "http://127.0.0.1:8030".into(),
            max_body_bytes: 1 << 20,
        };
        let task = tokio::spawn({
            let engine = engine.clone();
            async move {
                engine
                    .stream_load(request, futures::stream::iter(chunks).boxed())
                    .await
            }
        });
        let what = || {
            format!(
                "case {case}, {format}: {:?}",
                String::from_utf8_lossy(&body)
            )
        };
        let result = match tokio::time::timeout(Duration::from_secs(20), task).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => {
                failures.push(format!("panicked ({e}): {}", what()));
                continue;
            }
            Err(_) => {
                failures.push(format!("no answer in 20 s: {}", what()));
                continue;
            }
        };
        let after = count_rows(&engine, "fz.l").await;
        let loaded = if result.succeeded() {
            result.number_loaded_rows as i64
        } else {
            0
        };
        if after - before != loaded {
            failures.push(format!(
                "{} rows appeared, the load said {} ({}: {}): {}",
                after - before,
                loaded,
                result.status,
                result.message,
                what()
            ));
        }
        *outcomes.entry((format, result.succeeded())).or_default() += 1;
    }
    eprintln!("{n} mutated load bodies (seed {seed}): {outcomes:?}");
    assert!(
        failures.is_empty(),
        "{} of {n} loads failed (BASALT_FUZZ_SEED={seed}):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
