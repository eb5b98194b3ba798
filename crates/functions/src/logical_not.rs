//! MySQL's truth of any value: NULL is unknown, 0 (or a string that reads as 0) is false, any
//! other number is true, a boolean is itself; a string that is no number is NULL, as strings
//! read as numbers are elsewhere in Basalt (Doris's rule). DataFusion's NOT and WHERE take
//! booleans only and refuse `NOT flag` or `WHERE flag` on the TINYINT columns MySQL uses as
//! booleans; the statement rewrite sends a NOT, WHERE, HAVING, ON or WHEN whose operand is not
//! plainly a condition here (`mysql_not`, `mysql_truth`).

use crate::implicit_casts::parse_double;
use crate::util::plain_function;
use datafusion::arrow::array::{Array, AsArray, BooleanArray};
use datafusion::arrow::compute::{cast, kernels::boolean::not};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `mysql_not` and `mysql_truth`.
pub fn functions() -> Vec<ScalarUDF> {
    let one_argument = || Signature::any(1, Volatility::Immutable);
    vec![
        plain_function("mysql_not", one_argument(), DataType::Boolean, |args| {
            truth(args, true)
        }),
        plain_function("mysql_truth", one_argument(), DataType::Boolean, |args| {
            truth(args, false)
        }),
    ]
}

/// The truth of the argument, negated for NOT.
fn truth(args: &ScalarFunctionArgs, negate: bool) -> Result<ColumnarValue> {
    let rows = args.number_rows;
    let values = args.args[0].to_array(rows)?;
    let truth: BooleanArray = match values.data_type() {
        DataType::Boolean => values.as_boolean().clone(),
        DataType::Null => BooleanArray::new_null(rows),
        t if t.is_numeric() => {
            let doubles = cast(&values, &DataType::Float64)?;
            doubles
                .as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                .iter()
                .map(|v| v.map(|v| v != 0.0))
                .collect()
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let strings = cast(&values, &DataType::Utf8)?;
            strings
                .as_string::<i32>()
                .iter()
                .map(|s| s.and_then(parse_double).map(|v| v != 0.0))
                .collect()
        }
        other => return exec_err!("truth of a {other} value"),
    };
    let out = if negate { not(&truth)? } else { truth };
    if matches!(args.args[0], ColumnarValue::Scalar(_)) {
        return datafusion::common::ScalarValue::try_from_array(&out, 0).map(ColumnarValue::Scalar);
    }
    Ok(ColumnarValue::Array(Arc::new(out)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Int32Array, StringArray};
    use datafusion::arrow::datatypes::Field;

    fn not_of(values: ArrayRef) -> Vec<Option<bool>> {
        let n = values.len();
        let field = Arc::new(Field::new("x", values.data_type().clone(), true));
        let out = functions()
            .remove(0)
            .invoke_with_args(ScalarFunctionArgs {
                args: vec![ColumnarValue::Array(values)],
                arg_fields: vec![field],
                number_rows: n,
                return_field: Arc::new(Field::new("r", DataType::Boolean, true)),
                config_options: Default::default(),
            })
            .unwrap()
            .to_array(n)
            .unwrap();
        out.as_boolean().iter().collect()
    }

    #[test]
    fn numbers_strings_and_nulls_as_mysql() {
        assert_eq!(
            not_of(Arc::new(Int32Array::from(vec![Some(0), Some(5), None]))),
            vec![Some(true), Some(false), None]
        );
        assert_eq!(
            not_of(Arc::new(StringArray::from(vec![
                Some("0"),
                Some("1.5"),
                Some("abc")
            ]))),
            vec![Some(true), Some(false), None]
        );
    }
}
