//! The CI correctness benchmark: TPC-H SF 0.01 (tpchgen's data, the bench's Doris DDL, Stream
//! Load), the 22 queries over the MySQL protocol, every answer checked against DuckDB's answer
//! on the same data, committed in tpch_answers/sf0.01.tsv (written by bench/tpch_expected.py).
//! Numbers match within 1e-6 relative or a cent, as bench/lib/results.py checks; rows that an
//! ORDER BY leaves tied may come in any order.

use crate::harness::TestServer;
use crate::tpch_data::{generate, load, queries};
use std::collections::BTreeMap;

const SF: f64 = 0.01;

type Rows = Vec<Vec<Option<String>>>;

/// The committed answers: query name -> rows.
fn expected_answers() -> BTreeMap<String, Rows> {
    let text = include_str!("tpch_answers/sf0.01.tsv");
    let mut out: BTreeMap<String, Rows> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("-- ") {
            out.insert(name.to_string(), Vec::new());
            current = Some(name.to_string());
            continue;
        }
        let name = current.as_ref().expect("rows before the first `-- Q` line");
        let row = line
            .split('\t')
            .map(|v| (v != "\\N").then(|| v.to_string()))
            .collect();
        out.get_mut(name).expect("query block").push(row);
    }
    out
}

/// One value against the expected one: numbers within 1e-6 relative or 0.01 absolute (TPC-H
/// allows a cent of rounding in money; averages and ratios compare relatively), text exactly
/// but for trailing blanks (CHAR columns).
fn value_matches(got: &Option<String>, want: &Option<String>) -> bool {
    match (got, want) {
        (None, None) => true,
        (Some(g), Some(w)) => match (g.trim().parse::<f64>(), w.trim().parse::<f64>()) {
            (Ok(a), Ok(b)) => (a - b).abs() <= f64::max(1e-6 * a.abs().max(b.abs()), 0.01),
            _ => g.trim_end() == w.trim_end(),
        },
        _ => false,
    }
}

fn row_matches(got: &[Option<String>], want: &[Option<String>]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| value_matches(g, w))
}

/// `None` if `got` is `want`, in order or as a permutation (tied rows); else what differs.
fn mismatch(got: &Rows, want: &Rows) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} rows, expected {}", got.len(), want.len()));
    }
    if got.iter().zip(want).all(|(g, w)| row_matches(g, w)) {
        return None;
    }
    let mut unused: Vec<&Vec<Option<String>>> = want.iter().collect();
    for g in got {
        match unused.iter().position(|w| row_matches(g, w)) {
            Some(i) => {
                unused.swap_remove(i);
            }
            None => return Some(format!("row {g:?} is not among the expected rows")),
        }
    }
    None
}

#[tokio::test]
async fn tpch_sf001_answers_match_duckdb() {
    let data = tempfile::tempdir().expect("tempdir");
    generate(data.path(), SF);
    let expected = expected_answers();
    let queries = queries(SF);
    assert_eq!(queries.len(), 22);
    assert_eq!(
        expected.len(),
        22,
        "tpch_answers/sf0.01.tsv holds 22 queries"
    );
    let server = TestServer::start().await;
    let mut conn = server.connect().await;
    load(&mut conn, server.http_port, data.path()).await;
    let mut failures = Vec::new();
    for (name, sql) in &queries {
        let want = &expected[name];
        match crate::harness::try_rows(&mut conn, sql).await {
            Ok(got) => {
                if let Some(why) = mismatch(&got, want) {
                    failures.push(format!("{name}: {why}"));
                }
            }
            Err(e) => failures.push(format!("{name}: error {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "TPC-H SF0.01 answers differ from DuckDB's:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_check_tolerates_rounding_and_ties_but_not_wrong_answers() {
    let r = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
    let want = vec![r(&["A", "10.00", "0.1234567"]), r(&["B", "10.00", "2"])];
    assert_eq!(mismatch(&want.clone(), &want), None);
    let rounded = vec![
        r(&["A ", "10.004", "0.12345670001"]),
        r(&["B", "10", "2.0"]),
    ];
    assert_eq!(mismatch(&rounded, &want), None);
    let swapped = vec![want[1].clone(), want[0].clone()];
    assert_eq!(mismatch(&swapped, &want), None);
    let wrong = vec![r(&["A", "10.02", "0.1234567"]), r(&["B", "10.00", "2"])];
    assert!(mismatch(&wrong, &want).is_some());
    assert!(mismatch(&want[..1].to_vec(), &want).is_some());
    assert!(mismatch(&vec![vec![None, None, None], want[1].clone()], &want).is_some());
}
