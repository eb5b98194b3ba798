//! MySQL's `SEC_TO_TIME(n)` and `TIME_TO_SEC(t)`: spans of time, which may pass 24 hours (a
//! TIMEDIFF can). `SEC_TO_TIME` gives MySQL's text of a TIME (`[-]HH:MM:SS`, clipped to
//! ±838:59:59 as MySQL clips); `TIME_TO_SEC` reads a TIME, a DATETIME's time of day, TIME text
//! of any length (`'34:56:00'`, `'-01:00:00'`) or HHMMSS digits, and gives whole seconds. What
//! is no time is NULL.

use crate::date_arith::time_text;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type, TimeUnit};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// MySQL's largest TIME, in seconds (838:59:59).
const MAX_TIME_SECONDS: i64 = 838 * 3600 + 59 * 60 + 59;

/// `sec_to_time` and `time_to_sec`.
pub fn functions() -> Vec<ScalarUDF> {
    let one_argument = || Signature::any(1, Volatility::Immutable);
    vec![
        plain_function("sec_to_time", one_argument(), DataType::Utf8, sec_to_time),
        plain_function("time_to_sec", one_argument(), DataType::Int64, time_to_sec),
    ]
}

fn sec_to_time(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let seconds = cast(&arrays[0], &DataType::Float64)?;
    let out: StringArray = seconds
        .as_primitive::<Float64Type>()
        .iter()
        .map(|s| {
            let s = s.filter(|s| s.is_finite())?;
            let clipped = s.clamp(-(MAX_TIME_SECONDS as f64), MAX_TIME_SECONDS as f64);
            Some(time_text((clipped * 1e6).round() as i64))
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

/// The seconds a TIME text (`[-]H:MM[:SS[.f]]`, any hours) or HHMMSS digits spell; the time of
/// day of a `YYYY-MM-DD HH:MM:SS` text.
fn seconds_of(text: &str) -> Option<i64> {
    let text = text.trim();
    let clock = match text.split_once(' ') {
        Some((date, clock)) if date.contains('-') => clock,
        _ => text,
    };
    let (negative, clock) = match clock.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, clock),
    };
    let clock = clock.split('.').next()?;
    let (h, m, s) = if clock.contains(':') {
        let mut parts = clock.split(':').map(|p| p.parse::<i64>().ok());
        let h = parts.next()??;
        let m = parts.next()??;
        let s = parts.next().unwrap_or(Some(0))?;
        if parts.next().is_some() {
            return None;
        }
        (h, m, s)
    } else {
        let n = clock.parse::<i64>().ok()?;
        (n / 10_000, (n / 100) % 100, n % 100)
    };
    if m > 59 || s > 59 || h < 0 {
        return None;
    }
    let seconds = h * 3600 + m * 60 + s;
    Some(if negative { -seconds } else { seconds })
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
        assert_eq!(time_text(59538 * 1_000_000), "16:32:18");
    }
}
