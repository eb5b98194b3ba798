//! MySQL's truth of any value: NULL is unknown, 0 (or a string that reads as 0) is false, any
//! other number is true, a boolean is itself; a string that is no number is NULL, as strings
//! read as numbers are elsewhere in Basalt (Doris's rule). DataFusion's NOT and WHERE take
//! booleans only and refuse `NOT flag` or `WHERE flag` on the TINYINT columns MySQL uses as
//! booleans; the statement rewrite sends a NOT, WHERE, HAVING, ON or WHEN whose operand is not
//! plainly a condition here (`mysql_not`, `mysql_truth`). A DATE, DATETIME or TIME is true when
//! it is not zero, as its number is. Once types are known, `mysql_truth` of a boolean is the
//! boolean itself and of a number `n <> 0`, so filters on them still push down and prune.

use crate::implicit_casts::parse_double;
use crate::util::plain_function;
use datafusion::arrow::array::{Array, AsArray, BooleanArray};
use datafusion::arrow::compute::{cast, kernels::boolean::not};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// `mysql_not` and `mysql_truth`.
pub fn functions() -> Vec<ScalarUDF> {
    let one_argument = || Signature::any(1, Volatility::Immutable);
    vec![
        plain_function("mysql_not", one_argument(), DataType::Boolean, |args| {
            truth(args, true)
        }),
        ScalarUDF::new_from_impl(Truth {
            signature: one_argument(),
        }),
    ]
}

/// `mysql_truth(v)`: the truth of any value as a condition.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Truth {
    signature: Signature,
}

impl ScalarUDFImpl for Truth {
    fn name(&self) -> &str {
        "mysql_truth"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        truth(&args, false)
    }

    /// A boolean is its own truth and a number's is `n <> 0`: plain expressions the optimizer
    /// can push down and prune with.
    fn simplify(&self, mut args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        let Ok(t) = info.get_data_type(&args[0]) else {
            return Ok(ExprSimplifyResult::Original(args));
        };
        if t == DataType::Boolean {
            return Ok(ExprSimplifyResult::Simplified(args.remove(0)));
        }
        if t.is_numeric() {
            let zero = datafusion::common::ScalarValue::new_zero(&t)?;
            let value = args.remove(0);
            return Ok(ExprSimplifyResult::Simplified(
                value.not_eq(Expr::Literal(zero, None)),
            ));
        }
        Ok(ExprSimplifyResult::Original(args))
    }
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
        // A date or time is its number (YYYYMMDD, HHMMSS...): true unless it is zero.
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _) | DataType::Time64(_) => {
            // Every date Basalt holds is a non-zero number (there is no 0000-00-00); a TIME
            // is zero at 00:00:00.
            let time = matches!(values.data_type(), DataType::Time64(_));
            let numbers = cast(&values, &DataType::Int64)?;
            numbers
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .iter()
                .map(|v| v.map(|v| !time || v != 0))
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
