//! Doris's full-text operators, evaluated row by row: `col MATCH_ANY 'words'` is the call
//! `match_any(col, 'words'[, analyzer])`, where the analyzer is the property string of the
//! column's inverted index (added at planning, [`crate::full_text`]); without one the column is
//! read as Doris reads a column with no index (english words, lower-cased).
//!
//! The row's text and the query are cut by the same analyzer; then
//! - `match_any`: some query word is a word of the row; `match_all`: every one is;
//! - `match_phrase`: the query words appear one after another, in order; a query ending in
//!   ` ~N` allows N moves between them in any order (Lucene's slop), ` ~N+` in order only;
//! - `match_phrase_prefix`: as a phrase whose last word need only begin a word of the row;
//! - `match_phrase_edge`: consecutive words where the first ends with the first query word,
//!   the middle ones are equal and the last begins with the last (one query word: contained);
//! - `match_regexp`: the query, a regular expression, found in some word of the row.
//!
//! A query with no words matches no row; a NULL row or query is NULL. An ARRAY of strings is
//! matched as the words of its elements in order.

use super::analyzer::{Analyzer, Parser};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

/// The names of the full-text functions (what the operators are read as).
pub const MATCH_FUNCTIONS: [&str; 6] = [
    "match_any",
    "match_all",
    "match_phrase",
    "match_phrase_prefix",
    "match_phrase_edge",
    "match_regexp",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Any,
    All,
    Phrase,
    PhrasePrefix,
    PhraseEdge,
    Regexp,
}

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || {
        Signature::one_of(
            vec![TypeSignature::Any(2), TypeSignature::Any(3)],
            Volatility::Immutable,
        )
    };
    vec![
        plain_function("match_any", signature(), DataType::Boolean, |a| {
            evaluate(a, "match_any", Operator::Any)
        }),
        plain_function("match_all", signature(), DataType::Boolean, |a| {
            evaluate(a, "match_all", Operator::All)
        }),
        plain_function("match_phrase", signature(), DataType::Boolean, |a| {
            evaluate(a, "match_phrase", Operator::Phrase)
        }),
        plain_function("match_phrase_prefix", signature(), DataType::Boolean, |a| {
            evaluate(a, "match_phrase_prefix", Operator::PhrasePrefix)
        }),
        plain_function("match_phrase_edge", signature(), DataType::Boolean, |a| {
            evaluate(a, "match_phrase_edge", Operator::PhraseEdge)
        }),
        plain_function("match_regexp", signature(), DataType::Boolean, |a| {
            evaluate(a, "match_regexp", Operator::Regexp)
        }),
    ]
}

/// A query compiled once for the rows that share it.
enum Query {
    /// No words: nothing matches.
    Empty,
    Words {
        words: Vec<String>,
        /// ` ~N` or ` ~N+` after a phrase.
        slop: Option<(usize, bool)>,
    },
    Pattern(regex::Regex),
}

fn evaluate(args: &ScalarFunctionArgs, func: &str, op: Operator) -> Result<ColumnarValue> {
    let analyzer = match args.args.get(2) {
        None => Analyzer::without_index(),
        Some(ColumnarValue::Scalar(p)) => match text_of(p) {
            Some(properties) => Analyzer::from_properties(func, &properties)?,
            None => return exec_err!("{func}: the analyzer properties are NULL"),
        },
        Some(_) => return exec_err!("{func}: the analyzer properties must be a constant"),
    };
    let (arrays, scalar) = arguments(args)?;
    let queries = cast(&arrays[1], &DataType::Utf8)?;
    let queries = queries.as_string::<i32>();
    let rows = RowTexts::new(func, &arrays[0])?;
    let mut compiled: Option<(String, Query)> = None;
    let mut out = Vec::with_capacity(rows.len());
    for row in 0..rows.len() {
        if queries.is_null(row) || rows.is_null(row) {
            out.push(None);
            continue;
        }
        let text = queries.value(row);
        if compiled.as_ref().is_none_or(|(q, _)| q != text) {
            compiled = Some((text.to_string(), compile(func, op, &analyzer, text)?));
        }
        let Some((_, query)) = &compiled else {
            continue;
        };
        let words = rows.words(row, &analyzer);
        out.push(Some(matches(op, query, &words)?));
    }
    output(Arc::new(BooleanArray::from(out)), scalar)
}

