//! SQL-level tests: a DataFusion SessionContext with `register_all`, small in-memory tables split
//! over several partitions and batches (so partial and final aggregation both run), and every
//! function checked against hand-computed answers.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::array_value_to_string;
use basalt_common::bitmap_value::BitmapValue;
use basalt_common::hll_value::HllValue;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::register_all;

fn context(skip_partial: bool) -> SessionContext {
    let mut config = SessionConfig::new()
        .with_target_partitions(4)
        .with_batch_size(1024);
    if skip_partial {
        // Partial aggregation gives up at once: exercises GroupsAccumulator::convert_to_state.
        let opts = &mut config.options_mut().execution;
        opts.skip_partial_aggregation_probe_ratio_threshold = 0.0;
        opts.skip_partial_aggregation_probe_rows_threshold = 1;
    }
    let ctx = SessionContext::new_with_config(config);
    register_all(&ctx);
    register_tables(&ctx);
    ctx
}

/// Splits `rows` of columns into 3 partitions of 2 batches each (round robin by row).
fn register(ctx: &SessionContext, name: &str, schema: Arc<Schema>, columns: Vec<ArrayRef>) {
    let rows = columns.first().map_or(0, |c| c.len());
    let mut partitions = vec![vec![]; 3];
    for (p, partition) in partitions.iter_mut().enumerate() {
        for b in 0..2 {
            let idx: Vec<u32> = (0..rows as u32)
                .filter(|r| (*r as usize) % 6 == p * 2 + b)
                .collect();
            let idx = arrow::array::UInt32Array::from(idx);
            let cols = columns
                .iter()
                .map(|c| arrow::compute::take(c, &idx, None).unwrap())
                .collect();
            partition.push(RecordBatch::try_new(schema.clone(), cols).unwrap());
        }
    }
    let table = MemTable::try_new(schema, partitions).unwrap();
    ctx.register_table(name, Arc::new(table)).unwrap();
}

fn bitmap(ids: &[u64]) -> Option<Vec<u8>> {
    Some(BitmapValue::from_ids(ids.iter().copied()).serialize())
}

