//! Doris's time rounding: `year_floor`, `quarter_floor`, `month_floor`, `week_floor`,
//! `day_floor`, `hour_floor`, `minute_floor`, `second_floor` and their `_ceil` twins, as
//! `f(datetime [, period [, origin]])`: the latest (earliest) point at or before (after) the
//! value that lies a whole number of `period` units from `origin` (default 0001-01-01
//! 00:00:00). `DATE_FLOOR(d, INTERVAL n unit)` / `DATE_CEIL` are rewritten onto them. A result
//! outside years 0000-9999 is NULL; a period below 1 is an error (Doris answers some negative
//! periods with dates on the wrong side of the value).

use crate::date_arith::{datetimes, in_range, temporal_input, Unit, UNITS};
use chrono::{Datelike, Months, NaiveDate, NaiveDateTime, TimeDelta};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, TimestampMicrosecondArray};
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

/// `dt` rounded down (or `up`) to a whole number of `period` units from `origin`.
fn round(
    dt: NaiveDateTime,
    period: i64,
    origin: NaiveDateTime,
    unit: Unit,
    up: bool,
) -> Option<NaiveDateTime> {
    if period < 1 {
        return None;
    }
    let rounded = match unit.micros() {
        Some(us) => {
            let step = period.checked_mul(us)?;
            let since = (dt - origin).num_microseconds()?;
            let mut at = since.div_euclid(step).checked_mul(step)?;
            if up && at != since {
                at = at.checked_add(step)?;
            }
            origin.checked_add_signed(TimeDelta::microseconds(at))?
        }
        None => {
            let step = period.checked_mul(unit.months())?;
            let months = |d: NaiveDateTime| d.year() as i64 * 12 + d.month0() as i64;
            let mut at = (months(dt) - months(origin)).div_euclid(step) * step;
            if plus_months(origin, at)? > dt {
                at -= step;
            }
            let floor = plus_months(origin, at)?;
            if up && floor != dt {
                plus_months(origin, at.checked_add(step)?)?
            } else {
                floor
            }
        }
    };
    in_range(rounded)
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
            [d, _] => Ok(vec![temporal_input(d), DataType::Int64]),
            [d, _, o] => Ok(vec![temporal_input(d), DataType::Int64, temporal_input(o)]),
            _ => exec_err!("{} takes a date, a period and an origin", self.name),
        }
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Timestamp(TimeUnit::Microsecond, None))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let rows = arrays.first().map_or(0, |a| a.len());
        let dates = datetimes(&arrays[0])?;
        let periods: Vec<Option<i64>> = match arrays.get(1) {
            Some(p) => p.as_primitive::<Int64Type>().iter().collect(),
            None => vec![Some(1); rows],
        };
        let origins: Vec<Option<NaiveDateTime>> = match arrays.get(2) {
            Some(o) => datetimes(o)?,
            None => vec![Some(default_origin()); rows],
        };
        if let Some(p) = periods.iter().flatten().find(|p| **p < 1) {
            return exec_err!(
                "{}: the period must be a positive number, not {p}",
                self.name
            );
        }
        let out: TimestampMicrosecondArray = dates
            .into_iter()
            .zip(periods)
            .zip(origins)
            .map(|((d, p), o)| {
                round(d?, p?, o?, self.unit, self.up).map(|r| r.and_utc().timestamp_micros())
            })
            .collect();
        let out: ArrayRef = Arc::new(out);
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
        round(at(s), period, default_origin(), unit, up).map(|d| d.to_string())
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
        // Past year 9999, or a period below one: NULL.
        assert_eq!(r("9999-12-31 23:59:59.999999", 5, Unit::Minute, true), None);
        assert_eq!(r(t, 0, Unit::Day, false), None);
        assert_eq!(
            r("0001-01-01 23:59:59.999999", 7, Unit::Month, true).unwrap(),
            "0001-08-01 00:00:00"
        );
    }
}
