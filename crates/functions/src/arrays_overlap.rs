//! Doris's `arrays_overlap(a, b)`: whether the arrays share a non-NULL element. NULL when
//! either array is NULL, and NULL (not false) when they share none but either holds a NULL
//! element; NULL elements never match each other. Elements compare at their common type.

use crate::list_rows::{array_function, element_field, list_type, lists, row_range};
use datafusion::arrow::array::{Array, ArrayRef, BooleanBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::ScalarUDF;
use std::collections::HashSet;
use std::sync::Arc;

const NAME: &str = "arrays_overlap";

pub fn functions() -> Vec<ScalarUDF> {
    vec![array_function(
        NAME,
        coerce,
        |_| Ok(DataType::Boolean),
        overlap,
    )]
}

fn coerce(t: &[DataType]) -> Result<Vec<DataType>> {
    let [a, b] = t else {
        return plan_err!("{NAME} takes 2 arrays, not {} arguments", t.len());
    };
    // A NULL literal takes the other array's type.
    let (a, b) = match (a.is_null(), b.is_null()) {
        (true, false) => (b, b),
        (false, true) => (a, a),
        _ => (a, b),
    };
    let (a, b) = (list_type(NAME, a)?, list_type(NAME, b)?);
    let (ea, eb) = (element_field(NAME, &a)?, element_field(NAME, &b)?);
    let (ta, tb) = (ea.data_type(), eb.data_type());
    let element = if ta == tb {
        ta.clone()
    } else {
        match comparison_coercion(ta, tb) {
            Some(c) => c,
            None => return plan_err!("{NAME}: cannot compare {ta} with {tb}"),
        }
    };
    if element.is_nested() {
        return plan_err!("{NAME} does not support ARRAY<{element}>");
    }
    let list = DataType::List(Arc::new(Field::new_list_field(element, true)));
    Ok(vec![list.clone(), list])
}

fn overlap(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let (a, b) = (lists(NAME, &args[0])?, lists(NAME, &args[1])?);
    let element = element_field(NAME, a.data_type())?.data_type().clone();
    let converter = RowConverter::new(vec![SortField::new(element.clone())])?;
    let a_rows = converter.convert_columns(&[cast(a.values(), &element)?])?;
    let b_rows = converter.convert_columns(&[cast(b.values(), &element)?])?;
    let mut out = BooleanBuilder::with_capacity(rows);
    for row in 0..rows {
        if a.is_null(row) || b.is_null(row) {
            out.append_null();
            continue;
        }
        let (ra, rb) = (row_range(a, row), row_range(b, row));
        let mut saw_null = false;
        let mut left = HashSet::new();
        for i in ra {
            if a.values().is_null(i) {
                saw_null = true;
            } else {
                left.insert(a_rows.row(i));
            }
        }
        let mut found = false;
        for i in rb {
            if b.values().is_null(i) {
                saw_null = true;
            } else if left.contains(&b_rows.row(i)) {
                found = true;
                break;
            }
        }
        match (found, saw_null) {
            (true, _) => out.append_value(true),
            (false, true) => out.append_null(),
            (false, false) => out.append_value(false),
        }
    }
    Ok(Arc::new(out.finish()))
}
