//! Doris's `regexp_extract(s, pattern, n)`: the n-th capture group of the first match of
//! `pattern` in `s` (0 is the whole match), or '' when nothing matches or the group took no
//! part; NULL when an argument is NULL. A pattern that does not compile is an error naming it.
//! `regexp_extract_or_null(s, pattern, n)` is NULL where `regexp_extract` gives '' for no
//! match, a group that took no part, or an `n` that is negative or past the groups.

use crate::row_regex::RowRegex;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || {
        Signature::one_of(
            vec![TypeSignature::Exact(vec![
                DataType::Utf8,
                DataType::Utf8,
                DataType::Int64,
            ])],
            Volatility::Immutable,
        )
    };
    vec![
        plain_function("regexp_extract", signature(), DataType::Utf8, extract),
        plain_function(
            "regexp_extract_or_null",
            signature(),
            DataType::Utf8,
            extract_or_null,
        ),
    ]
}

fn extract(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    extracted(args, "regexp_extract", Some(""))
}

fn extract_or_null(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    extracted(args, "regexp_extract_or_null", None)
}

/// The groups extracted, `missing` where there is none.
fn extracted(
    args: &ScalarFunctionArgs,
    name: &'static str,
    missing: Option<&str>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let patterns = cast(&arrays[1], &DataType::Utf8)?;
    let groups = cast(&arrays[2], &DataType::Int64)?;
    let (texts, patterns, groups) = (
        texts.as_string::<i32>(),
        patterns.as_string::<i32>(),
        groups.as_primitive::<Int64Type>(),
    );
    let mut compiled = RowRegex::new(name);
    let mut out = StringBuilder::new();
    for row in 0..texts.len() {
        if texts.is_null(row) || patterns.is_null(row) || groups.is_null(row) {
            out.append_null();
            continue;
        }
        let re = compiled.get(patterns.value(row))?;
        let group = usize::try_from(groups.value(row)).ok();
        let found = group.and_then(|g| {
            re.captures(texts.value(row))
                .and_then(|c| c.get(g))
                .map(|m| m.as_str())
        });
        out.append_option(found.or(missing));
    }
    output(Arc::new(out.finish()), scalar)
}
