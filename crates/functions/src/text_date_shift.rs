//! Date arithmetic on text, as MySQL does it: `DATE_SUB(CONCAT('2023', '-01-01'), INTERVAL 1
//! YEAR)` or `s + INTERVAL 1 DAY` for a string column. The text is read as a date or datetime
//! (MySQL's relaxed forms); the result is text again: `YYYY-MM-DD` when the text held a date
//! and the interval no time of day, else `YYYY-MM-DD HH:MM:SS` (and `.ffffff` when there is a
//! fraction). Text that is no date, or a result outside years 0000 to 9999, is NULL.
//!
//! [`crate::StringArithmeticPlanner`] plans `text ± INTERVAL ..` as
//! `mysql_text_date_shift(text, interval, sign)` (DataFusion refuses `Utf8 - Interval`).

use crate::util::{arguments, output};
use basalt_common::datetime_text::parse_datetime;
use chrono::{Months, NaiveDateTime, TimeDelta, Timelike};
use datafusion::arrow::array::{Array, AsArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, IntervalMonthDayNano};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::{Arc, OnceLock};

pub const NAME: &str = "mysql_text_date_shift";

/// The one instance (see [`crate::wire`]).
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        ScalarUDF::new_from_impl(TextDateShift {
            signature: Signature::any(3, Volatility::Immutable),
        })
    })
}

/// `text + interval` (sign 1) or `text - interval` (sign -1), for a constant interval.
pub fn call(
    text: datafusion::logical_expr::Expr,
    interval: IntervalMonthDayNano,
    sign: i64,
) -> datafusion::logical_expr::Expr {
    datafusion::logical_expr::Expr::ScalarFunction(
        datafusion::logical_expr::expr::ScalarFunction::new_udf(
            Arc::new(function().clone()),
            vec![
                text,
                datafusion::logical_expr::lit(ScalarValue::IntervalMonthDayNano(Some(interval))),
                datafusion::logical_expr::lit(sign),
            ],
        ),
    )
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct TextDateShift {
    signature: Signature,
}

impl ScalarUDFImpl for TextDateShift {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (interval, sign) = match (&args.args[1], &args.args[2]) {
            (
                ColumnarValue::Scalar(ScalarValue::IntervalMonthDayNano(Some(i))),
                ColumnarValue::Scalar(ScalarValue::Int64(Some(sign))),
            ) => (*i, *sign),
            _ => return exec_err!("{NAME}: the interval and sign must be constants"),
        };
        let (arrays, scalar) = arguments(&args)?;
        let text = datafusion::arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let mut out = StringBuilder::with_capacity(text.len(), text.len() * 20);
        for value in text.iter() {
            match value.and_then(|t| shift(t, interval, sign)) {
                Some(s) => out.append_value(s),
                None => out.append_null(),
            }
        }
        output(Arc::new(out.finish()), scalar)
    }
}

/// The shifted text, or None for no date or a result out of range.
fn shift(text: &str, interval: IntervalMonthDayNano, sign: i64) -> Option<String> {
    let start = parse_datetime(text)?;
    let months = i64::from(interval.months).checked_mul(sign)?;
    let days = i64::from(interval.days).checked_mul(sign)?;
    let micros = (interval.nanoseconds / 1_000).checked_mul(sign)?;
    let shifted = shift_months(start, months)?
        .checked_add_signed(TimeDelta::try_days(days)?)?
        .checked_add_signed(TimeDelta::microseconds(micros))?;
    use chrono::Datelike;
    if !(0..=9999).contains(&shifted.year()) {
        return None;
    }
    let with_time = text.contains(':') || interval.nanoseconds != 0;
    Some(if !with_time {
        shifted.format("%Y-%m-%d").to_string()
    } else if shifted.nanosecond() == 0 {
        shifted.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        shifted.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    })
}

/// `at` moved by whole months, the day kept or cut to the month's last (MySQL's rule).
fn shift_months(at: NaiveDateTime, months: i64) -> Option<NaiveDateTime> {
    let n = Months::new(u32::try_from(months.unsigned_abs()).ok()?);
    if months >= 0 {
        at.checked_add_months(n)
    } else {
        at.checked_sub_months(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(months: i32, days: i32, nanoseconds: i64) -> IntervalMonthDayNano {
        IntervalMonthDayNano {
            months,
            days,
            nanoseconds,
        }
    }

    // Expected values from MariaDB 10.11.
    #[test]
    fn text_shifts_like_mysql() {
        let s = |t, i, sign| shift(t, i, sign);
        assert_eq!(
            s("2023-01-01", interval(12, 0, 0), -1).as_deref(),
            Some("2022-01-01")
        );
        assert_eq!(
            s("2024-01-31", interval(1, 0, 0), 1).as_deref(),
            Some("2024-02-29")
        );
        assert_eq!(
            s("2024-01-31", interval(0, 0, 3_600_000_000_000), 1).as_deref(),
            Some("2024-01-31 01:00:00")
        );
        assert_eq!(
            s("2024-01-31 10:00:00", interval(0, 1, 0), -1).as_deref(),
            Some("2024-01-30 10:00:00")
        );
        assert_eq!(
            s("2024-01-31 10:00:00.5", interval(0, 1, 0), 1).as_deref(),
            Some("2024-02-01 10:00:00.500000")
        );
        assert_eq!(
            s("20240131", interval(0, 1, 0), 1).as_deref(),
            Some("2024-02-01")
        );
        assert_eq!(s("not a date", interval(0, 1, 0), 1), None);
        assert_eq!(s("9999-12-31", interval(0, 1, 0), 1), None);
    }
}
