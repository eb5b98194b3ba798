//! Doris's functions that build an array from other values:
//! - `array_with_constant(n, x)`: `n` copies of `x` (`[]` for a NULL `n`; `n` outside
//!   0..=1000000 is an error);
//! - `array_flatten(a)`: the elements of an array of arrays, at every depth, in order (NULL
//!   inner arrays contribute nothing; NULL for a NULL array);
//! - `array_zip(a1, .., an)`: ARRAY<STRUCT<col1, .., coln>> pairing the elements at each
//!   position; NULL when any array is NULL, an error when their lengths differ.

use crate::list_rows::{
    aligned_elements, array_function, element_field, item_field, list_type, lists, row_range, Picks,
};
use crate::util::expect_args;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListArray, StructArray};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Int64Type};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

/// The longest array `array_with_constant` builds (as Doris).
const MAX_COPIES: i64 = 1_000_000;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        array_function(
            "array_with_constant",
            |t| {
                expect_args("array_with_constant", t, 2, 2)?;
                Ok(vec![
                    crate::array_slicing::integer("array_with_constant", &t[0])?,
                    t[1].clone(),
                ])
            },
            |t| Ok(DataType::List(item_field(t[1].clone()))),
            with_constant,
        ),
        array_function(
            "array_flatten",
            |t| {
                expect_args("array_flatten", t, 1, 1)?;
                if t[0].is_null() {
                    // A NULL array of arrays (so that coercing again keeps it).
                    let inner = DataType::List(item_field(DataType::Int64));
                    return Ok(vec![DataType::List(item_field(inner))]);
                }
                let l = list_type("array_flatten", &t[0])?;
                match element_field("array_flatten", &l)?.data_type() {
                    DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
                        Ok(vec![lists_all_the_way(&l)])
                    }
                    other => plan_err!("array_flatten takes an ARRAY of ARRAYs, not of {other}"),
                }
            },
            |t| Ok(DataType::List(innermost(&t[0]))),
            flatten,
        ),
        array_function(
            "array_zip",
            |t| {
                expect_args("array_zip", t, 1, usize::MAX)?;
                t.iter().map(|t| list_type("array_zip", t)).collect()
            },
            |t| Ok(DataType::List(item_field(DataType::Struct(zip_fields(t)?)))),
            zip,
        ),
    ]
}

fn with_constant(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let counts = args[0].as_primitive::<Int64Type>();
    let mut picks = Picks::with_rows(rows);
    for i in 0..rows {
        let n = if counts.is_null(i) {
            0
        } else {
            counts.value(i)
        };
        if !(0..=MAX_COPIES).contains(&n) {
            return exec_err!(
                "array_with_constant: the count must be between 0 and {MAX_COPIES}, not {n}"
            );
        }
        picks.push_row(std::iter::repeat_n(i, n as usize));
    }
    let field = item_field(args[1].data_type().clone());
    Ok(Arc::new(picks.gather(field, &args[1])?))
}

/// A nested list type with every level a `List`.
fn lists_all_the_way(dt: &DataType) -> DataType {
    match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            let inner = lists_all_the_way(f.data_type());
            DataType::List(Arc::new(f.as_ref().clone().with_data_type(inner)))
        }
        other => other.clone(),
    }
}

/// The element field below every level of lists.
fn innermost(dt: &DataType) -> Arc<Field> {
    match dt {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            match f.data_type() {
                DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
                    innermost(f.data_type())
                }
                _ => Arc::clone(f),
            }
        }
        other => item_field(other.clone()),
    }
}

fn flatten(args: &[ArrayRef], _rows: usize) -> Result<ArrayRef> {
    let mut current = lists("array_flatten", &args[0])?.clone();
    while let Some(inner) = current.values().as_list_opt::<i32>() {
        let mut picks = Picks::with_rows(current.len());
        for i in 0..current.len() {
            if current.is_null(i) {
                picks.push_null();
                continue;
            }
            let positions = row_range(&current, i)
                .filter(|&j| inner.is_valid(j))
                .flat_map(|j| row_range(inner, j));
            picks.push_row(positions.collect::<Vec<_>>());
        }
        let field = element_field("array_flatten", inner.data_type())?;
        let next = picks.gather(field, inner.values())?;
        current = next;
    }
    Ok(Arc::new(current))
}

/// The struct fields of `array_zip`'s elements: col1, col2, .. of the arrays' element types.
fn zip_fields(types: &[DataType]) -> Result<Fields> {
    types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let f = element_field("array_zip", t)?;
            Ok(Field::new(
                format!("col{}", i + 1),
                f.data_type().clone(),
                true,
            ))
        })
        .collect()
}

fn zip(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let all = args
        .iter()
        .map(|a| lists("array_zip", a))
        .collect::<Result<Vec<_>>>()?;
    let (columns, lengths) = aligned_elements("array_zip", &all, rows)?;
    let types: Vec<DataType> = all.iter().map(|l| l.data_type().clone()).collect();
    let fields = zip_fields(&types)?;
    let structs = StructArray::try_new(fields.clone(), columns, None)?;
    let nulls = NullBuffer::from_iter(lengths.iter().map(Option::is_some));
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    Ok(Arc::new(ListArray::try_new(
        item_field(DataType::Struct(fields)),
        OffsetBuffer::from_lengths(lengths.iter().map(|n| n.unwrap_or(0))),
        Arc::new(structs),
        nulls,
    )?))
}
