//! MySQL's FLOOR, CEIL/CEILING, TRUNCATE and ROUND, and Doris's ROUND_BANKERS (ROUND with
//! halves to the even neighbour: `round_bankers(2.5)` is 2), typed as MySQL types them: of an integer,
//! the integer itself (exact, never through a DOUBLE); of a DECIMAL(p, s), FLOOR and CEIL are
//! DECIMAL(p - s + 1, 0) and `TRUNCATE(x, d)` with a literal `d` is DECIMAL with scale
//! `max(d, 0)` (at most 38, more than s adds zeros: `TRUNCATE(52.64, 3)` is 52.640), so
//! `FLOOR(5.5)` is 5 and `TRUNCATE(52.64, 1)` is 52.6; Doris's `FLOOR(x, d)` and `CEIL(x, d)`
//! go down or up to `d` digits and are typed as TRUNCATE (`CEIL(81.5699, 2)` is 81.57); `ROUND(x, d)` takes the same scale and
//! one more whole digit for the carry (`ROUND(9.95, 1)` is 10.0); with a column `d` the scale
//! stays s.
//! Of a DOUBLE, a DOUBLE (`TRUNCATE(1e1, 308)` is 10, `TRUNCATE(1e0, -309)` 0, never inf or
//! NaN). ROUND rounds half away from zero, DOUBLEs too (Doris's rule; MySQL rounds a DOUBLE's
//! halves to even). All four keep a TIME or DATETIME a TIME or DATETIME with `d` (0 to 6;
//! FLOOR and CEIL 0) fractional digits, as MariaDB does (see [`crate::temporal_rounding`]);
//! a DATE is its number YYYYMMDD. Text is read as a number (a DOUBLE). `d` counts from the decimal point,
//! negative to the left; any number is taken (`ROUND(1.55, 1.5)` rounds to 2 digits).

use crate::mysql_values::{integers, leading_number};
use crate::util::{arguments, output};
use basalt_common::types::FRACTION_DIGITS_KEY;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Decimal256Array, Float64Array, Int64Array,
    UInt64Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{
    i256, DataType, Decimal128Type, Decimal256Type, Field, FieldRef, Float64Type, Int64Type,
    UInt64Type, DECIMAL128_MAX_PRECISION, DECIMAL256_MAX_PRECISION,
};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    TypeSignature, Volatility,
};
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Kind {
    Floor,
    Ceil,
    Truncate,
    Round,
    /// Doris's `round_bankers`: ROUND with halves to the even neighbour.
    RoundHalfEven,
}

