//! `__basalt_single_row(rows, value)`: `value` when `rows` is at most 1, else MySQL's error
//! 1242 ("Subquery returns more than 1 row", raised in the text DataFusion uses for it, which
//! the error mapping turns into that code on a server and on a cluster's backends alike).
//!
//! A scalar subquery checks its row count when it runs on its own (DataFusion's
//! `ScalarSubqueryExec`); a plan that reads it as a join instead (a cluster's) counts its rows
//! with an aggregate and passes the count here (`basalt_query`'s scalar subquery rule).

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

/// The function's name.
pub const NAME: &str = "__basalt_single_row";

/// The text of the error (DataFusion's own for a scalar subquery of many rows).
pub const MANY_ROWS: &str = "Scalar subquery returned more than one row";

pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(SingleRow {
        signature: Signature::any(2, Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct SingleRow {
    signature: Signature,
}

impl ScalarUDFImpl for SingleRow {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args {
            [_, value] => Ok(value.clone()),
            _ => exec_err!("{NAME} takes a row count and a value"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [rows, value] = args.args.as_slice() else {
            return exec_err!("{NAME} takes a row count and a value");
        };
        let rows = rows.to_array(args.number_rows)?;
        let rows = datafusion::arrow::compute::cast(&rows, &DataType::Int64)?;
        if rows
            .as_primitive::<Int64Type>()
            .iter()
            .any(|n| n.is_some_and(|n| n > 1))
        {
            return exec_err!("{MANY_ROWS}");
        }
        Ok(value.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;
    use datafusion::common::config::ConfigOptions;
    use datafusion::common::ScalarValue;
    use std::sync::Arc;

    fn call(rows: i64) -> Result<ColumnarValue> {
        let args = vec![
            ColumnarValue::Scalar(ScalarValue::Int64(Some(rows))),
            ColumnarValue::Scalar(ScalarValue::Utf8(Some("x".into()))),
        ];
        function().invoke_with_args(ScalarFunctionArgs {
            args,
            arg_fields: vec![
                Arc::new(Field::new("rows", DataType::Int64, true)),
                Arc::new(Field::new("value", DataType::Utf8, true)),
            ],
            number_rows: 1,
            return_field: Arc::new(Field::new("v", DataType::Utf8, true)),
            config_options: Arc::new(ConfigOptions::default()),
        })
    }

    #[test]
    fn one_row_gives_its_value_and_more_are_an_error() {
        for rows in [0, 1] {
            let ColumnarValue::Scalar(v) = call(rows).expect("at most one row") else {
                panic!("a scalar");
            };
            assert_eq!(v, ScalarValue::Utf8(Some("x".into())));
        }
        let e = call(2).expect_err("two rows");
        assert!(e.to_string().contains(MANY_ROWS), "{e}");
    }
}
