//! ROUND of a TIME or DATETIME: the value rounded half away from zero to `d` fractional
//! digits of a second, in its own type (`ROUND(TIME'10:00:00.567', 1)` is 10:00:00.6,
//! `ROUND(DATETIME'2001-01-01 10:20:30.999')` is 10:20:31 on the same day). `d` below 0 is 0;
//! `d` at or past the type's own digits keeps the value.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type, TimeUnit};
use datafusion::common::{exec_err, Result};

/// `x` (a Time64 or Timestamp array) rounded row by row to `digits` (None: a NULL row).
pub(crate) fn rounded(x: &ArrayRef, digits: &[Option<i64>]) -> Result<ArrayRef> {
    let unit = match x.data_type() {
        DataType::Time64(unit) | DataType::Timestamp(unit, _) => *unit,
        other => return exec_err!("round: unexpected temporal argument {other}"),
    };
    let unit_digits: i64 = match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    };
    let ticks = cast(x, &DataType::Int64)?;
    let out: Int64Array = ticks
        .as_primitive::<Int64Type>()
        .iter()
        .zip(digits)
        .map(|(v, d)| Some(round_ticks(v?, unit_digits - (*d)?.max(0))))
        .collect();
    let out: ArrayRef = std::sync::Arc::new(out);
    Ok(cast(&out, x.data_type())?)
}

/// `ticks` rounded half away from zero with its last `cut` digits zeroed.
fn round_ticks(ticks: i64, cut: i64) -> i64 {
    if cut <= 0 {
        return ticks;
    }
    let Some(m) = 10i64.checked_pow(cut as u32) else {
        return ticks;
    };
    let r = ticks % m;
    let t = ticks - r;
    if r.abs() >= m - r.abs() {
        t.saturating_add(m * r.signum())
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Time64MicrosecondArray;
    use std::sync::Arc;

    #[test]
    fn rounds_fractions_half_away_from_zero() {
        assert_eq!(round_ticks(36_000_567_000, 5), 36_000_600_000);
        assert_eq!(round_ticks(-36_000_500_000, 6), -36_001_000_000);
        assert_eq!(round_ticks(36_000_499_999, 6), 36_000_000_000);
        assert_eq!(round_ticks(123, 0), 123);
    }

    #[test]
    fn keeps_the_type_and_nulls() {
        let x: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![
            Some(36_000_567_000),
            None,
            Some(1_500_000),
        ]));
        let out = rounded(&x, &[Some(1), Some(1), None]).unwrap();
        assert_eq!(out.data_type(), x.data_type());
        let out = cast(&out, &DataType::Int64).unwrap();
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.value(0), 36_000_600_000);
        assert!(out.is_null(1) && out.is_null(2));
    }
}