impl Kind {
    fn rounds(self) -> bool {
        matches!(self, Kind::Round | Kind::RoundHalfEven)
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Rounding {
    kind: Kind,
    signature: Signature,
}

/// `mysql_floor`, `mysql_ceil`, `mysql_truncate` and `mysql_round`.
pub fn functions() -> Vec<ScalarUDF> {
    [
        (
            Kind::Floor,
            TypeSignature::OneOf(vec![TypeSignature::Any(1), TypeSignature::Any(2)]),
        ),
        (
            Kind::Ceil,
            TypeSignature::OneOf(vec![TypeSignature::Any(1), TypeSignature::Any(2)]),
        ),
        (Kind::Truncate, TypeSignature::Any(2)),
        (
            Kind::Round,
            TypeSignature::OneOf(vec![TypeSignature::Any(1), TypeSignature::Any(2)]),
        ),
        (
            Kind::RoundHalfEven,
            TypeSignature::OneOf(vec![TypeSignature::Any(1), TypeSignature::Any(2)]),
        ),
    ]
    .into_iter()
    .map(|(kind, arguments)| {
        ScalarUDF::new_from_impl(Rounding {
            kind,
            signature: Signature::new(arguments, Volatility::Immutable),
        })
    })
    .collect()
}

/// The name of the function planning `floor`, `ceil`, `truncate` or `round` (None for others).
pub fn function_name(mysql_name: &str) -> Option<&'static str> {
    Some(match mysql_name {
        "floor" => "mysql_floor",
        "ceil" | "ceiling" => "mysql_ceil",
        "truncate" => "mysql_truncate",
        "round" => "mysql_round",
        _ => return None,
    })
}

impl ScalarUDFImpl for Rounding {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Floor => "mysql_floor",
            Kind::Ceil => "mysql_ceil",
            Kind::Truncate => "mysql_truncate",
            Kind::Round => "mysql_round",
            Kind::RoundHalfEven => "round_bankers",
        }
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        plan_err!("{}: return_field_from_args is used", self.name())
    }
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let x = args.arg_fields[0].data_type();
        let digits = match args.scalar_arguments.get(1) {
            Some(Some(d)) => literal_digits(d),
            // ROUND(x): no digits.
            None if args.arg_fields.len() == 1 => Some(0),
            _ => None,
        };
        let t = result_type(self.kind, x, digits);
        let field = Field::new(self.name(), t, true);
        if !matches!(x, DataType::Time64(_) | DataType::Timestamp(..)) {
            return Ok(Arc::new(field));
        }
        // The fractional digits the result shows: those it is cut to.
        let shown = match (self.kind, digits) {
            (_, Some(d)) => d.clamp(0, 6) as u8,
            (_, None) => basalt_common::fraction_digits(&args.arg_fields[0]).unwrap_or(6),
        };
        Ok(Arc::new(field.with_metadata(
            [(FRACTION_DIGITS_KEY.to_string(), shown.to_string())].into(),
        )))
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let target = args.return_field.data_type().clone();
        let (arrays, scalar) = arguments(&args)?;
        let digits = match arrays.get(1) {
            Some(d) => integers(d)?,
            None => vec![Some(0); arrays[0].len()],
        };
        let out = rounded(self.kind, &arrays[0], &digits, &target)?;
        output(out, scalar)
    }
}

/// A literal `d` as an integer, as the rows read it (None for NULL or another value).
fn literal_digits(d: &ScalarValue) -> Option<i64> {
    integers(&d.to_array().ok()?)
        .ok()?
        .first()
        .copied()
        .flatten()
}

/// The type of the result for an argument of type `x` (and a literal `d`, for TRUNCATE).
fn result_type(kind: Kind, x: &DataType, digits: Option<i64>) -> DataType {
    let decimal = |p: u8, s: i8, max: u8, wide: bool| {
        let s = s.max(0);
        let scale = digits.map_or(s, |d| d.clamp(0, i64::from(MAX_ROUND_SCALE)) as i8);
        let whole = i16::from(p) - i16::from(s);
        let extra = i16::from(matches!(kind, Kind::Floor | Kind::Ceil) || kind.rounds());
        let digits = whole + i16::from(scale) + extra;
        // More digits than 128 bits hold (ROUND adding zeros): a 256-bit DECIMAL.
        let wide = wide || digits > i16::from(DECIMAL128_MAX_PRECISION);
        let max = if wide { DECIMAL256_MAX_PRECISION } else { max };
        let p = digits.clamp(1, i16::from(max)) as u8;
        if wide {
            DataType::Decimal256(p, scale)
        } else {
            DataType::Decimal128(p, scale)
        }
    };
    match x {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::Boolean => DataType::Int64,
        DataType::UInt64 => DataType::UInt64,
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => {
            decimal(*p, *s, DECIMAL128_MAX_PRECISION, false)
        }
        DataType::Decimal256(p, s) => decimal(*p, *s, DECIMAL256_MAX_PRECISION, true),
        DataType::Time64(_) | DataType::Timestamp(..) => x.clone(),
        DataType::Date32 | DataType::Date64 => DataType::Int64,
        _ => DataType::Float64,
    }
}