fn register_tables(ctx: &SessionContext) {
    // events(g, uid): per-row ids
    let g = [1, 1, 1, 1, 1, 2, 2, 3, 1, 2];
    let uid = [
        Some(1),
        Some(2),
        Some(3),
        Some(3),
        None,
        Some(3),
        Some(4),
        None,
        Some(2),
        Some(-7),
    ];
    register(
        ctx,
        "events",
        Arc::new(Schema::new(vec![
            Field::new("g", DataType::Int32, false),
            Field::new("uid", DataType::Int64, true),
        ])),
        vec![
            Arc::new(Int32Array::from(g.to_vec())),
            Arc::new(Int64Array::from(uid.to_vec())),
        ],
    );

    // sk(k, b): a BITMAP column; groups a, b, c spread over the partitions
    let rows: Vec<(&str, Option<Vec<u8>>)> = vec![
        ("a", bitmap(&[1, 2, 3])),
        ("b", bitmap(&[])),
        ("c", None),
        ("a", bitmap(&[3, 4])),
        ("b", bitmap(&[5])),
        ("a", None),
        ("a", bitmap(&[2, 3, 9])),
    ];
    register(
        ctx,
        "sk",
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("b", DataType::Binary, true),
        ])),
        vec![
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )),
            Arc::new(BinaryArray::from(
                rows.iter().map(|r| r.1.as_deref()).collect::<Vec<_>>(),
            )),
        ],
    );

    // pv(dt, user_id): Doris's intersect_count example plus a NULL bitmap and a NULL dt
    let pv: Vec<(Option<i32>, Option<Vec<u8>>)> = vec![
        (Some(1), bitmap(&[1, 2])),
        (Some(2), bitmap(&[2, 3])),
        (Some(4), bitmap(&[1, 2, 3, 4, 5])),
        (Some(3), bitmap(&[1, 2, 3])),
        (Some(3), bitmap(&[7])),
        (Some(4), None),
        (None, bitmap(&[1, 2, 3, 4, 5, 6, 7])),
    ];
    register(
        ctx,
        "pv",
        Arc::new(Schema::new(vec![
            Field::new("dt", DataType::Int32, true),
            Field::new("user_id", DataType::Binary, true),
        ])),
        vec![
            Arc::new(Int32Array::from(pv.iter().map(|r| r.0).collect::<Vec<_>>())),
            Arc::new(BinaryArray::from(
                pv.iter().map(|r| r.1.as_deref()).collect::<Vec<_>>(),
            )),
        ],
    );

    // big(k, v): 100k distinct values in 1000 groups of 100
    let n = 100_000i64;
    register(
        ctx,
        "big",
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("v", DataType::Int64, false),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 1000))),
            Arc::new(Int64Array::from_iter_values(0..n)),
        ],
    );

    // st(g, x, y) for the statistics aggregates
    let st: Vec<(i32, Option<f64>, Option<f64>)> = vec![
        (1, Some(1.0), Some(2.0)),
        (1, Some(2.0), Some(4.0)),
        (1, Some(3.0), Some(6.0)),
        (1, Some(4.0), Some(8.0)),
        (2, Some(5.0), Some(7.0)),
        (3, Some(1.0), Some(5.0)),
        (3, Some(2.0), Some(5.0)),
        (3, Some(3.0), Some(5.0)),
        (3, None, Some(1.0)),
        (4, None, None),
        (2, Some(9.0), None),
    ];
    register(
        ctx,
        "st",
        Arc::new(Schema::new(vec![
            Field::new("g", DataType::Int32, false),
            Field::new("x", DataType::Float64, true),
            Field::new("y", DataType::Float64, true),
        ])),
        vec![
            Arc::new(Int32Array::from(st.iter().map(|r| r.0).collect::<Vec<_>>())),
            Arc::new(Float64Array::from(
                st.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(Float64Array::from(
                st.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
        ],
    );

    // scores(v): Doris docs samples
    let scores = [85.5, 92.0, 78.5, 88.0, 95.5, 82.0, 90.0, 87.5];
    register(
        ctx,
        "scores",
        Arc::new(Schema::new(vec![Field::new("v", DataType::Float64, false)])),
        vec![Arc::new(Float64Array::from(scores.to_vec()))],
    );
    let prices = [10, 15, 20, 25, 30, 35, 40, 45, 50, 100];
    register(
        ctx,
        "prices",
        Arc::new(Schema::new(vec![Field::new("p", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(prices.to_vec()))],
    );
}

/// Runs `sql`, rendering every value as text ("NULL" for nulls).
async fn query(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in batches {
        for r in 0..b.num_rows() {
            out.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(r) {
                            "NULL".to_string()
                        } else {
                            array_value_to_string(c, r).unwrap()
                        }
                    })
                    .collect(),
            );
        }
    }
    out
}

/// One row of one query.
async fn row(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let mut rows = query(ctx, sql).await;
    assert_eq!(rows.len(), 1, "{sql}");
    rows.remove(0)
}

async fn error(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => match df.collect().await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sql} should fail"),
        },
    }
}

fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

fn close(actual: &str, expected: f64) -> bool {
    actual
        .parse::<f64>()
        .is_ok_and(|a| (a - expected).abs() <= 1e-9 * expected.abs().max(1.0))
}

fn assert_floats(actual: &[String], expected: &[Option<f64>], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}");
    for (a, e) in actual.iter().zip(expected) {
        match e {
            None => assert_eq!(a, "NULL", "{what}: {actual:?}"),
            Some(e) => assert!(close(a, *e), "{what}: got {a}, want {e} ({actual:?})"),
        }
    }
}

