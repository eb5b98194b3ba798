//! Doris's digests over several strings:
//! - `sm3(s)` and `sm3sum(s, ...)`: the SM3 (GB/T 32905) digest of the strings one after
//!   another, as 64 lower-case hex digits; `md5sum(s, ...)` likewise with MD5 (32 digits);
//! - `xxhash_32(s, ...)`: XXH32 of the first string with seed 0, each further string hashed
//!   with the previous hash as its seed, shown as a signed INT (as `xxhash_64` chains).
//!
//! Each is NULL when any argument is NULL.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, Int32Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use md5::Md5;
use sm3::{Digest, Sm3};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let one = || Signature::exact(vec![DataType::Utf8], Volatility::Immutable);
    let many = || Signature::variadic(vec![DataType::Utf8], Volatility::Immutable);
    vec![
        plain_function("sm3", one(), DataType::Utf8, sm3),
        plain_function("sm3sum", many(), DataType::Utf8, sm3),
        plain_function("md5sum", many(), DataType::Utf8, md5sum),
        plain_function("xxhash_32", many(), DataType::Int32, xxhash_32),
    ]
}

/// `digest` of each row's argument strings (NULL when one is NULL).
fn per_row<T>(args: &ScalarFunctionArgs, digest: impl Fn(&[&[u8]]) -> T) -> Result<Vec<Option<T>>> {
    let (arrays, _) = arguments(args)?;
    let texts = arrays
        .iter()
        .map(crate::mysql_values::bytes)
        .collect::<Result<Vec<_>>>()?;
    let rows = arrays.first().map_or(0, ArrayRef::len);
    let mut out = Vec::with_capacity(rows);
    let mut row_values: Vec<&[u8]> = Vec::with_capacity(texts.len());
    for row in 0..rows {
        row_values.clear();
        row_values.extend(texts.iter().filter_map(|t| t[row].as_deref()));
        out.push((row_values.len() == texts.len()).then(|| digest(&row_values)));
    }
    Ok(out)
}

fn hex_digest<D: Digest>(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (_, scalar) = arguments(args)?;
    let digests = per_row(args, |strings| {
        let mut hasher = D::new();
        strings.iter().for_each(|s| hasher.update(s));
        hex(&hasher.finalize())
    })?;
    output(Arc::new(StringArray::from(digests)), scalar)
}

fn sm3(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    hex_digest::<Sm3>(args)
}

fn md5sum(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    hex_digest::<Md5>(args)
}

fn xxhash_32(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (_, scalar) = arguments(args)?;
    let hashes = per_row(args, |strings| {
        strings
            .iter()
            .fold(0u32, |seed, s| xxhash_rust::xxh32::xxh32(s, seed)) as i32
    })?;
    output(Arc::new(Int32Array::from(hashes)), scalar)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest<D: Digest>(strings: &[&str]) -> String {
        let mut hasher = D::new();
        strings.iter().for_each(|s| hasher.update(s.as_bytes()));
        hex(&hasher.finalize())
    }

    #[test]
    fn matches_published_values() {
        // GB/T 32905's example, and Doris's sm3sum("ab", "cd").
        assert_eq!(
            digest::<Sm3>(&["abc"]),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
        );
        assert_eq!(
            digest::<Sm3>(&["ab", "cd"]),
            "82ec580fe6d36ae4f81cae3c73f4a5b3b5a09c943172dc9053c69fd8e18dca1e"
        );
        assert_eq!(
            digest::<Md5>(&["a", "bc"]),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        // Doris's xxhash_32("hello") and xxhash_32("hello", "world").
        let hello = xxhash_rust::xxh32::xxh32(b"hello", 0);
        assert_eq!(hello as i32, -83_855_367);
        assert_eq!(
            xxhash_rust::xxh32::xxh32(b"world", hello) as i32,
            -920_844_969
        );
    }
}