/// The most fractional digits ROUND gives a DECIMAL (MySQL's maximum scale).
const MAX_ROUND_SCALE: i8 = 38;

fn rounded(
    kind: Kind,
    x: &ArrayRef,
    digits: &[Option<i64>],
    target: &DataType,
) -> Result<ArrayRef> {
    Ok(match target {
        DataType::Int64 => {
            let x = match x.data_type() {
                DataType::Date32 | DataType::Date64 => crate::date_number::day_numbers(x)?,
                _ => cast(x, &DataType::Int64)?,
            };
            let out: Int64Array = x
                .as_primitive::<Int64Type>()
                .iter()
                .zip(digits)
                .map(|(v, d)| v.map_or(Ok(None), |v| integer_row(kind, v, *d, "BIGINT")))
                .collect::<Result<_>>()?;
            Arc::new(out)
        }
        DataType::UInt64 => {
            let out: UInt64Array = x
                .as_primitive::<UInt64Type>()
                .iter()
                .zip(digits)
                .map(|(v, d)| v.map_or(Ok(None), |v| integer_row(kind, v, *d, "BIGINT UNSIGNED")))
                .collect::<Result<_>>()?;
            Arc::new(out)
        }
        DataType::Decimal128(p, ts) => {
            let (DataType::Decimal128(_, s)
            | DataType::Decimal32(_, s)
            | DataType::Decimal64(_, s)) = x.data_type()
            else {
                return exec_err!("mysql rounding: unexpected argument {}", x.data_type());
            };
            let x = cast(x, &DataType::Decimal128(DECIMAL128_MAX_PRECISION, *s))?;
            let out: Decimal128Array = x
                .as_primitive::<Decimal128Type>()
                .iter()
                .zip(digits)
                .map(|(v, d)| decimal_row(kind, v?, *s, (*d)?, *ts))
                .collect();
            Arc::new(out.with_precision_and_scale(*p, *ts)?)
        }
        DataType::Decimal256(p, ts) => {
            let (DataType::Decimal256(_, s)
            | DataType::Decimal128(_, s)
            | DataType::Decimal32(_, s)
            | DataType::Decimal64(_, s)) = x.data_type()
            else {
                return exec_err!("mysql rounding: unexpected argument {}", x.data_type());
            };
            let x = cast(x, &DataType::Decimal256(DECIMAL256_MAX_PRECISION, *s))?;
            let out: Decimal256Array = x
                .as_primitive::<Decimal256Type>()
                .iter()
                .zip(digits)
                .map(|(v, d)| decimal_row(kind, v?, *s, (*d)?, *ts))
                .collect();
            Arc::new(out.with_precision_and_scale(*p, *ts)?)
        }
        DataType::Time64(_) | DataType::Timestamp(..) => {
            use crate::temporal_rounding::Direction;
            let direction = match kind {
                Kind::Floor => Direction::Floor,
                Kind::Ceil => Direction::Ceil,
                Kind::Truncate => Direction::Truncate,
                Kind::Round | Kind::RoundHalfEven => Direction::Round,
            };
            crate::temporal_rounding::rounded(direction, x, digits)?
        }
        _ => {
            let values: Vec<Option<f64>> = match x.data_type() {
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
                    crate::mysql_values::texts(x)?
                        .into_iter()
                        .map(|t| t.map(|t| leading_number(&t).unwrap_or(0.0)))
                        .collect()
                }
                _ => cast(x, &DataType::Float64)?
                    .as_primitive::<Float64Type>()
                    .iter()
                    .collect(),
            };
            let out: Float64Array = values
                .into_iter()
                .zip(digits)
                .map(|(v, d)| Some(double_row(kind, v?, (*d)?)))
                .collect();
            Arc::new(out)
        }
    })
}

