//! Doris's element comparisons within arrays (elements and the value compared at their common
//! type, NULL equal to NULL; NULL for a NULL array):
//! - `countequal(a, x)`: how many elements of `a` equal `x` (BIGINT);
//! - `array_contains_all(a, b)`: whether `b` occurs in `a` as a run of consecutive elements in
//!   the same order (`[]` always does).

use crate::list_rows::{array_function, element_field, item_field, lists, row_range};
use crate::util::expect_args;
use datafusion::arrow::array::{make_comparator, Array, ArrayRef, BooleanBuilder, Int64Builder};
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::ScalarUDF;
use std::cmp::Ordering;
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        array_function(
            "countequal",
            |t| {
                expect_args("countequal", t, 2, 2)?;
                let common = common_type("countequal", &element_type("countequal", &t[0])?, &t[1])?;
                Ok(vec![DataType::List(item_field(common.clone())), common])
            },
            |_| Ok(DataType::Int64),
            count_equal,
        ),
        array_function(
            "array_contains_all",
            |t| {
                expect_args("array_contains_all", t, 2, 2)?;
                let common = common_type(
                    "array_contains_all",
                    &element_type("array_contains_all", &t[0])?,
                    &element_type("array_contains_all", &t[1])?,
                )?;
                let list = DataType::List(item_field(common));
                Ok(vec![list.clone(), list])
            },
            |_| Ok(DataType::Boolean),
            contains_all,
        ),
    ]
}

/// The element type of an ARRAY argument (NULL for a NULL literal, to take the other side's).
fn element_type(func: &str, dt: &DataType) -> Result<DataType> {
    if dt.is_null() {
        return Ok(DataType::Null);
    }
    Ok(element_field(func, dt)?.data_type().clone())
}

/// The type two sides are compared at.
fn common_type(func: &str, a: &DataType, b: &DataType) -> Result<DataType> {
    match (a, b) {
        (DataType::Null, DataType::Null) => Ok(DataType::Int64),
        (DataType::Null, t) | (t, DataType::Null) => Ok(t.clone()),
        _ => match comparison_coercion(a, b) {
            Some(t) => Ok(t),
            None => plan_err!("{func} cannot compare {a} elements with {b}"),
        },
    }
}

fn equal_options() -> SortOptions {
    SortOptions::default()
}

fn count_equal(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let l = lists("countequal", &args[0])?;
    let same = make_comparator(l.values().as_ref(), args[1].as_ref(), equal_options())?;
    let mut out = Int64Builder::with_capacity(rows);
    for i in 0..rows {
        if l.is_null(i) {
            out.append_null();
            continue;
        }
        let n = row_range(l, i)
            .filter(|&k| same(k, i) == Ordering::Equal)
            .count();
        out.append_value(n as i64);
    }
    Ok(Arc::new(out.finish()))
}

fn contains_all(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let a = lists("array_contains_all", &args[0])?;
    let b = lists("array_contains_all", &args[1])?;
    let same = make_comparator(a.values().as_ref(), b.values().as_ref(), equal_options())?;
    let mut out = BooleanBuilder::with_capacity(rows);
    for i in 0..rows {
        if a.is_null(i) || b.is_null(i) {
            out.append_null();
            continue;
        }
        let (ra, rb) = (row_range(a, i), row_range(b, i));
        let found = rb.is_empty()
            || (ra.len() >= rb.len()
                && (ra.start..=ra.end - rb.len()).any(|s| {
                    rb.clone()
                        .enumerate()
                        .all(|(k, j)| same(s + k, j) == Ordering::Equal)
                }));
        out.append_value(found);
    }
    Ok(Arc::new(out.finish()))
}
