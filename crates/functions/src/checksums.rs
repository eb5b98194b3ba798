//! MySQL's checksums of a string's bytes: `CRC32(s)` (the CRC-32 of ISO 3309, as an unsigned
//! integer) and `SHA1(s)` / `SHA(s)` (the SHA-1 digest as 40 lower-case hex digits). A number
//! is summed as its text; NULL gives NULL.

use crate::mysql_values::bytes;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Int64Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use sha1::{Digest, Sha1};
use std::fmt::Write;
use std::sync::Arc;

/// `crc32`, `sha1` and `sha`.
pub fn functions() -> Vec<ScalarUDF> {
    let sha = |name| {
        plain_function(
            name,
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            sha1_hex,
        )
    };
    vec![
        plain_function(
            "crc32",
            Signature::any(1, Volatility::Immutable),
            DataType::Int64,
            crc32,
        ),
        sha("sha1"),
        sha("sha"),
    ]
}

fn crc32(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: Int64Array = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| i64::from(crc32fast::hash(&b))))
        .collect();
    output(Arc::new(out), scalar)
}

fn sha1_hex(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: StringArray = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| digest_hex(&b)))
        .collect();
    output(Arc::new(out), scalar)
}

/// The SHA-1 digest of `b` in lower-case hex.
fn digest_hex(b: &[u8]) -> String {
    let digest = Sha1::digest(b);
    let mut out = String::with_capacity(40);
    for byte in digest {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(crc32fast::hash(b"MySQL"), 3_259_397_556);
        assert_eq!(
            digest_hex(b"abc"),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }
}
