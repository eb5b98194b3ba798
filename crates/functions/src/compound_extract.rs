//! `EXTRACT(<compound unit> FROM x)` (the parser's `mysql_extract_compound('DAY_HOUR', x)`):
//! the unit's parts of x written one after another as one BIGINT, as MySQL's EXTRACT gives
//! them: `DAY_HOUR` of 1999-01-02 10:11:12 is 210, `HOUR_SECOND` of 10:11:12 is 101112,
//! `SECOND_MICROSECOND` of 10:11:12.5 is 12500000. A TIME counts whole days of 24 hours in
//! its DAY part (26:00:00 is day 1 hour 2) and a negative TIME gives a negative number. Text
//! is a DATETIME when it has a date (`1999-01-02`), otherwise a TIME (`02 10:11:12` is 2
//! days); NULL for text that is neither. A number of twelve or more digits is a DATETIME, a
//! shorter one a time span (`101112` is 10:11:12), as MariaDB reads them.

use crate::util::{arguments, output, plain_function};
use basalt_common::{datetime_text, time_value};
use chrono::{Datelike, NaiveDateTime, Timelike};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Float64Type, Time64MicrosecondType, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};

/// The name the parser calls (`basalt_sql`'s `EXTRACT_FUNCTION`).
const NAME: &str = "mysql_extract_compound";

/// `mysql_extract_compound(unit, x)`.
pub fn function() -> ScalarUDF {
    plain_function(
        NAME,
        Signature::any(2, Volatility::Immutable),
        DataType::Int64,
        extract,
    )
}

/// A value's parts, all non-negative, and its sign.
#[derive(Debug, Default, Clone, PartialEq)]
struct Parts {
    negative: bool,
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micro: i64,
}

impl Parts {
    fn of_datetime(t: NaiveDateTime) -> Parts {
        Parts {
            negative: false,
            year: i64::from(t.year()),
            month: i64::from(t.month()),
            day: i64::from(t.day()),
            hour: i64::from(t.hour()),
            minute: i64::from(t.minute()),
            second: i64::from(t.second()),
            micro: i64::from(t.nanosecond() / 1000),
        }
    }

    fn of_time(micros: i64) -> Parts {
        let m = micros.unsigned_abs() as i64;
        let seconds = m / 1_000_000;
        let hours = seconds / 3600;
        Parts {
            negative: micros < 0,
            year: 0,
            month: 0,
            day: hours / 24,
            hour: hours % 24,
            minute: seconds / 60 % 60,
            second: seconds % 60,
            micro: m % 1_000_000,
        }
    }

