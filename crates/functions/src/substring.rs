//! MySQL's and Doris's SUBSTRING / SUBSTR / MID: positions count characters from 1, a negative
//! position counts from the end (`SUBSTRING('hello', -3, 2)` is 'll'), position 0 or a length
//! below 1 is the empty string, and fractional arguments round (`SUBSTRING('hello', 1.6, 2.5)`
//! is 'ell'). DataFusion's `substr` follows PostgreSQL (position 0 starts before the first
//! character; a negative one is not from the end), which answers these differently. Numbers and
//! dates given as the string are read as their text.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(Substring {
        signature: Signature::user_defined(Volatility::Immutable),
        aliases: vec!["substring".into(), "mid".into()],
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Substring {
    signature: Signature,
    aliases: Vec<String>,
}

/// The characters of `s` that MySQL's SUBSTRING(s, pos[, len]) selects.
fn substring(s: &str, pos: f64, len: Option<f64>) -> &str {
    let pos = pos.round();
    let count = s.chars().count() as f64;
    let start = if pos > 0.0 {
        pos - 1.0
    } else if pos < 0.0 {
        count + pos
    } else {
        return "";
    };
    if start < 0.0 || start >= count {
        return "";
    }
    let take = match len.map(f64::round) {
        Some(l) if l < 1.0 => return "",
        Some(l) => l.min(count - start),
        None => count - start,
    };
    let mut chars = s.char_indices().skip(start as usize);
    let begin = chars.next().map_or(s.len(), |(i, _)| i);
    let end = s
        .char_indices()
        .nth((start + take) as usize)
        .map_or(s.len(), |(i, _)| i);
    &s[begin..end]
}

impl ScalarUDFImpl for Substring {
    fn name(&self) -> &str {
        "substr"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        if !(2..=3).contains(&args.len()) {
            return plan_err!("substr takes a string, a position and an optional length");
        }
        let number = |t: &DataType| t.is_numeric() || t.is_null() || is_text(t);
        if !args[1..].iter().all(number) {
            return plan_err!("substr: the position and length must be numbers");
        }
        let mut types = vec![DataType::Utf8];
        types.extend(args[1..].iter().map(|_| DataType::Float64));
        Ok(types)
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let arrays: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|a| a.to_array(rows))
            .collect::<Result<_>>()?;
        let text = cast(&arrays[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let pos = cast(&arrays[1], &DataType::Float64)?;
        let pos = pos.as_primitive::<Float64Type>();
        let len = match arrays.get(2) {
            Some(a) => Some(cast(a, &DataType::Float64)?),
            None => None,
        };
        let len = len.as_ref().map(|a| a.as_primitive::<Float64Type>());
        let mut out = StringBuilder::with_capacity(rows, text.value_data().len());
        for i in 0..rows {
            let length = match len {
                Some(l) if l.is_null(i) => {
                    out.append_null();
                    continue;
                }
                Some(l) => Some(l.value(i)),
                None => None,
            };
            if text.is_null(i) || pos.is_null(i) {
                out.append_null();
            } else {
                out.append_value(substring(text.value(i), pos.value(i), length));
            }
        }
        Ok(ColumnarValue::Array(Arc::new(out.finish())))
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

#[cfg(test)]
mod tests {
    use super::substring;

    #[test]
    fn mysql_positions() {
        assert_eq!(substring("hello", -3.0, Some(2.0)), "ll");
        assert_eq!(substring("hello", 0.0, None), "");
        assert_eq!(substring("hello", 0.0, Some(2.0)), "");
        assert_eq!(substring("hello", 2.0, None), "ello");
        assert_eq!(substring("hello", -10.0, None), "");
        assert_eq!(substring("hello", 2.0, Some(-1.0)), "");
        assert_eq!(substring("héllo", -4.0, Some(2.0)), "él");
        assert_eq!(substring("hello", 10.0, None), "");
        assert_eq!(substring("hello", 1.6, Some(2.5)), "ell");
        assert_eq!(substring("hello", 4.0, Some(100.0)), "lo");
    }
}
