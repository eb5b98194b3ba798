//! `STRCMP(a, b)`: -1, 0 or 1 as `a` sorts before, equal to or after `b`, comparing bytes as
//! Basalt's string comparisons do (Doris: a TINYINT; NULL when either is NULL). Any value is
//! compared as its text, binary strings as their bytes.

use crate::mysql_values::bytes;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::Int8Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::cmp::Ordering;
use std::sync::Arc;

pub fn function() -> ScalarUDF {
    plain_function(
        "strcmp",
        Signature::any(2, Volatility::Immutable),
        DataType::Int8,
        strcmp,
    )
}

fn strcmp(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (a, b) = (bytes(&arrays[0])?, bytes(&arrays[1])?);
    let out: Int8Array = a
        .iter()
        .zip(&b)
        .map(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => Some(match a.cmp(b) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }),
            _ => None,
        })
        .collect();
    output(Arc::new(out), scalar)
}
