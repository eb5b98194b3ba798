//! Doris's `split_by_regexp(s, pattern [, max_limit])` (also spelled `regexp_split_to_array`):
//! the pieces of s between matches of the regular expression, as ARRAY<VARCHAR>.
//! - an empty pattern splits into characters; a pattern that never matches gives `[s]`;
//!   an empty string gives `[""]`; consecutive or edge matches give '' pieces;
//! - `max_limit` > 0 caps the number of pieces, the last one holding the rest of the string
//!   (`('a,b,c,d,e', ',', 3)` is `["a", "b", "c,d,e"]`); 0 or negative means no limit;
//! - NULL when any argument is NULL; a pattern that does not compile is an error naming the
//!   function.

use crate::row_regex::RowRegex;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use regex::Regex;
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let list = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    ["split_by_regexp", "regexp_split_to_array"]
        .into_iter()
        .map(|name| {
            plain_function(
                name,
                Signature::one_of(
                    vec![
                        TypeSignature::Exact(vec![DataType::Utf8; 2]),
                        TypeSignature::Exact(vec![DataType::Utf8, DataType::Utf8, DataType::Int64]),
                    ],
                    Volatility::Immutable,
                ),
                list.clone(),
                split_by_regexp,
            )
        })
        .collect()
}

/// The pieces of `s` around the matches of `re`, at most `limit` of them when given.
fn pieces<'a>(s: &'a str, re: &Regex, limit: Option<usize>) -> Vec<&'a str> {
    if re.as_str().is_empty() {
        let mut chars: Vec<&str> = s
            .char_indices()
            .map(|(i, c)| &s[i..i + c.len_utf8()])
            .collect();
        if let Some(limit) = limit {
            if chars.len() > limit {
                let rest_start = chars[..limit - 1].iter().map(|c| c.len()).sum::<usize>();
                chars.truncate(limit - 1);
                chars.push(&s[rest_start..]);
            }
        }
        if chars.is_empty() {
            chars.push("");
        }
        return chars;
    }
    match limit {
        Some(limit) => re.splitn(s, limit).collect(),
        None => re.split(s).collect(),
    }
}

fn split_by_regexp(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let patterns = cast(&arrays[1], &DataType::Utf8)?;
    let limits: Option<ArrayRef> = match arrays.get(2) {
        Some(a) => Some(cast(a, &DataType::Int64)?),
        None => None,
    };
    let (texts, patterns) = (texts.as_string::<i32>(), patterns.as_string::<i32>());
    let mut compiled = RowRegex::new("split_by_regexp");
    let mut out = ListBuilder::new(StringBuilder::new());
    for row in 0..texts.len() {
        let limit_null = limits.as_ref().is_some_and(|l| l.is_null(row));
        if texts.is_null(row) || patterns.is_null(row) || limit_null {
            out.append_null();
            continue;
        }
        let limit = limits
            .as_ref()
            .map(|l| l.as_primitive::<Int64Type>().value(row))
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0);
        let re = compiled.get(patterns.value(row))?;
        for piece in pieces(texts.value(row), re, limit) {
            out.values().append_value(piece);
        }
        out.append(true);
    }
    output(Arc::new(out.finish()), scalar)
}

#[cfg(test)]
mod tests {
    use super::pieces;
    use regex::Regex;

    fn split(s: &str, pattern: &str, limit: Option<usize>) -> Vec<String> {
        let re = Regex::new(pattern).expect("test pattern");
        pieces(s, &re, limit)
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn splits_as_doris_documents() {
        assert_eq!(split("abcde", "", None), ["a", "b", "c", "d", "e"]);
        assert_eq!(split("a12bc23de345f", r"\d+", None), ["a", "bc", "de", "f"]);
        assert_eq!(split("", ",", None), [""]);
        assert_eq!(split("", "", None), [""]);
        assert_eq!(split("hello", "xyz", None), ["hello"]);
        assert_eq!(split("a,b,c,d,e", ",", Some(3)), ["a", "b", "c,d,e"]);
        assert_eq!(split("1-2-3-4-5", "-", Some(2)), ["1", "2-3-4-5"]);
        assert_eq!(
            split("TheQuickBrownFox", "[A-Z]", None),
            ["", "he", "uick", "rown", "ox"]
        );
        assert_eq!(split("123abc456def", "[a-z]+", None), ["123", "456", ""]);
        assert_eq!(split("αβγδε", "[βδ]", None), ["α", "γ", "ε"]);
        assert_eq!(split("abcde", "", Some(2)), ["a", "bcde"]);
    }
}
