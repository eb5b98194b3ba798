//! Rows in the table's stored form: what every writer (INSERT, DELETE, Stream Load) applies
//! before handing a batch to a load — NOT NULL, CHAR/VARCHAR length, LARGEINT range and DATETIME
//! precision checks, and AUTO_INCREMENT ids drawn from the catalog.

use arrow::array::{
    Array, ArrayRef, Decimal256Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow::compute::cast as arrow_cast;
use arrow::datatypes::DataType;
use basalt_catalog::{TableMeta, TabletCatalog};
use basalt_common::{BasaltError, SqlType};
use std::sync::Arc;

/// Enforces what the column types declare: NOT NULL (error 1048), CHAR/VARCHAR length in bytes
/// (error 1406), and DATETIME fractional digits (rounded to the declared ones).
pub fn conform(table: &TableMeta, batch: &RecordBatch) -> Result<Vec<ArrayRef>, BasaltError> {
    let mut columns = batch.columns().to_vec();
    for (i, c) in table.columns.iter().enumerate() {
        // Scans give strings as Utf8View; storage writes Utf8.
        let storage_type = c.ty.arrow_type();
        if columns[i].data_type() != &storage_type {
            columns[i] = arrow_cast(&columns[i], &storage_type)
                .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
        }
        let col = &columns[i];
        if !c.nullable && col.null_count() > 0 {
            return Err(BasaltError::ColumnCannotBeNull(c.name.clone()));
        }
        match c.ty {
            SqlType::Char(max) | SqlType::Varchar(max) => {
                if let Some(strings) = col.as_any().downcast_ref::<StringArray>() {
                    if strings.iter().flatten().any(|s| s.len() > max as usize) {
                        return Err(BasaltError::DataTooLong {
                            column: c.name.clone(),
                            max,
                        });
                    }
                }
            }
            SqlType::LargeInt => {
                if let Some(values) = col.as_any().downcast_ref::<Decimal256Array>() {
                    if values.iter().flatten().any(|v| v.to_i128().is_none()) {
                        return Err(BasaltError::OutOfRange(c.name.clone()));
                    }
                }
            }
            SqlType::DateTime { scale } if scale < 6 => {
                columns[i] = round_datetime(col, scale);
            }
            _ => {}
        }
    }
    Ok(columns)
}

/// DATETIME(scale) keeps `scale` fractional digits: the value is rounded to them, half up,
/// as MySQL and Doris round (MariaDB truncates).
pub fn round_datetime(col: &ArrayRef, scale: u8) -> ArrayRef {
    match col.as_any().downcast_ref::<TimestampMicrosecondArray>() {
        Some(ts) if scale < 6 => {
            let rounded: TimestampMicrosecondArray =
                ts.unary(|v| basalt_common::types::round_micros(v, scale));
            Arc::new(rounded.with_timezone_opt(ts.timezone()))
        }
        _ => col.clone(),
    }
}

/// Fills the AUTO_INCREMENT column's NULL and 0 values with new ids (MySQL semantics) and
/// moves the counter past explicitly given ids. Returns the first new id, if any was made.
pub fn fill_auto_increment(
    catalog: &dyn TabletCatalog,
    table: &TableMeta,
    batch: RecordBatch,
) -> Result<(RecordBatch, Option<u64>), BasaltError> {
    let Some(col) = table.columns.iter().position(|c| c.auto_increment) else {
        return Ok((batch, None));
    };
    let original = batch.column(col);
    let as_i64 = arrow_cast(original, &DataType::Int64)
        .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
    let values = as_i64
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| BasaltError::Internal("AUTO_INCREMENT column is not integer".into()))?;
    let missing = values
        .iter()
        .filter(|v| matches!(v, None | Some(0)))
        .count() as u64;
    let explicit_max = values.iter().flatten().filter(|v| *v > 0).max();
    let at_least = explicit_max.map_or(0, |m| m as u64 + 1);
    if missing == 0 && at_least == 0 {
        return Ok((batch, None));
    }
    let first = catalog.reserve_auto_increment(table.id, missing, at_least)?;
    if missing == 0 {
        return Ok((batch, None));
    }
    let mut next = first;
    let filled: Int64Array = values
        .iter()
        .map(|v| match v {
            None | Some(0) => {
                let id = next as i64;
                next += 1;
                Some(id)
            }
            some => some,
        })
        .collect();
    let target = original.data_type().clone();
    let options = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    let filled = arrow::compute::cast_with_options(&filled, &target, &options)
        .map_err(|_| BasaltError::OutOfRange(table.columns[col].name.clone()))?;
    let mut columns = batch.columns().to_vec();
    columns[col] = filled;
    let batch = RecordBatch::try_new(batch.schema(), columns)
        .map_err(|e| BasaltError::Internal(e.to_string()))?;
    Ok((batch, Some(first)))
}
