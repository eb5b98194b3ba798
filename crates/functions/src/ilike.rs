//! `ilike_contains(text, needle)`: `text ILIKE '%needle%'` for an ASCII needle without
//! wildcards, as one SIMD substring search ignoring ASCII case (aho-corasick's packed searcher)
//! built once per batch. Arrow's ILIKE turns such patterns into a case-insensitive regex; the
//! SQL layer rewrites them to this function. Non-ASCII text still matches only where the
//! ASCII letters differ in case, exactly as ILIKE's simple case folding does for them.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::DataType;
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// The name the SQL layer calls.
pub const NAME: &str = "ilike_contains";

#[derive(Debug, PartialEq, Eq, Hash)]
struct IlikeContains {
    signature: Signature,
}

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(IlikeContains {
        signature: Signature::user_defined(Volatility::Immutable),
    })
}

fn searcher(needle: &str) -> Result<AhoCorasick> {
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .build([needle])
        .map_err(|e| datafusion::common::DataFusionError::Execution(format!("{NAME}: {e}")))
}

fn matches(finder: &AhoCorasick, text: &str) -> bool {
    finder.is_match(text)
}

impl ScalarUDFImpl for IlikeContains {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        if arg_types.len() != 2 {
            return plan_err!("{NAME} takes 2 arguments, got {}", arg_types.len());
        }
        let text = match &arg_types[0] {
            DataType::Utf8View => DataType::Utf8View,
            DataType::LargeUtf8 => DataType::LargeUtf8,
            _ => DataType::Utf8,
        };
        Ok(vec![text, DataType::Utf8])
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [text, needle] = args.args.as_slice() else {
            return exec_err!("{NAME} takes 2 arguments");
        };
        let needle = match needle {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(n))) => n.clone(),
            ColumnarValue::Scalar(s) if s.is_null() => {
                return Ok(ColumnarValue::Scalar(ScalarValue::Boolean(None)))
            }
            _ => return exec_err!("{NAME}: the pattern must be a constant string"),
        };
        let finder = searcher(&needle)?;
        match text {
            ColumnarValue::Scalar(s) => {
                let v = match s {
                    ScalarValue::Utf8(v) | ScalarValue::Utf8View(v) | ScalarValue::LargeUtf8(v) => {
                        v.as_deref().map(|t| matches(&finder, t))
                    }
                    other if other.is_null() => None,
                    other => return exec_err!("{NAME}: expected text, got {}", other.data_type()),
                };
                Ok(ColumnarValue::Scalar(ScalarValue::Boolean(v)))
            }
            ColumnarValue::Array(a) => Ok(ColumnarValue::Array(evaluate(a, &finder)?)),
        }
    }
}

fn evaluate(array: &ArrayRef, finder: &AhoCorasick) -> Result<ArrayRef> {
    let out: BooleanArray = match array.data_type() {
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(|t| matches(finder, t)))
            .collect(),
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|v| v.map(|t| matches(finder, t)))
            .collect(),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|v| v.map(|t| matches(finder, t)))
            .collect(),
        other => return exec_err!("{NAME}: expected text, got {other}"),
    };
    Ok(Arc::new(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::StringArray;

    #[test]
    fn matches_ignoring_ascii_case_and_keeps_nulls() {
        let finder = searcher("ShOp").unwrap();
        let a: ArrayRef = Arc::new(StringArray::from(vec![
            Some("https://SHOP.example.com"),
            Some("https://example.com/workshop"),
            Some("https://example.com/sho-p"),
            None,
            Some("Ünïcode shop"),
        ]));
        let out = evaluate(&a, &finder).unwrap();
        let got: Vec<Option<bool>> = out.as_boolean().iter().collect();
        assert_eq!(
            got,
            vec![Some(true), Some(true), Some(false), None, Some(true)]
        );
    }
}
