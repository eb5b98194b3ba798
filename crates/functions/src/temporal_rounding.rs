//! FLOOR, CEIL, TRUNCATE and ROUND of a TIME or DATETIME, as MariaDB gives them: the value
//! in its own type with `d` fractional digits of a second (`ROUND(TIME'10:00:00.567', 1)` is
//! 10:00:00.6, `FLOOR(TIME'-10:20:30.5')` is -10:20:31, `CEIL(DATETIME'2001-01-01
//! 10:20:30.5')` is 10:20:31 on the same day). ROUND goes half away from zero, TRUNCATE toward
//! zero, FLOOR and CEIL toward minus and plus infinity. `d` below 0 is 0; `d` at or past the
//! type's own digits keeps the value. A result past the type's largest value (TIME 838:59:59,
//! DATETIME 9999-12-31 23:59:59.999999) is that value cut to `d` digits.

use basalt_common::time_value::MAX_TIME_MICROS;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type, TimeUnit};
use datafusion::common::{exec_err, Result};

/// How the cut digits move the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Floor,
    Ceil,
    Truncate,
    /// Half away from zero.
    Round,
}

/// Microseconds of the last DATETIME, 9999-12-31 23:59:59.999999.
const MAX_DATETIME_MICROS: i64 = 253_402_300_799_999_999;

/// `x` (a Time64 or Timestamp array) moved row by row to `digits` (None: a NULL row).
pub(crate) fn rounded(
    direction: Direction,
    x: &ArrayRef,
    digits: &[Option<i64>],
) -> Result<ArrayRef> {
    let (unit, is_time) = match x.data_type() {
        DataType::Time64(unit) => (*unit, true),
        DataType::Timestamp(unit, _) => (*unit, false),
        other => return exec_err!("rounding: unexpected temporal argument {other}"),
    };
    let unit_digits: i64 = match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    };
    // The largest value in the array's unit.
    let micros_max = if is_time {
        MAX_TIME_MICROS
    } else {
        MAX_DATETIME_MICROS
    };
    let max = match unit_digits {
        0 => micros_max / 1_000_000,
        3 => micros_max / 1_000,
        6 => micros_max,
        _ => micros_max.saturating_mul(1_000),
    };
    let min = if is_time { -max } else { i64::MIN };
    let ticks = cast(x, &DataType::Int64)?;
    let out: Int64Array = ticks
        .as_primitive::<Int64Type>()
        .iter()
        .zip(digits)
        .map(|(v, d)| {
            let cut = unit_digits - (*d)?.clamp(0, 6).min(unit_digits);
            let moved = move_ticks(direction, v?, cut);
            Some(moved.clamp(cut_to(min, cut), cut_to(max, cut)))
        })
        .collect();
    let out: ArrayRef = std::sync::Arc::new(out);
    Ok(cast(&out, x.data_type())?)
}

/// `ticks` with its last `cut` digits zeroed toward zero.
fn cut_to(ticks: i64, cut: i64) -> i64 {
    match 10i64.checked_pow(cut.max(0) as u32) {
        Some(m) => ticks - ticks % m,
        None => 0,
    }
}

/// `ticks` with its last `cut` digits zeroed, moved as `direction` says.
fn move_ticks(direction: Direction, ticks: i64, cut: i64) -> i64 {
    if cut <= 0 {
        return ticks;
    }
    let Some(m) = 10i64.checked_pow(cut as u32) else {
        return ticks;
    };
    let r = ticks % m;
    let t = ticks - r;
    let step = match direction {
        Direction::Truncate => 0,
        Direction::Floor => i64::from(r < 0),
        Direction::Ceil => i64::from(r > 0),
        Direction::Round => i64::from(r.abs() >= m - r.abs()),
    };
    let signed = match direction {
        Direction::Floor => -step,
        Direction::Ceil => step,
        _ => step * r.signum(),
    };
    t.saturating_add(m.saturating_mul(signed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Time64MicrosecondArray;
    use std::sync::Arc;

    #[test]
    fn rounds_fractions_half_away_from_zero() {
        let round = |t, cut| move_ticks(Direction::Round, t, cut);
        assert_eq!(round(36_000_567_000, 5), 36_000_600_000);
        assert_eq!(round(-36_000_500_000, 6), -36_001_000_000);
        assert_eq!(round(36_000_499_999, 6), 36_000_000_000);
        assert_eq!(round(123, 0), 123);
    }

    #[test]
    fn floor_ceil_and_truncate_move_toward_their_sides() {
        let at = |d, t| move_ticks(d, t, 6);
        assert_eq!(at(Direction::Floor, -1_500_000), -2_000_000);
        assert_eq!(at(Direction::Ceil, -1_500_000), -1_000_000);
        assert_eq!(at(Direction::Ceil, 1_000_001), 2_000_000);
        assert_eq!(at(Direction::Floor, 1_999_999), 1_000_000);
        assert_eq!(at(Direction::Truncate, -1_999_999), -1_000_000);
        assert_eq!(at(Direction::Ceil, 2_000_000), 2_000_000);
    }

    #[test]
    fn results_past_the_largest_value_stay_at_it() {
        let x: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![
            MAX_TIME_MICROS + 500_000,
            -MAX_TIME_MICROS - 500_000,
        ]));
        let out = rounded(Direction::Ceil, &x, &[Some(0), Some(0)]).unwrap();
        let out = cast(&out, &DataType::Int64).unwrap();
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(
            (out.value(0), out.value(1)),
            (MAX_TIME_MICROS, -MAX_TIME_MICROS)
        );
    }

    #[test]
    fn keeps_the_type_and_nulls() {
        let x: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![
            Some(36_000_567_000),
            None,
            Some(1_500_000),
        ]));
        let out = rounded(Direction::Round, &x, &[Some(1), Some(1), None]).unwrap();
        assert_eq!(out.data_type(), x.data_type());
        let out = cast(&out, &DataType::Int64).unwrap();
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.value(0), 36_000_600_000);
        assert!(out.is_null(1) && out.is_null(2));
    }
}
