//! MySQL's and Doris's `CONCAT(a, b, ..)`: NULL when any argument is NULL (DataFusion's
//! `concat` skips NULLs, which would answer `CONCAT('a', NULL)` with 'a'). Numbers, dates and
//! other values are concatenated in their text form. The statement rewrite sends CONCAT here
//! (`mysql_concat`); GROUP_CONCAT of several expressions concatenates them the same way.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `mysql_concat`.
pub fn function() -> ScalarUDF {
    plain_function(
        "mysql_concat",
        Signature::variadic_any(Volatility::Immutable),
        DataType::Utf8,
        concat,
    )
}

fn concat(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    // All arguments have one length: the batch's, or 1 when all are scalars.
    let rows = arrays.first().map_or(0, |a| a.len());
    let texts: Vec<ArrayRef> = arrays
        .iter()
        .zip(&args.arg_fields)
        .map(|(a, field)| text(a, basalt_common::fraction_digits(field)))
        .collect::<Result<_>>()?;
    let columns: Vec<_> = texts.iter().map(|a| a.as_string::<i32>()).collect();
    let mut out = StringBuilder::with_capacity(rows, 16 * rows);
    let mut row = String::new();
    for i in 0..rows {
        if columns.iter().any(|c| c.is_null(i)) {
            out.append_null();
            continue;
        }
        row.clear();
        for c in &columns {
            row.push_str(c.value(i));
        }
        out.append_value(&row);
    }
    output(Arc::new(out.finish()), scalar)
}

/// A value's text as MySQL shows it: DATETIME as `datetime_text` writes it and TIME as
/// `time_text` does (with the argument's declared fractional digits), booleans as 1 and 0,
/// doubles by their shortest digits.
fn text(values: &ArrayRef, digits: Option<u8>) -> Result<ArrayRef> {
    match values.data_type() {
        DataType::Boolean => Ok(cast(&cast(values, &DataType::Int8)?, &DataType::Utf8)?),
        DataType::Timestamp(_, None) => crate::datetime_to_text::datetime_strings(values, digits),
        DataType::Time64(_) | DataType::Time32(_) => {
            crate::signed_times::time_strings(values, digits)
        }
        DataType::Timestamp(_, Some(_)) => {
            let iso = cast(values, &DataType::Utf8)?;
            let spaced: datafusion::arrow::array::StringArray = iso
                .as_string::<i32>()
                .iter()
                .map(|v| v.map(|v| v.replacen('T', " ", 1)))
                .collect();
            Ok(Arc::new(spaced))
        }
        // A DOUBLE as MySQL writes it: 1 (not 1.0), never -0.
        DataType::Float64 | DataType::Float32 | DataType::Float16 => {
            let texts: datafusion::arrow::array::StringArray =
                crate::mysql_values::texts(values)?.into_iter().collect();
            Ok(Arc::new(texts))
        }
        _ => Ok(cast(values, &DataType::Utf8)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, StringArray};
    use datafusion::arrow::datatypes::Field;

    #[test]
    fn null_anywhere_is_null() {
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("b"), None]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let fields = [&a, &b]
            .iter()
            .map(|x| Arc::new(Field::new("x", x.data_type().clone(), true)))
            .collect();
        let out = function()
            .invoke_with_args(ScalarFunctionArgs {
                args: vec![ColumnarValue::Array(a), ColumnarValue::Array(b)],
                arg_fields: fields,
                number_rows: 3,
                return_field: Arc::new(Field::new("r", DataType::Utf8, true)),
                config_options: Default::default(),
            })
            .unwrap()
            .to_array(3)
            .unwrap();
        let out: Vec<Option<&str>> = out.as_string::<i32>().iter().collect();
        assert_eq!(out, vec![Some("a1"), None, None]);
    }
}
