//! Doris's `hamming_distance(s1, s2)`: how many character positions of two strings of the
//! same length hold different characters, as a BIGINT. NULL when either argument is NULL or
//! when the strings have different lengths (in characters).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, Int64Builder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    vec![plain_function(
        "hamming_distance",
        Signature::exact(vec![DataType::Utf8; 2], Volatility::Immutable),
        DataType::Int64,
        hamming_distance,
    )]
}

/// The number of differing positions, or None when the lengths differ.
fn distance(a: &str, b: &str) -> Option<i64> {
    let (mut left, mut right) = (a.chars(), b.chars());
    let mut differing = 0i64;
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Some(differing),
            (Some(x), Some(y)) => differing += i64::from(x != y),
            _ => return None,
        }
    }
}

fn hamming_distance(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let first = cast(&arrays[0], &DataType::Utf8)?;
    let second = cast(&arrays[1], &DataType::Utf8)?;
    let (first, second) = (first.as_string::<i32>(), second.as_string::<i32>());
    let mut out = Int64Builder::with_capacity(first.len());
    for row in 0..first.len() {
        if first.is_null(row) || second.is_null(row) {
            out.append_null();
            continue;
        }
        out.append_option(distance(first.value(row), second.value(row)));
    }
    output(Arc::new(out.finish()), scalar)
}

#[cfg(test)]
mod tests {
    use super::distance;

    #[test]
    fn counts_differing_characters_of_equal_lengths() {
        assert_eq!(distance("abc", "abc"), Some(0));
        assert_eq!(distance("hello", "hallo"), Some(1));
        assert_eq!(distance("héllo", "hello"), Some(1));
        assert_eq!(distance("", ""), Some(0));
        assert_eq!(distance("abc", "abcd"), None);
    }
}