fn text_of(value: &ScalarValue) -> Option<String> {
    match value {
        ScalarValue::Utf8(v) | ScalarValue::LargeUtf8(v) | ScalarValue::Utf8View(v) => v.clone(),
        _ => None,
    }
}

fn compile(func: &str, op: Operator, analyzer: &Analyzer, text: &str) -> Result<Query> {
    if op == Operator::Regexp {
        return match regex::Regex::new(text) {
            Ok(pattern) => Ok(Query::Pattern(pattern)),
            Err(e) => exec_err!("{func}: invalid regular expression '{text}': {e}"),
        };
    }
    let (text, slop) = match op {
        Operator::Phrase if analyzer.parser != Parser::Whole => split_slop(text),
        _ => (text, None),
    };
    let words = analyzer.words(text);
    if words.is_empty() {
        return Ok(Query::Empty);
    }
    Ok(Query::Words { words, slop })
}

/// `words ~N` or `words ~N+`: the phrase and its slop.
fn split_slop(text: &str) -> (&str, Option<(usize, bool)>) {
    let trimmed = text.trim_end();
    let Some(at) = trimmed.rfind(" ~") else {
        return (text, None);
    };
    let tail = &trimmed[at + 2..];
    let (digits, ordered) = match tail.strip_suffix('+') {
        Some(d) => (d, true),
        None => (tail, false),
    };
    match digits.parse::<usize>() {
        Ok(n) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            (&trimmed[..at], Some((n, ordered)))
        }
        _ => (text, None),
    }
}

fn matches(op: Operator, query: &Query, row: &[String]) -> Result<bool> {
    match query {
        Query::Empty => Ok(false),
        Query::Pattern(pattern) => Ok(row.iter().any(|w| pattern.is_match(w))),
        Query::Words {
            words,
            slop: Some((n, ordered)),
        } if op == Operator::Phrase => sloppy_phrase(row, words, *n, *ordered),
        Query::Words { words, .. } => Ok(word_match(op, words, row)),
    }
}

/// `op` of the query `words` on the row's words (no slop, no pattern).
fn word_match(op: Operator, words: &[String], row: &[String]) -> bool {
    match op {
        Operator::Any => words.iter().any(|w| row.contains(w)),
        Operator::All => words.iter().all(|w| row.contains(w)),
        Operator::Phrase => row.windows(words.len()).any(|run| run == words),
        Operator::PhrasePrefix => {
            let Some((last, head)) = words.split_last() else {
                return false;
            };
            row.windows(words.len())
                .any(|run| run[..head.len()] == *head && run[head.len()].starts_with(last.as_str()))
        }
        Operator::PhraseEdge => {
            if words.len() == 1 {
                return row.iter().any(|w| w.contains(words[0].as_str()));
            }
            let last = words.len() - 1;
            row.windows(words.len()).any(|run| {
                run[0].ends_with(words[0].as_str())
                    && run[1..last] == words[1..last]
                    && run[last].starts_with(words[last].as_str())
            })
        }
        Operator::Regexp => false,
    }
}

/// Lucene's sloppy phrase: each query word `i` at a row position `p_i` (distinct), its offset
/// `p_i - i`; the phrase matches when the offsets' spread is at most `slop` (and, `ordered`,
/// the positions rise).
fn sloppy_phrase(row: &[String], words: &[String], slop: usize, ordered: bool) -> Result<bool> {
    let positions: Vec<Vec<usize>> = words
        .iter()
        .map(|w| (0..row.len()).filter(|&p| row[p] == *w).collect())
        .collect();
    if positions.iter().any(Vec::is_empty) {
        return Ok(false);
    }
    let mut chosen = Vec::with_capacity(words.len());
    let mut budget = SLOP_STEPS;
    let found = choose(&positions, slop, ordered, &mut chosen, &mut budget);
    if !found && budget == 0 {
        return exec_err!(
            "match_phrase: the phrase ~{slop} needs more than {SLOP_STEPS} placements on a row \
             of {} words; use a smaller slop",
            row.len()
        );
    }
    Ok(found)
}

