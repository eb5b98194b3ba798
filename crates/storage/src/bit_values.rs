//! BIT(n) values from what an INSERT stores into them, read as MySQL reads them: numbers
//! (rounded half away from zero) and booleans by value, text and byte strings by their bytes
//! as one big-endian number (`b'101'`, `x'05'`, and the raw bytes `mysqldump` writes for a
//! BIT column); and which stored values are wider than the column's n bits.

use arrow::array::{Array, ArrayRef, AsArray, UInt64Array};
use arrow::compute::{cast, cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Int64Type, UInt64Type};
use basalt_common::types::fits_bits;
use basalt_common::BasaltError;
use std::sync::Arc;

/// `values` as BIT values (`UInt64`), and the rows that hold no unsigned 64-bit number (a
/// negative number, more than 8 bytes), which are NULL in the column.
pub fn bit_column(values: &ArrayRef) -> Result<(ArrayRef, Vec<usize>), BasaltError> {
    let invalid = |e: arrow::error::ArrowError| BasaltError::InvalidData(e.to_string());
    let mut failed = Vec::new();
    let bits: UInt64Array = match values.data_type() {
        DataType::UInt64 => return Ok((values.clone(), failed)),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => {
            let text = cast(values, &DataType::Utf8).map_err(invalid)?;
            let strings = text.as_string::<i32>();
            from_bytes(strings.iter().map(|v| v.map(str::as_bytes)), &mut failed)
        }
        DataType::Binary
        | DataType::BinaryView
        | DataType::LargeBinary
        | DataType::FixedSizeBinary(_) => {
            let bytes = cast(values, &DataType::Binary).map_err(invalid)?;
            from_bytes(bytes.as_binary::<i32>().iter(), &mut failed)
        }
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            let floats = cast(values, &DataType::Float64).map_err(invalid)?;
            let floats = floats.as_primitive::<arrow::datatypes::Float64Type>();
            floats
                .iter()
                .enumerate()
                .map(|(row, v)| {
                    let rounded = v?.round();
                    if (0.0..18_446_744_073_709_551_616.0).contains(&rounded) {
                        Some(rounded as u64)
                    } else {
                        failed.push(row);
                        None
                    }
                })
                .collect()
        }
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            let whole = cast(values, &DataType::Decimal128(38, 0)).map_err(invalid)?;
            let whole = whole.as_primitive::<arrow::datatypes::Decimal128Type>();
            whole
                .iter()
                .enumerate()
                .map(|(row, v)| {
                    let v = u64::try_from(v?).ok();
                    if v.is_none() {
                        failed.push(row);
                    }
                    v
                })
                .collect()
        }
        t if t.is_signed_integer() || t == &DataType::Boolean || t == &DataType::Null => {
            let ints = cast(values, &DataType::Int64).map_err(invalid)?;
            ints.as_primitive::<Int64Type>()
                .iter()
                .enumerate()
                .map(|(row, v)| {
                    let v = u64::try_from(v?).ok();
                    if v.is_none() {
                        failed.push(row);
                    }
                    v
                })
                .collect()
        }
        _ => {
            let options = CastOptions {
                safe: false,
                ..Default::default()
            };
            let ints = cast_with_options(values, &DataType::UInt64, &options).map_err(invalid)?;
            ints.as_primitive::<UInt64Type>().clone()
        }
    };
    Ok((Arc::new(bits), failed))
}

/// Byte strings as big-endian numbers; those longer than 8 bytes (after leading zeros) fail.
fn from_bytes<'a>(
    values: impl Iterator<Item = Option<&'a [u8]>>,
    failed: &mut Vec<usize>,
) -> UInt64Array {
    values
        .enumerate()
        .map(|(row, v)| {
            let v = v?;
            let significant = &v[v.iter().take_while(|b| **b == 0).count()..];
            if significant.len() > 8 {
                failed.push(row);
                return None;
            }
            Some(
                significant
                    .iter()
                    .fold(0u64, |n, b| (n << 8) | u64::from(*b)),
            )
        })
        .collect()
}

/// The rows of a BIT column (`UInt64`) whose value is wider than `width` bits.
pub fn wider_rows(col: &ArrayRef, width: u8) -> Vec<usize> {
    let Some(bits) = col.as_primitive_opt::<UInt64Type>() else {
        return Vec::new();
    };
    bits.iter()
        .enumerate()
        .filter(|(_, v)| v.is_some_and(|v| !fits_bits(v, width)))
        .map(|(row, _)| row)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{BinaryArray, BooleanArray, Float64Array, Int64Array, StringArray};

    fn bits(values: ArrayRef) -> (Vec<Option<u64>>, Vec<usize>) {
        let (column, failed) = bit_column(&values).unwrap();
        (column.as_primitive::<UInt64Type>().iter().collect(), failed)
    }

    #[test]
    fn numbers_are_read_by_value_and_strings_by_their_bytes() {
        let ints = Arc::new(Int64Array::from(vec![Some(5), None, Some(-1)]));
        assert_eq!(bits(ints), (vec![Some(5), None, None], vec![2]));
        let bools = Arc::new(BooleanArray::from(vec![true, false]));
        assert_eq!(bits(bools).0, vec![Some(1), Some(0)]);
        let floats = Arc::new(Float64Array::from(vec![1.5, 2.4, -0.6]));
        assert_eq!(bits(floats), (vec![Some(2), Some(2), None], vec![2]));
        // MySQL reads '1' as the byte 0x31, and mysqldump writes BIT values as raw bytes.
        let text = Arc::new(StringArray::from(vec!["1", "\u{1}", ""]));
        assert_eq!(bits(text).0, vec![Some(0x31), Some(1), Some(0)]);
        let bytes: Vec<&[u8]> = vec![&[0xff; 8], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 7], &[1; 9]];
        let bytes = Arc::new(BinaryArray::from(bytes));
        assert_eq!(bits(bytes), (vec![Some(u64::MAX), Some(7), None], vec![2]));
    }

    #[test]
    fn lists_values_wider_than_the_column() {
        let col: ArrayRef = Arc::new(UInt64Array::from(vec![Some(7), Some(8), None]));
        assert_eq!(wider_rows(&col, 3), vec![1]);
        assert!(wider_rows(&col, 64).is_empty());
    }
}
