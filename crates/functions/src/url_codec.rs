//! Doris's `url_encode(s)` and `url_decode(s)`: percent-encoding of everything but letters,
//! digits and `-_.~` (a space as `+`, as Java's URLEncoder, which Doris follows), and its
//! inverse (`+` is a space). Text that does not decode to UTF-8 is NULL.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{AsArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::sync::Arc;

/// Bytes encoded: all but ASCII letters, digits and `-_.*` (Java's URLEncoder keeps `*`).
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'*');

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || Signature::exact(vec![DataType::Utf8], Volatility::Immutable);
    vec![
        plain_function("url_encode", signature(), DataType::Utf8, encode),
        plain_function("url_decode", signature(), DataType::Utf8, decode),
    ]
}

fn map_text(
    args: &ScalarFunctionArgs,
    f: impl Fn(&str) -> Option<String>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let text = cast(&arrays[0], &DataType::Utf8)?;
    let out: StringArray = text
        .as_string::<i32>()
        .iter()
        .map(|v| v.and_then(&f))
        .collect();
    output(Arc::new(out), scalar)
}

fn encode(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_text(args, |s| Some(url_encode(s)))
}

fn decode(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    map_text(args, url_decode)
}

fn url_encode(s: &str) -> String {
    utf8_percent_encode(s, ENCODED)
        .to_string()
        .replace("%20", "+")
}

fn url_decode(s: &str) -> Option<String> {
    let spaced = s.replace('+', " ");
    percent_decode_str(&spaced)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_java_url_encoder() {
        assert_eq!(url_encode("Doris Q&A:工"), "Doris+Q%26A%3A%E5%B7%A5");
        assert_eq!(url_encode("a-b_c.d*e~"), "a-b_c.d*e%7E");
        assert_eq!(
            url_decode("Doris+Q%26A%3A%E5%B7%A5").as_deref(),
            Some("Doris Q&A:工")
        );
        assert_eq!(url_decode("%ff"), None);
    }
}
