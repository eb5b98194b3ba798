//! Doris's calendar functions that MySQL lacks, over DATEs (the statement rewrite reads text
//! and DATETIMEs as DATE first):
//! - `months_between(end, start[, round])`: months from `start` to `end` as a DOUBLE, Oracle's
//!   way: whole months when both days are equal or both are month ends, else the day
//!   difference counts as 1/31 of a month; rounded to 8 decimals unless `round` is FALSE;
//! - `next_day(d, dow)` / `previous_day(d, dow)`: the first date after (before) `d` that falls
//!   on the day of week `dow`, written in full, by its first two or first three letters
//!   (`'Monday'`, `'Mo'`, `'Mon'`, any case); another `dow` is an error naming it; a result
//!   past the calendar's ends stays at 0000-01-01 / 9999-12-31 (year 0 is a DATE, as in Doris;
//!   its January and February are the proleptic Gregorian calendar's, a day off MySQL's and
//!   Doris's, which count year 0 as no leap year);
//! - `to_monday(d)`: the Monday of `d`'s week (1970-01-01 to 1970-01-04 give 1970-01-01, as
//!   in Doris);
//! - `year_of_week(d)` / `yow(d)`: the ISO 8601 week-numbering year;
//! - `century(d)`: `(year - 1) / 100 + 1`;
//! - `to_iso8601(x)`: a DATE as `YYYY-MM-DD`, a DATETIME as `YYYY-MM-DDTHH:MM:SS.000000`
//!   rounded to the second;
//! - `from_iso8601_date(s)`: the DATE an ISO 8601 date spells (`YYYY`, `YYYY-MM`,
//!   `YYYY-MM-DD`, `YYYY-DDD`, `YYYY-Www`, `YYYY-Www-D`), NULL for anything else;
//! - `human_readable_seconds(n)`: `n` seconds (absolute, rounded) as weeks, days, hours,
//!   minutes and seconds (`1 hour, 2 minutes, 42 seconds`; `0 seconds`), NULL beyond 2^63.
//!
//! A NULL argument gives NULL; a result outside years 1..9999 is NULL.

use crate::calendar_days::{date_of, epoch_days};
use crate::util::{arguments, output, plain_function};
use chrono::{DateTime, Datelike, Days, NaiveDate, Weekday};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Float64Array, Int64Array, StringArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Float64Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let exact = |types: Vec<DataType>| TypeSignature::Exact(types);
    let dates = vec![DataType::Date32, DataType::Date32];
    let mut with_round = dates.clone();
    with_round.push(DataType::Boolean);
    let day_of_week = || {
        Signature::exact(
            vec![DataType::Date32, DataType::Utf8],
            Volatility::Immutable,
        )
    };
    vec![
        plain_function(
            "months_between",
            Signature::one_of(vec![exact(dates), exact(with_round)], Volatility::Immutable),
            DataType::Float64,
            months_between,
        ),
        plain_function("next_day", day_of_week(), DataType::Date32, next_day),
        plain_function(
            "previous_day",
            day_of_week(),
            DataType::Date32,
            previous_day,
        ),
        plain_function("to_monday", date(), DataType::Date32, to_monday),
        plain_function("year_of_week", date(), DataType::Int64, year_of_week),
        plain_function("yow", date(), DataType::Int64, year_of_week),
        plain_function("century", date(), DataType::Int64, century),
        plain_function(
            "to_iso8601",
            Signature::one_of(
                vec![
                    exact(vec![DataType::Date32]),
                    exact(vec![DataType::Timestamp(TimeUnit::Microsecond, None)]),
                ],
                Volatility::Immutable,
            ),
            DataType::Utf8,
            to_iso8601,
        ),
        plain_function(
            "from_iso8601_date",
            Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
            DataType::Date32,
            from_iso8601_date,
        ),
        plain_function(
            "human_readable_seconds",
            Signature::uniform(1, vec![DataType::Float64], Volatility::Immutable),
            DataType::Utf8,
            human_readable_seconds,
        ),
    ]
}

fn date() -> Signature {
    Signature::exact(vec![DataType::Date32], Volatility::Immutable)
}

