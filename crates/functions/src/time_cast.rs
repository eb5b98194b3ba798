//! `CAST(x AS TIME)` as MySQL and Doris read x: a number (or a string of digits) is
//! `[H]HMMSS[.fraction]` (`123456` is 12:34:56, `56` is 00:00:56), a string with colons is
//! `H:MM[:SS[.fraction]]`, a DATETIME gives its time of day. Minutes or seconds past 59 are
//! NULL, as is anything else. DataFusion read the number as a count of nanoseconds. Times are
//! of one day (00:00:00 to 23:59:59.999999): a longer span (MySQL's TIME reaches 838 hours) is
//! an error rather than a wrong value. The statement rewrite
//! sends such casts here (`mysql_time`).

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Time64MicrosecondArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, TimeUnit};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

use basalt_common::types::MICROS_PER_DAY;

/// `mysql_time`.
pub fn function() -> ScalarUDF {
    plain_function(
        "mysql_time",
        Signature::any(1, Volatility::Immutable),
        DataType::Time64(TimeUnit::Microsecond),
        to_time,
    )
}

fn to_time(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let values = &arrays[0];
    let target = DataType::Time64(TimeUnit::Microsecond);
    let out: ArrayRef = match values.data_type() {
        DataType::Time32(_) | DataType::Time64(_) | DataType::Timestamp(_, _) | DataType::Null => {
            cast(values, &target)?
        }
        DataType::Date32 | DataType::Date64 => {
            Arc::new(Time64MicrosecondArray::from(vec![Some(0); values.len()]))
        }
        t if t.is_numeric() => {
            let numbers = cast(values, &DataType::Float64)?;
            Arc::new(
                numbers
                    .as_primitive::<Float64Type>()
                    .iter()
                    .map(|v| v.map(from_number).transpose().map(Option::flatten))
                    .collect::<Result<Time64MicrosecondArray>>()?,
            )
        }
        _ => {
            let strings = cast(values, &DataType::Utf8)?;
            Arc::new(
                strings
                    .as_string::<i32>()
                    .iter()
                    .map(|s| s.map(from_text).transpose().map(Option::flatten))
                    .collect::<Result<Time64MicrosecondArray>>()?,
            )
        }
    };
    output(out, scalar)
}

/// `HHMMSS.ffffff` as microseconds since midnight.
fn from_number(v: f64) -> Result<Option<i64>> {
    if !v.is_finite() || v < 0.0 {
        return Ok(None);
    }
    let whole = v.trunc() as i64;
    let micros = ((v - v.trunc()) * 1e6).round() as i64;
    clock(whole / 10_000, (whole / 100) % 100, whole % 100, micros)
}

/// `H:MM[:SS[.ffffff]]`, or digits read as a number.
fn from_text(s: &str) -> Result<Option<i64>> {
    let s = s.trim();
    if !s.contains(':') {
        return match s.parse::<f64>() {
            Ok(v) => from_number(v),
            Err(_) => Ok(None),
        };
    }
    match parse_clock(s) {
        Some((h, m, sec, micros)) => clock(h, m, sec, micros),
        None => Ok(None),
    }
}

/// The hours, minutes, seconds and microseconds `H:MM[:SS[.ffffff]]` spells.
fn parse_clock(s: &str) -> Option<(i64, i64, i64, i64)> {
    let (clock_part, fraction) = match s.split_once('.') {
        Some((c, f)) => (c, f),
        None => (s, ""),
    };
    let mut parts = clock_part.split(':').map(|p| p.parse::<i64>().ok());
    let hours = parts.next()??;
    let minutes = parts.next()??;
    let seconds = match parts.next() {
        Some(s) => s?,
        None => 0,
    };
    if parts.next().is_some() || fraction.len() > 6 || !fraction.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let micros = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<6}").parse().ok()?
    };
    Some((hours, minutes, seconds, micros))
}

fn clock(hours: i64, minutes: i64, seconds: i64, micros: i64) -> Result<Option<i64>> {
    if minutes > 59 || seconds > 59 || hours < 0 {
        return Ok(None);
    }
    let total = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000 + micros;
    if total >= MICROS_PER_DAY {
        return datafusion::common::exec_err!(
            "TIME {hours}:{minutes:02}:{seconds:02} is 24 hours or more: Basalt's TIME holds one day"
        );
    }
    Ok(Some(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_text_as_mysql_reads_them() {
        let t = |h: i64, m: i64, s: i64| Some(((h * 60 + m) * 60 + s) * 1_000_000);
        assert_eq!(from_number(123456.0).unwrap(), t(12, 34, 56));
        assert_eq!(from_number(3456.0).unwrap(), t(0, 34, 56));
        assert_eq!(from_number(56.0).unwrap(), t(0, 0, 56));
        assert_eq!(from_number(61.0).unwrap(), None);
        assert_eq!(from_text("123456").unwrap(), t(12, 34, 56));
        assert_eq!(from_text("12:34").unwrap(), t(12, 34, 0));
        assert_eq!(
            from_text("1:02:03.5").unwrap(),
            Some(t(1, 2, 3).unwrap() + 500_000)
        );
        assert_eq!(from_text("abc").unwrap(), None);
        // Past one day: an error, not a wrong value.
        assert!(from_text("25:00:00").is_err());
        assert!(from_number(250000.0).is_err());
    }
}
