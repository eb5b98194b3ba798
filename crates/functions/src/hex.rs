//! MySQL's HEX, UNHEX and BIN. `HEX(n)` of an integer is its two's-complement value in upper-case
//! hexadecimal (`HEX(255)` = 'FF', `HEX(-1)` = 'FFFFFFFFFFFFFFFF'); of text or bytes, two digits
//! per byte. `UNHEX(s)` reads pairs of hex digits back into bytes (an odd count gets a leading
//! 0); a string with any other character is NULL.

use crate::util::{arguments, expect_args, output, plain_function};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, StringBuilder};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::fmt::Write;
use std::sync::Arc;

#[derive(Debug, PartialEq, Eq, Hash)]
struct Hex {
    signature: Signature,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Unhex {
    signature: Signature,
}

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "bin",
            // BIT(64) values past BIGINT's range come as UInt64.
            Signature::one_of(
                vec![
                    TypeSignature::Exact(vec![DataType::Int64]),
                    TypeSignature::Exact(vec![DataType::UInt64]),
                ],
                Volatility::Immutable,
            ),
            DataType::Utf8,
            bin,
        ),
        ScalarUDF::new_from_impl(Hex {
            signature: Signature::user_defined(Volatility::Immutable),
        }),
        ScalarUDF::new_from_impl(Unhex {
            signature: Signature::user_defined(Volatility::Immutable),
        }),
    ]
}

fn is_integer_input(t: &DataType) -> bool {
    t.is_integer() || matches!(t, DataType::Boolean)
}

impl ScalarUDFImpl for Hex {
    fn name(&self) -> &str {
        "hex"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("hex", types, 1, 1)?;
        let t = &types[0];
        Ok(vec![if t == &DataType::UInt64 {
            DataType::UInt64
        } else if is_integer_input(t) {
            DataType::Int64
        } else if t.is_floating()
            || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..))
        {
            // MySQL rounds a non-integer number to an integer first.
            DataType::Float64
        } else if matches!(
            t,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView
        ) {
            DataType::Binary
        } else {
            DataType::Utf8
        }])
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        output(hex(&arrays[0])?, scalar)
    }
}

/// MySQL's BIN(n): the two's-complement bits of n as a BIGINT (an unsigned n's bits), without
/// leading zeros.
fn bin(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let bits = as_u64_bits(&arrays[0]);
    let out: datafusion::arrow::array::StringArray =
        bits.map(|v| v.map(|n| format!("{n:b}"))).collect();
    output(Arc::new(out), scalar)
}

/// The 64 bits of each value of an Int64 (two's complement) or UInt64 array.
fn as_u64_bits(values: &ArrayRef) -> Box<dyn Iterator<Item = Option<u64>> + '_> {
    match values.as_primitive_opt::<datafusion::arrow::datatypes::UInt64Type>() {
        Some(unsigned) => Box::new(unsigned.iter()),
        None => Box::new(
            values
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .iter()
                .map(|v| v.map(|n| n as u64)),
        ),
    }
}

/// HEX of each value (the argument already coerced to Int64, Float64, Binary or Utf8).
fn hex(input: &ArrayRef) -> Result<ArrayRef> {
    let mut out = StringBuilder::new();
    let mut digits = String::new();
    match input.data_type() {
        DataType::Int64 | DataType::UInt64 => {
            for v in as_u64_bits(input) {
                match v {
                    Some(n) => out.append_value(format!("{n:X}")),
                    None => out.append_null(),
                }
            }
        }
        DataType::Float64 => {
            for v in input.as_primitive::<datafusion::arrow::datatypes::Float64Type>() {
                match v {
                    Some(x) if x.is_finite() => {
                        let n = x.round().clamp(i64::MIN as f64, u64::MAX as f64);
                        let bits = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                        out.append_value(format!("{bits:X}"))
                    }
                    _ => out.append_null(),
                }
            }
        }
        _ => {
            let bytes = cast(input, &DataType::Binary)?;
            for v in bytes.as_binary::<i32>() {
                match v {
                    Some(b) => {
                        digits.clear();
                        for byte in b {
                            let _ = write!(digits, "{byte:02X}");
                        }
                        out.append_value(&digits);
                    }
                    None => out.append_null(),
                }
            }
        }
    }
    Ok(Arc::new(out.finish()))
}

impl ScalarUDFImpl for Unhex {
    fn name(&self) -> &str {
        "unhex"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        expect_args("unhex", types, 1, 1)?;
        match &types[0] {
            t if t.is_nested() => plan_err!("unhex does not take {t}"),
            _ => Ok(vec![DataType::Utf8]),
        }
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let text = cast(&arrays[0], &DataType::Utf8)?;
        let mut out = BinaryBuilder::new();
        for v in text.as_string::<i32>() {
            match v.and_then(unhex) {
                Some(b) => out.append_value(b),
                None => out.append_null(),
            }
        }
        output(Arc::new(out.finish()), scalar)
    }
}

/// The bytes written as hex digits in `s`, or None if a character is not a hex digit.
fn unhex(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s
        .bytes()
        .map(|c| (c as char).to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(digits.len() / 2 + 1);
    let mut rest = digits.as_slice();
    if rest.len() % 2 == 1 {
        out.push(rest[0]);
        rest = &rest[1..];
    }
    for pair in rest.chunks(2) {
        out.push(pair[0] << 4 | pair[1]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::unhex;

    #[test]
    fn unhex_reads_pairs_and_refuses_other_characters() {
        assert_eq!(unhex("4142").unwrap(), b"AB");
        assert_eq!(unhex("a").unwrap(), vec![0x0a]);
        assert_eq!(unhex("").unwrap(), Vec::<u8>::new());
        assert!(unhex("zz").is_none());
    }
}
