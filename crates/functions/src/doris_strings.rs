//! Doris's string functions that DataFusion lacks, as Doris's documentation describes them:
//! - `mask(s [, upper [, lower [, digit]]])` replaces ASCII capitals with 'X', small letters
//!   with 'x' and digits with 'n' (or the first character of the given replacements);
//!   `mask_first_n(s [, n])` / `mask_last_n(s [, n])` mask only the first / last n bytes (the
//!   whole string without n); other characters stay;
//! - `split_by_string(s, sep)`: the pieces of s between separators (consecutive or edge
//!   separators give '' pieces; an empty separator splits into characters; the empty text has
//!   none);
//! - `count_substrings(s, pattern [, start])`: how many non-overlapping times pattern occurs
//!   (the search continues after each match), from the 1-based character `start`; 0 for an
//!   empty pattern or string, or a start outside the string;
//! - `regexp_extract_all(s, pattern)`: the first capture group of every match, as text
//!   `['a','b']`; '' when nothing matches or the pattern has no group.
//!
//! Each is NULL when an argument is NULL.

use crate::row_regex::RowRegex;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int32Builder, ListBuilder, StringBuilder,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let text = DataType::Utf8;
    let texts = |n: usize| TypeSignature::Exact(vec![DataType::Utf8; n]);
    let text_and_count = TypeSignature::Exact(vec![DataType::Utf8, DataType::Int64]);
    let list = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    vec![
        plain_function(
            "mask",
            Signature::one_of((1..=4).map(texts).collect(), Volatility::Immutable),
            text.clone(),
            mask,
        ),
        plain_function(
            "mask_first_n",
            Signature::one_of(
                vec![texts(1), text_and_count.clone()],
                Volatility::Immutable,
            ),
            text.clone(),
            mask_first_n,
        ),
        plain_function(
            "mask_last_n",
            Signature::one_of(vec![texts(1), text_and_count], Volatility::Immutable),
            text.clone(),
            mask_last_n,
        ),
        plain_function(
            "split_by_string",
            Signature::exact(vec![DataType::Utf8; 2], Volatility::Immutable),
            list,
            split_by_string,
        ),
        plain_function(
            "count_substrings",
            Signature::one_of(
                vec![
                    texts(2),
                    TypeSignature::Exact(vec![DataType::Utf8, DataType::Utf8, DataType::Int64]),
                ],
                Volatility::Immutable,
            ),
            DataType::Int32,
            count_substrings,
        ),
        plain_function(
            "regexp_extract_all",
            Signature::exact(vec![DataType::Utf8; 2], Volatility::Immutable),
            text,
            regexp_extract_all,
        ),
    ]
}

/// The arguments as Utf8 arrays (the last ones as Int64 where `counts` says so), and whether
/// they were all scalars.
fn columns(args: &ScalarFunctionArgs, counts: &[usize]) -> Result<(Vec<ArrayRef>, bool)> {
    let (arrays, scalar) = arguments(args)?;
    let arrays = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let to = if counts.contains(&i) {
                DataType::Int64
            } else {
                DataType::Utf8
            };
            cast(a, &to)
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((arrays, scalar))
}

/// Whether any argument is NULL in row `row`.
fn row_is_null(arrays: &[ArrayRef], row: usize) -> bool {
    arrays.iter().any(|a| a.is_null(row))
}

/// The replacement characters for capitals, small letters and digits.
struct Masks {
    upper: char,
    lower: char,
    digit: char,
}

impl Masks {
    const DEFAULT: Masks = Masks {
        upper: 'X',
        lower: 'x',
        digit: 'n',
    };

    /// `s` with the ASCII letters and digits of its bytes `range` masked.
    fn apply(&self, s: &str, range: std::ops::Range<usize>) -> String {
        let mut out = String::with_capacity(s.len());
        for (i, c) in s.char_indices() {
            let masked = if range.contains(&i) {
                match c {
                    'A'..='Z' => self.upper,
                    'a'..='z' => self.lower,
                    '0'..='9' => self.digit,
                    other => other,
                }
            } else {
                c
            };
            out.push(masked);
        }
        out
    }
}

