//! Doris's `bitmap_to_base64(bitmap)` / `bitmap_from_base64(text)` and `hll_to_base64(hll)` /
//! `hll_from_base64(text)`: a BITMAP or HLL value's stored bytes (the
//! `basalt_common::bitmap_value` / `hll_value` formats) as standard base64, and back. A
//! decoded value round-trips; text that is no base64, or whose bytes are no value of the kind,
//! is NULL (as Doris's invalid input). The empty bitmap is `AA==` and a bitmap of one id below
//! 2^32 is its little-endian bytes after a `1` (`AQEAAAA=` for 1), as in Doris; larger bitmaps
//! and HLL values are encoded in Basalt's format, which Doris's base64 is not. NULL in, NULL out.

use crate::util::{
    arguments, decode_bitmap, decode_hll, output, plain_function, sketch_function, Bytes,
};
use basalt_common::bitmap_value::BitmapValue;
use basalt_common::hll_value::HllValue;
use basalt_common::SqlType;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use datafusion::arrow::array::{Array, AsArray, BinaryArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let sketch = || Signature::any(1, Volatility::Immutable);
    let text = || Signature::exact(vec![DataType::Utf8], Volatility::Immutable);
    vec![
        plain_function(
            "bitmap_to_base64",
            sketch(),
            DataType::Utf8,
            bitmap_to_base64,
        ),
        sketch_function(
            "bitmap_from_base64",
            text(),
            SqlType::Bitmap,
            bitmap_from_base64,
        ),
        plain_function("hll_to_base64", sketch(), DataType::Utf8, hll_to_base64),
        sketch_function("hll_from_base64", text(), SqlType::Hll, hll_from_base64),
    ]
}

/// Each sketch of the argument, checked by `validate`, as base64.
fn to_base64(
    args: &ScalarFunctionArgs,
    function: &str,
    validate: fn(&str, &[u8]) -> Result<()>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let kind = arrays[0].data_type();
    if !matches!(
        kind,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::Null
    ) {
        return exec_err!(
            "{function}: expected a {} argument, got {kind}",
            sketch_name(function)
        );
    }
    let sketches = Bytes::new(function, &arrays[0])?;
    let out = (0..arrays[0].len())
        .map(|i| {
            sketches
                .get(i)
                .map(|bytes| validate(function, bytes).map(|()| STANDARD.encode(bytes)))
                .transpose()
        })
        .collect::<Result<StringArray>>()?;
    output(Arc::new(out), scalar)
}

fn sketch_name(function: &str) -> &'static str {
    if function.starts_with("hll") {
        "HLL"
    } else {
        "BITMAP"
    }
}

/// Each base64 text decoded and read by `reencode` (NULL when either fails).
fn from_base64(
    args: &ScalarFunctionArgs,
    reencode: fn(&[u8]) -> Option<Vec<u8>>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let out: BinaryArray = texts
        .as_string::<i32>()
        .iter()
        .map(|text| {
            let bytes = STANDARD.decode(text?.trim()).ok()?;
            reencode(&bytes)
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn bitmap_to_base64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    to_base64(args, "bitmap_to_base64", |f, b| {
        decode_bitmap(f, b).map(|_| ())
    })
}

fn hll_to_base64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    to_base64(args, "hll_to_base64", |f, b| decode_hll(f, b).map(|_| ()))
}

fn bitmap_from_base64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    from_base64(args, |bytes| {
        // An empty text decodes to no bytes, which is no value (the empty bitmap is `AA==`).
        if bytes.is_empty() {
            return None;
        }
        BitmapValue::deserialize(bytes).ok().map(|b| b.serialize())
    })
}

fn hll_from_base64(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    from_base64(args, |bytes| {
        if bytes.is_empty() {
            return None;
        }
        HllValue::deserialize(bytes).ok().map(|h| h.serialize())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_bitmaps_encode_as_doris_encodes_them() {
        assert_eq!(STANDARD.encode(BitmapValue::new().serialize()), "AA==");
        assert_eq!(
            STANDARD.encode(BitmapValue::from_id(1).serialize()),
            "AQEAAAA="
        );
        // Doris's roaring form of {1, 9999999} is not Basalt's: it reads as no bitmap.
        let doris = STANDARD
            .decode("AjowAAACAAAAAAAAAJgAAAAYAAAAGgAAAAEAf5Y=")
            .unwrap();
        assert!(BitmapValue::deserialize(&doris).is_err());
    }
}
