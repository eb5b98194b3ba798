//! Date arithmetic by a count that need not be a literal: Doris's `days_add(d, n)`,
//! `months_sub(d, n)`, .. (years down to microseconds) and `days_diff(end, start)`, ..; MySQL's
//! `DATE_ADD(d, INTERVAL expr unit)`, `TIMESTAMPADD` and `TIMESTAMPDIFF` are rewritten onto
//! them. Month arithmetic keeps the day where it exists and otherwise takes the month's last
//! day (2024-01-31 plus one month is 2024-02-29); a result outside years 0000-9999 is NULL.
//! A DATE plus days or longer stays a DATE; plus hours or shorter it becomes a DATETIME.
//! `TIMEDIFF(a, b)` is `a - b` of two DATETIMEs or two TIMEs as a TIME, clipped to
//! ±838:59:59 as MySQL's is.

use chrono::{DateTime, Datelike, Months, NaiveDate, NaiveDateTime, TimeDelta, Timelike};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, Int64Array, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Int64Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// A unit of date arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

pub(crate) const UNITS: [(Unit, &str); 10] = [
    (Unit::Year, "year"),
    (Unit::Quarter, "quarter"),
    (Unit::Month, "month"),
    (Unit::Week, "week"),
    (Unit::Day, "day"),
    (Unit::Hour, "hour"),
    (Unit::Minute, "minute"),
    (Unit::Second, "second"),
    (Unit::Millisecond, "millisecond"),
    (Unit::Microsecond, "microsecond"),
];

impl Unit {
    /// MySQL's unit keyword (`DAY`, `MONTH`, .., case-insensitive; `SQL_TSI_DAY` too).
    pub fn parse(word: &str) -> Option<Unit> {
        let word = word.to_ascii_lowercase();
        let word = word.strip_prefix("sql_tsi_").unwrap_or(&word);
        let word = if word == "frac_second" {
            "microsecond"
        } else {
            word
        };
        UNITS.iter().find(|(_, n)| *n == word).map(|(u, _)| *u)
    }

    pub(crate) fn name(self) -> &'static str {
        UNITS
            .iter()
            .find(|(u, _)| *u == self)
            .map_or("day", |(_, n)| n)
    }

    /// Doris's function adding `self`s: `days_add`, `months_add`, ..
    pub fn add_function(self) -> String {
        format!("{}s_add", self.name())
    }

    /// Doris's function subtracting `self`s: `days_sub`, `months_sub`, ..
    pub fn sub_function(self) -> String {
        format!("{}s_sub", self.name())
    }

    /// Doris's function counting `self`s between two dates: `days_diff`, ..
    pub fn diff_function(self) -> String {
        format!("{}s_diff", self.name())
    }

    /// Microseconds in one unit; `None` for the calendar units counted in months.
    pub(crate) fn micros(self) -> Option<i64> {
        Some(match self {
            Unit::Year | Unit::Quarter | Unit::Month => return None,
            Unit::Week => 7 * 86_400_000_000,
            Unit::Day => 86_400_000_000,
            Unit::Hour => 3_600_000_000,
            Unit::Minute => 60_000_000,
            Unit::Second => 1_000_000,
            Unit::Millisecond => 1_000,
            Unit::Microsecond => 1,
        })
    }

    pub(crate) fn months(self) -> i64 {
        match self {
            Unit::Year => 12,
            Unit::Quarter => 3,
            _ => 1,
        }
    }
}

/// Every `<unit>s_add`, `<unit>s_sub` and `<unit>s_diff`, and `timediff`.
pub fn functions() -> Vec<ScalarUDF> {
    UNITS
        .iter()
        .flat_map(|(unit, _)| {
            [
                ScalarUDF::new_from_impl(DateAdd::new(*unit, 1)),
                ScalarUDF::new_from_impl(DateAdd::new(*unit, -1)),
                ScalarUDF::new_from_impl(DateDiff::new(*unit)),
            ]
        })
        .chain(std::iter::once(ScalarUDF::new_from_impl(TimeDiff {
            signature: Signature::user_defined(Volatility::Immutable),
        })))
        .collect()
}

