//! Doris's string search and distance functions that MySQL lacks:
//! - `regexp_position(s, pattern[, pos])`: the byte position (1-based) of the first match
//!   starting at byte `pos` or later (default 1), -1 for none or `pos < 1`;
//! - `multi_search_all_positions(s, [needles])`: per needle, the byte position of its first
//!   occurrence in `s`, 0 when absent;
//! - `ngram_search(text, pattern, n)`: the Dice similarity of the two strings' sets of n-byte
//!   grams, `2 |A ∩ B| / (|A| + |B|)`, 0 when a string is shorter than `n`;
//! - `damerau_levenshtein_distance(a, b)`: the edit distance in characters with insertions,
//!   deletions, substitutions and transpositions of adjacent characters (unrestricted), an
//!   error past Doris's matrix limit;
//! - `replace_empty(s, old, new)`: REPLACE, except that an empty `old` puts `new` before every
//!   character and at the end (`replace_empty('abc', '', 'x')` is `xaxbxcx`).
//!
//! A NULL argument gives NULL.

use crate::row_regex::RowRegex;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, Int32Builder, Int64Array, ListBuilder, StringArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Int64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Doris's largest distance matrix, in cells.
const MAX_DISTANCE_CELLS: usize = 16_777_216;

pub fn functions() -> Vec<ScalarUDF> {
    let exact = |types: Vec<DataType>| Signature::exact(types, Volatility::Immutable);
    let texts = |n| vec![DataType::Utf8; n];
    let mut with_position = texts(2);
    with_position.push(DataType::Int64);
    vec![
        plain_function(
            "regexp_position",
            Signature::one_of(
                vec![
                    TypeSignature::Exact(texts(2)),
                    TypeSignature::Exact(with_position),
                ],
                Volatility::Immutable,
            ),
            DataType::Int64,
            regexp_position,
        ),
        plain_function(
            "multi_search_all_positions",
            exact(vec![
                DataType::Utf8,
                DataType::new_list(DataType::Utf8, true),
            ]),
            DataType::new_list(DataType::Int32, true),
            multi_search_all_positions,
        ),
        plain_function(
            "ngram_search",
            exact(vec![DataType::Utf8, DataType::Utf8, DataType::Int64]),
            DataType::Float64,
            ngram_search,
        ),
        plain_function(
            "damerau_levenshtein_distance",
            exact(texts(2)),
            DataType::Int64,
            damerau_levenshtein_distance,
        ),
        plain_function(
            "replace_empty",
            exact(texts(3)),
            DataType::Utf8,
            replace_empty,
        ),
    ]
}

/// The arguments as text columns (any past the texts are cast too, by the caller's types).
fn texts(arrays: &[ArrayRef], n: usize) -> Result<Vec<StringArray>> {
    arrays[..n]
        .iter()
        .map(|a| Ok(cast(a, &DataType::Utf8)?.as_string::<i32>().clone()))
        .collect()
}

fn regexp_position(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let t = texts(&arrays, 2)?;
    let starts = match arrays.get(2) {
        Some(p) => Some(
            cast(p, &DataType::Int64)?
                .as_primitive::<Int64Type>()
                .clone(),
        ),
        None => None,
    };
    let mut compiled = RowRegex::new("regexp_position");
    let mut out = Vec::with_capacity(t[0].len());
    for row in 0..t[0].len() {
        let start = match &starts {
            Some(s) if s.is_null(row) => None,
            Some(s) => Some(s.value(row)),
            None => Some(1),
        };
        if t[0].is_null(row) || t[1].is_null(row) || start.is_none() {
            out.push(None);
            continue;
        }
        let (text, start) = (t[0].value(row), start.unwrap_or(1));
        let re = compiled.get(t[1].value(row))?;
        let at = usize::try_from(start - 1)
            .ok()
            .filter(|at| *at <= text.len());
        let found = at
            .map(|at| {
                (at..=text.len())
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(at)
            })
            .and_then(|at| re.find_at(text, at))
            .map_or(-1, |m| m.start() as i64 + 1);
        out.push(Some(found));
    }
    output(Arc::new(Int64Array::from(out)) as ArrayRef, scalar)
}

fn multi_search_all_positions(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let haystacks = cast(&arrays[0], &DataType::Utf8)?;
    let haystacks = haystacks.as_string::<i32>();
    let needles = arrays[1].as_list::<i32>();
    let needle_texts = cast(needles.values(), &DataType::Utf8)?;
    let needle_texts = needle_texts.as_string::<i32>();
    let mut out = ListBuilder::new(Int32Builder::new())
        .with_field(Arc::new(Field::new_list_field(DataType::Int32, true)));
    for row in 0..haystacks.len() {
        if haystacks.is_null(row) || needles.is_null(row) {
            out.append_null();
            continue;
        }
        let haystack = haystacks.value(row);
        let offsets = needles.value_offsets();
        for i in offsets[row] as usize..offsets[row + 1] as usize {
            if needle_texts.is_null(i) {
                out.values().append_null();
                continue;
            }
            let found = haystack.find(needle_texts.value(i)).map_or(0, |at| at + 1);
            match i32::try_from(found) {
                Ok(found) => out.values().append_value(found),
                Err(_) => return exec_err!("multi_search_all_positions: position past INT"),
            }
        }
        out.append(true);
    }
    output(Arc::new(out.finish()) as ArrayRef, scalar)
}

