//! Doris's numeric functions over DOUBLEs that MySQL lacks: `isinf(x)` and `signbit(x)` (TRUE
//! for a negative sign, -0.0 included), `even(x)` (the next even integer away from zero, `x`
//! itself when even), `gamma(x)` (Γ(x), NULL where it is infinite or undefined) and
//! `normal_cdf(mean, sd, x)` (the normal distribution's CDF at `x`, NULL for `sd <= 0`).
//! Every argument is read as a DOUBLE; a NULL argument gives NULL.

use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Float64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::Result;
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
}