#[tokio::test]
async fn to_bitmap_and_friends() {
    let ctx = context(false);
    let r = row(
        &ctx,
        "SELECT bitmap_to_string(to_bitmap(1)), bitmap_to_string(to_bitmap('1234567')),
                bitmap_to_string(to_bitmap(-1)), bitmap_to_string(to_bitmap(NULL)),
                bitmap_to_string(to_bitmap('abc')), bitmap_count(to_bitmap(CAST(NULL AS BIGINT))),
                bitmap_to_string(to_bitmap('18446744073709551615')),
                bitmap_to_string(to_bitmap(CAST(7 AS TINYINT))), bitmap_to_string(to_bitmap(' 42 '))",
    )
    .await;
    assert_eq!(
        r,
        [
            "1",
            "1234567",
            "",
            "",
            "",
            "0",
            "18446744073709551615",
            "7",
            "42"
        ]
    );

    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_from_string('0, 1, 2')),
                bitmap_from_string('-1, 0, 1, 2') IS NULL,
                bitmap_to_string(bitmap_from_string('')),
                bitmap_to_string(bitmap_from_string('3,1,,2,3')),
                bitmap_from_string(NULL) IS NULL,
                bitmap_to_string(bitmap_from_string('0, 1, 18446744073709551615')),
                bitmap_from_string('0, 18446744073709551616') IS NULL,
                bitmap_to_string(NULL) IS NULL",
    )
    .await;
    assert_eq!(
        r,
        [
            "0,1,2",
            "true",
            "",
            "1,2,3",
            "true",
            "0,1,18446744073709551615",
            "true",
            "true"
        ]
    );

    // Doris docs: bitmap_hash('hello') = 1321743225, bitmap_hash64('hello') = 15231136565543391023
    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_hash('hello')), bitmap_to_string(bitmap_hash64('hello')),
                bitmap_count(bitmap_hash(NULL)), bitmap_count(bitmap_hash64(NULL)),
                bitmap_to_string(bitmap_hash(CAST(5 AS BIGINT))) = bitmap_to_string(bitmap_hash('5')),
                bitmap_count(bitmap_hash(X'0102'))",
    )
    .await;
    assert_eq!(
        r,
        ["1321743225", "15231136565543391023", "0", "0", "true", "1"]
    );

    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_empty()), bitmap_count(bitmap_empty()), bitmap_count(NULL),
                bitmap_count(bitmap_from_string('1,2,3,100000,5000000000'))",
    )
    .await;
    assert_eq!(r, ["", "0", "0", "5"]);
}