/// `<unit>s_add`.
pub(crate) fn adding(unit: Unit) -> ScalarUDF {
    ScalarUDF::new_from_impl(DateAdd::new(unit, 1))
}

fn day_zero() -> NaiveDate {
    NaiveDate::default()
}

pub(crate) fn in_range(dt: NaiveDateTime) -> Option<NaiveDateTime> {
    (0..=9999).contains(&dt.year()).then_some(dt)
}

fn from_micros(us: i64) -> Option<NaiveDateTime> {
    DateTime::from_timestamp_micros(us).map(|d| d.naive_utc())
}

fn from_days(days: i32) -> Option<NaiveDateTime> {
    day_zero()
        .checked_add_signed(TimeDelta::try_days(days as i64)?)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

/// `dt` plus `n` units; `None` past the date range.
fn add(dt: NaiveDateTime, n: i64, unit: Unit) -> Option<NaiveDateTime> {
    let moved = match unit.micros() {
        Some(us) => dt.checked_add_signed(TimeDelta::microseconds(n.checked_mul(us)?))?,
        None => {
            let months = n.checked_mul(unit.months())?;
            let count = Months::new(u32::try_from(months.unsigned_abs()).ok()?);
            if months >= 0 {
                dt.checked_add_months(count)?
            } else {
                dt.checked_sub_months(count)?
            }
        }
    };
    in_range(moved)
}

/// Whole units from `start` to `end`, as MySQL's TIMESTAMPDIFF counts them (truncated).
fn diff(start: NaiveDateTime, end: NaiveDateTime, unit: Unit) -> Option<i64> {
    match unit.micros() {
        Some(us) => Some((end - start).num_microseconds()? / us),
        None => {
            let mut months = (end.year() as i64 * 12 + end.month() as i64)
                - (start.year() as i64 * 12 + start.month() as i64);
            let rest = |d: NaiveDateTime| (d.day(), d.num_seconds_from_midnight(), d.nanosecond());
            if months > 0 && rest(end) < rest(start) {
                months -= 1;
            } else if months < 0 && rest(end) > rest(start) {
                months += 1;
            }
            Some(months / unit.months())
        }
    }
}

/// The temporal argument as date-times.
pub(crate) fn datetimes(value: &ArrayRef) -> Result<Vec<Option<NaiveDateTime>>> {
    Ok(match value.data_type() {
        DataType::Date32 => value
            .as_primitive::<Date32Type>()
            .iter()
            .map(|d| d.and_then(from_days))
            .collect(),
        DataType::Null => vec![None; value.len()],
        _ => cast(value, &DataType::Timestamp(TimeUnit::Microsecond, None))?
            .as_primitive::<TimestampMicrosecondType>()
            .iter()
            .map(|us| us.and_then(from_micros))
            .collect(),
    })
}

pub(crate) fn temporal_input(t: &DataType) -> DataType {
    match t {
        DataType::Date32 | DataType::Null => t.clone(),
        _ => DataType::Timestamp(TimeUnit::Microsecond, None),
    }
}

/// `<unit>s_add(d, n)` (sign 1) and `<unit>s_sub(d, n)` (sign -1).
#[derive(Debug, PartialEq, Eq, Hash)]
struct DateAdd {
    name: String,
    unit: Unit,
    sign: i64,
    signature: Signature,
}

impl DateAdd {
    fn new(unit: Unit, sign: i64) -> DateAdd {
        DateAdd {
            name: if sign > 0 {
                unit.add_function()
            } else {
                unit.sub_function()
            },
            unit,
            sign,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }

    /// A DATE stays a DATE when whole days are added.
    fn keeps_date(&self, input: &DataType) -> bool {
        matches!(input, DataType::Date32)
            && self.unit.micros().is_none_or(|us| us % 86_400_000_000 == 0)
    }
}

impl ScalarUDFImpl for DateAdd {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [d, n] if is_time(d) => Ok(vec![TIME, count_input(n)]),
            [d, n] => Ok(vec![temporal_input(d), count_input(n)]),
            _ => exec_err!("{} takes a date and a count", self.name),
        }
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(match args.first() {
            Some(t) if is_time(t) => TIME,
            Some(t) if self.keeps_date(t) => DataType::Date32,
            _ => DataType::Timestamp(TimeUnit::Microsecond, None),
        })
    }

    /// A TIME keeps its declared fraction digits (TIME(1) plus an hour is a TIME(1)), more for
    /// milliseconds or microseconds.
    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<datafusion::arrow::datatypes::FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let field =
            datafusion::arrow::datatypes::Field::new(self.name(), self.return_type(&types)?, true);
        let digits = match args.arg_fields {
            [input, ..] if is_time(input.data_type()) => {
                basalt_common::types::fraction_digits(input).map(|d| {
                    d.max(match self.unit {
                        Unit::Millisecond => 3,
                        Unit::Microsecond => 6,
                        _ => 0,
                    })
                })
            }
            // Seconds with a fraction: the count's digits (MySQL's DATETIME(2) for a
            // DECIMAL(4,2) count, DATETIME(6) for a DOUBLE), or the value's if it has more.
            [input, count] if self.unit == Unit::Second => count_digits(count.data_type())
                .map(|d| d.max(basalt_common::types::fraction_digits(input).unwrap_or(0))),
            _ => None,
        };
        Ok(Arc::new(match digits {
            Some(d) => field.with_metadata(std::collections::HashMap::from([(
                basalt_common::types::FRACTION_DIGITS_KEY.to_string(),
                d.to_string(),
            )])),
            None => field,
        }))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        if is_time(arrays[0].data_type()) {
            let moved = shift_times(&arrays[0], &arrays[1], self.unit, self.sign)?;
            return crate::util::output(moved, scalar);
        }
        let (counts, unit) = whole_counts(&arrays[1], self.unit)?;
        let keeps_date = self.keeps_date(arrays[0].data_type());
        let dates = datetimes(&arrays[0])?;
        let moved = dates.into_iter().zip(counts).map(|(d, n)| {
            let n = n?.checked_mul(self.sign)?;
            add(d?, n, unit)
        });
        let out: ArrayRef = if keeps_date {
            Arc::new(
                moved
                    .map(|d| d.map(|d| (d.date() - day_zero()).num_days() as i32))
                    .collect::<Date32Array>(),
            )
        } else {
            Arc::new(
                moved
                    .map(|d| d.map(|d| d.and_utc().timestamp_micros()))
                    .collect::<TimestampMicrosecondArray>(),
            )
        };
        crate::util::output(out, scalar)
    }
}

