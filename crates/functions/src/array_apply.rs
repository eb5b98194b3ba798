//! Doris's `array_apply(arr, op, value)`: the elements of arr that compare to value by op
//! (`=`, `!=`, `>`, `>=`, `<`, `<=`), in their order, as an ARRAY of arr's element type.
//! NULL elements are dropped; NULL when arr or value is NULL; an empty array stays empty.
//! Elements are numbers, dates/times or booleans (other types, and another operator, are
//! errors naming the function); elements and value compare at their common type.

use crate::list_rows::{array_function, element_field, list_type, lists, row_range, Picks};
use datafusion::arrow::array::{make_comparator, Array, ArrayRef, AsArray};
use datafusion::arrow::compute::{cast, SortOptions};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::ScalarUDF;
use std::cmp::Ordering;
use std::sync::Arc;

const NAME: &str = "array_apply";

pub fn functions() -> Vec<ScalarUDF> {
    vec![array_function(
        NAME,
        coerce,
        |t| list_type(NAME, &t[0]),
        apply,
    )]
}

/// Whether array_apply compares elements of this type.
fn comparable(t: &DataType) -> bool {
    t.is_numeric() || t.is_temporal() || matches!(t, DataType::Boolean | DataType::Null)
}

fn coerce(t: &[DataType]) -> Result<Vec<DataType>> {
    let [array, op, value] = t else {
        return plan_err!("{NAME} takes 3 arguments (arr, op, value), not {}", t.len());
    };
    let array = list_type(NAME, array)?;
    let element = element_field(NAME, &array)?.data_type().clone();
    if !comparable(&element) {
        return plan_err!("{NAME} does not support type ARRAY<{element}>");
    }
    if !matches!(
        op,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    ) {
        return plan_err!("{NAME}: the operator must be a string, not {op}");
    }
    let value = if value.is_null() {
        element.clone()
    } else {
        match comparison_coercion(&element, value) {
            Some(c) if comparable(&c) => c,
            _ => return plan_err!("{NAME}: cannot compare {element} with {value}"),
        }
    };
    Ok(vec![array, DataType::Utf8, value])
}

/// Whether an ordering of element against value satisfies `op`.
fn test(op: &str) -> Result<fn(Ordering) -> bool> {
    Ok(match op.trim() {
        "=" => Ordering::is_eq,
        "!=" => Ordering::is_ne,
        ">" => Ordering::is_gt,
        ">=" => Ordering::is_ge,
        "<" => Ordering::is_lt,
        "<=" => Ordering::is_le,
        other => return exec_err!("{NAME}: op supports =, >=, <=, >, <, !=, but got '{other}'"),
    })
}

fn apply(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let arrays = lists(NAME, &args[0])?;
    let ops = args[1].as_string::<i32>();
    let values = &args[2];
    let elements = arrays.values();
    let compared = cast(elements, values.data_type())?;
    let compare = make_comparator(compared.as_ref(), values.as_ref(), SortOptions::default())?;
    let mut picks = Picks::with_rows(rows);
    for row in 0..rows {
        if arrays.is_null(row) || values.is_null(row) || ops.is_null(row) {
            picks.push_null();
            continue;
        }
        let keep = test(ops.value(row))?;
        let positions: Vec<usize> = row_range(arrays, row)
            .filter(|&i| !compared.is_null(i) && keep(compare(i, row)))
            .collect();
        picks.push_row(positions);
    }
    let field = element_field(NAME, arrays.data_type())?;
    Ok(Arc::new(picks.gather(field, elements)?))
}
