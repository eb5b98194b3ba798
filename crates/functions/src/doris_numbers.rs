//! Doris's numeric functions over DOUBLEs that MySQL lacks: `isinf(x)` and `signbit(x)` (TRUE
//! for a negative sign, -0.0 included), `even(x)` (the next even integer away from zero, `x`
//! itself when even), `gamma(x)` (Γ(x), NULL where it is infinite or undefined) and
//! `normal_cdf(mean, sd, x)` (the normal distribution's CDF at `x`, NULL for `sd <= 0`).
//! `width_bucket(x, min, max, n)`: the bucket (1..n) of `x` among n equal buckets from `min`
//! to `max` (reversed when `min > max`), 0 below and n + 1 past them; `min = max` or `n < 1` is
//! an error. `parse_data_size(s)`: the bytes a size like `2.3MB` spells (units B, kB, MB, GB,
//! TB, PB, EB, ZB, YB, powers of 1024; the fraction of a byte dropped) as a LARGEINT; other text
//! is an error naming it.
//! Every argument but `parse_data_size`'s is read as a DOUBLE; a NULL argument gives NULL.

use crate::util::{arguments, output, plain_function};
use basalt_common::types::LARGEINT_PRECISION;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal256Array, Float64Array, Int64Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{i256, DataType, Float64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    let doubles = |n| Signature::uniform(n, vec![DataType::Float64], Volatility::Immutable);
    vec![
        plain_function("isinf", doubles(1), DataType::Boolean, is_inf),
        plain_function("signbit", doubles(1), DataType::Boolean, sign_bit),
        plain_function("even", doubles(1), DataType::Float64, even),
        plain_function("gamma", doubles(1), DataType::Float64, gamma),
        plain_function("normal_cdf", doubles(3), DataType::Float64, normal_cdf),
        plain_function("width_bucket", doubles(4), DataType::Int64, width_bucket),
        plain_function(
            "parse_data_size",
            Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
            DataType::Decimal256(LARGEINT_PRECISION, 0),
            parse_data_size,
        ),
    ]
}

