//! Doris's `murmur_hash3_32(s, ...)` and `murmur_hash3_64(s, ...)`: MurmurHash3 of the first
//! string (x86_32 with seed 104729, or Doris's x64_64 with seed 0), each further string hashed
//! with the previous hash as its seed; NULL when any argument is NULL. The 32-bit hash is shown
//! as a signed INT, the 64-bit one as a signed BIGINT, as Doris shows them. Doris's
//! `xxhash_64(s, ...)` is XXH3-64 chained the same way (seed 0 for the first string).

use crate::murmur3::{murmur3_32, murmur3_x64_64};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, Int32Array, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

const SEED_32: u32 = 104_729;

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || Signature::variadic(vec![DataType::Utf8], Volatility::Immutable);
    vec![
        plain_function("murmur_hash3_32", signature(), DataType::Int32, hash32),
        plain_function("murmur_hash3_64", signature(), DataType::Int64, hash64),
        plain_function("xxhash_64", signature(), DataType::Int64, xxhash64),
    ]
}

/// One row's argument strings (None when one of them is NULL).
type RowStrings = Option<Vec<Vec<u8>>>;

/// Each row's strings, and whether the arguments were all scalars.
fn rows(args: &ScalarFunctionArgs) -> Result<(Vec<RowStrings>, bool)> {
    let (arrays, scalar) = arguments(args)?;
    let texts = arrays
        .iter()
        .map(|a| cast(a, &DataType::Utf8))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let n = texts.first().map_or(0, |a| a.len());
    let rows = (0..n)
        .map(|row| {
            texts
                .iter()
                .map(|t| {
                    let t = t.as_string::<i32>();
                    t.is_valid(row).then(|| t.value(row).as_bytes().to_vec())
                })
                .collect::<Option<Vec<_>>>()
        })
        .collect();
    Ok((rows, scalar))
}

fn hash32(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (rows, scalar) = rows(args)?;
    let out: Int32Array = rows
        .iter()
        .map(|r| {
            r.as_ref()
                .map(|strings| strings.iter().fold(SEED_32, |seed, s| murmur3_32(s, seed)) as i32)
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn hash64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (rows, scalar) = rows(args)?;
    let out: Int64Array = rows
        .iter()
        .map(|r| {
            r.as_ref()
                .map(|strings| strings.iter().fold(0, |seed, s| murmur3_x64_64(s, seed)) as i64)
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn xxhash64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (rows, scalar) = rows(args)?;
    let out: Int64Array = rows
        .iter()
        .map(|r| {
            r.as_ref().map(|strings| {
                strings.iter().fold(0u64, |seed, s| {
                    xxhash_rust::xxh3::xxh3_64_with_seed(s, seed)
                }) as i64
            })
        })
        .collect();
    output(Arc::new(out), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_doris_documentation() {
        // Doris's reference: murmur_hash3_32("hello") = 1321743225,
        // murmur_hash3_32("hello", "world") = 984713481,
        // murmur_hash3_64("hello") = -3215607508166160593,
        // murmur_hash3_64("hello", "world") = 3583109472027628045.
        assert_eq!(murmur3_32(b"hello", SEED_32) as i32, 1_321_743_225);
        assert_eq!(
            murmur3_32(b"world", murmur3_32(b"hello", SEED_32)) as i32,
            984_713_481
        );
        assert_eq!(
            murmur3_x64_64(b"hello", 0) as i64,
            -3_215_607_508_166_160_593
        );
        assert_eq!(
            murmur3_x64_64(b"world", murmur3_x64_64(b"hello", 0)) as i64,
            3_583_109_472_027_628_045
        );
    }

    #[test]
    fn xxhash_64_matches_doris_documentation() {
        // Doris's reference: xxhash_64("hello") = -7685981735718036227,
        // xxhash_64("hello", "world") = 7001965798170371843.
        let hello = xxhash_rust::xxh3::xxh3_64_with_seed(b"hello", 0);
        assert_eq!(hello as i64, -7_685_981_735_718_036_227);
        assert_eq!(
            xxhash_rust::xxh3::xxh3_64_with_seed(b"world", hello) as i64,
            7_001_965_798_170_371_843
        );
    }
}
