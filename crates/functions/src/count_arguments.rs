//! The count argument of LEFT, RIGHT, REPEAT, LPAD and RPAD as MySQL reads it:
//! `mysql_count(n, negative_is_null)` is `n` as a BIGINT (a fraction rounded half away from
//! zero, text read as a number, values past BIGINT's range clamped to it, so
//! `LEFT(s, -18446744073709551615)` is '' rather than a coercion error), and a negative count is
//! 0 (LEFT, RIGHT, REPEAT: '' — DataFusion's LEFT(s, -1) would drop the last character) or
//! NULL (LPAD, RPAD), as MySQL answers.

use crate::mysql_values::integers;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::Int64Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// The name of the function.
pub const NAME: &str = "mysql_count";

/// `mysql_count`.
pub fn function() -> ScalarUDF {
    plain_function(
        NAME,
        Signature::any(2, Volatility::Immutable),
        DataType::Int64,
        count,
    )
}

fn count(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let n = integers(&arrays[0])?;
    let negative_is_null = integers(&arrays[1])?;
    let out: Int64Array = n
        .into_iter()
        .zip(negative_is_null)
        .map(|(n, null)| match n? {
            n if n >= 0 => Some(n),
            _ if null == Some(1) => None,
            _ => Some(0),
        })
        .collect();
    output(Arc::new(out), scalar)
}