/// Each DATE row through `f`.
fn per_date<T>(
    args: &ScalarFunctionArgs,
    f: impl Fn(NaiveDate) -> Option<T>,
) -> Result<(Vec<Option<T>>, bool)> {
    let (arrays, scalar) = arguments(args)?;
    let dates = arrays[0].as_primitive::<Date32Type>();
    Ok((
        dates
            .iter()
            .map(|d| d.and_then(date_of).and_then(&f))
            .collect(),
        scalar,
    ))
}

fn to_monday(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (days, scalar) = per_date(args, |d| {
        let monday =
            d.checked_sub_days(Days::new(u64::from(d.weekday().num_days_from_monday())))?;
        let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
        // Doris: the days before the first Monday after the epoch go to the epoch.
        let monday = if d >= epoch && monday < epoch {
            epoch
        } else {
            monday
        };
        epoch_days(monday)
    })?;
    output(Arc::new(Date32Array::from(days)) as ArrayRef, scalar)
}

fn year_of_week(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (years, scalar) = per_date(args, |d| Some(i64::from(d.iso_week().year())))?;
    output(Arc::new(Int64Array::from(years)) as ArrayRef, scalar)
}

fn century(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (centuries, scalar) = per_date(args, |d| Some(i64::from((d.year() - 1) / 100 + 1)))?;
    output(Arc::new(Int64Array::from(centuries)) as ArrayRef, scalar)
}

fn to_iso8601(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let text: StringArray = match arrays[0].data_type() {
        DataType::Date32 => arrays[0]
            .as_primitive::<Date32Type>()
            .iter()
            .map(|d| {
                d.and_then(date_of)
                    .map(|d| d.format("%Y-%m-%d").to_string())
            })
            .collect(),
        _ => {
            let micros = cast(
                &arrays[0],
                &DataType::Timestamp(TimeUnit::Microsecond, None),
            )?;
            micros
                .as_primitive::<TimestampMicrosecondType>()
                .iter()
                .map(|m| {
                    let seconds =
                        m?.div_euclid(1_000_000) + i64::from(m?.rem_euclid(1_000_000) >= 500_000);
                    let t = DateTime::from_timestamp(seconds, 0)?.naive_utc();
                    Some(t.format("%Y-%m-%dT%H:%M:%S.000000").to_string())
                })
                .collect()
        }
    };
    output(Arc::new(text) as ArrayRef, scalar)
}

