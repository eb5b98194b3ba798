//! Doris's `regexp_extract(s, pattern, n)`: the n-th capture group of the first match of
//! `pattern` in `s` (0 is the whole match), or '' when nothing matches or the group took no
//! part; NULL when an argument is NULL. A pattern that does not compile is an error naming it.

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

pub fn function() -> ScalarUDF {
    plain_function(
        "regexp_extract",
        Signature::one_of(
            vec![TypeSignature::Exact(vec![
                DataType::Utf8,
                DataType::Utf8,
                DataType::Int64,
            ])],
            Volatility::Immutable,
        ),
        DataType::Utf8,
        extract,
    )
}

fn extract(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let patterns = cast(&arrays[1], &DataType::Utf8)?;
    let groups = cast(&arrays[2], &DataType::Int64)?;
    let (texts, patterns, groups) = (
        texts.as_string::<i32>(),
        patterns.as_string::<i32>(),
        groups.as_primitive::<Int64Type>(),
    );
    let mut compiled = RowRegex::new("regexp_extract");
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
        out.append_value(found.unwrap_or(""));
    }
    output(Arc::new(out.finish()), scalar)
}
