//! Doris's time rounding: `year_floor`, `quarter_floor`, `month_floor`, `week_floor`,
//! `day_floor`, `hour_floor`, `minute_floor`, `second_floor` and their `_ceil` twins, as
//! `f(datetime [, period] [, origin])`: the latest (earliest) point at or before (after) the
//! value that lies a whole number of `period` units from `origin` (default 0001-01-01
//! 00:00:00). `DATE_FLOOR(d, INTERVAL n unit)` / `DATE_CEIL` are rewritten onto them. A DATE
//! rounds to a DATE. A result outside years 0000-9999 is NULL, and so is a period of 0; a
//! negative period is NULL on rows, while a constant call gives what Doris's planner folds it
//! to (see [`round`]).

use crate::date_arith::{datetimes, in_range, temporal_input, Unit, UNITS};
use chrono::{Datelike, Months, NaiveDate, NaiveDateTime, TimeDelta};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Date32Array, TimestampMicrosecondArray};
use datafusion::arrow::datatypes::{DataType, Int64Type, TimeUnit};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// Every `<unit>_floor` and `<unit>_ceil` (year down to second).
pub fn functions() -> Vec<ScalarUDF> {
    UNITS
        .iter()
        .filter(|(u, _)| !matches!(u, Unit::Millisecond | Unit::Microsecond))
        .flat_map(|(unit, _)| {
            [
                ScalarUDF::new_from_impl(Round::new(*unit, false)),
                ScalarUDF::new_from_impl(Round::new(*unit, true)),
            ]
        })
        .collect()
}

/// The name of the function rounding to `unit`s, down or `up`.
pub fn function_name(unit: Unit, up: bool) -> String {
    format!("{}_{}", unit.name(), if up { "ceil" } else { "floor" })
}