/// One integer row (None for NULL digits); a ROUND past the type's range fails with 1690.
fn integer_row<T>(kind: Kind, v: T, d: Option<i64>, type_name: &str) -> Result<Option<T>>
where
    T: Copy + Into<i128> + TryFrom<i128> + std::fmt::Display,
{
    let Some(d) = d else {
        return Ok(None);
    };
    let wide = v.into();
    let r = match kind {
        Kind::Round => round_i128(wide, d, false),
        Kind::RoundHalfEven => round_i128(wide, d, true),
        Kind::Truncate => truncate_i128(wide, d),
        Kind::Floor | Kind::Ceil => floor_or_ceil_i128(kind, wide, d),
    };
    match T::try_from(r) {
        Ok(r) => Ok(Some(r)),
        Err(_) => Err(datafusion::error::DataFusionError::External(Box::new(
            basalt_common::BasaltError::NumericOverflow(format!(
                "{type_name} value is out of range in 'round({v},{d})'"
            )),
        ))),
    }
}

/// `v` with its last `-d` digits zeroed (toward zero); `v` itself for `d >= 0`.
fn truncate_i128(v: i128, d: i64) -> i128 {
    if d >= 0 {
        return v;
    }
    match 10i128.checked_pow(d.unsigned_abs().min(64) as u32) {
        Some(m) => v - v % m,
        None => 0,
    }
}

/// `v` floored or ceiled to `-d` zeroed digits (`FLOOR(-123, -1)` is -130, `CEIL(123, -1)`
/// 130); `v` itself for `d >= 0`.
fn floor_or_ceil_i128(kind: Kind, v: i128, d: i64) -> i128 {
    let t = truncate_i128(v, d);
    let Some(m) = 10i128.checked_pow(d.unsigned_abs().min(64) as u32) else {
        return 0;
    };
    match kind {
        Kind::Floor if t > v => t - m,
        Kind::Ceil if t < v => t.saturating_add(m),
        _ => t,
    }
}

/// `v` rounded to `-d` zeroed digits, halves away from zero (or to even with `half_even`);
/// `v` itself for `d >= 0`.
fn round_i128(v: i128, d: i64, half_even: bool) -> i128 {
    if d >= 0 {
        return v;
    }
    match 10i128.checked_pow(d.unsigned_abs().min(64) as u32) {
        Some(m) => {
            let r = v % m;
            let t = v - r;
            let (below, above) = (r.abs(), m - r.abs());
            let tie_up = !half_even || (t / m) % 2 != 0;
            if below > above || (below == above && tie_up) {
                t + m * r.signum()
            } else {
                t
            }
        }
        None => 0,
    }
}

