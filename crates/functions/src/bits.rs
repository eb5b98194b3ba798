//! Doris's bit functions on integers, counted in the width of the argument's type:
//! `bit_count(x)` (set bits; `bit_count(CAST(-1 AS SMALLINT))` is 16, a LARGEINT has 128),
//! `bit_test(x, pos, ..)` / `bit_test_all` (1 when every bit at `pos`, counted from 0 at
//! the right, is set; a position outside the type is 0), and `bit_shift_left(x, n)` /
//! `bit_shift_right(x, n)` (a logical shift of the BIGINT's 64 bits; 0 when n is negative or
//! 64 or more). As in Doris, an integer literal has the narrowest type that holds it, so
//! `bit_count(-1)` counts a TINYINT's 8 bits (the statement rewrite types the literal).

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int16Array, Int64Array, Int8Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Decimal256Type, Int64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::new_from_impl(BitCount::new()),
        ScalarUDF::new_from_impl(BitTest::new("bit_test")),
        ScalarUDF::new_from_impl(BitTest::new("bit_test_all")),
        crate::util::plain_function(
            "bit_shift_left",
            shift_signature(),
            DataType::Int64,
            shift_left,
        ),
        crate::util::plain_function(
            "bit_shift_right",
            shift_signature(),
            DataType::Int64,
            shift_right,
        ),
    ]
}

/// Bits in a value of type `t` (unsigned types count as the signed type of their width; an
/// integral DECIMAL, LARGEINT among them, as 128 bits).
fn width(t: &DataType) -> Option<u32> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => 8,
        DataType::Int16 | DataType::UInt16 => 16,
        DataType::Int32 | DataType::UInt32 => 32,
        DataType::Int64 | DataType::UInt64 | DataType::Null => 64,
        DataType::Decimal128(_, 0) | DataType::Decimal256(_, 0) => 128,
        _ => return None,
    })
}

/// The value's bits in its own width, as an unsigned number.
fn bits(value: i128, width: u32) -> u128 {
    if width == 128 {
        value as u128
    } else {
        (value as u128) & ((1u128 << width) - 1)
    }
}

fn integer_args(name: &str, args: &[DataType]) -> Result<Vec<DataType>> {
    args.iter()
        .enumerate()
        .map(|(i, t)| match (i, width(t)) {
            // Integral decimals are read as 128-bit integers.
            (0, Some(128)) => Ok(DataType::Decimal256(76, 0)),
            (0, Some(_)) => Ok(t.clone()),
            (0, None) if t.is_numeric() || matches!(t, DataType::Utf8 | DataType::Utf8View) => {
                Ok(DataType::Int64)
            }
            (0, None) => exec_err!("{name} takes an integer, not {t}"),
            _ => Ok(DataType::Int64),
        })
        .collect()
}

/// The first argument's width and its values widened to i128 (None for NULL).
fn values(name: &str, arrays: &[ArrayRef]) -> Result<(u32, Vec<Option<i128>>)> {
    let w = width(arrays[0].data_type()).unwrap_or(64);
    if let DataType::Decimal256(_, _) = arrays[0].data_type() {
        let decimals = arrays[0].as_primitive::<Decimal256Type>();
        return decimals
            .iter()
            .map(|v| match v {
                None => Ok(None),
                Some(v) => match v.to_i128() {
                    Some(v) => Ok(Some(v)),
                    None => exec_err!("{name}: {v} is outside LARGEINT's 128 bits"),
                },
            })
            .collect::<Result<_>>()
            .map(|v| (w, v));
    }
    let wide = cast(&arrays[0], &DataType::Int64)?;
    let wide = wide.as_primitive::<Int64Type>();
    Ok((w, wide.iter().map(|v| v.map(i128::from)).collect()))
}

fn shift_signature() -> Signature {
    Signature::exact(
        vec![DataType::Int64, DataType::Int64],
        Volatility::Immutable,
    )
}

fn shift(args: &ScalarFunctionArgs, by: fn(u64, u32) -> u64) -> Result<ColumnarValue> {
    let (arrays, scalar) = crate::util::arguments(args)?;
    let values = arrays[0].as_primitive::<Int64Type>();
    let counts = arrays[1].as_primitive::<Int64Type>();
    let out: Int64Array = values
        .iter()
        .zip(counts.iter())
        .map(|(v, n)| match (v, n) {
            (Some(v), Some(n)) => Some(match u32::try_from(n) {
                Ok(n) if n < 64 => by(v as u64, n) as i64,
                _ => 0,
            }),
            _ => None,
        })
        .collect();
    crate::util::output(Arc::new(out), scalar)
}

fn shift_left(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    shift(args, |v, n| v << n)
}

fn shift_right(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    shift(args, |v, n| v >> n)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct BitCount {
    signature: Signature,
}

impl BitCount {
    fn new() -> BitCount {
        BitCount {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for BitCount {
    fn name(&self) -> &str {
        "bit_count"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        match args {
            [_] => integer_args("bit_count", args),
            _ => exec_err!("bit_count takes one argument"),
        }
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        // A TINYINT holds up to 64; a LARGEINT may have all 128 bits set.
        Ok(match args.first().and_then(width) {
            Some(128) => DataType::Int16,
            _ => DataType::Int8,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let (w, values) = values("bit_count", &arrays)?;
        let counts = values.iter().map(|v| v.map(|v| bits(v, w).count_ones()));
        let out: ArrayRef = if w == 128 {
            Arc::new(counts.map(|c| c.map(|c| c as i16)).collect::<Int16Array>())
        } else {
            Arc::new(counts.map(|c| c.map(|c| c as i8)).collect::<Int8Array>())
        };
        crate::util::output(out, scalar)
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct BitTest {
    name: &'static str,
    signature: Signature,
}

impl BitTest {
    fn new(name: &'static str) -> BitTest {
        BitTest {
            name,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for BitTest {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, args: &[DataType]) -> Result<Vec<DataType>> {
        if args.len() < 2 {
            return exec_err!("{} takes a value and at least one position", self.name);
        }
        integer_args(self.name, args)
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let (w, values) = values(self.name, &arrays)?;
        let positions: Vec<&Int64Array> = arrays[1..]
            .iter()
            .map(|a| a.as_primitive::<Int64Type>())
            .collect();
        let out: Int8Array = (0..values.len())
            .map(|row| {
                let value = values[row]?;
                if positions.iter().any(|p| p.is_null(row)) {
                    return None;
                }
                let v = bits(value, w);
                let all = positions.iter().all(|p| {
                    let pos = p.value(row);
                    (0..w as i64).contains(&pos) && v & (1u128 << pos) != 0
                });
                Some(all as i8)
            })
            .collect();
        crate::util::output(Arc::new(out), scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_in_the_width_of_the_type() {
        assert_eq!(bits(-1, 8).count_ones(), 8);
        assert_eq!(bits(-1, 16).count_ones(), 16);
        assert_eq!(bits(-1, 64).count_ones(), 64);
        assert_eq!(bits(43, 32), 43);
        assert_eq!(bits(i64::MIN as i128, 64).count_ones(), 1);
        assert_eq!(bits(-1, 128).count_ones(), 128);
        assert_eq!(bits(i128::MIN, 128).count_ones(), 1);
    }
}
