//! MySQL's `SEC_TO_TIME(n)` and `TIME_TO_SEC(t)`: spans of time, which may pass 24 hours (a
//! TIMEDIFF can). `SEC_TO_TIME` gives a TIME with the fractional digits its argument's type
//! carries (see [`crate::temporal_digits`]), clipped to ±838:59:59 and those digits' nines;
//! `TIME_TO_SEC` reads a TIME, a DATETIME's time of day, or text as `TIME(text)` reads it
//! (`'34:56:00'`, `'-01:00:00'`, HHMMSS digits), and gives whole seconds (toward zero). What
//! is no time is NULL.

use crate::temporal_digits;
use crate::util::{arguments, output, plain_function};
use basalt_common::time_value;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, Time64MicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `sec_to_time` and `time_to_sec`.
pub fn functions() -> Vec<ScalarUDF> {
    let one_argument = || Signature::any(1, Volatility::Immutable);
    vec![
        temporal_digits::digits_function(
            "sec_to_time",
            one_argument(),
            DataType::Time64(TimeUnit::Microsecond),
            |fields, _| temporal_digits::declared_of(fields, 0),
            sec_to_time,
        ),
        plain_function("time_to_sec", one_argument(), DataType::Int64, time_to_sec),
    ]
}

fn sec_to_time(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let digits = temporal_digits::of_result(&args.return_field);
    let seconds = cast(&arrays[0], &DataType::Float64)?;
    let out: Time64MicrosecondArray = seconds
        .as_primitive::<Float64Type>()
        .iter()
        .map(|s| {
            let s = s.filter(|s| s.is_finite())?;
            let micros = (s * 1e6).round().clamp(-1e30, 1e30) as i128;
            Some(temporal_digits::clip_time(micros, digits))
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn time_to_sec(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = &arrays[0];
    let out: ArrayRef = match values.data_type() {
        DataType::Time32(_) | DataType::Time64(_) | DataType::Timestamp(_, _) => {
            let time = cast(values, &DataType::Time64(TimeUnit::Microsecond))?;
            let micros = cast(&time, &DataType::Int64)?;
            Arc::new(
                micros
                    .as_primitive::<Int64Type>()
                    .iter()
                    .map(|m| m.map(|m| m / 1_000_000))
                    .collect::<Int64Array>(),
            )
        }
        DataType::Null => Arc::new(Int64Array::new_null(values.len())),
        _ => {
            let text = cast(values, &DataType::Utf8)?;
            Arc::new(
                text.as_string::<i32>()
                    .iter()
                    .map(|s| s.and_then(seconds_of))
                    .collect::<Int64Array>(),
            )
        }
    };
    output(out, scalar)
}

/// The whole seconds of a TIME text, as `TIME(text)` reads it.
fn seconds_of(text: &str) -> Option<i64> {
    time_value::parse_text(text).map(|t| t.micros / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_text_of_any_length() {
        assert_eq!(seconds_of("16:32:18"), Some(59538));
        assert_eq!(seconds_of("168:00:00"), Some(604800));
        assert_eq!(seconds_of("-01:00:00"), Some(-3600));
        assert_eq!(seconds_of("2024-01-01 10:00:00"), Some(36000));
        assert_eq!(seconds_of("123456"), Some(45296));
        assert_eq!(seconds_of("00:61:00"), None);
        assert_eq!(seconds_of("-120:05:06.5"), Some(-432306));
    }
}
