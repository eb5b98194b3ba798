//! Doris's `map_contains_entry(map, key, value)`: whether the map holds the pair
//! `(key, value)`. Keys and values compare null-safe (a NULL value matches a NULL value);
//! NULL when the map is NULL. The key and value are compared at the common type of the map's
//! keys (values) and the given key (value).

use crate::list_rows::array_function;
use crate::map_building::map_type;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

const NAME: &str = "map_contains_entry";

pub fn functions() -> Vec<ScalarUDF> {
    vec![array_function(
        NAME,
        coerce,
        |_| Ok(DataType::Boolean),
        contains_entry,
    )]
}

/// The type both `a` and `b` compare at.
fn common(a: &DataType, b: &DataType) -> Result<DataType> {
    if b.is_null() {
        return Ok(a.clone());
    }
    if a.is_null() {
        return Ok(b.clone());
    }
    match comparison_coercion(a, b) {
        Some(t) => Ok(t),
        None => plan_err!("{NAME}: cannot compare {a} with {b}"),
    }
}

fn coerce(t: &[DataType]) -> Result<Vec<DataType>> {
    let [map, key, value] = t else {
        return plan_err!(
            "{NAME} takes 3 arguments (map, key, value), not {}",
            t.len()
        );
    };
    let (map_key, map_value) =
        crate::map_building::map_parts(NAME, map)?.unwrap_or((DataType::Null, DataType::Null));
    let key = common(&map_key, key)?;
    let value = common(&map_value, value)?;
    let key = if key.is_null() { DataType::Utf8 } else { key };
    let value = if value.is_null() {
        DataType::Utf8
    } else {
        value
    };
    Ok(vec![map_type(key.clone(), value.clone()), key, value])
}

fn contains_entry(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let maps = args[0].as_map();
    let converter = RowConverter::new(vec![
        SortField::new(maps.keys().data_type().clone()),
        SortField::new(maps.values().data_type().clone()),
    ])?;
    let entries = converter.convert_columns(&[maps.keys().clone(), maps.values().clone()])?;
    let wanted = converter.convert_columns(&[args[1].clone(), args[2].clone()])?;
    let offsets = maps.value_offsets();
    let mut out = BooleanBuilder::with_capacity(rows);
    for row in 0..rows {
        if maps.is_null(row) {
            out.append_null();
            continue;
        }
        let start = usize::try_from(offsets[row]).unwrap_or(0);
        let end = usize::try_from(offsets[row + 1]).unwrap_or(start);
        let needle = wanted.row(row);
        out.append_value((start..end).any(|i| entries.row(i) == needle));
    }
    Ok(Arc::new(out.finish()))
}
