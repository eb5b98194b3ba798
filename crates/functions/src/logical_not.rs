//! MySQL's `NOT x` for any x: NULL stays NULL, 0 (or a string that reads as 0) is true, any
//! other number is false, a boolean is negated; a string that is no number is NULL, as strings
//! read as numbers are elsewhere in Basalt (Doris's rule). DataFusion's NOT takes booleans only and refuses
//! `NOT flag` on the TINYINT columns MySQL uses as booleans; the statement rewrite sends a NOT
//! whose operand is not plainly a condition here (`mysql_not`).

use crate::implicit_casts::parse_double;
use datafusion::arrow::array::{Array, AsArray, BooleanArray};
use datafusion::arrow::compute::{cast, kernels::boolean::not};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// `mysql_not`.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(MySqlNot {
        signature: Signature::any(1, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MySqlNot {
    signature: Signature,
}

impl ScalarUDFImpl for MySqlNot {
    fn name(&self) -> &str {
        "mysql_not"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let values = args.args[0].to_array(rows)?;
        let negated: BooleanArray = match values.data_type() {
            DataType::Boolean => not(values.as_boolean())?,
            DataType::Null => BooleanArray::new_null(rows),
            t if t.is_numeric() => {
                let doubles = cast(&values, &DataType::Float64)?;
                doubles
                    .as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                    .iter()
                    .map(|v| v.map(|v| v == 0.0))
                    .collect()
            }
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                let strings = cast(&values, &DataType::Utf8)?;
                strings
                    .as_string::<i32>()
                    .iter()
                    .map(|s| s.and_then(parse_double).map(|v| v == 0.0))
                    .collect()
            }
            other => return exec_err!("NOT of a {other} value"),
        };
        if matches!(args.args[0], ColumnarValue::Scalar(_)) {
            return datafusion::common::ScalarValue::try_from_array(&negated, 0)
                .map(ColumnarValue::Scalar);
        }
        Ok(ColumnarValue::Array(Arc::new(negated)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Int32Array, StringArray};
    use datafusion::arrow::datatypes::Field;

    fn not_of(values: ArrayRef) -> Vec<Option<bool>> {
        let n = values.len();
        let field = Arc::new(Field::new("x", values.data_type().clone(), true));
        let out = function()
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
