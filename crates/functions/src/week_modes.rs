//! MySQL's `WEEK(date[, mode])` and `YEARWEEK(date[, mode])` with the eight week modes: which
//! day starts a week (Sunday or Monday), whether weeks count from 0 or 1, and whether week 1
//! is the first week with four or more days of the year or the first with the week's start day.
//! Mode 0 (the default) counts Sunday weeks from 0, so 2000-01-01, a Saturday, is week 0; mode 3
//! is ISO 8601. The statement rewrite calls these as `mysql_week(CAST(d AS DATE), mode)` and
//! `mysql_yearweek(..)`.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::datatypes::{DataType, Date32Type, Int64Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// Days from 0001-01-01 (proleptic Gregorian, day 1) to 1970-01-01.
const EPOCH_FROM_CE: i32 = 719_163;

/// The week-mode flags of MySQL's `calc_week`.
const MONDAY_FIRST: u32 = 1;
const WEEK_YEAR: u32 = 2;
const FIRST_WEEKDAY: u32 = 4;

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || {
        Signature::exact(
            vec![DataType::Date32, DataType::Int64],
            Volatility::Immutable,
        )
    };
    vec![
        plain_function("mysql_week", signature(), DataType::Int64, week),
        plain_function("mysql_yearweek", signature(), DataType::Int64, yearweek),
    ]
}

fn week(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    apply(args, |days, mode| {
        calc_week(days, week_mode(mode)).map(|(_, week)| week as i64)
    })
}

fn yearweek(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    apply(args, |days, mode| {
        calc_week(days, week_mode(mode) | WEEK_YEAR)
            .map(|(year, week)| year as i64 * 100 + week as i64)
    })
}

fn apply(args: &ScalarFunctionArgs, f: impl Fn(i32, i64) -> Option<i64>) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let dates = arrays[0].as_primitive::<Date32Type>();
    let modes = arrays[1].as_primitive::<Int64Type>();
    let out: Int64Array = (0..dates.len())
        .map(|i| {
            if dates.is_null(i) || modes.is_null(i) {
                None
            } else {
                f(dates.value(i), modes.value(i))
            }
        })
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

/// MySQL's `week_mode`: the mode's low three bits, with "first weekday" flipped for the Sunday
/// modes (so mode 0 counts weeks that start on the year's first Sunday).
fn week_mode(mode: i64) -> u32 {
    let mut flags = (mode & 7) as u32;
    if flags & MONDAY_FIRST == 0 {
        flags ^= FIRST_WEEKDAY;
    }
    flags
}

fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_year(year: i32) -> i32 {
    if is_leap(year) {
        366
    } else {
        365
    }
}

/// The (year, week) of a date given as days since 1970-01-01, per MySQL's `calc_week`; None for
/// dates outside years 1..=9999.
fn calc_week(epoch_days: i32, flags: u32) -> Option<(i32, i32)> {
    let date =
        chrono::NaiveDate::from_num_days_from_ce_opt(epoch_days.checked_add(EPOCH_FROM_CE)?)?;
    use chrono::Datelike;
    let monday_first = flags & MONDAY_FIRST != 0;
    let mut week_year = flags & WEEK_YEAR != 0;
    let first_weekday = flags & FIRST_WEEKDAY != 0;
    let mut year = date.year();
    if !(1..=9999).contains(&year) {
        return None;
    }
    let day_number = date.num_days_from_ce();
    let january_first = chrono::NaiveDate::from_ymd_opt(year, 1, 1)?;
    let mut first_day_number = january_first.num_days_from_ce();
    // The weekday of January 1st, 0 being the week's first day.
    let mut weekday = if monday_first {
        january_first.weekday().num_days_from_monday()
    } else {
        january_first.weekday().num_days_from_sunday()
    } as i32;
    // Does January 1st's week belong to this year?
    let starts_late =
        |weekday: i32| (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4);
    if date.month() == 1 && (date.day() as i32) <= 7 - weekday {
        if !week_year && starts_late(weekday) {
            return Some((year, 0));
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_day_number -= days;
        weekday = (weekday + 53 * 7 - days) % 7;
    }
    let days = if starts_late(weekday) {
        day_number - (first_day_number + (7 - weekday))
    } else {
        day_number - (first_day_number - weekday)
    };
    if week_year && days >= 52 * 7 {
        let next_weekday = (weekday + days_in_year(year)) % 7;
        if (!first_weekday && next_weekday < 4) || (first_weekday && next_weekday == 0) {
            return Some((year + 1, 1));
        }
    }
    Some((year, days / 7 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days(y: i32, m: u32, d: u32) -> i32 {
        chrono::NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .signed_duration_since(chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
            .num_days() as i32
    }

    fn week_of(y: i32, m: u32, d: u32, mode: i64) -> i32 {
        calc_week(days(y, m, d), week_mode(mode)).unwrap().1
    }

    fn yearweek_of(y: i32, m: u32, d: u32, mode: i64) -> i32 {
        let (year, week) = calc_week(days(y, m, d), week_mode(mode) | WEEK_YEAR).unwrap();
        year * 100 + week
    }

    // Expected values from MariaDB 10.11 (MySQL's algorithm).
    #[test]
    fn weeks_in_every_mode_match_mysql() {
        let modes: Vec<i32> = (0..8).map(|m| week_of(2000, 1, 1, m)).collect();
        assert_eq!(modes, [0, 0, 52, 52, 0, 0, 52, 52]);
        let modes: Vec<i32> = (0..8).map(|m| week_of(2008, 12, 31, m)).collect();
        assert_eq!(modes, [52, 53, 52, 1, 53, 52, 53, 52]);
        assert_eq!(week_of(2024, 6, 15, 0), 23);
        assert_eq!(week_of(2024, 12, 31, 0), 52);
    }

    #[test]
    fn yearweeks_cross_year_ends_like_mysql() {
        assert_eq!(yearweek_of(2000, 1, 1, 0), 199952);
        assert_eq!(yearweek_of(2008, 12, 31, 1), 200901);
        assert_eq!(yearweek_of(2008, 12, 31, 0), 200852);
        assert_eq!(yearweek_of(2021, 1, 3, 3), 202053);
        assert_eq!(yearweek_of(2021, 1, 3, 0), 202101);
    }
}
