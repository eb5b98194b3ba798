//! `CAST(x AS BITMAP)`, as Doris allows it: a NULL (of any type) is a NULL BITMAP and a BITMAP
//! is itself; Doris casts nothing else to BITMAP (text and numbers go through
//! `bitmap_from_string` / `to_bitmap`), so any other argument is an error rather than a guess.
//! The SQL rewrite turns the cast into `cast_to_bitmap(x)`.

use crate::util::sketch_function;
use datafusion::arrow::array::new_null_array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};

/// The function's name.
pub const NAME: &str = "cast_to_bitmap";

pub fn function() -> ScalarUDF {
    sketch_function(
        NAME,
        Signature::any(1, Volatility::Immutable),
        basalt_common::SqlType::Bitmap,
        to_bitmap,
    )
}

fn to_bitmap(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (Some(value), Some(field)) = (args.args.first(), args.arg_fields.first()) else {
        return exec_err!("{NAME} takes one argument");
    };
    let is_bitmap = basalt_common::types::sketch_kind(field) == Some("bitmap");
    match field.data_type() {
        DataType::Null => Ok(match value {
            ColumnarValue::Scalar(_) => {
                ColumnarValue::Scalar(datafusion::common::ScalarValue::Binary(None))
            }
            ColumnarValue::Array(a) => {
                ColumnarValue::Array(new_null_array(&DataType::Binary, a.len()))
            }
        }),
        DataType::Binary if is_bitmap => Ok(value.clone()),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => exec_err!(
            "cannot cast VARCHAR to BITMAP: build one with BITMAP_FROM_STRING('1,2,3') \
             (only NULL and BITMAP values cast to BITMAP)"
        ),
        other if other.is_numeric() => exec_err!(
            "cannot cast {other} to BITMAP: build one with TO_BITMAP(n) \
             (only NULL and BITMAP values cast to BITMAP)"
        ),
        other => exec_err!("cannot cast {other} to BITMAP (only NULL and BITMAP values can be)"),
    }
}
