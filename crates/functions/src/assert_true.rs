//! Doris's `assert_true(condition, message)`: TRUE on every row whose condition is true; a
//! false or NULL condition fails the statement with `message`, which must be a constant.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    plain_function(
        "assert_true",
        Signature::exact(
            vec![DataType::Boolean, DataType::Utf8],
            Volatility::Volatile,
        ),
        DataType::Boolean,
        assert_true,
    )
}

fn assert_true(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let message = match args.args.get(1) {
        Some(ColumnarValue::Scalar(
            ScalarValue::Utf8(Some(m))
            | ScalarValue::Utf8View(Some(m))
            | ScalarValue::LargeUtf8(Some(m)),
        )) => m.clone(),
        _ => return exec_err!("assert_true only accepts a constant text as its second argument"),
    };
    let (arrays, scalar) = arguments(args)?;
    let conditions = cast(&arrays[0], &DataType::Boolean)?;
    let conditions = conditions.as_boolean();
    if conditions.null_count() > 0 || conditions.false_count() > 0 {
        return exec_err!("{message}");
    }
    let out = BooleanArray::from(vec![true; conditions.len()]);
    output(Arc::new(out) as ArrayRef, scalar)
}
