//! MySQL's unary minus of text: `-'3'` is -3 and `-''` is 0, a DOUBLE (the text read as a number,
//! its leading number or 0), never -0. DataFusion refuses `-` of a string; the statement
//! rewrite sends `-` of a string literal or of CONCAT here (`mysql_negate_text`).

use crate::mysql_values::{leading_number, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::Float64Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// The name of the function.
pub const NAME: &str = "mysql_negate_text";

/// `mysql_negate_text`.
pub fn function() -> ScalarUDF {
    plain_function(
        NAME,
        Signature::any(1, Volatility::Immutable),
        DataType::Float64,
        negate,
    )
}

fn negate(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: Float64Array = texts(&arrays[0])?
        .into_iter()
        .map(|t| t.map(|t| -leading_number(&t).unwrap_or(0.0) + 0.0))
        .collect();
    output(Arc::new(out), scalar)
}
