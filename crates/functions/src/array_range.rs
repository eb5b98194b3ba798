//! Doris's `array_range` (and `sequence`): the arithmetic sequence from `start` up to, not
//! including, `end`.
//! - Numbers: `array_range(end)`, `(start, end)`, `(start, end, step)`; start 0 and step 1 by
//!   default; NULL when an argument is NULL or negative, or the step is not positive; `[]` when
//!   `end <= start`.
//! - DATETIMEs: `array_range(start, end)` by one day, `array_range(start, end, INTERVAL n
//!   unit)` by that interval (YEAR..SECOND; each element is `start` plus k steps); NULL when an
//!   argument is NULL or the step is not positive. Steps of months (YEAR, QUARTER, MONTH) count
//!   in the whole months between start and end, as Doris's reference shows (`2022-05-15` to
//!   `2022-07-17` by one month is two elements).
//!
//! A sequence longer than [`MAX_ELEMENTS`] is an error.

use crate::list_rows::{array_function, item_field};
use crate::util::expect_args;
use chrono::{DateTime, Datelike, Months, NaiveDateTime, TimeDelta};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int64Builder, ListBuilder, TimestampMicrosecondBuilder,
};
use datafusion::arrow::datatypes::{
    DataType, Int64Type, IntervalMonthDayNanoType, IntervalUnit, TimeUnit, TimestampMicrosecondType,
};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::ScalarUDF;
use std::sync::Arc;

/// The most elements one sequence may hold.
pub const MAX_ELEMENTS: i64 = 10_000_000;

const DATETIME: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

pub fn function() -> ScalarUDF {
    array_function("array_range", coerce, returns, work)
}

/// Whether the arguments ask for a DATETIME sequence.
fn is_temporal(t: &[DataType]) -> bool {
    t.iter().take(2).any(|t| {
        matches!(
            t,
            DataType::Timestamp(..)
                | DataType::Date32
                | DataType::Date64
                | DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
        )
    }) || t.get(2).is_some_and(|t| matches!(t, DataType::Interval(_)))
}

fn coerce(t: &[DataType]) -> Result<Vec<DataType>> {
    expect_args("array_range", t, 1, 3)?;
    if is_temporal(t) {
        if t.len() < 2 {
            return plan_err!("array_range of DATETIMEs takes a start and an end");
        }
        let mut out = vec![DATETIME, DATETIME];
        match t.get(2) {
            None => {}
            Some(DataType::Interval(_) | DataType::Null) => {
                out.push(DataType::Interval(IntervalUnit::MonthDayNano))
            }
            Some(other) => {
                return plan_err!("array_range of DATETIMEs steps by an INTERVAL, not {other}")
            }
        }
        for a in &t[..2] {
            if a.is_numeric() {
                return plan_err!("array_range cannot mix DATETIMEs and {a}");
            }
        }
        return Ok(out);
    }
    t.iter()
        .map(|a| match a {
            a if a.is_integer() || a.is_null() => Ok(DataType::Int64),
            other => plan_err!("array_range takes integers or DATETIMEs, not {other}"),
        })
        .collect()
}

fn returns(t: &[DataType]) -> Result<DataType> {
    Ok(DataType::List(item_field(if t[0] == DATETIME {
        DATETIME
    } else {
        DataType::Int64
    })))
}

fn work(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    if args[0].data_type() == &DATETIME {
        datetimes(args, rows)
    } else {
        numbers(args, rows)
    }
}

fn too_long() -> Result<ArrayRef> {
    exec_err!("array_range: the sequence is longer than {MAX_ELEMENTS} elements")
}

fn numbers(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let ints: Vec<_> = args.iter().map(|a| a.as_primitive::<Int64Type>()).collect();
    let mut out = ListBuilder::new(Int64Builder::new()).with_field(item_field(DataType::Int64));
    for i in 0..rows {
        if ints.iter().any(|a| a.is_null(i)) {
            out.append_null();
            continue;
        }
        let v: Vec<i64> = ints.iter().map(|a| a.value(i)).collect();
        let (start, end, step) = match v.as_slice() {
            [end] => (0, *end, 1),
            [start, end] => (*start, *end, 1),
            [start, end, step] => (*start, *end, *step),
            _ => return exec_err!("array_range takes 1 to 3 arguments"),
        };
        if start < 0 || end < 0 || step <= 0 {
            out.append_null();
            continue;
        }
        let count = if end > start {
            (end - start - 1) / step + 1
        } else {
            0
        };
        if count > MAX_ELEMENTS {
            return too_long();
        }
        for k in 0..count {
            out.values().append_value(start + k * step);
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

fn datetimes(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let starts = args[0].as_primitive::<TimestampMicrosecondType>();
    let ends = args[1].as_primitive::<TimestampMicrosecondType>();
    let steps = args
        .get(2)
        .map(|a| a.as_primitive::<IntervalMonthDayNanoType>());
    let mut out =
        ListBuilder::new(TimestampMicrosecondBuilder::new()).with_field(item_field(DATETIME));
    for i in 0..rows {
        if starts.is_null(i) || ends.is_null(i) || steps.is_some_and(|s| s.is_null(i)) {
            out.append_null();
            continue;
        }
        let (months, days, nanos) = match steps {
            Some(s) => {
                let v = s.value(i);
                (v.months, v.days, v.nanoseconds)
            }
            None => (0, 1, 0),
        };
        if months < 0 || days < 0 || nanos < 0 || (months, days, nanos) == (0, 0, 0) {
            out.append_null();
            continue;
        }
        let (Some(start), Some(end)) = (
            DateTime::from_timestamp_micros(starts.value(i)),
            DateTime::from_timestamp_micros(ends.value(i)),
        ) else {
            out.append_null();
            continue;
        };
        let (start, end) = (start.naive_utc(), end.naive_utc());
        // By months alone: as many steps as fit in the whole months from start to end.
        let steps_by_months = (months > 0 && days == 0 && nanos == 0)
            .then(|| (whole_months(start, end).max(0) + months as i64 - 1) / months as i64);
        let mut k: i64 = 0;
        loop {
            // start + k steps; past the calendar's end, the sequence ends.
            let next = i32::try_from(k)
                .ok()
                .and_then(|k| months.checked_mul(k).zip(days.checked_mul(k)))
                .and_then(|(m, d)| {
                    let t = start.checked_add_months(Months::new(m as u32))?;
                    let t = t.checked_add_signed(TimeDelta::try_days(d as i64)?)?;
                    t.checked_add_signed(TimeDelta::nanoseconds(nanos.checked_mul(k)?))
                });
            let inside = |t: &NaiveDateTime| match steps_by_months {
                Some(n) => k < n,
                None => *t < end,
            };
            let Some(next) = next.filter(inside) else {
                break;
            };
            if k >= MAX_ELEMENTS {
                return too_long();
            }
            out.values().append_value(next.and_utc().timestamp_micros());
            k += 1;
        }
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

/// The whole months from `start` to `end` (a month counts once `end` reaches `start`'s day
/// and time in it).
fn whole_months(start: NaiveDateTime, end: NaiveDateTime) -> i64 {
    let mut m =
        (end.year() as i64 - start.year() as i64) * 12 + end.month() as i64 - start.month() as i64;
    let (from, to) = ((start.day(), start.time()), (end.day(), end.time()));
    if m > 0 && to < from {
        m -= 1;
    } else if m < 0 && to > from {
        m += 1;
    }
    m
}