/// The integer arithmetic a decimal's unscaled value needs.
trait Unscaled: Copy + PartialOrd {
    const ZERO: Self;
    fn ten_pow(n: u32) -> Option<Self>;
    fn div(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

impl Unscaled for i128 {
    const ZERO: Self = 0;
    fn ten_pow(n: u32) -> Option<Self> {
        10i128.checked_pow(n)
    }
    fn div(self, o: Self) -> Self {
        self / o
    }
    fn rem(self, o: Self) -> Self {
        self % o
    }
    fn sub(self, o: Self) -> Self {
        self - o
    }
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn mul(self, o: Self) -> Self {
        self.saturating_mul(o)
    }
}

impl Unscaled for i256 {
    const ZERO: Self = i256::ZERO;
    fn ten_pow(n: u32) -> Option<Self> {
        i256::from_i128(10).checked_pow(n)
    }
    fn div(self, o: Self) -> Self {
        self.wrapping_div(o)
    }
    fn rem(self, o: Self) -> Self {
        self.wrapping_rem(o)
    }
    fn sub(self, o: Self) -> Self {
        self.wrapping_sub(o)
    }
    fn add(self, o: Self) -> Self {
        self.wrapping_add(o)
    }
    fn mul(self, o: Self) -> Self {
        self.wrapping_mul(o)
    }
}

/// A decimal's unscaled value `v` at scale `s`, floored, ceiled or truncated to `d` digits,
/// at the result's scale `ts`.
fn decimal_row<T: Unscaled>(kind: Kind, v: T, s: i8, d: i64, ts: i8) -> Option<T> {
    let s = i64::from(s.max(0));
    let cut = s.saturating_sub(d);
    let kept = if cut <= 0 {
        v
    } else {
        match T::ten_pow(cut.min(200) as u32) {
            None => T::ZERO,
            Some(m) => {
                let r = v.rem(m);
                let t = v.sub(r);
                match kind {
                    Kind::Floor if r < T::ZERO => t.sub(m),
                    Kind::Ceil if r > T::ZERO => t.add(m),
                    Kind::Round if r > T::ZERO && r >= m.sub(r) => t.add(m),
                    Kind::Round if r < T::ZERO && T::ZERO.sub(r) >= m.add(r) => t.sub(m),
                    Kind::RoundHalfEven if r != T::ZERO => {
                        let below = if r > T::ZERO { r } else { T::ZERO.sub(r) };
                        let above = m.sub(below);
                        let odd = t.div(m).rem(two::<T>()) != T::ZERO;
                        let away = below > above || (below == above && odd);
                        match (away, r > T::ZERO) {
                            (false, _) => t,
                            (true, true) => t.add(m),
                            (true, false) => t.sub(m),
                        }
                    }
                    _ => t,
                }
            }
        }
    };
    // To the result's scale: exact, as the digits dropped are zeros (or zeros added).
    let drop = s - i64::from(ts);
    if drop < 0 {
        return T::ten_pow(drop.unsigned_abs() as u32).map(|m| kept.mul(m));
    }
    if drop == 0 {
        return Some(kept);
    }
    Some(match T::ten_pow(drop as u32) {
        Some(m) => kept.div(m),
        None => T::ZERO,
    })
}

fn two<T: Unscaled>() -> T {
    match T::ten_pow(0) {
        Some(one) => one.add(one),
        None => T::ZERO,
    }
}

/// A DOUBLE floored, ceiled or truncated to `d` digits; never inf or NaN from a finite `x`,
/// and no negative zero.
fn double_row(kind: Kind, x: f64, d: i64) -> f64 {
    let r = match kind {
        Kind::Floor | Kind::Ceil if d == 0 => nearest(kind, x),
        Kind::Floor | Kind::Ceil if d > 0 => {
            let m = 10f64.powi(d.min(400) as i32);
            let scaled = x * m;
            if !m.is_finite() || !scaled.is_finite() {
                x
            } else {
                nearest(kind, scaled) / m
            }
        }
        Kind::Floor | Kind::Ceil => {
            let m = 10f64.powi(d.unsigned_abs().min(400) as i32);
            if m.is_finite() {
                nearest(kind, x / m) * m
            } else {
                0.0
            }
        }
        Kind::Truncate if d >= 0 => {
            let m = 10f64.powi(d.min(400) as i32);
            let scaled = x * m;
            if !m.is_finite() || !scaled.is_finite() {
                x
            } else {
                scaled.trunc() / m
            }
        }
        Kind::Truncate => {
            let m = 10f64.powi(d.unsigned_abs().min(400) as i32);
            if m.is_finite() {
                (x / m).trunc() * m
            } else {
                0.0
            }
        }
        Kind::Round | Kind::RoundHalfEven if d >= 0 => {
            let m = 10f64.powi(d.min(400) as i32);
            let scaled = x * m;
            if !m.is_finite() || !scaled.is_finite() {
                x
            } else {
                let r = nearest(kind, scaled) / m;
                if r.is_finite() {
                    r
                } else {
                    x
                }
            }
        }
        Kind::Round | Kind::RoundHalfEven => {
            let m = 10f64.powi(d.unsigned_abs().min(400) as i32);
            if m.is_finite() {
                nearest(kind, x / m) * m
            } else {
                0.0
            }
        }
    };
    r + 0.0
}

/// The integer nearest `x`: halves away from zero, or to even for `round_bankers`; below or
/// above it for FLOOR and CEIL.
fn nearest(kind: Kind, x: f64) -> f64 {
    match kind {
        Kind::RoundHalfEven => x.round_ties_even(),
        Kind::Floor => x.floor(),
        Kind::Ceil => x.ceil(),
        _ => x.round(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_results_take_mysql_scale() {
        // FLOOR(5.5), FLOOR(-5.5), CEIL(-0.5) at scale 1.
        assert_eq!(decimal_row(Kind::Floor, 55i128, 1, 0, 0), Some(5));
        assert_eq!(decimal_row(Kind::Floor, -55i128, 1, 0, 0), Some(-6));
        assert_eq!(decimal_row(Kind::Ceil, -5i128, 1, 0, 0), Some(0));
        assert_eq!(decimal_row(Kind::Ceil, 55i128, 1, 0, 0), Some(6));
        // TRUNCATE(52.64, 1) = 52.6; (52.64, -1) = 50; (-52.64, 1) = -52.6.
        assert_eq!(decimal_row(Kind::Truncate, 5264i128, 2, 1, 1), Some(526));
        assert_eq!(decimal_row(Kind::Truncate, 5264i128, 2, -1, 0), Some(50));
        assert_eq!(decimal_row(Kind::Truncate, -5264i128, 2, 1, 1), Some(-526));
        // A non-literal d keeps the scale.
        assert_eq!(decimal_row(Kind::Truncate, 5264i128, 2, 1, 2), Some(5260));
        assert_eq!(decimal_row(Kind::Truncate, 5264i128, 2, -90, 0), Some(0));
        assert_eq!(
            result_type(Kind::Truncate, &DataType::Decimal128(4, 2), Some(1)),
            DataType::Decimal128(3, 1)
        );
        assert_eq!(
            result_type(Kind::Truncate, &DataType::Decimal128(4, 2), Some(3)),
            DataType::Decimal128(5, 3)
        );
        assert_eq!(decimal_row(Kind::Truncate, 5264i128, 2, 3, 3), Some(52640));
        assert_eq!(
            result_type(Kind::Floor, &DataType::Decimal128(2, 1), Some(0)),
            DataType::Decimal128(2, 0)
        );
        // FLOOR(-1.234, 1) = -1.3, CEIL(-1.234, 1) = -1.2, CEIL(123, -1) = 130.
        assert_eq!(decimal_row(Kind::Floor, -1234i128, 3, 1, 1), Some(-13));
        assert_eq!(decimal_row(Kind::Ceil, -1234i128, 3, 1, 1), Some(-12));
        assert_eq!(floor_or_ceil_i128(Kind::Ceil, 123, -1), 130);
        assert_eq!(floor_or_ceil_i128(Kind::Floor, -123, -1), -130);
        assert_eq!(floor_or_ceil_i128(Kind::Floor, 120, -1), 120);
    }

    #[test]
    fn integers_stay_exact() {
        assert_eq!(
            truncate_i128(-5_000_111_000_111_000_155, -1),
            -5_000_111_000_111_000_150
        );
        assert_eq!(
            truncate_i128(15_000_111_000_111_000_155, -1),
            15_000_111_000_111_000_150
        );
        assert_eq!(
            truncate_i128(18_446_744_073_709_551_614, -19),
            10_000_000_000_000_000_000
        );
        assert_eq!(truncate_i128(5, -30), 0);
        assert_eq!(round_i128(15, -1, false), 20);
        assert_eq!(round_i128(-15, -1, false), -20);
        assert_eq!(round_i128(14, -1, false), 10);
        assert_eq!(
            round_i128(-9_223_372_036_854_775_808, -1, false),
            -9_223_372_036_854_775_810
        );
        assert_eq!(round_i128(4, -4_294_967_200, false), 0);
        assert!(integer_row(Kind::Round, u64::MAX, Some(-1), "BIGINT UNSIGNED").is_err());
        assert_eq!(
            integer_row(Kind::Round, 25i64, Some(-1), "BIGINT").unwrap(),
            Some(30)
        );
    }

    #[test]
    fn doubles_stay_finite() {
        assert_eq!(double_row(Kind::Truncate, 10.0, 308), 10.0);
        assert_eq!(double_row(Kind::Truncate, 1.0, -309), 0.0);
        assert_eq!(double_row(Kind::Truncate, 1.55, 1), 1.5);
        assert!(double_row(Kind::Truncate, -0.5, 0).is_sign_positive());
        assert_eq!(double_row(Kind::Floor, -5.5, 0), -6.0);
        assert_eq!(double_row(Kind::Round, 2.5, 0), 3.0);
        assert_eq!(double_row(Kind::Round, -2.5, 0), -3.0);
        assert_eq!(double_row(Kind::Round, 1.298, 1), 1.3);
        assert_eq!(double_row(Kind::Round, 10.0, 308), 10.0);
        assert_eq!(double_row(Kind::Round, 5e-324, 400), 5e-324);
        assert_eq!(double_row(Kind::Round, 155.0, -1), 160.0);
    }

    #[test]
    fn round_takes_the_literal_scale_with_a_carry_digit() {
        // ROUND(5.55, 1) = 5.6 as DECIMAL(3, 1); ROUND(-5.55, 1) = -5.6; ROUND(5.55, -1) = 10.
        assert_eq!(decimal_row(Kind::Round, 555i128, 2, 1, 1), Some(56));
        assert_eq!(decimal_row(Kind::Round, -555i128, 2, 1, 1), Some(-56));
        assert_eq!(decimal_row(Kind::Round, 555i128, 2, -1, 0), Some(10));
        assert_eq!(decimal_row(Kind::Round, 544i128, 2, 1, 1), Some(54));
        // More digits than the argument has: zeros added.
        assert_eq!(decimal_row(Kind::Round, 555i128, 2, 5, 5), Some(555000));
        // round_bankers: halves to the even neighbour, other values to the nearest.
        assert_eq!(
            decimal_row(Kind::RoundHalfEven, 10755i128, 3, 2, 2),
            Some(1076)
        );
        assert_eq!(
            decimal_row(Kind::RoundHalfEven, 16672725i128, 4, 2, 2),
            Some(166727)
        );
        assert_eq!(decimal_row(Kind::RoundHalfEven, -35i128, 1, 0, 0), Some(-4));
        assert_eq!(decimal_row(Kind::RoundHalfEven, -25i128, 1, 0, 0), Some(-2));
        assert_eq!(decimal_row(Kind::RoundHalfEven, 26i128, 1, 0, 0), Some(3));
        assert_eq!(
            decimal_row(Kind::RoundHalfEven, 16672725i128, 4, -2, 0),
            Some(1700)
        );
        assert_eq!(round_i128(25, -1, true), 20);
        assert_eq!(round_i128(35, -1, true), 40);
        assert_eq!(round_i128(-25, -1, true), -20);
        assert_eq!(double_row(Kind::RoundHalfEven, 2.5, 0), 2.0);
        assert_eq!(double_row(Kind::RoundHalfEven, -3.5, 0), -4.0);
        assert_eq!(
            result_type(Kind::Round, &DataType::Decimal128(3, 2), Some(1)),
            DataType::Decimal128(3, 1)
        );
        assert_eq!(
            result_type(Kind::Round, &DataType::Decimal128(6, 3), Some(40)),
            DataType::Decimal256(42, 38)
        );
        assert_eq!(
            result_type(Kind::Round, &DataType::Decimal128(3, 2), None),
            DataType::Decimal128(4, 2)
        );
    }
}
