//! MySQL's TIME from any value (`TIME(x)`, `CAST(x AS TIME)`, a TIME literal, a value stored in
//! a TIME column): a number (a DECIMAL by its exact digits) or a string of digits is
//! `[-]HHMMSS[.fraction]` (`123456` is 12:34:56), a string with colons `[-][D ]H:MM[:SS[.fraction]]` (`'-12:30'`, `'120:00:06'`,
//! `'5 00:00:06'`), a DATETIME gives its time of day. TIME is a signed span within
//! ±838:59:59 (see [`basalt_common::time_value`]). `mysql_time` clips a value beyond the range
//! to its end and answers NULL for no time, as MySQL's SELECT does; `mysql_time_strict` (what a
//! strict INSERT stores) fails with 1292 for either. DataFusion read a number as nanoseconds
//! and text only as a time of day.

use crate::util::{arguments, output, plain_function};
use basalt_common::time_value::{self, TimeReading};
use basalt_common::BasaltError;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Time64MicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, TimeUnit};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::{Arc, OnceLock};

/// The lenient conversion's name.
pub const NAME: &str = "mysql_time";
/// The strict conversion's name.
pub const STRICT_NAME: &str = "mysql_time_strict";

/// `mysql_time`: clipped, NULL for no time.
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        crate::temporal_digits::digits_function(
            NAME,
            Signature::any(1, Volatility::Immutable),
            DataType::Time64(TimeUnit::Microsecond),
            |fields, literals| crate::temporal_digits::precision_of(fields, literals, 0),
            |args| to_time(args, false),
        )
    })
}

/// `mysql_time_strict`: error 1292 for no time or one beyond the range.
pub fn strict_function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        plain_function(
            STRICT_NAME,
            Signature::any(1, Volatility::Immutable),
            DataType::Time64(TimeUnit::Microsecond),
            |args| to_time(args, true),
        )
    })
}

fn to_time(args: &ScalarFunctionArgs, strict: bool) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let digits = crate::temporal_digits::of_result(&args.return_field);
    output(times_with_digits(&arrays[0], strict, digits)?, scalar)
}

/// `values` as TIME values (see the module doc).
pub fn times(values: &ArrayRef, strict: bool) -> Result<ArrayRef> {
    times_with_digits(values, strict, Some(0))
}

/// `values` as TIME values of `digits` fractional digits: one beyond the range is clipped to
/// `838:59:59` and as many nines as the digits allow (`TIME(8395959.0)` is 838:59:59.9).
fn times_with_digits(values: &ArrayRef, strict: bool, digits: Option<u8>) -> Result<ArrayRef> {
    let target = DataType::Time64(TimeUnit::Microsecond);
    Ok(match values.data_type() {
        DataType::Time32(_) | DataType::Time64(_) | DataType::Timestamp(_, _) | DataType::Null => {
            cast(values, &target)?
        }
        DataType::Date32 | DataType::Date64 => Arc::new(
            (0..values.len())
                .map(|row| values.is_valid(row).then_some(0))
                .collect::<Time64MicrosecondArray>(),
        ),
        // A DECIMAL's exact digits (a DOUBLE cannot hold YYYYMMDDhhmmss.ffffff), unless it is
        // past every DATETIME's digits (clipped as a number).
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            let strings = cast(values, &DataType::Utf8)?;
            let numbers = cast(values, &DataType::Float64)?;
            let numbers = numbers.as_primitive::<Float64Type>();
            Arc::new(
                strings
                    .as_string::<i32>()
                    .iter()
                    .zip(numbers.iter())
                    .map(|(s, v)| match (s, v) {
                        (Some(s), Some(v)) if v.abs() < 1e14 => {
                            checked(time_value::parse_text(s), strict, digits, || s.to_string())
                        }
                        (_, Some(v)) => {
                            checked(time_value::from_number(v), strict, digits, || v.to_string())
                        }
                        _ => Ok(None),
                    })
                    .collect::<Result<Time64MicrosecondArray>>()?,
            )
        }
        t if t.is_numeric() => {
            let numbers = cast(values, &DataType::Float64)?;
            let numbers = numbers.as_primitive::<Float64Type>();
            Arc::new(
                numbers
                    .iter()
                    .map(|v| {
                        v.map(|v| {
                            checked(time_value::from_number(v), strict, digits, || v.to_string())
                        })
                        .transpose()
                        .map(Option::flatten)
                    })
                    .collect::<Result<Time64MicrosecondArray>>()?,
            )
        }
        _ => {
            let strings = cast(values, &DataType::Utf8)?;
            Arc::new(
                strings
                    .as_string::<i32>()
                    .iter()
                    .map(|s| {
                        s.map(|s| {
                            checked(time_value::parse_text(s), strict, digits, || s.to_string())
                        })
                        .transpose()
                        .map(Option::flatten)
                    })
                    .collect::<Result<Time64MicrosecondArray>>()?,
            )
        }
    })
}

/// A reading's value; in strict mode no time or a clipped one is MySQL's error 1292.
fn checked(
    reading: Option<TimeReading>,
    strict: bool,
    digits: Option<u8>,
    text: impl Fn() -> String,
) -> Result<Option<i64>> {
    match reading {
        Some(r) if r.clipped && !strict => {
            Ok(Some(crate::temporal_digits::clip_time(r.span, digits)))
        }
        Some(r) if !(strict && r.clipped) => Ok(Some(r.micros)),
        _ if strict => Err(DataFusionError::External(Box::new(
            BasaltError::IncorrectDateValue(format!("Incorrect time value: '{}'", text())),
        ))),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Float64Array, StringArray};

    fn micros(a: &ArrayRef) -> Vec<Option<i64>> {
        a.as_primitive::<datafusion::arrow::datatypes::Time64MicrosecondType>()
            .iter()
            .collect()
    }

    #[test]
    fn lenient_clips_and_strict_fails() {
        let text: ArrayRef = Arc::new(StringArray::from(vec!["-12:30", "900:00:00", "10:60"]));
        let h = |h: i64, m: i64| (h * 60 + m) * 60_000_000;
        assert_eq!(
            micros(&times(&text, false).unwrap()),
            [Some(-h(12, 30)), Some(time_value::MAX_TIME_MICROS), None]
        );
        assert!(times(&text, true).is_err());
        let numbers: ArrayRef = Arc::new(Float64Array::from(vec![-123456.0]));
        assert_eq!(
            micros(&times(&numbers, true).unwrap()),
            [Some(-(h(12, 34) + 56_000_000))]
        );
    }
}
