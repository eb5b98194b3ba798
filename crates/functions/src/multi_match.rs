//! Doris's (and ClickHouse's) `multi_match_any(haystack, [pattern, ..])`: 1 when any of the
//! regular expressions matches somewhere in the string, else 0; NULL for a NULL haystack or
//! pattern list. The patterns are compiled into one automaton (a `RegexSet`): a constant list
//! once per batch, a list column once per row whose list differs from the row before.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, Int8Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use regex::RegexSet;
use std::sync::Arc;

const NAME: &str = "multi_match_any";

pub fn function() -> ScalarUDF {
    plain_function(
        NAME,
        Signature::any(2, Volatility::Immutable),
        DataType::Int8,
        multi_match_any,
    )
}

fn multi_match_any(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let constant_list = matches!(args.args[1], ColumnarValue::Scalar(_));
    let (arrays, scalar) = arguments(args)?;
    let haystacks = cast(&arrays[0], &DataType::Utf8)?;
    let haystacks = haystacks.as_string::<i32>();
    let Some(lists) = arrays[1].as_list_opt::<i32>() else {
        return exec_err!(
            "{NAME} takes an ARRAY of patterns, not {}",
            arrays[1].data_type()
        );
    };
    let mut compiled: Option<(Vec<Option<String>>, RegexSet)> = None;
    let mut out = Vec::with_capacity(haystacks.len());
    for row in 0..haystacks.len() {
        if haystacks.is_null(row) || lists.is_null(row) {
            out.push(None);
            continue;
        }
        if let (true, Some((_, set))) = (constant_list, &compiled) {
            out.push(Some(i8::from(set.is_match(haystacks.value(row)))));
            continue;
        }
        let patterns = cast(&lists.value(row), &DataType::Utf8)?;
        let patterns: Vec<Option<String>> = patterns
            .as_string::<i32>()
            .iter()
            .map(|p| p.map(str::to_string))
            .collect();
        if compiled.as_ref().is_none_or(|(p, _)| *p != patterns) {
            if patterns.iter().any(Option::is_none) {
                return exec_err!("{NAME}: a pattern is NULL");
            }
            let set = RegexSet::new(patterns.iter().flatten())
                .or_else(|e| exec_err!("{NAME}: invalid pattern: {e}"))?;
            compiled = Some((patterns, set));
        }
        let hit = compiled
            .as_ref()
            .is_some_and(|(_, set)| set.is_match(haystacks.value(row)));
        out.push(Some(i8::from(hit)));
    }
    output(Arc::new(Int8Array::from(out)), scalar)
}
