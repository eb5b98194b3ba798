//! Rows in the table's stored form: what every writer (INSERT, DELETE, Stream Load) applies
//! before handing a batch to a load — NOT NULL, CHAR/VARCHAR length in characters, BINARY
//! length in bytes, BIT width, LARGEINT range, DATETIME precision, JSON validity, nested
//! values from text and ENUM/SET members — and AUTO_INCREMENT ids drawn from the catalog.

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Decimal256Array, Int64Array, RecordBatch, StringArray,
    Time64MicrosecondArray, TimestampMicrosecondArray,
};
use arrow::compute::cast as arrow_cast;
use arrow::datatypes::DataType;
use basalt_catalog::{TableMeta, TabletCatalog};
use basalt_common::typed_text;
use basalt_common::{BasaltError, SqlType};
use std::sync::Arc;

/// Enforces what the column types declare: NOT NULL (error 1048), CHAR/VARCHAR length in
/// characters and BINARY/VARBINARY length in bytes (error 1406), BIT(n) values of at most n
/// bits (error 1406, as MySQL), and DATETIME fractional digits (rounded to the declared ones).
pub fn conform(table: &TableMeta, batch: &RecordBatch) -> Result<Vec<ArrayRef>, BasaltError> {
    let mut columns = batch.columns().to_vec();
    for (i, c) in table.columns.iter().enumerate() {
        // Scans give strings as Utf8View; storage writes Utf8.
        let storage_type = c.ty.arrow_type();
        if columns[i].data_type() != &storage_type {
            columns[i] = to_storage_type(&columns[i], &c.ty, &c.name)?;
        }
        let col = &columns[i];
        if !c.nullable && col.null_count() > 0 {
            return Err(BasaltError::ColumnCannotBeNull(c.name.clone()));
        }
        match c.ty {
            SqlType::Char(max)
            | SqlType::Varchar(max)
            | SqlType::Binary(max)
            | SqlType::Varbinary(max) => {
                if value_lengths(col).flatten().any(|len| len > max as usize) {
                    return Err(BasaltError::DataTooLong {
                        column: c.name.clone(),
                        max,
                        unit: length_unit(&c.ty),
                    });
                }
                if let SqlType::Binary(n) = c.ty {
                    columns[i] = pad_binary(col, n);
                }
            }
            SqlType::Json => {
                if let Some(strings) = col.as_string_opt::<i32>() {
                    let (docs, failed) = typed_text::json_column(strings);
                    if let Some((_, reason)) = failed.into_iter().next() {
                        return Err(BasaltError::InvalidJson {
                            column: c.name.clone(),
                            reason,
                        });
                    }
                    columns[i] = Arc::new(docs);
                }
            }
            // Text that is no JSON document is NULL, which a NOT NULL column refuses.
            SqlType::Variant => {
                if let Some(strings) = col.as_string_opt::<i32>() {
                    let docs = basalt_common::variant::variant_column(strings);
                    if !c.nullable && docs.null_count() > 0 {
                        return Err(BasaltError::ColumnCannotBeNull(c.name.clone()));
                    }
                    columns[i] = Arc::new(docs);
                }
            }
            SqlType::LargeInt => {
                if let Some(values) = col.as_any().downcast_ref::<Decimal256Array>() {
                    if values.iter().flatten().any(|v| v.to_i128().is_none()) {
                        return Err(BasaltError::OutOfRange(c.name.clone()));
                    }
                }
            }
            SqlType::Bit(width) if !crate::bit_values::wider_rows(col, width).is_empty() => {
                return Err(bit_too_long(&c.name, width));
            }
            SqlType::DateTime { scale } if scale < 6 => {
                columns[i] = round_datetime(col, scale);
            }
            SqlType::Time { scale } => {
                let (rounded, out_of_range) = round_time(col, scale);
                if !out_of_range.is_empty() {
                    return Err(BasaltError::OutOfRange(c.name.clone()));
                }
                columns[i] = rounded;
            }
            SqlType::Array(ref element) => {
                if let Some(rounded) = round_elements(col, element, &c.name)? {
                    columns[i] = rounded;
                }
            }
            _ => {}
        }
        if let Some(allowed) = &c.allowed {
            columns[i] = admit_members(&columns[i], allowed, &c.name)?;
        }
    }
    Ok(columns)
}