#[tokio::test]
async fn set_operations() {
    let ctx = context(false);
    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_and(bitmap_from_string('1,2,3'), bitmap_from_string('1,2'),
                    bitmap_from_string('1,2,3,4,5'))),
                bitmap_to_string(bitmap_and(bitmap_from_string('1,2,3'), bitmap_from_string('1,2'),
                    bitmap_empty())),
                bitmap_and(bitmap_from_string('1,2,3'), NULL) IS NULL,
                bitmap_to_string(bitmap_or(to_bitmap(1), to_bitmap(2), to_bitmap(10), to_bitmap(0), NULL)),
                bitmap_or(NULL, NULL) IS NULL,
                bitmap_to_string(bitmap_or(to_bitmap(10), bitmap_from_string('1,2'), bitmap_from_string('1,2,3,4,5'))),
                bitmap_to_string(bitmap_xor(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5'))),
                bitmap_to_string(bitmap_xor(bitmap_from_string('1,2'), bitmap_from_string('2,3'), bitmap_from_string('3,4'))),
                bitmap_xor(bitmap_from_string('1'), NULL) IS NULL",
    )
    .await;
    assert_eq!(
        r,
        [
            "1,2",
            "",
            "true",
            "0,1,2,10",
            "true",
            "1,2,3,4,5,10",
            "1,2,4,5",
            "1,4",
            "true"
        ]
    );

    let r = row(
        &ctx,
        "SELECT bitmap_and_count(bitmap_from_string('1,2,3'), bitmap_from_string('3,4')),
                bitmap_and_count(bitmap_from_string('1,2,3'), NULL),
                bitmap_or_count(bitmap_from_string('1,2'), to_bitmap(3), NULL),
                bitmap_or_count(NULL, NULL),
                bitmap_xor_count(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5')),
                bitmap_xor_count(bitmap_from_string('1,2,3'), NULL),
                bitmap_and_count(bitmap_empty(), bitmap_from_string('1'))",
    )
    .await;
    assert_eq!(r, ["1", "0", "3", "0", "4", "0", "0"]);

    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_not(bitmap_from_string('1,2,3'), bitmap_from_string('2,3,4'))),
                bitmap_to_string(bitmap_and_not(bitmap_from_string('1,2,3'), bitmap_from_string('2,3,4'))),
                bitmap_to_string(bitmap_andnot(bitmap_from_string('1,2,3'), bitmap_empty())),
                bitmap_and_not_count(bitmap_from_string('1,2,3'), bitmap_from_string('2,3,4')),
                bitmap_andnot_count(bitmap_from_string('1,2,3'), NULL),
                bitmap_not(NULL, bitmap_from_string('1')) IS NULL",
    )
    .await;
    assert_eq!(r, ["1", "1", "1,2,3", "1", "0", "true"]);

    let r = row(
        &ctx,
        "SELECT bitmap_contains(bitmap_from_string('1,2,3'), 2),
                bitmap_contains(bitmap_from_string('1,2,3'), 5),
                bitmap_contains(NULL, 1) IS NULL,
                bitmap_contains(bitmap_from_string('1'), NULL) IS NULL,
                bitmap_contains(bitmap_from_string('18446744073709551615'), -1),
                bitmap_has_any(bitmap_from_string('1,2'), bitmap_from_string('2,3')),
                bitmap_has_any(to_bitmap(1), to_bitmap(2)),
                bitmap_has_any(bitmap_empty(), bitmap_empty()),
                bitmap_has_all(bitmap_from_string('1,2,3'), bitmap_from_string('1,2')),
                bitmap_has_all(bitmap_from_string('1,2'), bitmap_from_string('1,2,3')),
                bitmap_has_all(to_bitmap(1), bitmap_empty()),
                bitmap_has_all(NULL, to_bitmap(1)) IS NULL",
    )
    .await;
    assert_eq!(
        r,
        [
            "true", "false", "true", "true", "true", "true", "false", "false", "true", "false",
            "true", "true"
        ]
    );

    let r = row(
        &ctx,
        "SELECT bitmap_min(bitmap_from_string('3,1,2')), bitmap_max(bitmap_from_string('3,1,9999999999')),
                bitmap_min(bitmap_empty()), bitmap_max(NULL),
                bitmap_to_string(bitmap_remove(bitmap_from_string('1,2,3'), 2)),
                bitmap_remove(NULL, 1) IS NULL,
                arrow_typeof(bitmap_min(to_bitmap(1)))",
    )
    .await;
    assert_eq!(
        r,
        ["1", "9999999999", "NULL", "NULL", "1,3", "true", "Int64"]
    );
}

#[tokio::test]
async fn binary_flavors_and_bad_input() {
    let ctx = context(false);
    let r = row(
        &ctx,
        "SELECT bitmap_count(arrow_cast(bitmap_from_string('1,2'), 'LargeBinary')),
                bitmap_to_string(arrow_cast(bitmap_from_string('4,5'), 'BinaryView')),
                bitmap_to_string(bitmap_or(arrow_cast(to_bitmap(1), 'LargeBinary'),
                                           arrow_cast(to_bitmap(2), 'BinaryView'))),
                hll_cardinality(arrow_cast(hll_hash('a'), 'LargeBinary')),
                bitmap_count(X'0107000000'),
                arrow_typeof(to_bitmap(1)), arrow_typeof(hll_empty())",
    )
    .await;
    assert_eq!(r, ["2", "4,5", "1,2", "1", "1", "Binary", "Binary"]);

    let e = error(&ctx, "SELECT bitmap_count(X'FF')").await;
    assert!(e.contains("malformed BITMAP"), "{e}");
    let e = error(&ctx, "SELECT hll_cardinality(X'0102')").await;
    assert!(e.contains("malformed HLL"), "{e}");
    let e = error(
        &ctx,
        "SELECT bitmap_union_count(b) FROM (VALUES (X'FF')) t(b)",
    )
    .await;
    assert!(e.contains("malformed BITMAP"), "{e}");
    let e = error(&ctx, "SELECT bitmap_count(1)").await;
    assert!(e.contains("expected a BITMAP"), "{e}");
    let e = error(&ctx, "SELECT bitmap_and(to_bitmap(1))").await;
    assert!(e.contains("at least 2"), "{e}");
    let e = error(&ctx, "SELECT to_bitmap(1.5)").await;
    assert!(e.contains("expected an integer"), "{e}");
    // a lone DISTINCT aggregate is planned as a GROUP BY first; beside another DISTINCT it
    // reaches the accumulator, which refuses where DISTINCT would change the answer
    let r = row(
        &ctx,
        "SELECT bitmap_to_string(group_bitmap_xor(DISTINCT b)) FROM sk",
    )
    .await;
    assert_eq!(r, ["1,3,4,5,9"]);
    let e = error(
        &ctx,
        "SELECT group_bitmap_xor(DISTINCT b), count(DISTINCT k) FROM sk",
    )
    .await;
    assert!(e.contains("not supported"), "{e}");
    let e = error(
        &ctx,
        "SELECT percentile(DISTINCT p, 0.5), count(DISTINCT p + 1) FROM prices",
    )
    .await;
    assert!(e.contains("not supported"), "{e}");
    let e = error(&ctx, "SELECT percentile(p, 1.5) FROM prices").await;
    assert!(e.contains("between 0 and 1"), "{e}");
    // DISTINCT is harmless for the idempotent unions
    let r = row(&ctx, "SELECT bitmap_union_count(DISTINCT b) FROM sk").await;
    assert_eq!(r, ["6"]);
}

