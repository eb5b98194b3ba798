//! Doris's `uuid_to_int(s)` and `int_to_uuid(n)`: a UUID's 16 bytes read as a little-endian
//! signed 128-bit integer (a LARGEINT), and back to the lower-case dashed UUID text. Text that
//! is no UUID (36 characters with dashes at 8, 13, 18 and 23, hex digits in any case) is NULL;
//! so is a NULL argument.

use crate::util::{arguments, output, plain_function};
use basalt_common::types::LARGEINT_PRECISION;
use datafusion::arrow::array::{ArrayRef, AsArray, Decimal256Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{i256, DataType, Decimal256Type};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

const LARGEINT: DataType = DataType::Decimal256(LARGEINT_PRECISION, 0);

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "uuid_to_int",
            Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
            LARGEINT,
            uuid_to_int,
        ),
        plain_function(
            "int_to_uuid",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            int_to_uuid,
        ),
    ]
}

fn uuid_to_int(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let texts = cast(&arrays[0], &DataType::Utf8)?;
    let out: Decimal256Array = texts
        .as_string::<i32>()
        .iter()
        .map(|t| {
            t.and_then(uuid_bytes)
                .map(|b| i256::from_i128(i128::from_le_bytes(b)))
        })
        .collect();
    output(
        Arc::new(out.with_precision_and_scale(LARGEINT_PRECISION, 0)?) as ArrayRef,
        scalar,
    )
}

fn int_to_uuid(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let numbers = cast(&arrays[0], &LARGEINT)?;
    let out: StringArray = numbers
        .as_primitive::<Decimal256Type>()
        .iter()
        .map(|n| {
            n.and_then(|n| n.to_i128())
                .map(|n| uuid_text(n.to_le_bytes()))
        })
        .collect();
    output(Arc::new(out) as ArrayRef, scalar)
}

/// The 16 bytes a dashed UUID spells, in text order.
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 || [8, 13, 18, 23].iter().any(|i| bytes[*i] != b'-') {
        return None;
    }
    let digits: Vec<u8> = bytes.iter().copied().filter(|b| *b != b'-').collect();
    let mut out = [0u8; 16];
    for (i, pair) in digits.chunks(2).enumerate() {
        let hex = std::str::from_utf8(pair).ok()?;
        *out.get_mut(i)? = u8::from_str_radix(hex, 16).ok()?;
    }
    (digits.len() == 32).then_some(out)
}

fn uuid_text(bytes: [u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_is_its_bytes_as_a_little_endian_integer() {
        let uuid = "6ce4766f-6783-4b30-b357-bba1c7600348";
        let n = i128::from_le_bytes(uuid_bytes(uuid).expect("a uuid"));
        assert_eq!(n, 95_721_955_514_869_408_091_759_290_071_393_952_876);
        assert_eq!(uuid_text(n.to_le_bytes()), uuid);
        assert_eq!(
            uuid_bytes("6CE4766F-6783-4B30-B357-BBA1C7600348"),
            uuid_bytes(uuid)
        );
        assert_eq!(uuid_bytes("invalid-uuid-format"), None);
        assert_eq!(uuid_bytes("6ce4766f-6783-4b30-b357-bba1c760034g"), None);
        assert_eq!(uuid_bytes("6ce4766f+6783-4b30-b357-bba1c7600348"), None);
    }
}