    /// The parts `unit` names, as one number.
    fn compound(&self, unit: &str) -> Option<i64> {
        let (d, h, mi, s, us) = (self.day, self.hour, self.minute, self.second, self.micro);
        let v = match unit.to_ascii_uppercase().as_str() {
            "YEAR_MONTH" => self.year * 100 + self.month,
            "DAY_HOUR" => d * 100 + h,
            "DAY_MINUTE" => (d * 100 + h) * 100 + mi,
            "DAY_SECOND" => ((d * 100 + h) * 100 + mi) * 100 + s,
            "DAY_MICROSECOND" => (((d * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
            "HOUR_MINUTE" => h * 100 + mi,
            "HOUR_SECOND" => (h * 100 + mi) * 100 + s,
            "HOUR_MICROSECOND" => ((h * 100 + mi) * 100 + s) * 1_000_000 + us,
            "MINUTE_SECOND" => mi * 100 + s,
            "MINUTE_MICROSECOND" => (mi * 100 + s) * 1_000_000 + us,
            "SECOND_MICROSECOND" => s * 1_000_000 + us,
            _ => return None,
        };
        Some(if self.negative { -v } else { v })
    }
}

/// Text as a DATETIME when it names a date, otherwise as a TIME.
fn parts_of_text(text: &str) -> Option<Parts> {
    let t = text.trim();
    let has_date = t.contains('-') && !t.starts_with('-') || !t.contains(':');
    if has_date {
        if let Some(dt) = datetime_text::parse_datetime(t) {
            return Some(Parts::of_datetime(dt));
        }
    }
    if let Some(parts) = day_time(t) {
        return Some(parts);
    }
    time_value::parse_text(t).map(|r| Parts::of_time(r.micros))
}

/// A number as EXTRACT reads it: twelve or more digits are a DATETIME (`YYYYMMDDhhmmss`),
/// fewer a time span `[H..H]HMMSS` of any length (`8385959` is day 34, 22:59:59).
fn parts_of_number(v: f64) -> Option<Parts> {
    if v.abs().trunc() >= 1e10 {
        let whole = v.trunc() as i64;
        let micros = ((v.abs() - v.abs().trunc()) * 1e6).round() as i64;
        let at = datetime_text::number_to_datetime(whole)?;
        return Some(Parts::of_datetime(
            at + chrono::Duration::microseconds(micros.min(999_999)),
        ));
    }
    let span = time_value::span_of_number(v)?;
    Some(Parts::of_time(i64::try_from(span).ok()?))
}

/// `[-][D ]H:MM[:SS[.ffffff]]` read as written, days and hours past TIME's range too
/// (`225 10:11:12` is 225 days: EXTRACT reads the text, it does not make a TIME of it).
fn day_time(t: &str) -> Option<Parts> {
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, t),
    };
    let (days, clock) = match t.split_once(' ') {
        Some((d, rest)) => (d.parse::<i64>().ok()?, rest.trim_start()),
        None => (0, t),
    };
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut fields = clock.split(':').map(|f| f.parse::<i64>().ok());
    let hours = fields.next()??;
    let minute = fields.next()??;
    let second = fields.next().unwrap_or(Some(0))?;
    if fields.next().is_some() || minute > 59 || second > 59 {
        return None;
    }
    let digits: String = fraction.chars().take(6).collect();
    let micro = if digits.is_empty() {
        0
    } else {
        digits.parse::<i64>().ok()? * 10i64.pow(6 - digits.len() as u32)
    };
    let hours = days.checked_mul(24)?.checked_add(hours)?;
    Some(Parts {
        negative,
        day: hours / 24,
        hour: hours % 24,
        minute,
        second,
        micro,
        ..Parts::default()
    })
}

fn extract(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let unit = match &args.args[0] {
        ColumnarValue::Scalar(ScalarValue::Utf8(Some(u))) => u.clone(),
        _ => return exec_err!("mysql_extract_compound: the unit must be a literal"),
    };
    let (arrays, scalar) = arguments(args)?;
    let x = &arrays[1];
    let parts: Vec<Option<Parts>> = match x.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => crate::mysql_values::texts(x)?
            .into_iter()
            .map(|t| t.and_then(|t| parts_of_text(&t)))
            .collect(),
        DataType::Time32(_) | DataType::Time64(_) => {
            let t = cast(x, &DataType::Time64(TimeUnit::Microsecond))?;
            t.as_primitive::<Time64MicrosecondType>()
                .iter()
                .map(|v| v.map(Parts::of_time))
                .collect()
        }
        DataType::Null => vec![None; x.len()],
        t if t.is_numeric() => {
            let numbers = cast(x, &DataType::Float64)?;
            numbers
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.and_then(parts_of_number))
                .collect()
        }
        _ => {
            let t: ArrayRef = cast(x, &DataType::Timestamp(TimeUnit::Microsecond, None))?;
            let t = t.as_primitive::<TimestampMicrosecondType>();
            (0..t.len())
                .map(|i| {
                    if t.is_null(i) {
                        None
                    } else {
                        t.value_as_datetime(i).map(Parts::of_datetime)
                    }
                })
                .collect()
        }
    };
    let out: Int64Array = parts
        .into_iter()
        .map(|p| p.and_then(|p| p.compound(&unit)))
        .collect();
    output(std::sync::Arc::new(out), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_written_one_after_another() {
        let dt = parts_of_text("1999-01-02 10:11:12").unwrap();
        assert_eq!(dt.compound("DAY_HOUR"), Some(210));
        assert_eq!(
            parts_of_text("1999-01-02").unwrap().compound("YEAR_MONTH"),
            Some(199901)
        );
        assert_eq!(
            parts_of_text("02 10:11:12").unwrap().compound("DAY_MINUTE"),
            Some(21011)
        );
        assert_eq!(
            parts_of_text("225 10:11:12")
                .unwrap()
                .compound("DAY_SECOND"),
            Some(225101112)
        );
        assert_eq!(
            parts_of_text("10:11:12").unwrap().compound("HOUR_MINUTE"),
            Some(1011)
        );
        assert_eq!(
            parts_of_text("10:11:12").unwrap().compound("MINUTE_SECOND"),
            Some(1112)
        );
        assert_eq!(
            Parts::of_time(26 * 3_600_000_000).compound("DAY_HOUR"),
            Some(102)
        );
        assert_eq!(
            Parts::of_time(-(3_600_000_000 + 120_500_000)).compound("HOUR_MICROSECOND"),
            Some(-10200500000)
        );
        assert_eq!(parts_of_text("x"), None);
        assert_eq!(
            parts_of_text("-1 02:03:04.5")
                .unwrap()
                .compound("DAY_MICROSECOND"),
            Some(-1020304500000)
        );
    }
}
