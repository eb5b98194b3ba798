//! MySQL's bit-value literals, `b'101'` and `0b101`: a binary string of those bits, padded
//! on the left to whole bytes (`b'101'` is the byte 0x05), which is what `x'05'` is. Each
//! becomes that hex literal, shown by HEX() as `05`, as in MySQL. In an INSERT's VALUES row a
//! string, hex or bit literal for a BIT column is the number its bytes spell, big-endian, as
//! MySQL stores it: `b'101'`, `x'05'` and `'\x05'` (how mysqldump writes BIT values) are 5;
//! so is an UPDATE's new value for a BIT column.

use basalt_sql::ast::{visit_expressions_mut, Expr, Statement, Value};
use std::ops::ControlFlow;

/// A new value `e` for a column of type `ty` (an UPDATE's assignment): a literal for a BIT
/// column is the number its bytes spell ([`as_bit_number`]), so is a hex or bit literal for a
/// numeric column ([`hex_as_number`]); anything else is left as it is.
pub fn for_column(ty: &basalt_common::SqlType, e: &mut Expr) {
    if matches!(ty, basalt_common::SqlType::Bit(_)) {
        as_bit_number(e);
    } else if ty.is_numeric() || matches!(ty, basalt_common::SqlType::Boolean) {
        hex_as_number(e);
    }
}

/// A hex or bit literal (`0xFF`, `X'FF'`, `b'1'`) for a numeric column as the unsigned number
/// its bytes spell, as MySQL stores it (`0xFFFFFFFF` is 4294967295, out of an INT's range; more
/// than 8 significant bytes are past every integer's range); string literals and other
/// expressions are left as they are (`'5'` is read as text).
pub fn hex_as_number(e: &mut Expr) {
    let is_hex = match &*e {
        Expr::Value(v) => matches!(
            v.value,
            Value::HexStringLiteral(_)
                | Value::SingleQuotedByteStringLiteral(_)
                | Value::DoubleQuotedByteStringLiteral(_)
        ),
        Expr::Identifier(ident) => {
            ident.quote_style.is_none()
                && ident
                    .value
                    .strip_prefix("0b")
                    .is_some_and(|b| !b.is_empty() && b.bytes().all(|d| d == b'0' || d == b'1'))
        }
        _ => false,
    };
    if is_hex {
        as_bit_number(e);
    }
}

/// The literal `e` for a BIT column as the number its bytes spell (one past the largest
/// BIT(64) value when they are more than 8 bytes, which the column refuses); other
/// expressions are left as they are.
pub fn as_bit_number(e: &mut Expr) {
    let Some(bytes) = literal_bytes(e) else {
        return;
    };
    let significant = &bytes[bytes.iter().take_while(|b| **b == 0).count()..];
    let number = match significant.len() {
        0..=8 => significant
            .iter()
            .fold(0u64, |n, b| (n << 8) | u64::from(*b))
            .to_string(),
        _ => (u128::from(u64::MAX) + 1).to_string(),
    };
    *e = Expr::value(Value::Number(number, false));
}

/// The bytes of a string, hex or bit literal.
fn literal_bytes(e: &Expr) -> Option<Vec<u8>> {
    let Expr::Value(v) = e else {
        return match e {
            Expr::Identifier(ident) if ident.quote_style.is_none() => ident
                .value
                .strip_prefix("0b")
                .filter(|b| !b.is_empty())
                .and_then(bits_as_hex)
                .and_then(|hex| hex_bytes(&hex)),
            Expr::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
                literal_bytes(value)
            }
            _ => None,
        };
    };
    match &v.value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.as_bytes().to_vec()),
        Value::HexStringLiteral(hex) => hex_bytes(hex),
        Value::SingleQuotedByteStringLiteral(bits) | Value::DoubleQuotedByteStringLiteral(bits) => {
            bits_as_hex(bits).and_then(|hex| hex_bytes(&hex))
        }
        _ => None,
    }
}

/// The bytes of hex digits (an odd count has a leading 0).
fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    let padded = if hex.len() % 2 == 1 {
        format!("0{hex}")
    } else {
        hex.to_string()
    };
    padded
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
        })
        .collect()
}

/// Rewrites the bit-value literals of `stmt` as hex literals.
pub fn rewrite(stmt: &mut Statement) {
    let _ = visit_expressions_mut(stmt, |e| {
        let bits = match e {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedByteStringLiteral(bits)
                | Value::DoubleQuotedByteStringLiteral(bits) => Some(bits.as_str()),
                _ => None,
            },
            // The tokenizer takes `0b101` for a name (MySQL names may start with digits).
            Expr::Identifier(ident) if ident.quote_style.is_none() => {
                ident.value.strip_prefix("0b").filter(|b| !b.is_empty())
            }
            _ => None,
        };
        if let Some(hex) = bits.and_then(bits_as_hex) {
            *e = Expr::value(Value::HexStringLiteral(hex));
        }
        ControlFlow::<()>::Continue(())
    });
}

/// The hex digits of the bytes `bits` (only 0 and 1) spell, or None for other text.
fn bits_as_hex(bits: &str) -> Option<String> {
    if !bits.bytes().all(|b| b == b'0' || b == b'1') {
        return None;
    }
    let padded = format!("{}{bits}", "0".repeat((8 - bits.len() % 8) % 8));
    let hex = padded
        .as_bytes()
        .chunks(8)
        .map(|byte| {
            let value = byte
                .iter()
                .fold(0u8, |n, bit| (n << 1) | u8::from(*bit == b'1'));
            format!("{value:02X}")
        })
        .collect();
    Some(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bit_number(e: Expr) -> String {
        let mut e = e;
        as_bit_number(&mut e);
        e.to_string()
    }

    #[test]
    fn literals_for_bit_columns_are_the_numbers_their_bytes_spell() {
        let lit = |v: Value| Expr::value(v);
        assert_eq!(
            bit_number(lit(Value::HexStringLiteral("0102".into()))),
            "258"
        );
        assert_eq!(
            bit_number(lit(Value::SingleQuotedByteStringLiteral("101".into()))),
            "5"
        );
        assert_eq!(
            bit_number(lit(Value::SingleQuotedString("\u{1}".into()))),
            "1"
        );
        assert_eq!(bit_number(lit(Value::SingleQuotedString("1".into()))), "49");
        assert_eq!(
            bit_number(lit(Value::HexStringLiteral("FFFFFFFFFFFFFFFF".into()))),
            u64::MAX.to_string()
        );
        assert_eq!(
            bit_number(lit(Value::HexStringLiteral("010000000000000000".into()))),
            "18446744073709551616"
        );
        assert_eq!(bit_number(Expr::Identifier("0b11".into())), "3");
        assert_eq!(bit_number(lit(Value::Number("7".into(), false))), "7");
    }

    #[test]
    fn bits_pad_to_whole_bytes() {
        assert_eq!(bits_as_hex("101").as_deref(), Some("05"));
        assert_eq!(bits_as_hex("100000001").as_deref(), Some("0101"));
        assert_eq!(bits_as_hex("").as_deref(), Some(""));
        assert_eq!(bits_as_hex("12"), None);
    }
}
