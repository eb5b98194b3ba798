//! Doris's bit functions on integers, counted in the width of the argument's type:
//! `bit_count(x)` (set bits; `bit_count(CAST(-1 AS SMALLINT))` is 16) and
//! `bit_test(x, pos, ..)` / `bit_test_all` (1 when every bit at `pos`, counted from 0 at
//! the right, is set; a position outside the type is 0).

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Int64Array, Int8Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type};
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
    ]
}

/// Bits in a value of type `t` (unsigned types count as the signed type of their width).
fn width(t: &DataType) -> Option<u32> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => 8,
        DataType::Int16 | DataType::UInt16 => 16,
        DataType::Int32 | DataType::UInt32 => 32,
        DataType::Int64 | DataType::UInt64 | DataType::Null => 64,
        _ => return None,
    })
}

/// The value's bits in its own width, as an unsigned number.
fn bits(value: i64, width: u32) -> u64 {
    if width == 64 {
        value as u64
    } else {
        (value as u64) & ((1u64 << width) - 1)
    }
}

fn integer_args(name: &str, args: &[DataType]) -> Result<Vec<DataType>> {
    args.iter()
        .enumerate()
        .map(|(i, t)| match (i, width(t)) {
            (0, Some(_)) => Ok(t.clone()),
            // LARGEINT's 128 bits do not fit the 64 bit_count counts in: refused, not
            // miscounted (bit_test reads a low bit alike in both widths).
            (0, None) if name == "bit_count" && matches!(t, DataType::Decimal256(_, _)) => {
                exec_err!("{name} of a LARGEINT (128-bit) value is not supported")
            }
            (0, None) if t.is_numeric() || matches!(t, DataType::Utf8 | DataType::Utf8View) => {
                Ok(DataType::Int64)
            }
            (0, None) => exec_err!("{name} takes an integer, not {t}"),
            _ => Ok(DataType::Int64),
        })
        .collect()
}

/// The first argument's width and its values widened to i64.
fn values(arrays: &[ArrayRef]) -> Result<(u32, Int64Array)> {
    let w = width(arrays[0].data_type()).unwrap_or(64);
    let wide = cast(&arrays[0], &DataType::Int64)?;
    Ok((w, wide.as_primitive::<Int64Type>().clone()))
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

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = crate::util::arguments(&args)?;
        let (w, values) = values(&arrays)?;
        let out: Int8Array = values
            .iter()
            .map(|v| v.map(|v| bits(v, w).count_ones() as i8))
            .collect();
        crate::util::output(Arc::new(out), scalar)
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
        let (w, values) = values(&arrays)?;
        let positions: Vec<&Int64Array> = arrays[1..]
            .iter()
            .map(|a| a.as_primitive::<Int64Type>())
            .collect();
        let out: Int8Array = (0..values.len())
            .map(|row| {
                if values.is_null(row) || positions.iter().any(|p| p.is_null(row)) {
                    return None;
                }
                let v = bits(values.value(row), w);
                let all = positions.iter().all(|p| {
                    let pos = p.value(row);
                    (0..w as i64).contains(&pos) && v & (1u64 << pos) != 0
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
        assert_eq!(bits(i64::MIN, 64).count_ones(), 1);
    }
}