/// How many placements one row's sloppy phrase may try: rows of many repeated words under a
/// large slop could otherwise take exponential time; past it the query fails (never a guess).
const SLOP_STEPS: usize = 1_000_000;

/// Tries the positions of the next query word given those `chosen` so far.
fn choose(
    positions: &[Vec<usize>],
    slop: usize,
    ordered: bool,
    chosen: &mut Vec<usize>,
    budget: &mut usize,
) -> bool {
    let i = chosen.len();
    if i == positions.len() {
        return true;
    }
    for &p in &positions[i] {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if chosen.contains(&p) || (ordered && chosen.last().is_some_and(|&last| p <= last)) {
            continue;
        }
        chosen.push(p);
        let offsets = chosen.iter().enumerate().map(|(j, &q)| q as i64 - j as i64);
        let (lo, hi) = offsets.fold((i64::MAX, i64::MIN), |(lo, hi), o| (lo.min(o), hi.max(o)));
        if (hi - lo) as usize <= slop && choose(positions, slop, ordered, chosen, budget) {
            return true;
        }
        chosen.pop();
    }
    false
}

/// The matched column: strings, or arrays of strings (their elements' words in order).
enum RowTexts {
    Strings(ArrayRef),
    Lists(ArrayRef),
}

impl RowTexts {
    fn new(func: &str, column: &ArrayRef) -> Result<RowTexts> {
        match column.data_type() {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                if !matches!(
                    f.data_type(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
                ) {
                    return exec_err!("{func}: unsupported nested array of type {}", f.data_type());
                }
                let target = DataType::List(Arc::new(datafusion::arrow::datatypes::Field::new(
                    "item",
                    DataType::Utf8,
                    true,
                )));
                Ok(RowTexts::Lists(cast(column, &target)?))
            }
            _ => Ok(RowTexts::Strings(cast(column, &DataType::Utf8)?)),
        }
    }

    fn len(&self) -> usize {
        match self {
            RowTexts::Strings(a) | RowTexts::Lists(a) => a.len(),
        }
    }

    fn is_null(&self, row: usize) -> bool {
        match self {
            RowTexts::Strings(a) | RowTexts::Lists(a) => a.is_null(row),
        }
    }

    fn words(&self, row: usize, analyzer: &Analyzer) -> Vec<String> {
        match self {
            RowTexts::Strings(a) => analyzer.words(a.as_string::<i32>().value(row)),
            RowTexts::Lists(a) => {
                let elements = a.as_list::<i32>().value(row);
                let elements = elements.as_string::<i32>();
                elements
                    .iter()
                    .flatten()
                    .flat_map(|e| analyzer.words(e))
                    .collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn slop_allows_moves_and_order_when_asked() {
        let row = words("a fox brown quick kind");
        assert!(sloppy_phrase(&row, &words("quick brown"), 2, false).unwrap_or(false));
        assert!(!sloppy_phrase(&row, &words("quick brown"), 1, false).unwrap_or(true));
        assert!(!sloppy_phrase(&row, &words("quick brown"), 5, true).unwrap_or(true));
        assert!(sloppy_phrase(&row, &words("fox quick"), 1, true).unwrap_or(false));
    }

    #[test]
    fn a_slop_search_too_large_is_an_error_not_a_miss() {
        let mut text = vec!["a"; 300];
        text.extend(["x"; 20]);
        text.push("b");
        let row = words(&text.join(" "));
        let err = sloppy_phrase(&row, &words("a a a a a b"), 12, false);
        assert!(err.is_err(), "{err:?}");
    }
}
