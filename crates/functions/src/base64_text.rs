//! MySQL's `TO_BASE64(s)` and `FROM_BASE64(s)`: the standard alphabet with `=` padding;
//! TO_BASE64 breaks its output into lines of 76 characters as MySQL does, FROM_BASE64 skips
//! white space and gives the bytes back (NULL for text that is no base-64).

use crate::mysql_values::bytes;
use crate::util::{arguments, output, plain_function};
use base64::Engine;
use datafusion::arrow::array::{BinaryArray, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// The characters of a line of TO_BASE64's output.
const LINE: usize = 76;

/// `to_base64` and `from_base64`.
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "to_base64",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            to_base64,
        ),
        plain_function(
            "from_base64",
            Signature::any(1, Volatility::Immutable),
            DataType::Binary,
            from_base64,
        ),
    ]
}

fn to_base64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: StringArray = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| encoded(&b)))
        .collect();
    output(Arc::new(out), scalar)
}

/// `b` in base 64, a newline after each full line.
fn encoded(b: &[u8]) -> String {
    let flat = base64::engine::general_purpose::STANDARD.encode(b);
    let mut out = String::with_capacity(flat.len() + flat.len() / LINE);
    for (i, c) in flat.chars().enumerate() {
        if i > 0 && i % LINE == 0 {
            out.push('\n');
        }
        out.push(c);
    }
    out
}

fn from_base64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: BinaryArray = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.and_then(|b| decoded(&b)))
        .collect();
    output(Arc::new(out), scalar)
}

/// The bytes base-64 text `b` spells, white space skipped; None when it is no base 64.
fn decoded(b: &[u8]) -> Option<Vec<u8>> {
    let compact: Vec<u8> = b
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    // MySQL ignores the unused low bits of the last digit ('Yq==' is 'b', as 'Yg==').
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    engine.decode(compact).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_lines() {
        assert_eq!(encoded(b"abc"), "YWJj");
        assert_eq!(encoded(b"ab"), "YWI=");
        let long = encoded(&[0u8; 60]);
        assert_eq!(long.lines().next().map(str::len), Some(76));
        assert_eq!(decoded(long.as_bytes()), Some(vec![0u8; 60]));
        assert_eq!(decoded(b"YWI="), Some(b"ab".to_vec()));
        assert_eq!(decoded(b"Y!"), None);
        assert_eq!(decoded(b"Yq=="), Some(b"b".to_vec()));
    }
}