const TIME: DataType = DataType::Time64(TimeUnit::Microsecond);

/// The type a count is read as: a DECIMAL or a DOUBLE as it is (its fraction counts), any
/// other value as a BIGINT.
fn count_input(t: &DataType) -> DataType {
    match t {
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..)
        | DataType::Float64 => t.clone(),
        DataType::Float16 | DataType::Float32 => DataType::Float64,
        _ => DataType::Int64,
    }
}

/// The fraction digits a count of seconds of type `t` gives (`None`: whole seconds).
fn count_digits(t: &DataType) -> Option<u8> {
    match t {
        DataType::Decimal32(_, s)
        | DataType::Decimal64(_, s)
        | DataType::Decimal128(_, s)
        | DataType::Decimal256(_, s) => (*s > 0).then(|| (*s).min(6) as u8),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Some(6),
        _ => None,
    }
}

/// `counts` as whole numbers of the unit to move by, as MySQL reads a DECIMAL or DOUBLE
/// count: rounded half away from zero (`INTERVAL 1.5 DAY` is two days), except that seconds
/// keep their fraction to the microsecond (the counts are then microseconds).
fn whole_counts(counts: &ArrayRef, unit: Unit) -> Result<(Vec<Option<i64>>, Unit)> {
    let (unit, scale) = match (count_digits(counts.data_type()), unit) {
        (Some(_), Unit::Second) => (Unit::Microsecond, 6),
        _ => (unit, 0),
    };
    let whole = match counts.data_type() {
        DataType::Int64 => counts.as_primitive::<Int64Type>().iter().collect(),
        DataType::Float64 => {
            let factor = 10f64.powi(scale);
            counts
                .as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                .iter()
                .map(|v| {
                    let v = (v? * factor).round();
                    // Past BIGINT the date is out of range anyway.
                    (v.abs() < 9.2e18).then_some(v as i64)
                })
                .collect()
        }
        _ => {
            // Arrow rescales a DECIMAL half away from zero.
            let target = DataType::Decimal256(76, scale as i8);
            let rescaled = datafusion::arrow::compute::cast_with_options(
                counts,
                &target,
                &datafusion::arrow::compute::CastOptions {
                    safe: true,
                    ..Default::default()
                },
            )?;
            rescaled
                .as_primitive::<datafusion::arrow::datatypes::Decimal256Type>()
                .iter()
                .map(|v| v?.to_i128().and_then(|v| i64::try_from(v).ok()))
                .collect()
        }
    };
    Ok((whole, unit))
}