fn ngram_search(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let t = texts(&arrays, 2)?;
    let sizes = cast(&arrays[2], &DataType::Int64)?;
    let sizes = sizes.as_primitive::<Int64Type>();
    let mut out = Vec::with_capacity(t[0].len());
    for row in 0..t[0].len() {
        if t[0].is_null(row) || t[1].is_null(row) || sizes.is_null(row) {
            out.push(None);
            continue;
        }
        let Ok(n) = usize::try_from(sizes.value(row)) else {
            return exec_err!("ngram_search: the gram size must be positive");
        };
        if n == 0 {
            return exec_err!("ngram_search: the gram size must be positive");
        }
        out.push(Some(dice(
            t[0].value(row).as_bytes(),
            t[1].value(row).as_bytes(),
            n,
        )));
    }
    output(Arc::new(Float64Array::from(out)) as ArrayRef, scalar)
}

/// The Dice coefficient of the sets of `n`-byte grams of `a` and `b`.
fn dice(a: &[u8], b: &[u8], n: usize) -> f64 {
    if a.len() < n || b.len() < n {
        return 0.0;
    }
    let grams = |s: &[u8]| -> HashSet<Vec<u8>> { s.windows(n).map(<[u8]>::to_vec).collect() };
    let (ga, gb) = (grams(a), grams(b));
    let common = ga.intersection(&gb).count();
    2.0 * common as f64 / (ga.len() + gb.len()) as f64
}

fn damerau_levenshtein_distance(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let t = texts(&arrays, 2)?;
    let mut out = Vec::with_capacity(t[0].len());
    for row in 0..t[0].len() {
        if t[0].is_null(row) || t[1].is_null(row) {
            out.push(None);
            continue;
        }
        let a: Vec<char> = t[0].value(row).chars().collect();
        let b: Vec<char> = t[1].value(row).chars().collect();
        let cells = (a.len() + 2).saturating_mul(b.len() + 2);
        if cells > MAX_DISTANCE_CELLS {
            return exec_err!(
                "damerau_levenshtein_distance distance matrix is too large: {cells} cells exceeds limit {MAX_DISTANCE_CELLS}"
            );
        }
        out.push(Some(edit_distance(&a, &b) as i64));
    }
    output(Arc::new(Int64Array::from(out)) as ArrayRef, scalar)
}

/// The unrestricted Damerau-Levenshtein distance (Lowrance-Wagner).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let (n, m) = (a.len(), b.len());
    let infinity = n + m;
    let width = m + 2;
    let mut d = vec![0usize; (n + 2) * width];
    d[0] = infinity;
    for i in 0..=n {
        d[(i + 1) * width] = infinity;
        d[(i + 1) * width + 1] = i;
    }
    for j in 0..=m {
        d[j + 1] = infinity;
        d[width + j + 1] = j;
    }
    let mut last_row: HashMap<char, usize> = HashMap::new();
    for i in 1..=n {
        let mut last_match_column = 0;
        for j in 1..=m {
            let k = last_row.get(&b[j - 1]).copied().unwrap_or(0);
            let l = last_match_column;
            let cost = if a[i - 1] == b[j - 1] {
                last_match_column = j;
                0
            } else {
                1
            };
            let substitution = d[i * width + j] + cost;
            let insertion = d[(i + 1) * width + j] + 1;
            let deletion = d[i * width + j + 1] + 1;
            let transposition = d[k * width + l] + (i - k - 1) + 1 + (j - l - 1);
            d[(i + 1) * width + j + 1] =
                substitution.min(insertion).min(deletion).min(transposition);
        }
        last_row.insert(a[i - 1], i);
    }
    d[(n + 1) * width + m + 1]
}

fn replace_empty(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let t = texts(&arrays, 3)?;
    let out: StringArray = (0..t[0].len())
        .map(|row| {
            if t.iter().any(|c| c.is_null(row)) {
                return None;
            }
            let (s, old, new) = (t[0].value(row), t[1].value(row), t[2].value(row));
            if !old.is_empty() {
                return Some(s.replace(old, new));
            }
            let mut out = String::with_capacity(s.len() + new.len() * (s.len() + 1));
            for c in s.chars() {
                out.push_str(new);
                out.push(c);
            }
            out.push_str(new);
            Some(out)
        })
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distance(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        edit_distance(&a, &b)
    }

    #[test]
    fn damerau_levenshtein_counts_adjacent_transpositions_as_one_edit() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("abcd", "abdc"), 1);
        assert_eq!(distance("你好", "好你"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("数据库", "数据"), 1);
        assert_eq!(distance("flaw", "lawn"), 2);
        assert_eq!(distance("CA", "ABC"), 2);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn ngram_similarity_is_the_dice_coefficient_of_gram_sets() {
        assert_eq!(dice(b"123456789", b"12345", 3), 0.6);
        assert_eq!(dice(b"abababab", b"babababa", 2), 1.0);
        assert_eq!(dice(b"ab", b"abc", 3), 0.0);
    }
}