fn from_iso8601_date(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = arrays[0].as_string::<i32>();
    let out: Date32Array = texts
        .iter()
        .map(|t| t.and_then(iso8601_date).and_then(epoch_days))
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

/// The date an ISO 8601 calendar, ordinal or week date spells.
fn iso8601_date(text: &str) -> Option<NaiveDate> {
    let parts: Vec<&str> = text.split('-').collect();
    let number = |p: &str, len: usize| -> Option<u32> {
        (p.len() == len && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse().ok())?
    };
    let year = i32::try_from(number(parts.first()?, 4)?).ok()?;
    match parts[1..] {
        [] => NaiveDate::from_ymd_opt(year, 1, 1),
        [week] if week.starts_with('W') => {
            NaiveDate::from_isoywd_opt(year, number(&week[1..], 2)?, Weekday::Mon)
        }
        [week, day] if week.starts_with('W') => {
            let day =
                Weekday::try_from(u8::try_from(number(day, 1)?.checked_sub(1)?).ok()?).ok()?;
            NaiveDate::from_isoywd_opt(year, number(&week[1..], 2)?, day)
        }
        [month] if month.len() == 2 => NaiveDate::from_ymd_opt(year, number(month, 2)?, 1),
        [day] => NaiveDate::from_yo_opt(year, number(day, 3)?),
        [month, day] => NaiveDate::from_ymd_opt(year, number(month, 2)?, number(day, 2)?),
        _ => None,
    }
}

fn human_readable_seconds(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let seconds = cast(&arrays[0], &DataType::Float64)?;
    let out: StringArray = seconds
        .as_primitive::<Float64Type>()
        .iter()
        .map(|s| s.and_then(spelled_seconds))
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

/// `seconds` as `93 weeks, 1 day, 8 hours, 31 minutes, 3 seconds`.
fn spelled_seconds(seconds: f64) -> Option<String> {
    let whole = seconds.abs().round();
    if !whole.is_finite() || whole >= 2f64.powi(63) {
        return None;
    }
    let mut left = whole as u64;
    let mut parts = Vec::new();
    for (unit, size) in [
        ("week", 604_800),
        ("day", 86_400),
        ("hour", 3_600),
        ("minute", 60),
        ("second", 1),
    ] {
        let n = left / size;
        left %= size;
        if n > 0 {
            parts.push(format!("{n} {unit}{}", if n == 1 { "" } else { "s" }));
        }
    }
    Some(if parts.is_empty() {
        "0 seconds".to_string()
    } else {
        parts.join(", ")
    })
}

fn months_between(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let end = arrays[0].as_primitive::<Date32Type>();
    let start = arrays[1].as_primitive::<Date32Type>();
    let round: Option<BooleanArray> = match arrays.get(2) {
        Some(r) => Some(cast(r, &DataType::Boolean)?.as_boolean().clone()),
        None => None,
    };
    let out: Float64Array = (0..end.len())
        .map(|i| {
            if end.is_null(i) || start.is_null(i) {
                return None;
            }
            let rounded = match &round {
                Some(r) if r.is_null(i) => return None,
                Some(r) => r.value(i),
                None => true,
            };
            let months = months_from(date_of(start.value(i))?, date_of(end.value(i))?);
            Some(if rounded { round8(months) } else { months })
        })
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

/// Months from `start` to `end` (negative when `end` is earlier).
fn months_from(start: NaiveDate, end: NaiveDate) -> f64 {
    let whole = (end.year() - start.year()) * 12 + end.month() as i32 - start.month() as i32;
    let month_end = |d: NaiveDate| d.succ_opt().is_none_or(|next| next.month() != d.month());
    if end.day() == start.day() || (month_end(end) && month_end(start)) {
        return f64::from(whole);
    }
    f64::from(whole) + (f64::from(end.day()) - f64::from(start.day())) / 31.0
}

fn round8(x: f64) -> f64 {
    let scaled = x * 1e8;
    if scaled.is_finite() {
        scaled.round() / 1e8
    } else {
        x
    }
}

fn next_day(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    shifted_to_weekday("next_day", args, true)
}

fn previous_day(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    shifted_to_weekday("previous_day", args, false)
}

fn shifted_to_weekday(name: &str, args: &ScalarFunctionArgs, later: bool) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let dates = arrays[0].as_primitive::<Date32Type>();
    let names = cast(&arrays[1], &DataType::Utf8)?;
    let names = names.as_string::<i32>();
    let mut out = Vec::with_capacity(dates.len());
    for i in 0..dates.len() {
        if dates.is_null(i) || names.is_null(i) {
            out.push(None);
            continue;
        }
        let Some(target) = weekday_named(names.value(i)) else {
            return exec_err!("{name}: '{}' is not a day of the week", names.value(i));
        };
        let from = date_of(dates.value(i));
        let edge = if later {
            NaiveDate::from_ymd_opt(9999, 12, 31)
        } else {
            NaiveDate::from_ymd_opt(0, 1, 1)
        };
        let stepped = from.map(|d| {
            step_to(d, target, later)
                .filter(|s| (0..=9999).contains(&s.year()))
                .or(edge)
                .unwrap_or(d)
        });
        // Year 0 is a DATE here (`epoch_days` keeps years 1..9999 for the other functions).
        out.push(stepped.map(|d| d.num_days_from_ce() - 719_163));
    }
    output(Arc::new(Date32Array::from(out)) as ArrayRef, scalar)
}

/// The first date after (`later`) or before `d` on `target`.
fn step_to(d: NaiveDate, target: Weekday, later: bool) -> Option<NaiveDate> {
    let from = d.weekday().num_days_from_monday();
    let to = target.num_days_from_monday();
    if later {
        let ahead = (to + 7 - from) % 7;
        d.checked_add_days(Days::new(u64::from(if ahead == 0 { 7 } else { ahead })))
    } else {
        let back = (from + 7 - to) % 7;
        d.checked_sub_days(Days::new(u64::from(if back == 0 { 7 } else { back })))
    }
}

/// A day of the week by its full English name, first two or first three letters, any case.
fn weekday_named(name: &str) -> Option<Weekday> {
    const DAYS: [(&str, Weekday); 7] = [
        ("monday", Weekday::Mon),
        ("tuesday", Weekday::Tue),
        ("wednesday", Weekday::Wed),
        ("thursday", Weekday::Thu),
        ("friday", Weekday::Fri),
        ("saturday", Weekday::Sat),
        ("sunday", Weekday::Sun),
    ];
    let name = name.trim().to_ascii_lowercase();
    DAYS.iter()
        .find(|(full, _)| name == *full || name == full[..2] || name == full[..3])
        .map(|(_, day)| *day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("a date")
    }

    #[test]
    fn months_between_counts_days_as_31sts_unless_the_days_match() {
        assert_eq!(
            round8(months_from(date(2020, 10, 25), date(2020, 12, 26))),
            2.03225806
        );
        assert_eq!(months_from(date(2024, 1, 31), date(2024, 2, 29)), 1.0);
        assert_eq!(months_from(date(2024, 1, 15), date(2024, 3, 15)), 2.0);
        assert_eq!(
            round8(months_from(date(2024, 1, 30), date(2024, 2, 29))),
            0.96774194
        );
        assert_eq!(
            months_from(date(2020, 12, 26), date(2020, 10, 25)),
            -2.032258064516129
        );
    }

    #[test]
    fn weekdays_step_strictly_forward_or_back() {
        let thursday = date(2023, 4, 6);
        assert_eq!(
            step_to(thursday, Weekday::Mon, true),
            Some(date(2023, 4, 10))
        );
        assert_eq!(
            step_to(thursday, Weekday::Thu, true),
            Some(date(2023, 4, 13))
        );
        assert_eq!(
            step_to(thursday, Weekday::Thu, false),
            Some(date(2023, 3, 30))
        );
        assert_eq!(
            step_to(thursday, Weekday::Mon, false),
            Some(date(2023, 4, 3))
        );
        assert_eq!(weekday_named("TUE"), Some(Weekday::Tue));
        assert_eq!(weekday_named("Su"), Some(Weekday::Sun));
        assert_eq!(weekday_named("Monday"), Some(Weekday::Mon));
        assert_eq!(weekday_named("Mond"), None);
    }

    #[test]
    fn iso8601_dates_of_every_documented_form() {
        assert_eq!(iso8601_date("2023"), Some(date(2023, 1, 1)));
        assert_eq!(iso8601_date("2023-10"), Some(date(2023, 10, 1)));
        assert_eq!(iso8601_date("2023-10-05"), Some(date(2023, 10, 5)));
        assert_eq!(iso8601_date("2024-366"), Some(date(2024, 12, 31)));
        assert_eq!(iso8601_date("2021-060"), Some(date(2021, 3, 1)));
        assert_eq!(iso8601_date("0522-W01-1"), Some(date(521, 12, 29)));
        assert_eq!(iso8601_date("0522-W01-4"), Some(date(522, 1, 1)));
        assert_eq!(iso8601_date("0522-W01"), Some(date(521, 12, 29)));
        assert_eq!(iso8601_date("2023-10-01T12:34:10"), None);
        assert_eq!(iso8601_date("2024-400"), None);
        assert_eq!(iso8601_date("2024-W01-8"), None);
    }

    #[test]
    fn seconds_are_spelled_in_units_from_weeks_down() {
        assert_eq!(spelled_seconds(0.0).as_deref(), Some("0 seconds"));
        assert_eq!(
            spelled_seconds(96.0).as_deref(),
            Some("1 minute, 36 seconds")
        );
        assert_eq!(spelled_seconds(3601.0).as_deref(), Some("1 hour, 1 second"));
        assert_eq!(
            spelled_seconds(56_363_463.0).as_deref(),
            Some("93 weeks, 1 day, 8 hours, 31 minutes, 3 seconds")
        );
        assert_eq!(
            spelled_seconds(535_333.951_388_888_9).as_deref(),
            Some("6 days, 4 hours, 42 minutes, 14 seconds")
        );
        assert_eq!(spelled_seconds(-60.0).as_deref(), Some("1 minute"));
        assert_eq!(spelled_seconds(1e19), None);
        assert_eq!(spelled_seconds(f64::NAN), None);
    }
}
