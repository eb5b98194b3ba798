//! MySQL's (and Doris's) day-number and month functions: `last_day(d)`, `makedate(year, n)`,
//! `from_days(n)`, `to_days(d)`, `to_seconds(dt)`, `period_add(p, n)`, `period_diff(p1, p2)`
//! and `get_format(kind, standard)`.
//!
//! Day numbers count from MySQL's day 1 = 0000-01-01 (proleptic Gregorian), so
//! `to_days('1970-01-01')` is 719528. The statement rewrite hands these their dates already
//! read as DATE / DATETIME (`last_day(CAST(x AS DATE))`) and their numbers as BIGINT, so text
//! that is not a date is NULL as it is for `DATE(x)`. A result outside years 1..9999 is NULL
//! (MySQL answers `0000-00-00` there, which Basalt's DATE cannot hold).

use crate::util::{arguments, output, plain_function};
use chrono::{Datelike, NaiveDate};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Date32Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Int64Type, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// MySQL's day number of 1970-01-01 (`TO_DAYS('1970-01-01')`).
const EPOCH_DAY_NUMBER: i64 = 719_528;
/// MySQL's day number of 0001-01-01 and of 9999-12-31: FROM_DAYS' range of real dates.
const FIRST_DAY_NUMBER: i64 = 366;
const LAST_DAY_NUMBER: i64 = 3_652_424;

pub fn functions() -> Vec<ScalarUDF> {
    let exact = |types: Vec<DataType>| Signature::exact(types, Volatility::Immutable);
    let micros = DataType::Timestamp(TimeUnit::Microsecond, None);
    vec![
        plain_function(
            "last_day",
            exact(vec![DataType::Date32]),
            DataType::Date32,
            last_day,
        ),
        plain_function(
            "makedate",
            exact(vec![DataType::Int64, DataType::Int64]),
            DataType::Date32,
            makedate,
        ),
        plain_function(
            "from_days",
            exact(vec![DataType::Int64]),
            DataType::Date32,
            from_days,
        ),
        plain_function(
            "to_days",
            exact(vec![DataType::Date32]),
            DataType::Int64,
            to_days,
        ),
        plain_function(
            "to_seconds",
            exact(vec![micros]),
            DataType::Int64,
            to_seconds,
        ),
        plain_function(
            "period_add",
            exact(vec![DataType::Int64, DataType::Int64]),
            DataType::Int64,
            period_add,
        ),
        plain_function(
            "period_diff",
            exact(vec![DataType::Int64, DataType::Int64]),
            DataType::Int64,
            period_diff,
        ),
        plain_function(
            "get_format",
            exact(vec![DataType::Utf8, DataType::Utf8]),
            DataType::Utf8,
            get_format,
        ),
    ]
}

/// Days since 1970-01-01 as a calendar date, if it is one.
pub(crate) fn date_of(epoch_days: i32) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(epoch_days.checked_add(719_163)?)
}

/// A calendar date as days since 1970-01-01, NULL outside years 1..9999.
pub(crate) fn epoch_days(date: NaiveDate) -> Option<i32> {
    (1..=9999)
        .contains(&date.year())
        .then(|| date.num_days_from_ce() - 719_163)
}

fn last_day(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let dates = arrays[0].as_primitive::<Date32Type>();
    let out: Date32Array = dates
        .iter()
        .map(|d| {
            let date = date_of(d?)?;
            let (year, month) = match date.month() {
                12 => (date.year() + 1, 1),
                m => (date.year(), m + 1),
            };
            let next = NaiveDate::from_ymd_opt(year, month, 1)?;
            epoch_days(next.pred_opt()?)
        })
        .collect();
    output(Arc::new(out), scalar)
}

/// MAKEDATE(year, n): the n-th day of the year (counting on into later years); a two-digit
/// year is 20yy below 70 and 19yy from 70; n below 1 is NULL.
fn makedate(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    binary_int(args, |year, day| {
        if day <= 0 || !(0..=9999).contains(&year) {
            return None;
        }
        let year = match year {
            0..=69 => year + 2000,
            70..=99 => year + 1900,
            y => y,
        };
        let first = NaiveDate::from_ymd_opt(year as i32, 1, 1)?;
        let date = first.checked_add_days(chrono::Days::new(day as u64 - 1))?;
        epoch_days(date).map(i64::from)
    })
    .and_then(|(out, scalar)| {
        let dates: Date32Array = out
            .as_primitive::<Int64Type>()
            .iter()
            .map(|d| d.and_then(|d| i32::try_from(d).ok()))
            .collect();
        output(Arc::new(dates), scalar)
    })
}

