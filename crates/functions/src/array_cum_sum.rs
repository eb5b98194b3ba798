//! Doris's `array_cum_sum(a)`: the running sums of an array of numbers, left to right (BIGINT
//! for integers, DOUBLE for floating point, the DECIMAL itself for decimals). NULL elements
//! before the first number stay NULL, later ones add nothing; NULL for a NULL array. An
//! integer or decimal sum that overflows is an error.

use crate::list_rows::{array_function, element_field, item_field, lists, row_range};
use crate::util::expect_args;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int64Array, ListArray,
};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int64Type};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    array_function(
        "array_cum_sum",
        |t| {
            expect_args("array_cum_sum", t, 1, 1)?;
            if t[0].is_null() {
                return Ok(vec![DataType::List(item_field(DataType::Int64))]);
            }
            let element = element_field("array_cum_sum", &t[0])?.data_type().clone();
            let sum = match element {
                e if e.is_integer() || e.is_null() => DataType::Int64,
                e if e.is_floating() => DataType::Float64,
                DataType::Decimal128(p, s) => DataType::Decimal128(p, s),
                DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(p, s),
                other => {
                    return plan_err!("array_cum_sum takes an ARRAY of numbers, not of {other}")
                }
            };
            Ok(vec![DataType::List(item_field(sum))])
        },
        |t| Ok(t[0].clone()),
        cum_sum,
    )
}

/// Running sums of the elements of each row: `add` is the checked sum of two values.
fn running<T: Copy>(
    l: &ListArray,
    rows: usize,
    value: impl Fn(usize) -> Option<T>,
    add: impl Fn(T, T) -> Result<T>,
) -> Result<Vec<Option<T>>> {
    let mut out = Vec::with_capacity(l.values().len());
    for i in 0..rows {
        let mut sum: Option<T> = None;
        for k in row_range(l, i) {
            if let Some(v) = value(k) {
                sum = Some(match sum {
                    Some(s) => add(s, v)?,
                    None => v,
                });
            }
            out.push(sum);
        }
    }
    Ok(out)
}

fn cum_sum(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let l = lists("array_cum_sum", &args[0])?;
    // Rows of the result: the same lengths as the input's (NULL rows hold no elements).
    let lengths: Vec<usize> = (0..rows).map(|i| row_range(l, i).len()).collect();
    let values = l.values();
    let element = values.data_type().clone();
    let sums: ArrayRef = match &element {
        DataType::Int64 => {
            let v = values.as_primitive::<Int64Type>();
            let sums = running(
                l,
                rows,
                |k| v.is_valid(k).then(|| v.value(k)),
                |a, b| match a.checked_add(b) {
                    Some(s) => Ok(s),
                    None => exec_err!("array_cum_sum: BIGINT value is out of range"),
                },
            )?;
            Arc::new(Int64Array::from(sums))
        }
        DataType::Float64 => {
            let v = values.as_primitive::<Float64Type>();
            let sums = running(
                l,
                rows,
                |k| v.is_valid(k).then(|| v.value(k)),
                |a, b| Ok(a + b),
            )?;
            Arc::new(Float64Array::from(sums))
        }
        DataType::Decimal128(p, s) => {
            let v = values.as_primitive::<Decimal128Type>();
            let sums = running(
                l,
                rows,
                |k| v.is_valid(k).then(|| v.value(k)),
                |a, b| match a.checked_add(b) {
                    Some(s) => Ok(s),
                    None => exec_err!("array_cum_sum: DECIMAL value is out of range"),
                },
            )?;
            let sums = Decimal128Array::from(sums).with_precision_and_scale(*p, *s)?;
            if let Err(e) = sums.validate_decimal_precision(*p) {
                return exec_err!("array_cum_sum: DECIMAL value is out of range: {e}");
            }
            Arc::new(sums)
        }
        other => return exec_err!("array_cum_sum: unexpected element type {other}"),
    };
    Ok(Arc::new(ListArray::try_new(
        item_field(element),
        OffsetBuffer::from_lengths(lengths),
        sums,
        l.nulls().cloned(),
    )?))
}