/// An ENUM or SET column's values as stored (members as declared), or MySQL's strict-mode
/// error 1265 for the first value that is not one the column takes.
fn admit_members(
    col: &ArrayRef,
    allowed: &basalt_catalog::AllowedValues,
    column: &str,
) -> Result<ArrayRef, BasaltError> {
    let Some(strings) = col.as_string_opt::<i32>() else {
        return Ok(col.clone());
    };
    let mut out = Vec::with_capacity(strings.len());
    for (row, value) in strings.iter().enumerate() {
        match value {
            None => out.push(None),
            Some(v) => match allowed.admit(v) {
                Some(stored) => out.push(Some(stored)),
                None => {
                    return Err(BasaltError::StoredValue {
                        code: 1265,
                        message: format!("Data truncated for column '{column}' at row {}", row + 1),
                    })
                }
            },
        }
    }
    Ok(Arc::new(StringArray::from(out)))
}

/// An ARRAY<DATETIME(p)> or ARRAY<TIME(p)> column's elements rounded to p digits, as a
/// top-level column's are (None for other element types).
fn round_elements(
    col: &ArrayRef,
    element: &SqlType,
    column: &str,
) -> Result<Option<ArrayRef>, BasaltError> {
    let Some(lists) = col.as_list_opt::<i32>() else {
        return Ok(None);
    };
    let values = match *element {
        SqlType::DateTime { scale } if scale < 6 => round_datetime(lists.values(), scale),
        SqlType::Time { scale } if scale < 6 => {
            let (rounded, out_of_range) = round_time(lists.values(), scale);
            if !out_of_range.is_empty() {
                return Err(BasaltError::OutOfRange(column.to_string()));
            }
            rounded
        }
        _ => return Ok(None),
    };
    let DataType::List(field) = col.data_type() else {
        return Ok(None);
    };
    let rounded = arrow::array::ListArray::try_new(
        field.clone(),
        lists.offsets().clone(),
        values,
        lists.nulls().cloned(),
    )
    .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
    Ok(Some(Arc::new(rounded)))
}

/// A column's values in its storage type: text read as a nested value where the column is
/// ARRAY, MAP or STRUCT, or as an address where it is IPV4 or IPV6 (a bad value is an error
/// naming the column), a plain cast otherwise.
fn to_storage_type(values: &ArrayRef, ty: &SqlType, column: &str) -> Result<ArrayRef, BasaltError> {
    let target = ty.arrow_type();
    if let SqlType::Bit(width) = ty {
        let (bits, failed) = crate::bit_values::bit_column(values)?;
        if !failed.is_empty() {
            return Err(bit_too_long(column, *width));
        }
        return Ok(bits);
    }
    if let (Some(family), true) = (ty.ip_family(), is_text(values.data_type())) {
        let text = arrow_cast(values, &DataType::Utf8)
            .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
        let strings = text.as_string::<i32>();
        let (addresses, failed) = basalt_common::ip_address::ip_column(strings, family);
        if let Some(&row) = failed.first() {
            return Err(BasaltError::InvalidData(format!(
                "Incorrect {} value: '{}' for column '{column}'",
                family.sql_name(),
                strings.value(row)
            )));
        }
        return Ok(addresses);
    }
    if ty.is_nested() {
        let text = match values.data_type() {
            DataType::Utf8View | DataType::LargeUtf8 => Some(arrow_cast(values, &DataType::Utf8)),
            DataType::Utf8 => Some(Ok(values.clone())),
            _ => None,
        };
        if let Some(text) = text {
            let text = text.map_err(|e| BasaltError::InvalidData(e.to_string()))?;
            let (array, failed) = typed_text::nested_column(text.as_string::<i32>(), &target)
                .map_err(BasaltError::InvalidData)?;
            if let Some((_, reason)) = failed.into_iter().next() {
                return Err(BasaltError::InvalidNestedValue {
                    column: column.to_string(),
                    ty: ty.to_string(),
                    reason,
                });
            }
            return Ok(array);
        }
    }
    let converted =
        arrow_cast(values, &target).map_err(|e| BasaltError::InvalidData(e.to_string()))?;
    // Arrow's cast makes a number past an integer type's range NULL: MySQL's strict mode
    // refuses it (1264), and a stored NULL would be a silent change of the value.
    if ty.is_integer() && converted.logical_null_count() > values.logical_null_count() {
        return Err(BasaltError::OutOfRange(column.to_string()));
    }
    Ok(converted)
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// MySQL's error for a value wider than a BIT(width) column.
fn bit_too_long(column: &str, width: u8) -> BasaltError {
    BasaltError::DataTooLong {
        column: column.to_string(),
        max: u32::from(width),
        unit: "bits",
    }
}

/// What a CHAR/VARCHAR/BINARY/VARBINARY column's declared length counts.
pub fn length_unit(ty: &SqlType) -> &'static str {
    if ty.is_string() {
        "characters"
    } else {
        "bytes"
    }
}

