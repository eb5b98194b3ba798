//! MySQL's `CONV(n, from, to)`: `n` read in base `from` and written in base `to` (2 to 36 either
//! way, NULL otherwise), upper-case digits. Text is read to its first character that is no
//! digit of the base (an overflow saturates); a negative `from` reads `n` as signed, a
//! negative `to` writes the value as signed, otherwise it is the unsigned 64-bit value
//! (`CONV(-1, 10, 16)` is 'FFFFFFFFFFFFFFFF'). A number is read as its text (`CONV(1.6, 10, 10)`
//! is '1').

use crate::mysql_values::{integers, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::StringArray;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `conv`.
pub fn function() -> ScalarUDF {
    plain_function(
        "conv",
        Signature::any(3, Volatility::Immutable),
        DataType::Utf8,
        conv,
    )
}

fn conv(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let n = texts(&arrays[0])?;
    let from = integers(&arrays[1])?;
    let to = integers(&arrays[2])?;
    let out: StringArray = (0..n.len())
        .map(|r| converted(n[r].as_deref()?, from[r]?, to[r]?))
        .collect();
    output(Arc::new(out), scalar)
}

fn converted(n: &str, from: i64, to: i64) -> Option<String> {
    let base_ok = |b: i64| (2..=36).contains(&b.abs());
    if !base_ok(from) || !base_ok(to) {
        return None;
    }
    let bits = read(n, from.unsigned_abs() as u32, from < 0)?;
    Some(if to < 0 && (bits as i64) < 0 {
        format!(
            "-{}",
            write((bits as i64).unsigned_abs(), to.unsigned_abs() as u32)
        )
    } else {
        write(bits, to.unsigned_abs() as u32)
    })
}

/// Text `t` read in `base` as 64 bits: its leading digits (after spaces and a sign); None for
/// empty text. Signed values saturate at BIGINT's bounds, unsigned ones at 2^64 - 1.
fn read(t: &str, base: u32, signed: bool) -> Option<u64> {
    let t = t.trim_start();
    if t.is_empty() {
        return None;
    }
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut value: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let Some(d) = c.to_digit(base) else { break };
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => {
                overflow = true;
                break;
            }
        }
    }
    Some(if signed {
        let limit = if negative {
            i64::MIN.unsigned_abs()
        } else {
            i64::MAX as u64
        };
        let magnitude = if overflow { limit } else { value.min(limit) };
        if negative {
            (magnitude as i64).wrapping_neg() as u64
        } else {
            magnitude
        }
    } else if overflow {
        u64::MAX
    } else if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// `v` in `base`, upper-case digits.
fn write(mut v: u64, base: u32) -> String {
    if v == 0 {
        return "0".to_string();
    }
    let mut digits = Vec::new();
    while v > 0 {
        let d = (v % u64::from(base)) as u32;
        digits.push(char::from_digit(d, base).map_or('?', |c| c.to_ascii_uppercase()));
        v /= u64::from(base);
    }
    digits.iter().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str, from: i64, to: i64) -> Option<String> {
        converted(t, from, to)
    }

    #[test]
    fn conv_as_mysql() {
        assert_eq!(text("a", 16, 2).as_deref(), Some("1010"));
        assert_eq!(text("6E", 18, 8).as_deref(), Some("172"));
        assert_eq!(text("-17", 10, -18).as_deref(), Some("-H"));
        assert_eq!(text("-1", 10, 16).as_deref(), Some("FFFFFFFFFFFFFFFF"));
        assert_eq!(
            text("18446744073709551616", 10, 16).as_deref(),
            Some("FFFFFFFFFFFFFFFF")
        );
        assert_eq!(text("zz", 10, 10).as_deref(), Some("0"));
        assert_eq!(text("", 10, 10), None);
        assert_eq!(text("12", 1, 10), None);
        assert_eq!(
            text("-9223372036854775809", -10, 10).as_deref(),
            Some("9223372036854775808")
        );
    }
}
