//! MySQL 5.7's `ENCODE(str, pass)` / `DECODE(crypt, pass)` and `PASSWORD(str)`.
//!
//! ENCODE scrambles the bytes of `str` with a key stream drawn from the password, and DECODE
//! undoes it: the password's bytes (spaces and tabs skipped) fold into two 31-bit numbers
//! (MySQL's pre-4.1 password hash) that seed MySQL's random generator
//! ([`crate::mysql_rand::SeededSequence`]); 256 draws shuffle the byte values into a
//! substitution table, and each byte of the data is substituted and XORed with a running
//! shift that mixes in one more draw and the previous plain byte. Both give a binary string of
//! the input's length; NULL in either argument gives NULL. (Doris has no such functions; its
//! released versions have no ENCODE/DECODE at all.)
//!
//! PASSWORD(str) is MySQL's native password hash: `*` and the upper-case hex of
//! SHA1(SHA1(str)); an empty string or NULL gives an empty string.

use crate::mysql_rand::SeededSequence;
use crate::mysql_values::bytes;
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{BinaryArray, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use sha1::{Digest, Sha1};
use std::fmt::Write;
use std::sync::Arc;

/// `encode`, `decode` and `password` (these replace DataFusion's `encode`/`decode`, which
/// write hex or base64: neither MySQL's nor Doris's).
pub fn functions() -> Vec<ScalarUDF> {
    let two = || Signature::any(2, Volatility::Immutable);
    vec![
        plain_function("encode", two(), DataType::Binary, encode),
        plain_function("decode", two(), DataType::Binary, decode),
        plain_function(
            "password",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            password,
        ),
    ]
}

fn encode(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    scramble(args, Scrambler::encode)
}

fn decode(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    scramble(args, Scrambler::decode)
}

fn scramble(
    args: &ScalarFunctionArgs,
    step: fn(&mut Scrambler, &[u8]) -> Vec<u8>,
) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let data = bytes(&arrays[0])?;
    let passwords = bytes(&arrays[1])?;
    let out: BinaryArray = data
        .iter()
        .zip(&passwords)
        .map(|(d, p)| match (d, p) {
            (Some(d), Some(p)) => Some(step(&mut Scrambler::new(p), d)),
            _ => None,
        })
        .collect();
    output(Arc::new(out), scalar)
}

/// MySQL's pre-4.1 password hash: two numbers below 2^31 (spaces and tabs are skipped).
fn old_password_hash(password: &[u8]) -> (u64, u64) {
    let (mut nr, mut add, mut nr2) = (1_345_345_333u64, 7u64, 0x1234_5671u64);
    for &b in password.iter().filter(|b| **b != b' ' && **b != b'\t') {
        let tmp = u64::from(b);
        nr ^= ((nr & 63).wrapping_add(add))
            .wrapping_mul(tmp)
            .wrapping_add(nr << 8);
        nr2 = nr2.wrapping_add((nr2 << 8) ^ nr);
        add = add.wrapping_add(tmp);
    }
    let mask = (1u64 << 31) - 1;
    (nr & mask, nr2 & mask)
}

/// One row's key stream: the substitution tables and the running generator and shift.
struct Scrambler {
    random: SeededSequence,
    encoded: [u8; 256],
    decoded: [u8; 256],
    shift: u32,
}

impl Scrambler {
    fn new(password: &[u8]) -> Scrambler {
        let (seed1, seed2) = old_password_hash(password);
        let mut random = SeededSequence::from_states(seed1, seed2);
        let mut decoded = [0u8; 256];
        for (i, slot) in decoded.iter_mut().enumerate() {
            *slot = i as u8;
        }
        for i in 0..256 {
            let j = (random.next_value() * 255.0) as usize;
            decoded.swap(i, j);
        }
        let mut encoded = [0u8; 256];
        for (i, &d) in decoded.iter().enumerate() {
            encoded[usize::from(d)] = i as u8;
        }
        Scrambler {
            random,
            encoded,
            decoded,
            shift: 0,
        }
    }

    fn draw(&mut self) -> u32 {
        (self.random.next_value() * 255.0) as u32
    }

    fn encode(&mut self, plain: &[u8]) -> Vec<u8> {
        plain
            .iter()
            .map(|&b| {
                self.shift ^= self.draw();
                let out = (u32::from(self.encoded[usize::from(b)]) ^ self.shift) as u8;
                self.shift ^= u32::from(b);
                out
            })
            .collect()
    }

    fn decode(&mut self, crypt: &[u8]) -> Vec<u8> {
        crypt
            .iter()
            .map(|&b| {
                self.shift ^= self.draw();
                let plain = self.decoded[usize::from((u32::from(b) ^ self.shift) as u8)];
                self.shift ^= u32::from(plain);
                plain
            })
            .collect()
    }
}

fn password(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: StringArray = bytes(&arrays[0])?
        .into_iter()
        .map(|v| Some(native_password(&v.unwrap_or_default())))
        .collect();
    output(Arc::new(out), scalar)
}

/// `*` and the upper-case hex of SHA1(SHA1(s)); empty for an empty `s`.
fn native_password(s: &[u8]) -> String {
    if s.is_empty() {
        return String::new();
    }
    let digest = Sha1::digest(Sha1::digest(s));
    let mut out = String::with_capacity(41);
    out.push('*');
    for byte in digest {
        let _ = write!(out, "{byte:02X}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_and_decode_are_inverse_and_keyed() {
        let data = b"abc\x00\xff some text";
        let crypt = Scrambler::new(b"monty").encode(data);
        assert_ne!(crypt.as_slice(), data.as_slice());
        assert_eq!(Scrambler::new(b"monty").decode(&crypt), data.to_vec());
        assert_ne!(Scrambler::new(b"other").decode(&crypt), data.to_vec());
        // Spaces and tabs of the password do not count.
        assert_eq!(Scrambler::new(b"mon ty\t").encode(data), crypt);
    }

    #[test]
    fn values_match_mysql() {
        // MySQL 5.7 / MariaDB: HEX(ENCODE('abc', 'x')) is C2BD01.
        assert_eq!(Scrambler::new(b"x").encode(b"abc"), vec![0xC2, 0xBD, 0x01]);
        assert_eq!(
            native_password(b"abc"),
            "*0D3CED9BEC10A777AEC23CCC353A8C08A633045E"
        );
        assert_eq!(native_password(b""), "");
    }
}