fn from_days(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let days = arrays[0].as_primitive::<Int64Type>();
    let out: Date32Array = days
        .iter()
        .map(|n| {
            let n = n?;
            if !(FIRST_DAY_NUMBER..=LAST_DAY_NUMBER).contains(&n) {
                return None;
            }
            i32::try_from(n - EPOCH_DAY_NUMBER).ok()
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn to_days(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let dates = arrays[0].as_primitive::<Date32Type>();
    let out: Int64Array = dates
        .iter()
        .map(|d| d.map(|d| i64::from(d) + EPOCH_DAY_NUMBER))
        .collect();
    output(Arc::new(out), scalar)
}

/// TO_SECONDS(dt): seconds since 0000-01-01 00:00:00 (day 1 counted from its start, as
/// MySQL counts: TO_DAYS(dt) * 86400 + the time of day), the fraction dropped.
fn to_seconds(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let times = arrays[0].as_primitive::<TimestampMicrosecondType>();
    let out: Int64Array = times
        .iter()
        .map(|t| {
            let seconds = t?.div_euclid(1_000_000);
            seconds.checked_add(EPOCH_DAY_NUMBER * 86_400)
        })
        .collect();
    output(Arc::new(out), scalar)
}

/// A period YYMM or YYYYMM as a count of months (two-digit years as MAKEDATE reads them).
fn period_months(period: i64) -> i64 {
    if period == 0 {
        return 0;
    }
    let mut year = period / 100;
    if year < 70 {
        year += 2000;
    } else if year < 100 {
        year += 1900;
    }
    year * 12 + period % 100 - 1
}

/// PERIOD_ADD(p, n): the period n months after p, as YYYYMM (0 stays 0).
fn period_add(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (out, scalar) = binary_int(args, |period, months| {
        if period == 0 {
            return Some(0);
        }
        let total = period_months(period).checked_add(months)?;
        Some(total.div_euclid(12) * 100 + total.rem_euclid(12) + 1)
    })?;
    output(out, scalar)
}

/// PERIOD_DIFF(p1, p2): the months from p2 to p1.
fn period_diff(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (out, scalar) = binary_int(args, |a, b| period_months(a).checked_sub(period_months(b)))?;
    output(out, scalar)
}

/// Two BIGINT arguments into one BIGINT result, NULL when either is.
fn binary_int(
    args: &ScalarFunctionArgs,
    f: impl Fn(i64, i64) -> Option<i64>,
) -> Result<(ArrayRef, bool)> {
    let (arrays, scalar) = arguments(args)?;
    let (a, b) = (
        arrays[0].as_primitive::<Int64Type>(),
        arrays[1].as_primitive::<Int64Type>(),
    );
    let out: Int64Array = (0..a.len())
        .map(|i| {
            if a.is_null(i) || b.is_null(i) {
                None
            } else {
                f(a.value(i), b.value(i))
            }
        })
        .collect();
    Ok((Arc::new(out), scalar))
}

/// GET_FORMAT({DATE|TIME|DATETIME|TIMESTAMP}, {'EUR'|'USA'|'JIS'|'ISO'|'INTERNAL'}): the
/// DATE_FORMAT pattern of that standard; NULL for another standard.
fn get_format(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let (kinds, standards) = (arrays[0].as_string::<i32>(), arrays[1].as_string::<i32>());
    let mut out = Vec::with_capacity(kinds.len());
    for i in 0..kinds.len() {
        if kinds.is_null(i) || standards.is_null(i) {
            out.push(None);
            continue;
        }
        let kind = kinds.value(i).to_ascii_uppercase();
        let standard = standards.value(i).to_ascii_uppercase();
        out.push(format_of(&kind, &standard)?);
    }
    output(Arc::new(StringArray::from(out)), scalar)
}

fn format_of(kind: &str, standard: &str) -> Result<Option<&'static str>> {
    let row = match kind {
        "DATE" => 0,
        "DATETIME" | "TIMESTAMP" => 1,
        "TIME" => 2,
        other => {
            return exec_err!(
            "get_format: the first argument must be DATE, TIME, DATETIME or TIMESTAMP, not {other}"
        )
        }
    };
    let formats: [&'static str; 3] = match standard {
        "USA" => ["%m.%d.%Y", "%Y-%m-%d %H.%i.%s", "%h:%i:%s %p"],
        "JIS" | "ISO" => ["%Y-%m-%d", "%Y-%m-%d %H:%i:%s", "%H:%i:%s"],
        "EUR" => ["%d.%m.%Y", "%Y-%m-%d %H.%i.%s", "%H.%i.%s"],
        "INTERNAL" => ["%Y%m%d", "%Y%m%d%H%i%s", "%H%i%s"],
        _ => return Ok(None),
    };
    Ok(Some(formats[row]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_follow_mysql() {
        assert_eq!(period_months(200801), 2008 * 12);
        assert_eq!(period_months(801), 2008 * 12);
        assert_eq!(period_months(9912), 1999 * 12 + 11);
        assert_eq!(period_months(802) - period_months(9912), 98);
    }

    #[test]
    fn formats_are_mysqls_table() {
        assert_eq!(format_of("DATE", "USA").unwrap(), Some("%m.%d.%Y"));
        assert_eq!(format_of("TIME", "EUR").unwrap(), Some("%H.%i.%s"));
        assert_eq!(format_of("DATE", "xx").unwrap(), None);
        assert!(format_of("YEAR", "USA").is_err());
    }
}