/// TIME spans moved by `sign * n` units (MySQL's `TIME '10:00:00' + INTERVAL 1 HOUR` is
/// 11:00:00, plus one day 34:00:00): NULL past ±838:59:59 and for the calendar units (MySQL
/// has no month of a span).
fn shift_times(times: &ArrayRef, counts: &ArrayRef, unit: Unit, sign: i64) -> Result<ArrayRef> {
    use basalt_common::time_value::MAX_TIME_MICROS;
    use datafusion::arrow::array::Time64MicrosecondArray;
    use datafusion::arrow::datatypes::Time64MicrosecondType;
    let times = cast(times, &TIME)?;
    let (counts, unit) = whole_counts(counts, unit)?;
    let step = unit.micros();
    let out: Time64MicrosecondArray = times
        .as_primitive::<Time64MicrosecondType>()
        .iter()
        .zip(counts)
        .map(|(t, n)| {
            let shift = n?.checked_mul(sign)?.checked_mul(step?)?;
            t?.checked_add(shift).filter(|m| m.abs() <= MAX_TIME_MICROS)
        })
        .collect();
    Ok(Arc::new(out))
}

/// `<unit>s_diff(end, start)`: whole units from `start` to `end`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct DateDiff {
    name: String,
    unit: Unit,
    signature: Signature,
}

