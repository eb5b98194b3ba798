//! MySQL's `~x`: the bits of `x` as a 64-bit integer inverted, an unsigned result (`~1` is
//! 18446744073709551614, `~-1` is 0). A fraction rounds to the nearest integer first, half away
//! from zero (`~1.5` is `~2`); a string reads as its number (one that is no number is NULL, as in
//! Basalt's arithmetic); NULL stays NULL. (Doris's
//! `bitnot(x)` is signed and stays as it is.)

use crate::implicit_casts::parse_double;
use crate::util::plain_function;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, UInt64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, UInt64Type};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `mysql_bit_not(x)`, what the statement rewrite makes of `~x`.
pub fn function() -> ScalarUDF {
    plain_function(
        "mysql_bit_not",
        Signature::any(1, Volatility::Immutable),
        DataType::UInt64,
        invert,
    )
}

fn invert(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let values = args.args[0].to_array(args.number_rows)?;
    let inverted = inverted_bits(&values)?;
    if matches!(args.args[0], ColumnarValue::Scalar(_)) {
        return ScalarValue::try_from_array(&inverted, 0).map(ColumnarValue::Scalar);
    }
    Ok(ColumnarValue::Array(inverted))
}

/// The 64 bits MySQL reads `values` as, inverted.
fn inverted_bits(values: &ArrayRef) -> Result<ArrayRef> {
    let out: UInt64Array = match values.data_type() {
        DataType::Null => UInt64Array::new_null(values.len()),
        DataType::UInt64 => values
            .as_primitive::<UInt64Type>()
            .iter()
            .map(|v| v.map(|v| !v))
            .collect(),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::Boolean => cast(values, &DataType::Int64)?
            .as_primitive::<Int64Type>()
            .iter()
            .map(|v| v.map(|v| !(v as u64)))
            .collect(),
        t if t.is_numeric() => cast(values, &DataType::Float64)?
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map(invert_double))
            .collect(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => cast(values, &DataType::Utf8)?
            .as_string::<i32>()
            .iter()
            .map(|s| s.and_then(parse_double).map(invert_double))
            .collect(),
        other => return exec_err!("~ (bit inversion) of a {other} value"),
    };
    Ok(Arc::new(out))
}

/// A number outside the 64-bit range saturates at its end, as MySQL converts it.
fn invert_double(v: f64) -> u64 {
    let rounded = v.round();
    let bits = if rounded < 0.0 {
        (rounded.max(i64::MIN as f64) as i64) as u64
    } else {
        rounded.min(u64::MAX as f64) as u64
    };
    !bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Float64Array, Int64Array, StringArray};

    fn inverted(values: ArrayRef) -> Vec<Option<u64>> {
        let out = inverted_bits(&values).unwrap();
        out.as_primitive::<UInt64Type>().iter().collect()
    }

    #[test]
    fn inverts_integers_fractions_and_strings() {
        let ints = Arc::new(Int64Array::from(vec![Some(1), Some(0), Some(-1), None]));
        assert_eq!(
            inverted(ints),
            vec![Some(u64::MAX - 1), Some(u64::MAX), Some(0), None]
        );
        let fractions = Arc::new(Float64Array::from(vec![1.5, -1.5, 0.4]));
        assert_eq!(
            inverted(fractions),
            vec![Some(u64::MAX - 2), Some(1), Some(u64::MAX)]
        );
        let strings = Arc::new(StringArray::from(vec!["3", "x"]));
        assert_eq!(inverted(strings), vec![Some(u64::MAX - 3), None]);
    }
}