fn mask(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = columns(args, &[])?;
    let text = |i: usize, row: usize| arrays[i].as_string::<i32>().value(row);
    let mut out = StringBuilder::new();
    for row in 0..arrays[0].len() {
        if row_is_null(&arrays, row) {
            out.append_null();
            continue;
        }
        let pick = |i: usize, default: char| {
            (i < arrays.len())
                .then(|| text(i, row).chars().next())
                .flatten()
                .unwrap_or(default)
        };
        let masks = Masks {
            upper: pick(1, Masks::DEFAULT.upper),
            lower: pick(2, Masks::DEFAULT.lower),
            digit: pick(3, Masks::DEFAULT.digit),
        };
        let s = text(0, row);
        out.append_value(masks.apply(s, 0..s.len()));
    }
    output(Arc::new(out.finish()), scalar)
}

fn mask_first_n(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    mask_part(args, |len, n| 0..n.min(len))
}

fn mask_last_n(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    mask_part(args, |len, n| len.saturating_sub(n)..len)
}

/// `mask_first_n` / `mask_last_n`: the bytes `range(len, n)` masked (n is the whole length
/// when not given, 0 when negative).
fn mask_part(
    args: &ScalarFunctionArgs,
    range: fn(usize, usize) -> std::ops::Range<usize>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = columns(args, &[1])?;
    let mut out = StringBuilder::new();
    for row in 0..arrays[0].len() {
        if row_is_null(&arrays, row) {
            out.append_null();
            continue;
        }
        let s = arrays[0].as_string::<i32>().value(row);
        let n = match arrays.get(1) {
            Some(n) => usize::try_from(n.as_primitive::<Int64Type>().value(row)).unwrap_or(0),
            None => s.len(),
        };
        out.append_value(Masks::DEFAULT.apply(s, range(s.len(), n)));
    }
    output(Arc::new(out.finish()), scalar)
}

fn split_by_string(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = columns(args, &[])?;
    let (texts, separators) = (arrays[0].as_string::<i32>(), arrays[1].as_string::<i32>());
    let mut out = ListBuilder::new(StringBuilder::new());
    for row in 0..texts.len() {
        if row_is_null(&arrays, row) {
            out.append_null();
            continue;
        }
        let (s, sep) = (texts.value(row), separators.value(row));
        if s.is_empty() {
            // The empty text has no pieces.
        } else if sep.is_empty() {
            let mut buf = [0u8; 4];
            for c in s.chars() {
                out.values().append_value(c.encode_utf8(&mut buf));
            }
        } else {
            for piece in s.split(sep) {
                out.values().append_value(piece);
            }
        }
        out.append(true);
    }
    output(Arc::new(out.finish()), scalar)
}

fn count_substrings(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = columns(args, &[2])?;
    let (texts, patterns) = (arrays[0].as_string::<i32>(), arrays[1].as_string::<i32>());
    let mut out = Int32Builder::new();
    for row in 0..texts.len() {
        if row_is_null(&arrays, row) {
            out.append_null();
            continue;
        }
        let (s, pattern) = (texts.value(row), patterns.value(row));
        let start = match arrays.get(2) {
            Some(a) => a.as_primitive::<Int64Type>().value(row),
            None => 1,
        };
        // The byte offset of the 1-based character `start`, if it is in the string.
        let from = usize::try_from(start - 1)
            .ok()
            .and_then(|skip| s.char_indices().nth(skip))
            .map(|(i, _)| i);
        let count = match from {
            Some(from) if !pattern.is_empty() => s[from..].matches(pattern).count(),
            _ => 0,
        };
        out.append_value(i32::try_from(count).unwrap_or(i32::MAX));
    }
    output(Arc::new(out.finish()), scalar)
}

fn regexp_extract_all(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = columns(args, &[])?;
    let (texts, patterns) = (arrays[0].as_string::<i32>(), arrays[1].as_string::<i32>());
    let mut compiled = RowRegex::new("regexp_extract_all");
    let mut out = StringBuilder::new();
    for row in 0..texts.len() {
        if row_is_null(&arrays, row) {
            out.append_null();
            continue;
        }
        let re = compiled.get(patterns.value(row))?;
        let found: Vec<&str> = re
            .captures_iter(texts.value(row))
            .filter_map(|c| c.get(1).map(|m| m.as_str()))
            .collect();
        if found.is_empty() {
            out.append_value("");
        } else {
            let quoted: Vec<String> = found.iter().map(|m| format!("'{m}'")).collect();
            out.append_value(format!("[{}]", quoted.join(",")));
        }
    }
    output(Arc::new(out.finish()), scalar)
}
