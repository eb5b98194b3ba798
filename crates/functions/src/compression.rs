//! MySQL's (and Doris's) `COMPRESS(s)`, `UNCOMPRESS(c)` and `UNCOMPRESSED_LENGTH(c)`: a
//! compressed value is the uncompressed length as four little-endian bytes, then the zlib
//! stream of the bytes; the empty string compresses to the empty string. A value that is not
//! such a stream uncompresses to NULL, as in MySQL (which adds a warning).

use crate::mysql_values::bytes;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{BinaryArray, Int64Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use std::io::{Read, Write};
use std::sync::Arc;

/// Longest value UNCOMPRESS produces (MySQL's `max_allowed_packet` default, 64 MiB); a longer
/// claimed length is not a value MySQL could have compressed.
const MAX_UNCOMPRESSED: u32 = 64 << 20;

/// `compress`, `uncompress` and `uncompressed_length`.
pub fn functions() -> Vec<ScalarUDF> {
    let one = || Signature::any(1, Volatility::Immutable);
    vec![
        plain_function("compress", one(), DataType::Binary, compress),
        plain_function("uncompress", one(), DataType::Binary, uncompress),
        plain_function(
            "uncompressed_length",
            one(),
            DataType::Int64,
            uncompressed_length,
        ),
    ]
}

fn compress(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: BinaryArray = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| compressed(&b)))
        .collect();
    output(Arc::new(out), scalar)
}

fn uncompress(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: BinaryArray = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.and_then(|b| uncompressed(&b)))
        .collect();
    output(Arc::new(out), scalar)
}

fn uncompressed_length(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: Int64Array = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| claimed_length(&b).map_or(0, i64::from)))
        .collect();
    output(Arc::new(out), scalar)
}

/// `b` compressed in MySQL's format.
fn compressed(b: &[u8]) -> Vec<u8> {
    if b.is_empty() {
        return Vec::new();
    }
    let mut out = (b.len() as u32).to_le_bytes().to_vec();
    let mut encoder = ZlibEncoder::new(&mut out, Compression::default());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(b);
    let _ = encoder.finish();
    out
}

/// The length a compressed value says it holds (None for a value too short to say).
fn claimed_length(c: &[u8]) -> Option<u32> {
    let head: [u8; 4] = c.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(head))
}

/// The bytes of a compressed value; None when it is not one.
fn uncompressed(c: &[u8]) -> Option<Vec<u8>> {
    if c.is_empty() {
        return Some(Vec::new());
    }
    let length = claimed_length(c)?;
    if length > MAX_UNCOMPRESSED {
        return None;
    }
    let mut out = Vec::with_capacity(length as usize);
    ZlibDecoder::new(&c[4..])
        .take(u64::from(length) + 1)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() == length as usize).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_mysqls_format() {
        let text = b"hello hello hello hello";
        let c = compressed(text);
        assert_eq!(&c[..4], &[23, 0, 0, 0]);
        assert_eq!(c[4], 0x78, "a zlib stream follows the length");
        assert_eq!(uncompressed(&c).as_deref(), Some(&text[..]));
        assert_eq!(compressed(b""), b"");
        assert_eq!(uncompressed(b"").as_deref(), Some(&b""[..]));
    }

    #[test]
    fn garbage_uncompresses_to_null() {
        assert_eq!(uncompressed(b"abc"), None);
        assert_eq!(uncompressed(b"abcdefgh"), None);
        let mut c = compressed(b"xyz");
        c[0] = 9; // claims a wrong length
        assert_eq!(uncompressed(&c), None);
    }
}