/// The length of each value of a text or byte-string column as MySQL measures it against the
/// declared length: characters (UTF-8 code points) of text, bytes of byte strings (None for
/// NULL, and for every row of other types).
pub fn value_lengths(col: &ArrayRef) -> Box<dyn Iterator<Item = Option<usize>> + '_> {
    if let Some(strings) = col.as_any().downcast_ref::<StringArray>() {
        Box::new(strings.iter().map(|v| v.map(|s| s.chars().count())))
    } else if let Some(bytes) = col.as_any().downcast_ref::<BinaryArray>() {
        Box::new(bytes.iter().map(|v| v.map(<[u8]>::len)))
    } else {
        Box::new(std::iter::repeat_n(None, col.len()))
    }
}

/// BINARY(n) values right-padded with 0x00 to `n` bytes, as MySQL stores them.
pub fn pad_binary(col: &ArrayRef, n: u32) -> ArrayRef {
    let Some(bytes) = col.as_any().downcast_ref::<BinaryArray>() else {
        return col.clone();
    };
    let n = n as usize;
    if bytes.iter().flatten().all(|v| v.len() >= n) {
        return col.clone();
    }
    let padded: BinaryArray = bytes
        .iter()
        .map(|v| {
            v.map(|v| {
                let mut b = v.to_vec();
                if b.len() < n {
                    b.resize(n, 0);
                }
                b
            })
        })
        .collect();
    Arc::new(padded)
}

/// TIME(scale) keeps `scale` fractional digits, rounded half away from zero; the rows whose
/// value rounds past ±838:59:59 (MySQL's TIME range) are listed and become NULL.
pub fn round_time(col: &ArrayRef, scale: u8) -> (ArrayRef, Vec<usize>) {
    let Some(times) = col.as_any().downcast_ref::<Time64MicrosecondArray>() else {
        return (col.clone(), Vec::new());
    };
    let mut out_of_range = Vec::new();
    let rounded: Time64MicrosecondArray = times
        .iter()
        .enumerate()
        .map(|(row, v)| {
            let r = basalt_common::time_value::round(v?, scale);
            if r.is_none() {
                out_of_range.push(row);
            }
            r
        })
        .collect();
    (Arc::new(rounded), out_of_range)
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
    // A BIGINT UNSIGNED id past BIGINT's range would read as NULL, which asks for a new id:
    // refuse it rather than replace it (Basalt's AUTO_INCREMENT counter is a BIGINT).
    if as_i64.logical_null_count() > original.logical_null_count() {
        return Err(BasaltError::OutOfRange(table.columns[col].name.clone()));
    }
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
