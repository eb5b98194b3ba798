//! MySQL's string editing functions, counting characters: `INSERT(s, pos, len, new)` (the `len`
//! characters at `pos` replaced by `new`; `s` as it is when `pos` is outside it, the rest
//! replaced when `len` runs past its end), `LOCATE(sub, s, pos)` (the first `sub` at or after
//! `pos`, 0 when there is none) and `QUOTE(s)` (a string literal that reads back as `s`, and
//! the word NULL for NULL), and `TRIM([BOTH|LEADING|TRAILING] rem FROM s)` (`rem` removed
//! as a whole string, as often as it repeats: `TRIM('foo' FROM 'foook')` is 'ok', where
//! DataFusion's would remove the characters f and o). Any NULL argument of INSERT, LOCATE
//! or TRIM makes the result NULL.

use crate::mysql_values::{integers, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Int64Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `insert`, `mysql_locate` (LOCATE with a position), `quote` and `mysql_trim(s, rem, side)`
/// (side 0 both, 1 leading, 2 trailing).
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "insert",
            Signature::any(4, Volatility::Immutable),
            DataType::Utf8,
            insert,
        ),
        plain_function(
            "mysql_locate",
            Signature::any(3, Volatility::Immutable),
            DataType::Int64,
            locate,
        ),
        plain_function(
            "mysql_trim",
            Signature::any(3, Volatility::Immutable),
            DataType::Utf8,
            trim,
        ),
        plain_function(
            "quote",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            quote,
        ),
    ]
}

fn insert(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (s, pos, len, new) = (
        texts(&arrays[0])?,
        integers(&arrays[1])?,
        integers(&arrays[2])?,
        texts(&arrays[3])?,
    );
    let out: StringArray = (0..s.len())
        .map(|i| {
            Some(inserted(
                s[i].as_deref()?,
                pos[i]?,
                len[i]?,
                new[i].as_deref()?,
            ))
        })
        .collect();
    output(Arc::new(out), scalar)
}

/// `s` with the `len` characters from `pos` (1-based) replaced by `new`.
fn inserted(s: &str, pos: i64, len: i64, new: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len() as i64;
    if pos < 1 || pos > n {
        return s.to_string();
    }
    let start = (pos - 1) as usize;
    let end = if len < 0 || len > n - (pos - 1) {
        chars.len()
    } else {
        start + len as usize
    };
    let mut out: String = chars[..start].iter().collect();
    out.push_str(new);
    out.extend(&chars[end..]);
    out
}

fn locate(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (sub, s, pos) = (
        texts(&arrays[0])?,
        texts(&arrays[1])?,
        integers(&arrays[2])?,
    );
    let out: Int64Array = (0..s.len())
        .map(|i| Some(located(sub[i].as_deref()?, s[i].as_deref()?, pos[i]?)))
        .collect();
    output(Arc::new(out), scalar)
}

/// The 1-based character position of the first `sub` in `s` at or after `pos`; 0 for none.
fn located(sub: &str, s: &str, pos: i64) -> i64 {
    if pos < 1 {
        return 0;
    }
    let n = s.chars().count() as i64;
    if pos > n + 1 {
        return 0;
    }
    let start = s
        .char_indices()
        .nth((pos - 1) as usize)
        .map_or(s.len(), |(b, _)| b);
    match s[start..].find(sub) {
        Some(b) => pos + s[start..start + b].chars().count() as i64,
        None => 0,
    }
}

fn trim(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (s, rem, side) = (
        texts(&arrays[0])?,
        texts(&arrays[1])?,
        integers(&arrays[2])?,
    );
    let out: StringArray = (0..s.len())
        .map(|i| Some(trimmed(s[i].as_deref()?, rem[i].as_deref()?, side[i]?)))
        .collect();
    output(Arc::new(out), scalar)
}

/// `s` without the repeats of `rem` at its start (side 0 or 1) and end (side 0 or 2).
fn trimmed(s: &str, rem: &str, side: i64) -> String {
    let mut t = s;
    if !rem.is_empty() {
        if side != 2 {
            while let Some(rest) = t.strip_prefix(rem) {
                t = rest;
            }
        }
        if side != 1 {
            while let Some(rest) = t.strip_suffix(rem) {
                t = rest;
            }
        }
    }
    t.to_string()
}

fn quote(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: StringArray = texts(&arrays[0])?
        .into_iter()
        .map(|v| Some(v.map_or_else(|| "NULL".to_string(), |s| quoted(&s))))
        .collect();
    output(Arc::new(out), scalar)
}

/// `s` in single quotes with `\`, `'`, NUL and Ctrl-Z escaped by a backslash.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\0' => out.push_str("\\0"),
            '\u{1a}' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_as_mysql_documents() {
        assert_eq!(inserted("Quadratic", 3, 4, "What"), "QuWhattic");
        assert_eq!(inserted("Quadratic", -1, 4, "What"), "Quadratic");
        assert_eq!(inserted("Quadratic", 3, 100, "What"), "QuWhat");
        assert_eq!(inserted("Quadratic", 10, 1, "x"), "Quadratic");
        assert_eq!(inserted("héllo", 2, 1, "e"), "hello");
        assert_eq!(inserted("abc", 2, -1, "X"), "aX");
    }

    #[test]
    fn locate_from_a_position() {
        assert_eq!(located("bar", "foobarbar", 5), 7);
        assert_eq!(located("bar", "foobarbar", 1), 4);
        assert_eq!(located("xbar", "foobar", 1), 0);
        assert_eq!(located("", "abc", 4), 4);
        assert_eq!(located("", "abc", 5), 0);
        assert_eq!(located("b", "abc", 0), 0);
        assert_eq!(located("é", "aéé", 3), 3);
    }

    #[test]
    fn trim_removes_whole_strings() {
        assert_eq!(trimmed("foook", "foo", 0), "ok");
        assert_eq!(trimmed("okfoo", "foo", 0), "ok");
        assert_eq!(trimmed("foo", "foo", 0), "");
        assert_eq!(trimmed("xxbarxxx", "x", 1), "barxxx");
        assert_eq!(trimmed("xxbarxxx", "xx", 2), "xxbarx");
        assert_eq!(trimmed("abc", "", 0), "abc");
    }

    #[test]
    fn quote_escapes() {
        assert_eq!(quoted("Don't!"), "'Don\\'t!'");
        assert_eq!(quoted("a\\b\0"), "'a\\\\b\\0'");
    }
}
