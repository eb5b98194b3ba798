//! More of Doris's string functions:
//! - `trim_in(s [, chars])`, `ltrim_in(..)`, `rtrim_in(..)`: strip from both ends / the start /
//!   the end every character that is in the set `chars` (spaces without one), in any order
//!   (`rtrim_in('ababccaab', 'ab')` is `'ababcc'`, where `rtrim` strips whole `'ab'`s);
//! - `sub_replace(s, new, start [, len])`: `s` with the `len` characters from the 0-based
//!   character `start` replaced by `new` (`len` defaults to `new`'s length); NULL
//!   for a negative start or length, or a start past the end of `s`;
//! - `is_uuid(s)`: whether `s` is a UUID written `8-4-4-4-12` hex digits, the same 32 digits
//!   without hyphens, or the hyphenated form in braces.
//!
//! Each is NULL when an argument is NULL.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let texts = |n: usize| TypeSignature::Exact(vec![DataType::Utf8; n]);
    let trim = || Signature::one_of(vec![texts(1), texts(2)], Volatility::Immutable);
    let replace_args = |counts: usize| {
        let mut types = vec![DataType::Utf8; 2];
        types.extend(std::iter::repeat_n(DataType::Int64, counts));
        TypeSignature::Exact(types)
    };
    vec![
        plain_function("trim_in", trim(), DataType::Utf8, trim_in),
        plain_function("ltrim_in", trim(), DataType::Utf8, ltrim_in),
        plain_function("rtrim_in", trim(), DataType::Utf8, rtrim_in),
        plain_function(
            "sub_replace",
            Signature::one_of((1..=2).map(replace_args).collect(), Volatility::Immutable),
            DataType::Utf8,
            sub_replace,
        ),
        plain_function(
            "is_uuid",
            Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
            DataType::Boolean,
            is_uuid,
        ),
    ]
}

#[derive(Clone, Copy)]
enum Ends {
    Both,
    Start,
    End,
}

fn trim_in(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    trim_set(args, Ends::Both)
}

fn ltrim_in(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    trim_set(args, Ends::Start)
}

fn rtrim_in(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    trim_set(args, Ends::End)
}

fn texts(arrays: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
    Ok(arrays
        .iter()
        .map(|a| cast(a, &DataType::Utf8))
        .collect::<std::result::Result<Vec<_>, _>>()?)
}

fn trim_set(args: &ScalarFunctionArgs, ends: Ends) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = texts(&arrays)?;
    let strings = texts[0].as_string::<i32>();
    let sets = texts.get(1).map(|a| a.as_string::<i32>());
    let out: StringArray = (0..strings.len())
        .map(|row| {
            if strings.is_null(row) || sets.is_some_and(|s| s.is_null(row)) {
                return None;
            }
            let set = sets.map_or(" ", |s| s.value(row));
            let strip = |c: char| set.contains(c);
            let s = strings.value(row);
            Some(match ends {
                Ends::Both => s.trim_matches(strip),
                Ends::Start => s.trim_start_matches(strip),
                Ends::End => s.trim_end_matches(strip),
            })
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn sub_replace(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let strings = cast(&arrays[0], &DataType::Utf8)?;
    let news = cast(&arrays[1], &DataType::Utf8)?;
    let counts = arrays[2..]
        .iter()
        .map(|a| cast(a, &DataType::Int64))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let (strings, news) = (strings.as_string::<i32>(), news.as_string::<i32>());
    let count = |i: usize, row: usize| {
        counts.get(i).map(|a| {
            let a = a.as_primitive::<Int64Type>();
            a.is_valid(row).then(|| a.value(row))
        })
    };
    let out: StringArray = (0..strings.len())
        .map(|row| {
            if strings.is_null(row) || news.is_null(row) {
                return None;
            }
            let new = news.value(row);
            let start = count(0, row).flatten()?;
            let len = count(1, row).unwrap_or(Some(new.chars().count() as i64))?;
            replace_chars(strings.value(row), new, start, len)
        })
        .collect();
    output(Arc::new(out), scalar)
}

/// `s` with `len` characters from character `start` replaced by `new`.
fn replace_chars(s: &str, new: &str, start: i64, len: i64) -> Option<String> {
    let start = usize::try_from(start).ok()?;
    let len = usize::try_from(len).ok()?;
    let offset = |chars: usize| s.char_indices().nth(chars).map_or(s.len(), |(i, _)| i);
    if start > s.chars().count() {
        return None;
    }
    let from = offset(start);
    let to = offset(start.saturating_add(len));
    Some(format!("{}{new}{}", &s[..from], &s[to..]))
}

fn is_uuid(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let out: BooleanArray = texts
        .as_string::<i32>()
        .iter()
        .map(|s| s.map(looks_like_uuid))
        .collect();
    output(Arc::new(out), scalar)
}

fn looks_like_uuid(s: &str) -> bool {
    let hex = |part: &str, n: usize| part.len() == n && part.bytes().all(|b| b.is_ascii_hexdigit());
    let hyphenated = |s: &str| {
        let parts: Vec<&str> = s.split('-').collect();
        parts.len() == 5 && parts.iter().zip([8, 4, 4, 4, 12]).all(|(p, n)| hex(p, n))
    };
    match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        Some(inner) => hyphenated(inner),
        None => hex(s, 32) || hyphenated(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_as_doris_documents() {
        let r = |s, n, a, b| replace_chars(s, n, a, b);
        assert_eq!(
            r("this is origin str", "NEW-STR", 1, 7).as_deref(),
            Some("tNEW-STRorigin str")
        );
        assert_eq!(r("doris", "***", 1, 2).as_deref(), Some("d***is"));
        assert_eq!(r("doris", "!", 5, 1).as_deref(), Some("doris!"));
        assert_eq!(r("doris", "!", 6, 1), None);
        assert_eq!(r("doris", "!", -1, 1), None);
        assert_eq!(r("数据库", "x", 1, 1).as_deref(), Some("数x库"));
    }

    #[test]
    fn recognizes_uuids() {
        assert!(looks_like_uuid("6ccd780c-abcd-1026-9564-5b8c656024db"));
        assert!(looks_like_uuid("6CCD780CABCD102695645B8C656024DB"));
        assert!(looks_like_uuid("{6ccd780c-abcd-1026-9564-5b8c656024db}"));
        assert!(!looks_like_uuid("{6ccd780cabcd102695645b8c656024db}"));
        assert!(!looks_like_uuid("6ccd780c-abcd-1026-9564-5b8c656024dg"));
        assert!(!looks_like_uuid(""));
    }
}
