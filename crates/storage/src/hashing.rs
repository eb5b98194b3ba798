//! Bucket hashing: a stable hash of the distribution columns of each row. The byte encoding is
//! Basalt's own (not Arrow's row format) so bucket assignment never changes across upgrades, and
//! integer widths do not matter (a literal of any integer type hashes like the stored column).

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::*;
use basalt_common::{BasaltError, Result};
use xxhash_rust::xxh3::xxh3_64_with_seed;

const NULL_HASH: u64 = 0x9e37_79b9_7f4a_7c15;

/// Hash of each row's values in `columns`, combined in column order.
pub fn hash_rows(columns: &[ArrayRef], num_rows: usize) -> Result<Vec<u64>> {
    let mut hashes = vec![0u64; num_rows];
    for col in columns {
        combine_column(col, &mut hashes)?;
    }
    Ok(hashes)
}

/// Bucket of each row for a table with `buckets` buckets.
pub fn buckets_of_rows(columns: &[ArrayRef], num_rows: usize, buckets: u32) -> Result<Vec<u32>> {
    Ok(hash_rows(columns, num_rows)?
        .into_iter()
        .map(|h| (h % buckets as u64) as u32)
        .collect())
}

fn mix(seed: u64, bytes: &[u8]) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

fn combine_column(col: &ArrayRef, hashes: &mut [u64]) -> Result<()> {
    macro_rules! ints {
        ($t:ty) => {{
            let a = col.as_primitive::<$t>();
            for (i, h) in hashes.iter_mut().enumerate() {
                *h = if a.is_null(i) {
                    mix(*h, &NULL_HASH.to_le_bytes())
                } else {
                    mix(*h, &(a.value(i) as i64).to_le_bytes())
                };
            }
        }};
    }
    macro_rules! bytes {
        ($array:expr) => {{
            let a = $array;
            for (i, h) in hashes.iter_mut().enumerate() {
                *h = if a.is_null(i) {
                    mix(*h, &NULL_HASH.to_le_bytes())
                } else {
                    mix(*h, AsRef::<[u8]>::as_ref(a.value(i)))
                };
            }
        }};
    }
    match col.data_type() {
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Date32 => ints!(Date32Type),
        DataType::Timestamp(TimeUnit::Microsecond, _) => ints!(TimestampMicrosecondType),
        DataType::Time64(TimeUnit::Microsecond) => ints!(Time64MicrosecondType),
        DataType::Boolean => {
            let a = col.as_boolean();
            for (i, h) in hashes.iter_mut().enumerate() {
                *h = if a.is_null(i) {
                    mix(*h, &NULL_HASH.to_le_bytes())
                } else {
                    mix(*h, &(a.value(i) as i64).to_le_bytes())
                };
            }
        }
        DataType::Decimal128(_, _) => {
            let a = col.as_primitive::<Decimal128Type>();
            for (i, h) in hashes.iter_mut().enumerate() {
                *h = if a.is_null(i) {
                    mix(*h, &NULL_HASH.to_le_bytes())
                } else {
                    mix(*h, &a.value(i).to_le_bytes())
                };
            }
        }
        DataType::Decimal256(_, _) => {
            // LARGEINT: hashed as its i128 value, like a Decimal128 of the same value.
            let a = col.as_primitive::<Decimal256Type>();
            for (i, h) in hashes.iter_mut().enumerate() {
                *h = match (a.is_null(i), a.value(i).to_i128()) {
                    (false, Some(v)) => mix(*h, &v.to_le_bytes()),
                    (false, None) => mix(*h, &a.value(i).to_le_bytes()),
                    (true, _) => mix(*h, &NULL_HASH.to_le_bytes()),
                };
            }
        }
        // Text and bytes hash their bytes: a string literal finds the bucket of the same
        // bytes stored in a VARBINARY key.
        DataType::Utf8 => bytes!(col.as_string::<i32>()),
        DataType::Utf8View => bytes!(col.as_string_view()),
        DataType::Binary => bytes!(col.as_binary::<i32>()),
        DataType::BinaryView => bytes!(col.as_binary_view()),
        other => {
            return Err(BasaltError::Internal(format!(
                "cannot hash distribution column of type {other}"
            )))
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array, StringArray};
    use std::sync::Arc;

    #[test]
    fn integer_width_does_not_change_bucket() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        let b: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        assert_eq!(hash_rows(&[a], 3).unwrap(), hash_rows(&[b], 3).unwrap());
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("x"), None]));
        let h = hash_rows(&[s], 2).unwrap();
        assert_ne!(h[0], h[1]);
        let buckets = buckets_of_rows(
            &[Arc::new(Int32Array::from((0..1000).collect::<Vec<_>>())) as ArrayRef],
            1000,
            8,
        )
        .unwrap();
        for b in 0..8 {
            assert!(
                buckets.iter().filter(|x| **x == b).count() > 60,
                "bucket {b} is starved"
            );
        }
    }
}