/// The arguments as DOUBLE columns, and whether all were scalars.
fn doubles(args: &ScalarFunctionArgs) -> Result<(Vec<Float64Array>, bool)> {
    let (arrays, scalar) = arguments(args)?;
    let columns = arrays
        .iter()
        .map(|a| {
            Ok(cast(a, &DataType::Float64)?
                .as_primitive::<Float64Type>()
                .clone())
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((columns, scalar))
}

fn flags(args: &ScalarFunctionArgs, f: fn(f64) -> bool) -> Result<ColumnarValue> {
    let (columns, scalar) = doubles(args)?;
    let out: BooleanArray = columns[0].iter().map(|x| x.map(f)).collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

fn numbers(args: &ScalarFunctionArgs, f: fn(&[f64]) -> Option<f64>) -> Result<ColumnarValue> {
    let (columns, scalar) = doubles(args)?;
    let rows = columns.first().map_or(0, |c| c.len());
    let mut row = Vec::with_capacity(columns.len());
    let out: Float64Array = (0..rows)
        .map(|i| {
            row.clear();
            for c in &columns {
                if c.is_null(i) {
                    return None;
                }
                row.push(c.value(i));
            }
            f(&row)
        })
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

fn is_inf(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    flags(args, f64::is_infinite)
}

fn sign_bit(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    flags(args, f64::is_sign_negative)
}

fn even(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    numbers(args, |x| Some(next_even(x[0])))
}

fn gamma(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    numbers(args, |x| Some(libm::tgamma(x[0])).filter(|g| g.is_finite()))
}

fn normal_cdf(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    numbers(args, |v| {
        let (mean, sd, x) = (v[0], v[1], v[2]);
        (sd > 0.0).then(|| 0.5 * libm::erfc(-(x - mean) / (sd * std::f64::consts::SQRT_2)))
    })
}

fn width_bucket(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (columns, scalar) = doubles(args)?;
    let mut out = Vec::with_capacity(columns[0].len());
    for i in 0..columns[0].len() {
        if columns.iter().any(|c| c.is_null(i)) {
            out.push(None);
            continue;
        }
        let [x, min, max, n] = [0, 1, 2, 3].map(|c| columns[c].value(i));
        if min == max || !(min.is_finite() && max.is_finite()) {
            return exec_err!("width_bucket: the lowest and highest values must differ");
        }
        if n < 1.0 || n.fract() != 0.0 || n >= 9.0e15 {
            return exec_err!("width_bucket: the number of buckets must be a positive integer");
        }
        out.push(Some(bucket_of(x, min, max, n)));
    }
    output(Arc::new(Int64Array::from(out)) as ArrayRef, scalar)
}

/// The bucket of `x` among `n` from `min` to `max`.
fn bucket_of(x: f64, min: f64, max: f64, n: f64) -> i64 {
    let (below, past, share) = if min < max {
        (x < min, x >= max, (x - min) / (max - min))
    } else {
        (x > min, x <= max, (min - x) / (min - max))
    };
    if below {
        0
    } else if past {
        n as i64 + 1
    } else {
        ((share * n).floor() as i64 + 1).min(n as i64)
    }
}

fn parse_data_size(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let mut out = Vec::with_capacity(texts.len());
    for text in texts.as_string::<i32>().iter() {
        match text {
            None => out.push(None),
            Some(t) => match data_size(t) {
                Some(bytes) => out.push(Some(i256::from_i128(bytes))),
                None => return exec_err!("parse_data_size: invalid data size '{t}'"),
            },
        }
    }
    let out = Decimal256Array::from(out).with_precision_and_scale(LARGEINT_PRECISION, 0)?;
    output(Arc::new(out) as ArrayRef, scalar)
}

/// The bytes `2.3MB` spells (the fraction of a byte dropped), if it is a data size.
fn data_size(text: &str) -> Option<i128> {
    const UNITS: [&str; 9] = ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let power = UNITS.iter().position(|u| *u == unit)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || (number.contains('.') && fraction.is_empty()) {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    if digits.len() > 60 {
        return None;
    }
    let mantissa = i256::from_string(&digits)?;
    let multiplier = i256::from_i128(1024).checked_pow(power as u32)?;
    let scale = i256::from_i128(10).checked_pow(fraction.len() as u32)?;
    mantissa
        .checked_mul(multiplier)?
        .checked_div(scale)?
        .to_i128()
}

/// The even integer next to `x` away from zero (`x` itself when it is one).
fn next_even(x: f64) -> f64 {
    let away = if x >= 0.0 { x.ceil() } else { x.floor() };
    let even = if away % 2.0 == 0.0 {
        away
    } else {
        away + away.signum()
    };
    even + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_rounds_away_from_zero_to_an_even_integer() {
        assert_eq!(next_even(2.9), 4.0);
        assert_eq!(next_even(-2.9), -4.0);
        assert_eq!(next_even(4.0), 4.0);
        assert_eq!(next_even(3.0), 4.0);
        assert_eq!(next_even(0.5), 2.0);
        assert_eq!(next_even(0.0), 0.0);
        assert_eq!(next_even(-1.0), -2.0);
    }

    #[test]
    fn width_buckets_count_from_one_with_outliers_at_zero_and_past_n() {
        assert_eq!(bucket_of(290000.0, 200000.0, 600000.0, 4.0), 1);
        assert_eq!(bucket_of(399999.99, 200000.0, 600000.0, 4.0), 2);
        assert_eq!(bucket_of(400000.0, 200000.0, 600000.0, 4.0), 3);
        assert_eq!(bucket_of(610000.0, 200000.0, 600000.0, 4.0), 5);
        assert_eq!(bucket_of(600000.0, 200000.0, 600000.0, 4.0), 5);
        assert_eq!(bucket_of(100.0, 200000.0, 600000.0, 4.0), 0);
        assert_eq!(bucket_of(5.0, 10.0, 0.0, 2.0), 2);
        assert_eq!(bucket_of(11.0, 10.0, 0.0, 2.0), 0);
    }

    #[test]
    fn data_sizes_are_powers_of_1024() {
        assert_eq!(data_size("1B"), Some(1));
        assert_eq!(data_size("1kB"), Some(1024));
        assert_eq!(data_size("2.3MB"), Some(2_411_724));
        assert_eq!(data_size("1YB"), Some(1_208_925_819_614_629_174_706_176));
        assert_eq!(data_size("1 kB"), None);
        assert_eq!(data_size("1kb"), None);
        assert_eq!(data_size("kB"), None);
        assert_eq!(data_size("1."), None);
        assert_eq!(data_size("12"), None);
    }
}
