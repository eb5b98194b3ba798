//! MySQL's functions of TIME values (signed spans within ±838:59:59, see
//! [`basalt_common::time_value`]): `MAKETIME(h, m, s)`, `ADDTIME(t, span)` / `SUBTIME(t, span)`
//! (a DATETIME moved by the span, or a TIME summed with it and clipped to the range) and
//! `TIME_FORMAT(t, format)` (the hour, minute, second and fraction specifiers; a date specifier
//! makes the result NULL, as MySQL's). Text arguments are read as `TIME(text)` reads them; a
//! text first argument of ADDTIME that names a DATETIME is moved as one and the result is text.

use crate::temporal_digits;
use crate::util::{arguments, output};
use basalt_common::time_value;
use chrono::NaiveDateTime;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, StringArray, Time64MicrosecondArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Float64Type, Time64MicrosecondType, TimeUnit, TimestampMicrosecondType,
};
use datafusion::arrow::datatypes::{Field, FieldRef};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::fmt::Write;
use std::sync::Arc;

const MICROS: i64 = 1_000_000;
const TIME: DataType = DataType::Time64(TimeUnit::Microsecond);
const DATETIME: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

/// `maketime`, `addtime`, `subtime` and `time_format`.
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(MakeTime {
            signature: Signature::any(3, Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(AddTime {
            name: "addtime",
            sign: 1,
            signature: Signature::any(2, Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(AddTime {
            name: "subtime",
            sign: -1,
            signature: Signature::any(2, Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(TimeFormat {
            signature: Signature::any(2, Volatility::Immutable),
        }),
    ]
}

/// Any value as TIME values, MySQL's reading (NULL for no time).
fn spans(values: &ArrayRef) -> Result<Vec<Option<i64>>> {
    let times = crate::time_cast::times(values, false)?;
    Ok(times
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .collect())
}

fn floats(values: &ArrayRef) -> Result<Vec<Option<f64>>> {
    Ok(cast(values, &DataType::Float64)?
        .as_primitive::<Float64Type>()
        .iter()
        .collect())
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MakeTime {
    signature: Signature,
}

impl ScalarUDFImpl for MakeTime {
    fn name(&self) -> &str {
        "maketime"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(TIME)
    }

    /// The seconds' declared digits (`MAKETIME(1, 2, 3.50)` is a TIME(2)).
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let digits = temporal_digits::declared_of(args.arg_fields, 2);
        Ok(Arc::new(temporal_digits::time_field(self.name(), digits)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let digits = temporal_digits::of_result(&args.return_field);
        let (hours, minutes, seconds) = (
            floats(&arrays[0])?,
            floats(&arrays[1])?,
            floats(&arrays[2])?,
        );
        let out: Time64MicrosecondArray = hours
            .into_iter()
            .zip(minutes)
            .zip(seconds)
            .map(|((h, m), s)| make_time(h?.trunc(), m?.trunc(), s?, digits))
            .collect();
        output(Arc::new(out), scalar)
    }
}

/// MAKETIME: minutes 0..59 and seconds below 60, else NULL; clipped to the range (and the
/// result's digits' nines).
fn make_time(hours: f64, minutes: f64, seconds: f64, digits: Option<u8>) -> Option<i64> {
    if !(0.0..60.0).contains(&minutes) || !(0.0..60.0).contains(&seconds) || !hours.is_finite() {
        return None;
    }
    let magnitude = hours.abs().min(1e9) * 3600.0 + minutes * 60.0;
    let micros = (magnitude * 1e6) as i128 + (seconds * 1e6).round() as i128;
    Some(temporal_digits::clip_time(
        if hours < 0.0 { -micros } else { micros },
        digits,
    ))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct AddTime {
    name: &'static str,
    sign: i64,
    signature: Signature,
}

impl ScalarUDFImpl for AddTime {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(match &args[0] {
            DataType::Timestamp(_, _) | DataType::Date32 | DataType::Date64 => DATETIME,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
            _ => TIME,
        })
    }

    /// A TIME or DATETIME with the larger of both arguments' digits (a text result writes
    /// six when its value has a fraction, as MySQL's).
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let returns = self.return_type(&types)?;
        let digits = match returns {
            DataType::Utf8 => Some(temporal_digits::MAX_DIGITS),
            _ => temporal_digits::largest([
                temporal_digits::precision_of(args.arg_fields, args.scalar_arguments, 0),
                temporal_digits::precision_of(args.arg_fields, args.scalar_arguments, 1),
            ]),
        };
        Ok(Arc::new(temporal_digits::marked(
            Field::new(self.name, returns, true),
            digits,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let digits = temporal_digits::of_result(&args.return_field);
        let shifts = shift_spans(&arrays[1])?;
        let shift = |s: Option<i128>| s.map(|s| s * i128::from(self.sign));
        let out: ArrayRef = match self.return_type(&[arrays[0].data_type().clone()])? {
            DataType::Timestamp(..) => {
                let starts = cast(&arrays[0], &DATETIME)?;
                let out: TimestampMicrosecondArray = starts
                    .as_primitive::<TimestampMicrosecondType>()
                    .iter()
                    .zip(shifts)
                    .map(|(start, s)| moved_datetime(start?, shift(s)?))
                    .collect();
                Arc::new(out)
            }
            DataType::Utf8 => {
                let texts = cast(&arrays[0], &DataType::Utf8)?;
                let out: StringArray = texts
                    .as_string::<i32>()
                    .iter()
                    .zip(shifts)
                    .map(|(text, s)| moved_text(text?, shift(s)?))
                    .collect();
                Arc::new(out)
            }
            _ => {
                let out: Time64MicrosecondArray = spans(&arrays[0])?
                    .into_iter()
                    .zip(shifts)
                    .map(|(t, s)| {
                        Some(temporal_digits::clip_time(
                            i128::from(t?) + shift(s)?,
                            digits,
                        ))
                    })
                    .collect();
                Arc::new(out)
            }
        };
        output(out, scalar)
    }
}

/// ADDTIME's second argument as spans of time, not clipped to the TIME range (MySQL adds
/// `'839:59:59'` or `8395959` to a DATETIME as they are): text and numbers as
/// `[-][D ]H..H:MM:SS[.f]` / `[-]H..HMMSS[.f]`, a TIME as it is; a DATETIME is no span (NULL).
fn shift_spans(values: &ArrayRef) -> Result<Vec<Option<i128>>> {
    Ok(match values.data_type() {
        DataType::Timestamp(..) | DataType::Null => vec![None; values.len()],
        DataType::Time32(_) | DataType::Time64(_) | DataType::Date32 | DataType::Date64 => {
            spans(values)?
                .into_iter()
                .map(|s| s.map(i128::from))
                .collect()
        }
        t if t.is_numeric() => floats(values)?
            .into_iter()
            .map(|v| time_value::span_of_number(v?))
            .collect(),
        _ => cast(values, &DataType::Utf8)?
            .as_string::<i32>()
            .iter()
            .map(|s| time_value::parse_text(s?).map(|r| r.span))
            .collect(),
    })
}

/// A DATETIME (microseconds) moved by a span; None outside years 0000..9999.
fn moved_datetime(start: i64, shift: i128) -> Option<i64> {
    let moved = i64::try_from(i128::from(start) + shift).ok()?;
    let at = chrono::DateTime::from_timestamp_micros(moved)?;
    (at.naive_utc().format("%Y").to_string().len() == 4).then_some(moved)
}

/// Text naming a DATETIME moved as one (text back), else read as a TIME and summed.
fn moved_text(text: &str, shift: i128) -> Option<String> {
    let trimmed = text.trim();
    let names_a_date = trimmed.len() >= 8 && trimmed[1..].contains('-');
    if names_a_date {
        let at = basalt_common::datetime_text::parse_datetime(trimmed)?;
        let micros = moved_datetime(at.and_utc().timestamp_micros(), shift)?;
        let moved: NaiveDateTime = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
        let mut out = moved.format("%Y-%m-%d %H:%M:%S").to_string();
        let fraction = micros.rem_euclid(MICROS);
        if fraction != 0 {
            let _ = write!(out, ".{fraction:06}");
        }
        return Some(out);
    }
    let time = time_value::parse_text(trimmed)?;
    Some(time_value::format(
        temporal_digits::clip_time(i128::from(time.micros) + shift, None),
        None,
    ))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct TimeFormat {
    signature: Signature,
}

impl ScalarUDFImpl for TimeFormat {
    fn name(&self) -> &str {
        "time_format"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        if arrays.len() != 2 {
            return exec_err!("time_format takes a time and a format");
        }
        let formats = cast(&arrays[1], &DataType::Utf8)?;
        let out: StringArray = spans(&arrays[0])?
            .into_iter()
            .zip(formats.as_string::<i32>().iter())
            .map(|(t, f)| format_time(t?, f?))
            .collect();
        output(Arc::new(out), scalar)
    }
}

/// TIME_FORMAT's text of `micros`; None when the format asks for a part of a date.
fn format_time(micros: i64, format: &str) -> Option<String> {
    let magnitude = micros.unsigned_abs() as i64;
    let seconds = magnitude / MICROS;
    let (hours, minutes, secs) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let hour12 = match hours % 12 {
        0 => 12,
        h => h,
    };
    let am_pm = if hours % 24 < 12 { "AM" } else { "PM" };
    let sign = if micros < 0 { "-" } else { "" };
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else {
            break;
        };
        let _ = match spec {
            'H' => write!(out, "{sign}{hours:02}"),
            'k' => write!(out, "{hours}"),
            'h' | 'I' => write!(out, "{hour12:02}"),
            'l' => write!(out, "{hour12}"),
            'i' => write!(out, "{minutes:02}"),
            's' | 'S' => write!(out, "{secs:02}"),
            'f' => write!(out, "{:06}", magnitude % MICROS),
            'p' => write!(out, "{am_pm}"),
            'r' => write!(out, "{hour12:02}:{minutes:02}:{secs:02} {am_pm}"),
            'T' => write!(out, "{hours:02}:{minutes:02}:{secs:02}"),
            'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v' | 'W'
            | 'w' | 'X' | 'x' | 'Y' | 'y' => return None,
            other => write!(out, "{other}"),
        };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_format_as_mariadb() {
        let t = -(100 * 3600 + 5 * 60 + 6) * MICROS - 500_000;
        assert_eq!(
            format_time(t, "%H|%k|%h|%I|%l|%i|%s|%S|%f|%p|%r|%T").as_deref(),
            Some("-100|100|04|04|4|05|06|06|500000|AM|04:05:06 AM|100:05:06")
        );
        assert_eq!(
            format_time(13 * 3600 * MICROS, "%h %p").as_deref(),
            Some("01 PM")
        );
        assert_eq!(format_time(0, "%Y"), None);
    }

    #[test]
    fn maketime_and_addtime() {
        assert_eq!(
            make_time(-1.0, 2.0, 3.5, Some(1)),
            Some(-(3723 * MICROS + 500_000))
        );
        assert_eq!(
            make_time(900.0, 0.0, 0.0, Some(0)),
            Some(time_value::MAX_TIME_MICROS)
        );
        assert_eq!(
            make_time(900.0, 0.0, 0.1, Some(1)),
            Some(time_value::MAX_TIME_MICROS + 900_000)
        );
        assert_eq!(make_time(1.0, 60.0, 0.0, None), None);
        assert_eq!(
            moved_text("10:00:00", -(11 * 3600 * i128::from(MICROS)) - 500_000).as_deref(),
            Some("-01:00:00.500000")
        );
        assert_eq!(
            moved_text("2020-01-01 10:00:00", -(34 * 3600 * i128::from(MICROS))).as_deref(),
            Some("2019-12-31 00:00:00")
        );
    }
}
