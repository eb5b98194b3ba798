//! A DATE or DATETIME in arithmetic is a number in MySQL: `date_col + 1` adds to YYYYMMDD
//! (`DATE '2020-02-02' + 1` is 20200203, not a date), a DATETIME is YYYYMMDDhhmmss, with its
//! declared fractional digits after the point (`DATETIME(3)` gives a DECIMAL(17, 3)). Doris
//! (Nereids) also reads a date-like operand of arithmetic as a BIGINT YYYYMMDD[hhmmss]; it drops
//! the fraction, where MySQL's DECIMAL is followed here. The arithmetic planner wraps such an
//! operand in `date_number(value, digits)`; an interval operand keeps date arithmetic. A TIME
//! is its number `[-]HHMMSS[.f]` the same way (`SEC_TO_TIME(9001) + 0` is 23001), and so are
//! CASTs of dates to numbers (see [`crate::temporal_numbers`]).

use crate::util::{arguments, output};
use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Int64Array, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, TimeUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use std::sync::{Arc, OnceLock};

/// The function's name, as plan fragments carry it to other nodes.
pub const NAME: &str = "date_number";

/// The one instance (see [`crate::wire`]).
pub fn function() -> &'static ScalarUDF {
    static F: OnceLock<ScalarUDF> = OnceLock::new();
    F.get_or_init(|| {
        ScalarUDF::new_from_impl(DateNumber {
            signature: Signature::any(2, Volatility::Immutable),
        })
    })
}

/// Whether a value of type `t` becomes a number in arithmetic (a DATE or a DATETIME).
pub fn is_date_like(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, None)
    )
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8)
}

/// Whether `date_number` takes a value of type `t`: a DATE, a DATETIME or a TIME.
pub fn is_temporal(t: &DataType) -> bool {
    is_date_like(t) || matches!(t, DataType::Time64(_))
}

/// The argument types an aggregate that adds temporal values (SUM, AVG) plans with: a DATE,
/// DATETIME or TIME as it is ([`crate::TemporalNumbers`] turns it into its number before type
/// coercion), a boolean as the BIGINT 1 or 0 (MySQL's `SUM(x > 0)` counts the rows where it
/// holds), a string as a DOUBLE (MySQL's `SUM('1.5')`; [`crate::ImplicitCasts`] reads it as
/// one before type coercion), anything else as `inner`, DataFusion's own function, coerces it.
pub(crate) fn aggregate_argument_types(
    inner: &datafusion::logical_expr::AggregateUDF,
    arg_types: &[DataType],
) -> Result<Vec<DataType>> {
    if let [t] = arg_types {
        if is_temporal(t) {
            return Ok(arg_types.to_vec());
        }
        if is_text(t) {
            return Ok(vec![DataType::Float64]);
        }
    }
    let fields: Vec<FieldRef> = arg_types
        .iter()
        .map(|t| match t {
            DataType::Boolean => DataType::Int64,
            t => t.clone(),
        })
        .map(|t| Arc::new(Field::new("a", t, true)))
        .collect();
    Ok(
        datafusion::logical_expr::type_coercion::functions::fields_with_udf(&fields, inner)?
            .iter()
            .map(|f| f.data_type().clone())
            .collect(),
    )
}

/// The types such an aggregate's result follows: a temporal argument's number type, a
/// string's DOUBLE, else the arguments' own.
pub(crate) fn aggregate_result_argument_types(arg_fields: &[FieldRef]) -> Vec<DataType> {
    match arg_fields {
        [f] if is_temporal(f.data_type()) => vec![number_type(f)],
        [f] if is_text(f.data_type()) => vec![DataType::Float64],
        _ => arg_fields.iter().map(|f| f.data_type().clone()).collect(),
    }
}

/// The fractional digits `value`'s number keeps: a DATETIME's or TIME's declared ones (0 when
/// unknown), none for a DATE.
pub fn declared_digits(value: &Expr, schema: &datafusion::common::DFSchema) -> u8 {
    use datafusion::logical_expr::ExprSchemable;
    match value.to_field(schema) {
        Ok((_, f)) if matches!(f.data_type(), DataType::Timestamp(..) | DataType::Time64(_)) => {
            basalt_common::fraction_digits(&f).unwrap_or(0).min(6)
        }
        _ => 0,
    }
}

