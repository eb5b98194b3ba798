//! `group_concat_cut(text, n)`: a GROUP_CONCAT result cut to `@@group_concat_max_len` bytes,
//! as MySQL cuts it (at the last whole character within `n` bytes). The statement rewrite
//! wraps GROUP_CONCAT in it when the session sets the variable below Doris's default
//! (2147483646, which no result reaches).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::{Arc, OnceLock};

/// The function's name.
pub const NAME: &str = "group_concat_cut";

/// `group_concat_cut(text, n)`.
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            NAME,
            Signature::any(2, Volatility::Immutable),
            DataType::Utf8,
            cut,
        )
    })
}

/// The longest prefix of `s` within `bytes` bytes that ends on a character boundary.
fn prefix(s: &str, bytes: usize) -> &str {
    let mut end = bytes.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn cut(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let text = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
    let text = text.as_string::<i32>();
    let limits = datafusion::arrow::compute::cast(&arrays[1], &DataType::Int64)?;
    let limits = limits.as_primitive::<Int64Type>();
    let mut out = StringBuilder::with_capacity(text.len(), text.value_data().len());
    for row in 0..text.len() {
        if text.is_null(row) || limits.is_null(row) {
            out.append_null();
        } else {
            let limit = usize::try_from(limits.value(row)).unwrap_or(0);
            out.append_value(prefix(text.value(row), limit));
        }
    }
    output(Arc::new(out.finish()) as ArrayRef, scalar)
}

#[cfg(test)]
mod tests {
    use super::prefix;

    #[test]
    fn cuts_at_the_last_whole_character() {
        assert_eq!(prefix("abcdef", 4), "abcd");
        assert_eq!(prefix("ab", 4), "ab");
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("aé", 3), "aé");
        assert_eq!(prefix("x", 0), "");
    }
}
