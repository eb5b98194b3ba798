//! Doris's `typeof(x)`: the name of the SQL type of its argument (`bigint`, `decimal(10,2)`,
//! `datetime(3)`, `array<int>`, ..) as DESCRIBE shows a column of that type; a value no
//! column type holds is named by its Arrow type.

use crate::util::plain_function;
use basalt_common::value_types::sql_type_of;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};

pub fn function() -> ScalarUDF {
    plain_function(
        "typeof",
        Signature::any(1, Volatility::Immutable),
        DataType::Utf8,
        type_name,
    )
}

fn type_name(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let [field] = args.arg_fields.as_slice() else {
        return exec_err!("typeof takes one argument");
    };
    let name = match sql_type_of(field) {
        Some(ty) => ty.to_string(),
        None => field.data_type().to_string().to_lowercase(),
    };
    Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(name))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;
    use datafusion::config::ConfigOptions;
    use std::sync::Arc;

    fn named(data_type: DataType) -> String {
        let field = Arc::new(Field::new("x", data_type.clone(), true));
        let args = ScalarFunctionArgs {
            args: vec![ColumnarValue::Scalar(
                ScalarValue::try_from(&data_type).unwrap(),
            )],
            arg_fields: vec![field],
            number_rows: 1,
            return_field: Arc::new(Field::new("t", DataType::Utf8, true)),
            config_options: Arc::new(ConfigOptions::default()),
        };
        match type_name(&args).unwrap() {
            ColumnarValue::Scalar(ScalarValue::Utf8(Some(name))) => name,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_the_column_type_of_a_value() {
        assert_eq!(named(DataType::Int64), "bigint");
        assert_eq!(named(DataType::Decimal128(10, 2)), "decimal(10,2)");
        assert_eq!(named(DataType::Utf8), "text");
    }
}
