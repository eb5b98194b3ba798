//! Doris's full-text search without an index: the analyzers of its inverted indexes
//! ([`analyzer`]), the `MATCH_*` operators evaluated row by row ([`matching`]) and
//! `tokenize(text, properties)`, which shows the words an analyzer cuts.

mod analyzer;
mod matching;

pub use matching::MATCH_FUNCTIONS;

use crate::util::{arguments, output, plain_function};
use analyzer::Analyzer;
use datafusion::arrow::array::{Array, AsArray, ListBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// An inverted index's `PROPERTIES (..)` pairs in Doris's property-string form
/// (`"parser"="english","lower_case"="true"`), which `tokenize` and the `MATCH_*` calls take.
pub fn properties_text(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("\"{}\"=\"{}\"", k.replace('"', ""), v.replace('"', "")))
        .collect::<Vec<_>>()
        .join(",")
}

/// Checks an inverted index's properties: a clear error for a parser or property Basalt
/// cannot cut words with.
/// The error is the message alone, for DDL to report.
pub fn check_analyzer(pairs: &[(String, String)]) -> std::result::Result<(), String> {
    match Analyzer::from_properties("inverted index", &properties_text(pairs)) {
        Ok(_) => Ok(()),
        Err(datafusion::common::DataFusionError::Plan(message)) => Err(message),
        Err(other) => Err(other.strip_backtrace()),
    }
}

pub fn functions() -> Vec<ScalarUDF> {
    let mut v = matching::functions();
    v.push(plain_function(
        "tokenize",
        Signature::any(2, Volatility::Immutable),
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        tokenize,
    ));
    v
}

/// `tokenize(text, '"parser"="english"')`: the words, as an ARRAY of strings (NULL for NULL).
fn tokenize(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let texts = texts.as_string::<i32>();
    let properties = cast(&arrays[1], &DataType::Utf8)?;
    let properties = properties.as_string::<i32>();
    let mut out = ListBuilder::new(StringBuilder::new());
    let mut analyzer: Option<(String, Analyzer)> = None;
    for row in 0..texts.len() {
        if texts.is_null(row) || properties.is_null(row) {
            out.append_null();
            continue;
        }
        let wanted = properties.value(row);
        if analyzer.as_ref().is_none_or(|(p, _)| p != wanted) {
            analyzer = Some((
                wanted.to_string(),
                Analyzer::from_properties("tokenize", wanted)?,
            ));
        }
        let Some((_, analyzer)) = &analyzer else {
            return exec_err!("tokenize: no analyzer");
        };
        for word in analyzer.words(texts.value(row)) {
            out.values().append_value(word);
        }
        out.append(true);
    }
    output(Arc::new(out.finish()), scalar)
}
