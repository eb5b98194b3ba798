//! Doris's `CONVERT_TO(s, 'gbk')`: the text's bytes in the GBK encoding, which Doris offers
//! to order Chinese text by pinyin (`ORDER BY convert_to(name, 'gbk')`: GBK orders the common
//! characters by their reading). GBK is the only target, as in Doris; a character GBK has no
//! code for becomes `?`. NULL gives NULL.

use std::sync::Arc;

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, BinaryBuilder};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};

pub fn functions() -> Vec<ScalarUDF> {
    vec![plain_function(
        "convert_to",
        Signature::exact(vec![DataType::Utf8, DataType::Utf8], Volatility::Immutable),
        DataType::Binary,
        convert_to,
    )]
}

fn convert_to(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    match &args.args[1] {
        ColumnarValue::Scalar(ScalarValue::Utf8(Some(cs))) if cs.eq_ignore_ascii_case("gbk") => {}
        ColumnarValue::Scalar(ScalarValue::Utf8(None)) => {
            return Ok(ColumnarValue::Scalar(ScalarValue::Binary(None)))
        }
        ColumnarValue::Scalar(other) => {
            return exec_err!("convert_to: the character set must be 'gbk', got {other}")
        }
        ColumnarValue::Array(_) => {
            return exec_err!("convert_to: the character set must be a constant")
        }
    }
    let (arrays, scalar) = arguments(args)?;
    let text = arrays[0].as_string::<i32>();
    let mut out = BinaryBuilder::with_capacity(text.len(), text.value_data().len());
    for i in 0..text.len() {
        if text.is_null(i) {
            out.append_null();
        } else {
            out.append_value(gbk(text.value(i)));
        }
    }
    output(Arc::new(out.finish()), scalar)
}

/// `s` in GBK, `?` for a character without a GBK code.
fn gbk(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut buf = [0_u8; 4];
    for c in s.chars() {
        let (bytes, _, unmappable) = encoding_rs::GBK.encode(c.encode_utf8(&mut buf));
        match unmappable {
            true => out.push(b'?'),
            false => out.extend_from_slice(&bytes),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::gbk;

    #[test]
    fn gbk_orders_common_characters_by_reading() {
        // 阿 (a) < 北 (bei) < 中 (zhong); ASCII stays one byte.
        let mut names = vec!["中", "阿", "北", "a"];
        names.sort_by_key(|n| gbk(n));
        assert_eq!(names, ["a", "阿", "北", "中"]);
        assert_eq!(gbk("a中"), [b'a', 0xD6, 0xD0]);
        assert_eq!(gbk("😀"), b"?");
    }
}