#[tokio::test]
async fn hll_scalars() {
    let ctx = context(false);
    let r = row(
        &ctx,
        "SELECT hll_cardinality(hll_hash('a')), hll_cardinality(hll_empty()), hll_cardinality(NULL),
                hll_cardinality(hll_hash(NULL)), hll_cardinality(hll_hash(42)),
                hll_hash('a') = hll_hash('a'), hll_hash('a') = hll_hash('b')",
    )
    .await;
    assert_eq!(r, ["1", "0", "0", "0", "1", "true", "false"]);
}

#[tokio::test]
async fn bitmap_aggregates_by_group() {
    for skip_partial in [false, true] {
        let ctx = context(skip_partial);
        // events: g1 = {1,2,3} (+ a NULL), g2 = {3,4,-7}, g3 = only NULL
        let r = query(
            &ctx,
            "SELECT g, bitmap_to_string(bitmap_union(to_bitmap(uid))),
                    bitmap_union_count(to_bitmap(uid)), bitmap_union_int(uid),
                    hll_union_agg(hll_hash(uid)), hll_cardinality(hll_union(hll_hash(uid))),
                    hll_cardinality(hll_raw_agg(hll_hash(uid))), count(DISTINCT uid)
             FROM events GROUP BY g ORDER BY g",
        )
        .await;
        assert_eq!(
            r,
            table(&[
                &["1", "1,2,3", "3", "3", "3", "3", "3", "3"],
                // to_bitmap(-7) is empty; bitmap_union_int counts -7 as its bit pattern
                &["2", "3,4", "2", "3", "3", "3", "3", "3"],
                // to_bitmap(NULL) is the empty bitmap; hll_hash(NULL) the empty HLL
                &["3", "", "0", "0", "0", "0", "0", "0"],
            ]),
            "skip_partial={skip_partial}"
        );

        // sk: a = {1,2,3},{3,4},NULL,{2,3,9}; b = {},{5}; c = NULL
        let r = query(
            &ctx,
            "SELECT k, bitmap_to_string(bitmap_union(b)), bitmap_union_count(b),
                    bitmap_to_string(bitmap_intersect(b)), bitmap_to_string(group_bitmap_xor(b)),
                    bitmap_count(bitmap_union(b))
             FROM sk GROUP BY k ORDER BY k",
        )
        .await;
        assert_eq!(
            r,
            table(&[
                &["a", "1,2,3,4,9", "5", "3", "1,3,4,9", "5"],
                &["b", "5", "1", "", "5", "1"],
                &["c", "", "0", "", "", "0"],
            ]),
            "skip_partial={skip_partial}"
        );
    }
}