/// `date_number(value, digits)`: `value` (of a type [`is_temporal`] accepts) as MySQL's
/// number, with `digits` fractional digits for a DATETIME or TIME (its declared ones, 0 if
/// unknown).
pub fn call(value: Expr, digits: u8) -> Expr {
    function().call(vec![
        value,
        Expr::Literal(ScalarValue::Int64(Some(i64::from(digits))), None),
    ])
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DateNumber {
    signature: Signature,
}

fn digits_of(scalars: &[Option<&ScalarValue>]) -> Result<u8> {
    match scalars.get(1) {
        Some(Some(ScalarValue::Int64(Some(p)))) if (0..=6).contains(p) => Ok(*p as u8),
        _ => plan_err!("{NAME} needs its fractional digits (0 to 6) as a literal"),
    }
}

/// The type of the number a value of `field` becomes (its declared fractional digits kept).
pub fn number_type(field: &datafusion::arrow::datatypes::Field) -> DataType {
    let digits = match field.data_type() {
        DataType::Timestamp(..) | DataType::Time64(_) => {
            basalt_common::fraction_digits(field).unwrap_or(0).min(6)
        }
        _ => 0,
    };
    result_type(field.data_type(), digits)
}

/// The result type: BIGINT for a DATE and a DATETIME or TIME without fraction,
/// DECIMAL(14 + p, p) for a DATETIME(p), DECIMAL(7 + p, p) for a TIME(p) (838:59:59 at most).
fn result_type(input: &DataType, digits: u8) -> DataType {
    match input {
        DataType::Timestamp(_, None) if digits > 0 => {
            DataType::Decimal128(14 + digits, digits as i8)
        }
        DataType::Time64(_) if digits > 0 => DataType::Decimal128(7 + digits, digits as i8),
        _ => DataType::Int64,
    }
}

impl ScalarUDFImpl for DateNumber {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let digits = digits_of(args.scalar_arguments)?;
        let input = args.arg_fields[0].data_type();
        if !is_temporal(input) && !input.is_null() {
            return plan_err!("{NAME} takes a DATE, DATETIME or TIME, not {input}");
        }
        Ok(Arc::new(Field::new(
            self.name(),
            result_type(input, digits),
            true,
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let target = args.return_field.data_type().clone();
        let (arrays, scalar) = arguments(&args)?;
        let values = &arrays[0];
        let out: ArrayRef = match values.data_type() {
            DataType::Date32 | DataType::Date64 => day_numbers(values)?,
            DataType::Timestamp(_, None) => {
                let micros = cast(values, &DataType::Timestamp(TimeUnit::Microsecond, None))?;
                let micros = micros
                    .as_any()
                    .downcast_ref::<TimestampMicrosecondArray>()
                    .map(|a| a.iter().collect::<Vec<_>>())
                    .unwrap_or_default();
                datetime_numbers(&micros, &target)?
            }
            DataType::Time64(_) => {
                let micros = cast(values, &DataType::Time64(TimeUnit::Microsecond))?;
                let micros: Vec<Option<i64>> = micros
                    .as_primitive::<datafusion::arrow::datatypes::Time64MicrosecondType>()
                    .iter()
                    .collect();
                time_numbers(&micros, &target)?
            }
            DataType::Null => datafusion::arrow::array::new_null_array(&target, values.len()),
            other => return exec_err!("{NAME} takes a DATE, DATETIME or TIME, not {other}"),
        };
        output(out, scalar)
    }
}

/// A DATE array's values as the numbers YYYYMMDD (BIGINT).
pub(crate) fn day_numbers(values: &ArrayRef) -> Result<ArrayRef> {
    let days = cast(values, &DataType::Date32)?;
    let numbers: Int64Array = days
        .as_primitive::<datafusion::arrow::datatypes::Date32Type>()
        .iter()
        .map(|d| d.and_then(date_of_days).map(|d| date_digits(&d)))
        .collect();
    Ok(Arc::new(numbers))
}

fn date_of_days(days: i32) -> Option<NaiveDate> {
    NaiveDate::from_num_days_from_ce_opt(days.checked_add(719_163)?)
}

/// YYYYMMDD.
fn date_digits(d: &NaiveDate) -> i64 {
    i64::from(d.year()) * 10_000 + i64::from(d.month()) * 100 + i64::from(d.day())
}

/// YYYYMMDDhhmmss.
fn datetime_digits(t: &NaiveDateTime) -> i64 {
    date_digits(&t.date()) * 1_000_000
        + i64::from(t.hour()) * 10_000
        + i64::from(t.minute()) * 100
        + i64::from(t.second())
}

/// Microseconds since the epoch as YYYYMMDDhhmmss numbers of the `target` type: BIGINT, or a
/// DECIMAL whose scale is the fraction's digits (truncated to them).
fn datetime_numbers(micros: &[Option<i64>], target: &DataType) -> Result<ArrayRef> {
    let parts = |v: i64| {
        let t = chrono::DateTime::from_timestamp_micros(v)?.naive_utc();
        Some((datetime_digits(&t), v.rem_euclid(1_000_000)))
    };
    match target {
        DataType::Decimal128(precision, scale) => {
            let scale = *scale as u32;
            let unit = 10_i128.pow(scale);
            let values: Decimal128Array = micros
                .iter()
                .map(|v| {
                    let (whole, fraction) = parts((*v)?)?;
                    let fraction = i128::from(fraction) / 10_i128.pow(6 - scale);
                    Some(i128::from(whole) * unit + fraction)
                })
                .collect();
            Ok(Arc::new(
                values.with_precision_and_scale(*precision, scale as i8)?,
            ))
        }
        _ => Ok(Arc::new(
            micros
                .iter()
                .map(|v| parts((*v)?).map(|(whole, _)| whole))
                .collect::<Int64Array>(),
        )),
    }
}

/// TIME spans (signed microseconds) as `[-]HHMMSS` numbers of the `target` type: BIGINT, or a
/// DECIMAL whose scale is the fraction's digits (truncated to them).
fn time_numbers(micros: &[Option<i64>], target: &DataType) -> Result<ArrayRef> {
    use basalt_common::time_value::as_hhmmss;
    match target {
        DataType::Decimal128(precision, scale) => {
            let scale = *scale as u32;
            let values: Decimal128Array = micros
                .iter()
                .map(|v| {
                    let v = (*v)?;
                    let fraction =
                        i128::from(v.unsigned_abs() % 1_000_000) / 10_i128.pow(6 - scale);
                    let magnitude = i128::from(as_hhmmss(v).abs()) * 10_i128.pow(scale) + fraction;
                    Some(if v < 0 { -magnitude } else { magnitude })
                })
                .collect();
            Ok(Arc::new(
                values.with_precision_and_scale(*precision, scale as i8)?,
            ))
        }
        _ => Ok(Arc::new(
            micros
                .iter()
                .map(|v| v.map(as_hhmmss))
                .collect::<Int64Array>(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_datetimes_become_their_digits() {
        let d = NaiveDate::from_ymd_opt(2020, 2, 2).unwrap();
        assert_eq!(date_digits(&d), 20200202);
        let t = d.and_hms_micro_opt(10, 11, 12, 125_000).unwrap();
        let micros = t.and_utc().timestamp_micros();
        let whole = datetime_numbers(&[Some(micros), None], &DataType::Int64).unwrap();
        let whole = whole.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        assert_eq!(whole.value(0), 20200202101112);
        assert!(whole.is_null(1));
        let exact = datetime_numbers(&[Some(micros)], &DataType::Decimal128(17, 3)).unwrap();
        let exact = exact.as_primitive::<datafusion::arrow::datatypes::Decimal128Type>();
        assert_eq!(exact.value(0), 20200202101112125);
    }

    #[test]
    fn times_become_signed_hhmmss() {
        let span = -(2 * 3_600_000_000 + 30 * 60_000_000 + 1_100_000);
        let whole = time_numbers(&[Some(span), None], &DataType::Int64).unwrap();
        let whole = whole.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
        assert_eq!(whole.value(0), -23001);
        assert!(whole.is_null(1));
        let exact = time_numbers(&[Some(span)], &DataType::Decimal128(8, 1)).unwrap();
        let exact = exact.as_primitive::<datafusion::arrow::datatypes::Decimal128Type>();
        assert_eq!(exact.value(0), -230011);
    }

    #[test]
    fn dates_before_the_epoch() {
        assert_eq!(date_of_days(-1).map(|d| date_digits(&d)), Some(19691231));
    }
}
