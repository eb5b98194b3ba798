//! Values that differ on every call: Doris's `RANDOM_BYTES(n)`, n random bytes written as
//! hexadecimal text after `0x` (n from 1 to 1024; another n is an error naming it, as in
//! Doris; NULL gives NULL), and MySQL's `UUID_SHORT()`, a BIGINT UNSIGNED that grows by one
//! on every call, starting from this server's start time in seconds shifted left by 24 bits
//! (MySQL's layout with server id 0): unique within one server process. Doris's
//! `UUID_NUMERIC()` is a random (version 4) UUID's 128 bits as a LARGEINT.

use crate::mysql_values::integers;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Decimal256Array, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{i256, DataType};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use rand::RngCore;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The most bytes one RANDOM_BYTES call gives (MySQL's limit).
const MAX_RANDOM_BYTES: i64 = 1024;

pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "random_bytes",
            Signature::any(1, Volatility::Volatile),
            DataType::Utf8,
            random_bytes,
        ),
        plain_function(
            "uuid_numeric",
            Signature::nullary(Volatility::Volatile),
            DataType::Decimal256(basalt_common::types::LARGEINT_PRECISION, 0),
            uuid_numeric,
        ),
        plain_function(
            "uuid_short",
            Signature::nullary(Volatility::Volatile),
            DataType::UInt64,
            uuid_short,
        ),
    ]
}

fn random_bytes(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let mut rng = rand::rng();
    let mut out = Vec::with_capacity(arrays[0].len());
    for (row, n) in integers(&arrays[0])?.into_iter().enumerate() {
        let Some(n) = n else {
            out.push(None);
            continue;
        };
        if !(1..=MAX_RANDOM_BYTES).contains(&n) {
            return exec_err!(
                "argument {n} of function random_bytes at row {row} was invalid: \
                 it must be from 1 to {MAX_RANDOM_BYTES}"
            );
        }
        let mut bytes = vec![0_u8; n as usize];
        rng.fill_bytes(&mut bytes);
        let mut text = String::with_capacity(2 + 2 * bytes.len());
        text.push_str("0x");
        for b in bytes {
            let _ = write!(text, "{b:02x}");
        }
        out.push(Some(text));
    }
    output(Arc::new(StringArray::from(out)), scalar)
}

/// The next UUID_SHORT value: the first call of the process starts the sequence at its
/// start time (seconds since the epoch) << 24.
fn next_uuid_short() -> u64 {
    static NEXT: OnceLock<AtomicU64> = OnceLock::new();
    NEXT.get_or_init(|| {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        AtomicU64::new((started & 0xFF_FFFF_FFFF) << 24)
    })
    .fetch_add(1, Ordering::Relaxed)
}

fn uuid_short(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let rows = args.number_rows.max(1);
    let out: UInt64Array = (0..rows).map(|_| Some(next_uuid_short())).collect();
    output(Arc::new(out), args.number_rows <= 1)
}

/// A random UUID's bits (version 4, RFC 4122 variant) as a signed 128-bit number.
fn random_uuid_number(rng: &mut impl RngCore) -> i128 {
    let mut bytes = [0_u8; 16];
    rng.fill_bytes(&mut bytes);
    bytes[6] = (bytes[6] & 0x0F) | 0x40;
    bytes[8] = (bytes[8] & 0x3F) | 0x80;
    i128::from_be_bytes(bytes)
}

fn uuid_numeric(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let mut rng = rand::rng();
    let rows = args.number_rows.max(1);
    let out: Decimal256Array = (0..rows)
        .map(|_| Some(i256::from_i128(random_uuid_number(&mut rng))))
        .collect();
    let out = out.with_precision_and_scale(basalt_common::types::LARGEINT_PRECISION, 0)?;
    output(Arc::new(out), args.number_rows <= 1)
}

#[cfg(test)]
mod tests {
    use super::{next_uuid_short, random_uuid_number};

    #[test]
    fn uuid_numbers_are_version_4_and_differ() {
        let mut rng = rand::rng();
        let a = random_uuid_number(&mut rng);
        let b = random_uuid_number(&mut rng);
        assert_ne!(a, b);
        assert_eq!((a >> 76) & 0xF, 4);
    }

    #[test]
    fn uuid_short_grows_by_one() {
        let a = next_uuid_short();
        let b = next_uuid_short();
        assert!(b > a);
        assert!(a >> 24 > 0);
    }
}