#[tokio::test]
async fn bitmap_aggregates_without_group_by() {
    let ctx = context(false);
    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_union(b)), bitmap_union_count(b),
                bitmap_to_string(bitmap_intersect(b)), bitmap_to_string(group_bitmap_xor(b))
         FROM sk",
    )
    .await;
    // xor over {1,2,3},{},{3,4},{5},{2,3,9} = {1,3,4,5,9}
    assert_eq!(r, ["1,2,3,4,5,9", "6", "", "1,3,4,5,9"]);

    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_intersect(b)) FROM sk WHERE k = 'a'",
    )
    .await;
    assert_eq!(r, ["3"]);

    // no input rows at all
    let r = row(
        &ctx,
        "SELECT bitmap_to_string(bitmap_union(b)), bitmap_union_count(b),
                bitmap_to_string(bitmap_intersect(b)), bitmap_union_int(CAST(NULL AS BIGINT)),
                intersect_count(b, k, 'a'), hll_union_agg(hll_hash(k)),
                hll_cardinality(hll_union(hll_hash(k)))
         FROM sk WHERE k = 'zzz'",
    )
    .await;
    assert_eq!(r, ["", "0", "", "0", "0", "0", "0"]);
}

#[tokio::test]
async fn intersect_count_follows_doris() {
    let ctx = context(false);
    // dt1 {1,2}, dt2 {2,3}, dt3 {1,2,3} ∪ {7}, dt4 {1,2,3,4,5} (+ NULL), NULL dt {1..7}
    let r = row(
        &ctx,
        "SELECT intersect_count(user_id, dt, 3, 4), intersect_count(user_id, dt, 1, 2),
                intersect_count(user_id, dt, 1, 2, 3, 4), intersect_count(user_id, dt, 3, 99),
                intersect_count(user_id, dt, 4), intersect_count(user_id, dt, 3),
                intersect_count(user_id, dt, '4')
         FROM pv",
    )
    .await;
    assert_eq!(r, ["3", "1", "1", "0", "5", "4", "5"]);

    let r = query(
        &ctx,
        "SELECT dt > 2 AS late, intersect_count(user_id, dt, 1, 3) FROM pv
         WHERE dt IS NOT NULL GROUP BY dt > 2 ORDER BY late",
    )
    .await;
    // late=false only sees dt 1 and 2, so dt 3's union is empty there
    assert_eq!(r, table(&[&["false", "0"], &["true", "0"]]));
    let r = query(
        &ctx,
        "SELECT dt > 2 AS late, intersect_count(user_id, dt, 3, 4) FROM pv
         WHERE dt IS NOT NULL GROUP BY dt > 2 ORDER BY late",
    )
    .await;
    assert_eq!(r, table(&[&["false", "0"], &["true", "3"]]));

    let e = error(&ctx, "SELECT intersect_count(user_id, dt, dt) FROM pv").await;
    assert!(e.contains("constants"), "{e}");
}

#[tokio::test]
async fn many_groups_multi_partition() {
    for skip_partial in [false, true] {
        let ctx = context(skip_partial);
        let r = query(
            &ctx,
            "SELECT bitmap_union_count(to_bitmap(v)) AS a, bitmap_union_int(v) AS b,
                    hll_union_agg(hll_hash(v)) AS c, bitmap_count(bitmap_union(to_bitmap(v))) AS d,
                    count(*) AS n
             FROM big GROUP BY k",
        )
        .await;
        assert_eq!(r.len(), 1000);
        for row in &r {
            assert_eq!(
                row,
                &["100", "100", "100", "100", "100"],
                "skip_partial={skip_partial}"
            );
        }
        let r = row(
            &ctx,
            "SELECT bitmap_union_count(to_bitmap(v)), bitmap_union_int(v), hll_union_agg(hll_hash(v)),
                    ndv(v), approx_count_distinct(v), bitmap_max(bitmap_union(to_bitmap(v)))
             FROM big",
        )
        .await;
        assert_eq!(&r[..2], ["100000", "100000"]);
        for est in &r[2..5] {
            let est: f64 = est.parse().unwrap();
            assert!((est - 100_000.0).abs() / 100_000.0 < 0.02, "{r:?}");
        }
        assert_eq!(r[5], "99999");

        // with skip_partial the partial phase really handed rows on unaggregated
        let analyzed = query(
            &ctx,
            "EXPLAIN ANALYZE SELECT k, bitmap_union_count(to_bitmap(v)), hll_union_agg(hll_hash(v))
             FROM big GROUP BY k",
        )
        .await;
        let text = format!("{analyzed:?}");
        let skipped: usize = text
            .split("skipped_aggregation_rows=")
            .skip(1)
            .filter_map(|s| {
                let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
                digits.parse::<usize>().ok()
            })
            .sum();
        assert_eq!(skipped > 0, skip_partial, "{text}");
    }

    // the plan really is two-phase
    let ctx = context(false);
    let plan = query(
        &ctx,
        "EXPLAIN SELECT k, bitmap_union_count(to_bitmap(v)) FROM big GROUP BY k",
    )
    .await;
    let text = format!("{plan:?}");
    assert!(text.contains("mode=Partial"), "{text}");
    assert!(text.contains("mode=FinalPartitioned"), "{text}");
}