impl DateDiff {
    fn new(unit: Unit) -> DateDiff {
        DateDiff {
            name: unit.diff_function(),
            unit,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for DateDiff {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [a, b] => Ok(vec![temporal_input(a), temporal_input(b)]),
            _ => exec_err!("{} takes two dates", self.name),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let ends = datetimes(&arrays[0])?;
        let starts = datetimes(&arrays[1])?;
        let out: Int64Array = ends
            .into_iter()
            .zip(starts)
            .map(|(end, start)| diff(start?, end?, self.unit))
            .collect();
        crate::util::output(Arc::new(out), scalar)
    }
}

/// `timediff(a, b)`: `a - b` as a TIME.
#[derive(Debug, PartialEq, Eq, Hash)]
struct TimeDiff {
    signature: Signature,
}

impl ScalarUDFImpl for TimeDiff {
    fn name(&self) -> &str {
        "timediff"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        let time = DataType::Time64(TimeUnit::Microsecond);
        match args {
            // Two TIMEs (or a TIME and text read as one).
            [a, b] if is_time(a) || is_time(b) => Ok(vec![time.clone(), time]),
            // Text or numbers: each value is read as a DATETIME or a TIME, whichever it names.
            [a, b] if is_moment_input(a) && is_moment_input(b) => Ok(vec![a.clone(), b.clone()]),
            [a, b] => Ok(vec![temporal_input(a), temporal_input(b)]),
            _ => exec_err!("timediff takes two date-times"),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Time64(TimeUnit::Microsecond))
    }

    /// A TIME with the larger of the arguments' digits (a text literal's spelled ones, see
    /// [`crate::temporal_digits`]); where those are unknown, the largest declared (none
    /// declared: the digits the value needs, as Doris shows `-96:00:00.3337`).
    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> Result<datafusion::arrow::datatypes::FieldRef> {
        let precise = crate::temporal_digits::largest([
            crate::temporal_digits::precision_of(args.arg_fields, args.scalar_arguments, 0),
            crate::temporal_digits::precision_of(args.arg_fields, args.scalar_arguments, 1),
        ]);
        let digits = precise.unwrap_or_else(|| {
            args.arg_fields
                .iter()
                .map(|f| basalt_common::fraction_digits(f).unwrap_or(0))
                .max()
                .unwrap_or(0)
        });
        Ok(Arc::new(crate::temporal_digits::time_field(
            self.name(),
            Some(digits),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let digits = crate::temporal_digits::of_result(&args.return_field);
        let clip = |span: i128| crate::temporal_digits::clip_time(span, digits);
        let out: datafusion::arrow::array::Time64MicrosecondArray =
            if is_time(arrays[0].data_type()) {
                let (ends, starts) = (
                    arrays[0].as_primitive::<datafusion::arrow::datatypes::Time64MicrosecondType>(),
                    arrays[1].as_primitive::<datafusion::arrow::datatypes::Time64MicrosecondType>(),
                );
                ends.iter()
                    .zip(starts.iter())
                    .map(|(end, start)| Some(clip(i128::from(end?) - i128::from(start?))))
                    .collect()
            } else if is_moment_input(arrays[0].data_type())
                && is_moment_input(arrays[1].data_type())
            {
                let ends = moments(&arrays[0])?;
                let starts = moments(&arrays[1])?;
                ends.into_iter()
                    .zip(starts)
                    .map(|(end, start)| match (end?, start?) {
                        (Moment::At(e), Moment::At(s)) | (Moment::Span(e), Moment::Span(s)) => {
                            Some(clip(i128::from(e) - i128::from(s)))
                        }
                        // A DATETIME less a TIME (or the other way) is no span: NULL.
                        _ => None,
                    })
                    .collect()
            } else {
                let ends = datetimes(&arrays[0])?;
                let starts = datetimes(&arrays[1])?;
                ends.into_iter()
                    .zip(starts)
                    .map(|(end, start)| {
                        let span = (end? - start?).num_microseconds()?;
                        Some(clip(i128::from(span)))
                    })
                    .collect()
            };
        crate::util::output(Arc::new(out), scalar)
    }
}

/// Text or a number: TIMEDIFF reads each value as the DATETIME or the TIME it names.
fn is_moment_input(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) || t.is_numeric()
}

/// A value TIMEDIFF reads from text or a number: a DATETIME (microseconds since 1970) or a
/// TIME (a signed span).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Moment {
    At(i64),
    Span(i64),
}

/// Text naming a date (`2014-01-01 00:00:00`, digits past seven) as a DATETIME, other text or
/// numbers as a TIME (`'10:00:00.5'`, `385959`), as MySQL's TIMEDIFF reads them.
fn moments(values: &ArrayRef) -> Result<Vec<Option<Moment>>> {
    let at = |d: NaiveDateTime| Moment::At(d.and_utc().timestamp_micros());
    Ok(if values.data_type().is_numeric() {
        cast(values, &DataType::Float64)?
            .as_primitive::<datafusion::arrow::datatypes::Float64Type>()
            .iter()
            .map(|v| {
                let v = v?;
                if v.abs().trunc() > 9_999_999.0 {
                    let whole = v.trunc();
                    let fraction = ((v - whole) * 1e6).round() as i64;
                    let day = basalt_common::datetime_text::number_to_datetime(whole as i64)?;
                    Some(at(day + chrono::Duration::microseconds(fraction)))
                } else {
                    basalt_common::time_value::from_number(v).map(|t| Moment::Span(t.micros))
                }
            })
            .collect()
    } else {
        cast(values, &DataType::Utf8)?
            .as_string::<i32>()
            .iter()
            .map(|s| {
                let s = s?.trim();
                let names_a_date = s.len() >= 8 && s[1..].contains('-');
                if names_a_date {
                    basalt_common::datetime_text::parse_datetime(s).map(at)
                } else {
                    basalt_common::time_value::parse_text(s).map(|t| Moment::Span(t.micros))
                }
            })
            .collect()
    })
}

fn is_time(t: &DataType) -> bool {
    matches!(t, DataType::Time64(_) | DataType::Time32(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_differences_as_mysql_shows_them() {
        let us =
            |s: &str| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").expect("datetime");
        let span = |a: &str, b: &str| {
            basalt_common::time_value::format((us(a) - us(b)).num_microseconds().unwrap(), Some(0))
        };
        assert_eq!(
            span("2010-01-01 01:00:00", "2010-01-05 01:00:00"),
            "-96:00:00"
        );
        assert_eq!(
            span("2010-01-01 01:00:00.123", "2010-01-05 01:00:00.4567"),
            "-96:00:00.3337"
        );
        assert_eq!(
            span("2024-01-01 10:00:05", "2024-01-01 08:30:00"),
            "01:30:05"
        );
    }

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    #[test]
    fn adding_units() {
        let d = at("2024-01-31 10:00:00");
        assert_eq!(add(d, 1, Unit::Month), Some(at("2024-02-29 10:00:00")));
        assert_eq!(add(d, -2, Unit::Month), Some(at("2023-11-30 10:00:00")));
        assert_eq!(add(d, 1, Unit::Quarter), Some(at("2024-04-30 10:00:00")));
        assert_eq!(add(d, 3, Unit::Hour), Some(at("2024-01-31 13:00:00")));
        assert_eq!(add(d, -1, Unit::Week), Some(at("2024-01-24 10:00:00")));
        assert_eq!(add(at("9999-12-31 00:00:00"), 1, Unit::Day), None);
        assert_eq!(add(d, i64::MAX, Unit::Day), None);
        assert_eq!(add(d, i64::MIN, Unit::Year), None);
    }

    #[test]
    fn counting_units_as_timestampdiff() {
        let start = at("2024-01-31 10:00:00");
        assert_eq!(diff(start, at("2024-02-29 09:59:59"), Unit::Month), Some(0));
        assert_eq!(diff(start, at("2024-03-31 10:00:00"), Unit::Month), Some(2));
        assert_eq!(
            diff(at("2024-03-31 10:00:00"), start, Unit::Month),
            Some(-2)
        );
        assert_eq!(diff(start, at("2025-01-31 09:00:00"), Unit::Year), Some(0));
        assert_eq!(diff(start, at("2024-02-01 09:00:00"), Unit::Day), Some(0));
        assert_eq!(diff(start, at("2024-01-30 09:00:00"), Unit::Day), Some(-1));
        assert_eq!(
            diff(start, at("2024-01-31 10:01:30"), Unit::Second),
            Some(90)
        );
    }

    #[test]
    fn units_by_mysql_names() {
        assert_eq!(Unit::parse("DAY"), Some(Unit::Day));
        assert_eq!(Unit::parse("sql_tsi_month"), Some(Unit::Month));
        assert_eq!(Unit::parse("fortnight"), None);
        assert_eq!(Unit::Day.add_function(), "days_add");
        assert_eq!(Unit::Microsecond.diff_function(), "microseconds_diff");
    }
}
