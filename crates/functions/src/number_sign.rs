//! MySQL's `SIGN(x)`: -1, 0 or 1 as a BIGINT (DataFusion's `signum` is a DOUBLE); text is read
//! as a number, NULL gives NULL.

use crate::mysql_values::{leading_number, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `sign`.
pub fn function() -> ScalarUDF {
    plain_function(
        "sign",
        Signature::any(1, Volatility::Immutable),
        DataType::Int64,
        sign,
    )
}

fn sign(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let x = &arrays[0];
    let values: Vec<Option<f64>> = match x.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => texts(x)?
            .into_iter()
            .map(|t| t.map(|t| leading_number(&t).unwrap_or(0.0)))
            .collect(),
        _ => cast(x, &DataType::Float64)?
            .as_primitive::<Float64Type>()
            .iter()
            .collect(),
    };
    let out: Int64Array = values
        .into_iter()
        .map(|v| {
            v.map(|v| {
                if v > 0.0 {
                    1
                } else if v < 0.0 {
                    -1
                } else {
                    0
                }
            })
        })
        .collect();
    output(Arc::new(out), scalar)
}
