//! `CHARSET(x)`, `COLLATION(x)` and `COERCIBILITY(x)` for Basalt's values: every string is
//! utf8mb4 with the collation the server variables report (`utf8mb4_general_ci`, as SHOW
//! VARIABLES and information_schema say), binary strings, numbers, dates and NULL are
//! `binary`. The statement rewrite calls `mysql_coercibility(x, d)` with d, MySQL's
//! coercibility of the expression by its origin (a column 2, a literal 4, ...): a string
//! answers d, a NULL 6, anything else 5 (MySQL's numeric).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// The internal name of COERCIBILITY with its origin argument.
pub const COERCIBILITY: &str = "mysql_coercibility";
/// The character set and collation of every Basalt string.
const CHARSET: &str = "utf8mb4";
const COLLATION: &str = "utf8mb4_general_ci";

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "charset",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            charset,
        ),
        plain_function(
            "collation",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            collation,
        ),
        plain_function(
            COERCIBILITY,
            Signature::any(2, Volatility::Immutable),
            DataType::Int64,
            coercibility,
        ),
    ]
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// One name per row, chosen by the argument's type (the same on every row, NULL or not).
fn by_type(args: &ScalarFunctionArgs, text: &str) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let name = if is_text(arrays[0].data_type()) {
        text
    } else {
        "binary"
    };
    let out = StringArray::from(vec![name; arrays[0].len()]);
    output(Arc::new(out), scalar)
}

fn charset(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    by_type(args, CHARSET)
}

fn collation(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    by_type(args, COLLATION)
}

fn coercibility(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let origin = match arrays[1].data_type() {
        DataType::Int64 => arrays[1].as_primitive::<Int64Type>(),
        other => return exec_err!("{COERCIBILITY}: the origin must be a BIGINT, not {other}"),
    };
    let value_type = arrays[0].data_type();
    let is_string = is_text(value_type)
        || matches!(
            value_type,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        );
    let out: Int64Array = (0..arrays[0].len())
        .map(|i| {
            Some(match value_type {
                DataType::Null => 6,
                _ if !is_string => 5,
                _ if origin.is_valid(i) => origin.value(i),
                _ => 4,
            })
        })
        .collect();
    output(Arc::new(out), scalar)
}
