//! `ilike_contains(text, needle)`: `text ILIKE '%needle%'` for an ASCII needle without
//! wildcards: the batch's text is lowered (ASCII) in one pass over its value buffer and each
//! row is searched for the lowered needle with memchr's SIMD substring finder. Arrow's ILIKE turns such patterns into a case-insensitive regex; the
//! SQL layer rewrites them to this function. Non-ASCII text still matches only where the
//! ASCII letters differ in case, exactly as ILIKE's simple case folding does for them.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::DataType;
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use memchr::memmem::Finder;
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

/// A finder for the needle lowered (ASCII).
fn searcher(needle: &str) -> Result<Finder<'static>> {
    Ok(Finder::new(needle.to_ascii_lowercase().as_bytes()).into_owned())
}

/// One row, lowered into `scratch` first.
fn matches_row(finder: &Finder<'_>, text: &str, scratch: &mut Vec<u8>) -> bool {
    scratch.clear();
    scratch.extend(text.bytes().map(|b| b.to_ascii_lowercase()));
    finder.find(scratch).is_some()
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
                let mut scratch = Vec::new();
                let v = match s {
                    ScalarValue::Utf8(v) | ScalarValue::Utf8View(v) | ScalarValue::LargeUtf8(v) => {
                        v.as_deref().map(|t| matches_row(&finder, t, &mut scratch))
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

fn evaluate(array: &ArrayRef, finder: &Finder<'_>) -> Result<ArrayRef> {
    let mut scratch = Vec::new();
    let out: BooleanArray = match array.data_type() {
        DataType::Utf8 => {
            // Lower the whole value buffer once, then search each row's range of it.
            let a = array.as_string::<i32>();
            let offsets = a.value_offsets();
            let (first, last) = (offsets[0] as usize, offsets[a.len()] as usize);
            let lowered: Vec<u8> = a.value_data()[first..last]
                .iter()
                .map(|b| b.to_ascii_lowercase())
                .collect();
            (0..a.len())
                .map(|i| {
                    a.is_valid(i).then(|| {
                        let (s, e) = (offsets[i] as usize - first, offsets[i + 1] as usize - first);
                        finder.find(&lowered[s..e]).is_some()
                    })
                })
                .collect()
        }
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|v| v.map(|t| matches_row(finder, t, &mut scratch)))
            .collect(),
        DataType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|v| v.map(|t| matches_row(finder, t, &mut scratch)))
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
        // A slice starts at a non-zero offset of the value buffer.
        let out = evaluate(&a.slice(1, 3), &finder).unwrap();
        let got: Vec<Option<bool>> = out.as_boolean().iter().collect();
        assert_eq!(got, vec![Some(true), Some(false), None]);
    }
}