#[tokio::test]
async fn hll_merges_partial_states() {
    // HLL values stored in a table column, merged per group and in total.
    let ctx = context(false);
    let mut parts = vec![];
    for (k, range) in [
        ("a", 0..100u64),
        ("a", 50..300),
        ("b", 0..5000),
        ("b", 0..10),
    ] {
        let mut h = HllValue::new();
        for i in range {
            h.insert_hash(HllValue::hash_bytes(&i.to_le_bytes()));
        }
        parts.push((k, Some(h.serialize())));
    }
    parts.push(("a", None));
    register(
        &ctx,
        "hl",
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("h", DataType::Binary, true),
        ])),
        vec![
            Arc::new(StringArray::from(
                parts.iter().map(|p| p.0).collect::<Vec<_>>(),
            )),
            Arc::new(BinaryArray::from(
                parts.iter().map(|p| p.1.as_deref()).collect::<Vec<_>>(),
            )),
        ],
    );
    let r = query(
        &ctx,
        "SELECT k, hll_union_agg(h), hll_cardinality(hll_union(h)) FROM hl GROUP BY k ORDER BY k",
    )
    .await;
    assert_eq!(r[0][0], "a");
    for v in &r[0][1..] {
        let est: f64 = v.parse().unwrap();
        assert!((est - 300.0).abs() <= 6.0, "{r:?}");
    }
    for v in &r[1][1..] {
        let est: f64 = v.parse().unwrap();
        assert!((est - 5000.0).abs() <= 100.0, "{r:?}");
    }
}

#[tokio::test]
async fn statistics_follow_doris() {
    let ctx = context(false);
    let r = query(
        &ctx,
        "SELECT g, variance(x), var_pop(x), variance_pop(x), var_samp(x), variance_samp(x),
                stddev(x), stddev_pop(x), stddev_samp(x),
                covar(x, y), covar_pop(x, y), covar_samp(x, y), corr(x, y)
         FROM st GROUP BY g ORDER BY g",
    )
    .await;
    assert_eq!(r.len(), 4);
    let s = 1.25f64.sqrt();
    let ss = (5.0f64 / 3.0).sqrt();
    // g1: x = 1..4, y = 2x
    assert_eq!(r[0][0], "1");
    assert_floats(
        &r[0][1..],
        &[
            Some(1.25),
            Some(1.25),
            Some(1.25),
            Some(5.0 / 3.0),
            Some(5.0 / 3.0),
            Some(s),
            Some(s),
            Some(ss),
            Some(2.5),
            Some(2.5),
            Some(10.0 / 3.0),
            Some(1.0),
        ],
        "g1",
    );
    // g2: one complete pair (5,7) plus x=9 with y NULL: single-row sample stats are 0
    assert_floats(
        &r[1][1..],
        &[
            Some(4.0),
            Some(4.0),
            Some(4.0),
            Some(8.0),
            Some(8.0),
            Some(2.0),
            Some(2.0),
            Some(8f64.sqrt()),
            Some(0.0),
            Some(0.0),
            Some(0.0),
            Some(0.0),
        ],
        "g2",
    );
    // g3: x = 1,2,3 with constant y (and a NULL x): corr is 0
    assert_floats(
        &r[2][1..],
        &[
            Some(2.0 / 3.0),
            Some(2.0 / 3.0),
            Some(2.0 / 3.0),
            Some(1.0),
            Some(1.0),
            Some((2.0f64 / 3.0).sqrt()),
            Some((2.0f64 / 3.0).sqrt()),
            Some(1.0),
            Some(0.0),
            Some(0.0),
            Some(0.0),
            Some(0.0),
        ],
        "g3",
    );
    // g4: no input: all NULL
    assert_floats(&r[3][1..], &[None; 12], "g4");

    let r = row(
        &ctx,
        "SELECT var_samp(x), stddev_samp(x), covar_samp(x, y), corr(x, y) FROM st WHERE g = 2 AND y IS NOT NULL",
    )
    .await;
    assert_floats(&r, &[Some(0.0); 4], "one row, no group by");
    let r = row(&ctx, "SELECT var_samp(x), corr(x, y) FROM st WHERE g = 4").await;
    assert_floats(&r, &[None, None], "no input, no group by");

    // Doris docs samples
    let r = row(&ctx, "SELECT variance(v), var_samp(v) FROM scores").await;
    assert_floats(&r, &[Some(25.734375), Some(29.410714285714285)], "scores");
    let r = row(
        &ctx,
        "SELECT stddev(v) FROM (VALUES (85.0), (90.0), (82.0), (88.0), (95.0)) t(v)",
    )
    .await;
    assert_floats(&r, &[Some(4.427188724235729)], "stddev");
}