fn default_origin() -> NaiveDateTime {
    NaiveDate::from_ymd_opt(1, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or_default()
}

/// `origin` plus `months` months (negative too).
fn plus_months(origin: NaiveDateTime, months: i64) -> Option<NaiveDateTime> {
    let count = Months::new(u32::try_from(months.unsigned_abs()).ok()?);
    if months >= 0 {
        origin.checked_add_months(count)
    } else {
        origin.checked_sub_months(count)
    }
}

/// The whole `unit`s from `origin` to `dt`, rounded down, and whether `dt` lies exactly on
/// that many units from `origin`.
fn whole_units(dt: NaiveDateTime, origin: NaiveDateTime, unit: Unit) -> Option<(i64, bool)> {
    match unit.micros() {
        Some(us) => {
            let since = (dt - origin).num_microseconds()?;
            Some((since.div_euclid(us), since.rem_euclid(us) == 0))
        }
        None => {
            let per_unit = unit.months();
            let months = |d: NaiveDateTime| d.year() as i64 * 12 + d.month0() as i64;
            let mut units = (months(dt) - months(origin)).div_euclid(per_unit);
            let mut at = plus_months(origin, units.checked_mul(per_unit)?)?;
            if at > dt {
                units -= 1;
                at = plus_months(origin, units.checked_mul(per_unit)?)?;
            }
            Some((units, at == dt))
        }
    }
}

/// `origin` plus `n` units (negative too).
fn plus_units(origin: NaiveDateTime, n: i64, unit: Unit) -> Option<NaiveDateTime> {
    match unit.micros() {
        Some(us) => origin.checked_add_signed(TimeDelta::microseconds(n.checked_mul(us)?)),
        None => plus_months(origin, n.checked_mul(unit.months())?),
    }
}

/// `dt` rounded down (or `up`) to a whole number of `period` units from `origin`.
///
/// A period of 0 is NULL. A negative period is NULL too where Doris's backends compute the
/// function; Doris's planner folds constant calls (`folded`) with its own formula, which takes a
/// negative period's remainders as Java does, so that "down" can land after the value and "up"
/// before it: `date_floor('1923-12-31', INTERVAL -10 YEAR)` is 1931-01-01.
fn round(
    dt: NaiveDateTime,
    period: i64,
    origin: NaiveDateTime,
    unit: Unit,
    up: bool,
    folded: bool,
) -> Option<NaiveDateTime> {
    if period == 0 || (period < 0 && !folded) {
        return None;
    }
    let (floor, exact) = whole_units(dt, origin, unit)?;
    let units = if up && !exact {
        floor.checked_add(1)?
    } else {
        floor
    };
    // The offset of `units` inside its period; for a positive period the Euclidean remainder.
    let offset = units
        .checked_rem(period)?
        .checked_add(period)?
        .checked_rem(period)?;
    let mut step = units.checked_sub(offset)?;
    if up && offset != 0 {
        step = step.checked_add(period)?;
    }
    in_range(plus_units(origin, step, unit)?)
}

/// True for a second argument that is an origin (a date, a datetime or their text), not a
/// period: `hour_floor(dt, origin)`.
fn is_origin(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Date32
            | DataType::Date64
            | DataType::Timestamp(_, _)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
    )
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Round {
    name: String,
    unit: Unit,
    up: bool,
    signature: Signature,
}

impl Round {
    fn new(unit: Unit, up: bool) -> Round {
        Round {
            name: function_name(unit, up),
            unit,
            up,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for Round {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [d] => Ok(vec![temporal_input(d)]),
            [d, o] if is_origin(o) => Ok(vec![temporal_input(d), temporal_input(o)]),
            [d, _] => Ok(vec![temporal_input(d), DataType::Int64]),
            [d, _, o] => Ok(vec![temporal_input(d), DataType::Int64, temporal_input(o)]),
            _ => exec_err!("{} takes a date, a period and an origin", self.name),
        }
    }

    /// A DATE is rounded to a DATE (the time of day the unit may give is dropped), as in Doris.
    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(match args.first() {
            Some(DataType::Date32) => DataType::Date32,
            _ => DataType::Timestamp(TimeUnit::Microsecond, None),
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let rows = arrays.first().map_or(0, |a| a.len());
        let dates = datetimes(&arrays[0])?;
        // (date, period), (date, origin) or (date, period, origin).
        let (period, origin) = match arrays.len() {
            2 if arrays[1].data_type() != &DataType::Int64 => (None, arrays.get(1)),
            _ => (arrays.get(1), arrays.get(2)),
        };
        let periods: Vec<Option<i64>> = match period {
            Some(p) => p.as_primitive::<Int64Type>().iter().collect(),
            None => vec![Some(1); rows],
        };
        let origins: Vec<Option<NaiveDateTime>> = match origin {
            Some(o) => datetimes(o)?,
            None => vec![Some(default_origin()); rows],
        };
        let rounded = dates
            .into_iter()
            .zip(periods)
            .zip(origins)
            .map(|((d, p), o)| round(d?, p?, o?, self.unit, self.up, scalar));
        let out: ArrayRef = if arrays[0].data_type() == &DataType::Date32 {
            Arc::new(
                rounded
                    .map(|r| r.map(|r| (r.date() - NaiveDate::default()).num_days() as i32))
                    .collect::<Date32Array>(),
            )
        } else {
            Arc::new(
                rounded
                    .map(|r| r.map(|r| r.and_utc().timestamp_micros()))
                    .collect::<TimestampMicrosecondArray>(),
            )
        };
        debug_assert_eq!(out.len(), rows);
        crate::util::output(out, scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").expect("datetime")
    }

    fn r(s: &str, period: i64, unit: Unit, up: bool) -> Option<String> {
        round(at(s), period, default_origin(), unit, up, false).map(|d| d.to_string())
    }

    /// As a constant call Doris's planner folds.
    fn folded(s: &str, period: i64, unit: Unit, up: bool) -> Option<String> {
        round(at(s), period, default_origin(), unit, up, true).map(|d| d.to_string())
    }

    #[test]
    fn rounds_to_periods_from_year_one() {
        let t = "2023-07-14 10:51:11";
        assert_eq!(r(t, 5, Unit::Second, false).unwrap(), "2023-07-14 10:51:10");
        assert_eq!(r(t, 5, Unit::Second, true).unwrap(), "2023-07-14 10:51:15");
        assert_eq!(r(t, 5, Unit::Hour, false).unwrap(), "2023-07-14 09:00:00");
        assert_eq!(r(t, 5, Unit::Hour, true).unwrap(), "2023-07-14 14:00:00");
        assert_eq!(r(t, 5, Unit::Day, false).unwrap(), "2023-07-10 00:00:00");
        assert_eq!(r(t, 5, Unit::Day, true).unwrap(), "2023-07-15 00:00:00");
        assert_eq!(r(t, 5, Unit::Month, false).unwrap(), "2023-07-01 00:00:00");
        assert_eq!(r(t, 5, Unit::Month, true).unwrap(), "2023-12-01 00:00:00");
        assert_eq!(r(t, 5, Unit::Year, false).unwrap(), "2021-01-01 00:00:00");
        assert_eq!(r(t, 5, Unit::Year, true).unwrap(), "2026-01-01 00:00:00");
        // A value on a boundary is its own floor and ceiling.
        assert_eq!(
            r("2023-07-01 00:00:00", 5, Unit::Month, true).unwrap(),
            "2023-07-01 00:00:00"
        );
        // Past year 9999, or a period below one (computed on rows): NULL.
        assert_eq!(r("9999-12-31 23:59:59.999999", 5, Unit::Minute, true), None);
        assert_eq!(r(t, 0, Unit::Day, false), None);
        assert_eq!(r(t, -3, Unit::Day, false), None);
        assert_eq!(
            r("0001-01-01 23:59:59.999999", 7, Unit::Month, true).unwrap(),
            "0001-08-01 00:00:00"
        );
    }

    #[test]
    fn folded_negative_periods_take_java_remainders() {
        let (d, u) = ("9999-12-31 23:59:59.999999", Unit::Year);
        assert_eq!(folded(d, -10, u, false), None);
        assert_eq!(
            folded("1923-12-31 23:59:59.999999", -10, u, false).unwrap(),
            "1931-01-01 00:00:00"
        );
        assert_eq!(
            folded("0001-09-01 23:59:59.999999", -7, Unit::Month, true).unwrap(),
            "0001-08-01 00:00:00"
        );
        assert_eq!(
            folded("0002-02-01 23:59:59.999999", -7, Unit::Month, true).unwrap(),
            "0002-03-01 00:00:00"
        );
        assert_eq!(folded(d, 0, Unit::Minute, false), None);
        // Positive periods fold as they compute.
        assert_eq!(
            folded("2023-07-14 10:51:00", 5, Unit::Day, true),
            r("2023-07-14 10:51:00", 5, Unit::Day, true)
        );
    }

    #[test]
    fn origins_shift_the_boundaries() {
        let origin = at("1970-01-01 00:00:30");
        let round_hour = |up| round(at("1970-01-01 01:00:10"), 1, origin, Unit::Hour, up, false);
        assert_eq!(round_hour(true).unwrap().to_string(), "1970-01-01 01:00:30");
        assert_eq!(
            round_hour(false).unwrap().to_string(),
            "1970-01-01 00:00:30"
        );
        // An origin after the value: whole periods back from it.
        let later = at("2020-02-02 13:09:20");
        let back = round(
            at("2020-01-01 00:00:00"),
            2,
            later,
            Unit::Month,
            false,
            false,
        );
        assert_eq!(back.unwrap().to_string(), "2019-12-02 13:09:20");
    }
}