#[tokio::test]
async fn percentiles() {
    let ctx = context(false);
    // Doris docs: 10..50,100 -> p50 32.5, p75 43.75, p90 55 (linear interpolation)
    let r = row(
        &ctx,
        "SELECT percentile(p, 0.5), percentile(p, 0.75), percentile(p, 0.9), percentile(p, 0),
                percentile(p, 1), percentile(NULL, 0.3), arrow_typeof(percentile(p, 0.5))
         FROM prices",
    )
    .await;
    assert_floats(
        &r[..6],
        &[
            Some(32.5),
            Some(43.75),
            Some(55.0),
            Some(10.0),
            Some(100.0),
            None,
        ],
        "percentile",
    );
    assert_eq!(r[6], "Float64");

    let r = row(
        &ctx,
        "SELECT percentile_approx(v, 0.5), percentile_approx(v, 0.9, 2048) FROM big",
    )
    .await;
    let p50: f64 = r[0].parse().unwrap();
    let p90: f64 = r[1].parse().unwrap();
    assert!((p50 - 50_000.0).abs() < 1_000.0, "{r:?}");
    assert!((p90 - 90_000.0).abs() < 1_000.0, "{r:?}");

    let r = query(
        &ctx,
        "SELECT g, percentile(x, 0.5) FROM st GROUP BY g ORDER BY g",
    )
    .await;
    assert_eq!(
        r,
        table(&[&["1", "2.5"], &["2", "7.0"], &["3", "2.0"], &["4", "NULL"]])
    );
}

/// SUM of a DECIMAL wider than 38 digits adds with checks, grouped or not, with partial
/// aggregation or without: a total past 76 digits is an error, never a wrapped value.
#[tokio::test]
async fn wide_decimal_sums_are_checked() {
    let big = "9".repeat(60);
    for skip_partial in [false, true] {
        let ctx = context(skip_partial);
        let r = query(
            &ctx,
            &format!(
                "SELECT g, sum(CAST(v AS DECIMAL(70, 2))) FROM (VALUES (1, '{big}'), (1, '1'),
                 (2, '-{big}'), (2, NULL), (3, NULL)) AS t(g, v) GROUP BY g ORDER BY g"
            ),
        )
        .await;
        let over = format!("1{}.00", "0".repeat(60));
        let under = format!("-{big}.00");
        assert_eq!(
            r,
            table(&[&["1", &over], &["2", &under], &["3", "NULL"]]),
            "skip_partial={skip_partial}"
        );
        let nines = "9".repeat(76);
        for group_by in ["", " GROUP BY g"] {
            let e = error(
                &ctx,
                &format!(
                    "SELECT sum(CAST(v AS DECIMAL(76, 0))) FROM (VALUES (1, '{nines}'),
                     (1, '{nines}')) AS t(g, v){group_by}"
                ),
            )
            .await;
            assert!(e.contains("out of range"), "{e}");
        }
    }
}
