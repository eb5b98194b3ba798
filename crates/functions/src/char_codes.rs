//! MySQL's `CHAR(n1, n2, ..)`, the bytes of the integers (each big-endian without its leading
//! zero bytes, so `CHAR(256)` is 0x01 0x00; NULLs skipped) as a binary string, and
//! `SOUNDEX(s)`, MySQL's variant: the first letter, then the codes of the later consonants
//! (vowels, H, W and Y skipped, a code equal to the previous one dropped), at least 4
//! characters. `ORD(s)`: the code of s's first character, its bytes read as one big-endian
//! number (a UTF-8 character's 1 to 4 bytes, one byte of a binary string; 0 for '').
//! `ASCII(s)`: s's first byte (MySQL and Doris: `ASCII('é')` is 195, not the code point 233).

use crate::mysql_values::{bytes, integers, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{BinaryArray, Int64Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `char`, `soundex`, `ord` and `ascii`.
pub fn functions() -> Vec<ScalarUDF> {
    vec![
        plain_function(
            "char",
            Signature::variadic_any(Volatility::Immutable),
            DataType::Binary,
            char_bytes,
        ),
        plain_function(
            "soundex",
            Signature::any(1, Volatility::Immutable),
            DataType::Utf8,
            soundex,
        ),
        plain_function(
            "ord",
            Signature::any(1, Volatility::Immutable),
            DataType::Int64,
            ord,
        ),
        plain_function(
            "ascii",
            Signature::any(1, Volatility::Immutable),
            DataType::Int32,
            first_byte,
        ),
    ]
}

fn first_byte(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: datafusion::arrow::array::Int32Array = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| b.first().map_or(0, |&byte| i32::from(byte))))
        .collect();
    output(Arc::new(out), scalar)
}

fn ord(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let binary = matches!(
        arrays[0].data_type(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    );
    let out: Int64Array = bytes(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|b| first_character_code(&b, binary)))
        .collect();
    output(Arc::new(out), scalar)
}

/// The first character's bytes as a big-endian number: its UTF-8 length from the lead byte
/// (one byte for binary strings or a byte that leads no sequence).
fn first_character_code(b: &[u8], binary: bool) -> i64 {
    let Some(&lead) = b.first() else {
        return 0;
    };
    let len = match lead {
        _ if binary => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    };
    b.iter()
        .take(len)
        .fold(0_i64, |code, byte| (code << 8) | i64::from(*byte))
}

fn char_bytes(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let codes: Vec<Vec<Option<i64>>> = arrays.iter().map(integers).collect::<Result<_>>()?;
    let rows = codes.first().map_or(1, Vec::len);
    let out: BinaryArray = (0..rows)
        .map(|r| {
            let mut out = Vec::new();
            for code in codes.iter().filter_map(|c| c[r]) {
                let b = (code as u32).to_be_bytes();
                let first = b.iter().position(|x| *x != 0).unwrap_or(3);
                out.extend_from_slice(&b[first..]);
            }
            Some(out)
        })
        .collect();
    output(Arc::new(out), scalar)
}

fn soundex(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let out: StringArray = texts(&arrays[0])?
        .into_iter()
        .map(|v| v.map(|s| sound(&s)))
        .collect();
    output(Arc::new(out), scalar)
}

/// The code of an ASCII consonant; None for vowels, H, W, Y and other characters.
fn code(c: char) -> Option<char> {
    let d = match c.to_ascii_uppercase() {
        'B' | 'F' | 'P' | 'V' => '1',
        'C' | 'G' | 'J' | 'K' | 'Q' | 'S' | 'X' | 'Z' => '2',
        'D' | 'T' => '3',
        'L' => '4',
        'M' | 'N' => '5',
        'R' => '6',
        _ => return None,
    };
    Some(d)
}

fn sound(s: &str) -> String {
    let mut letters = s.chars().filter(|c| c.is_alphabetic());
    let Some(first) = letters.next() else {
        return String::new();
    };
    let mut out: String = first.to_uppercase().collect();
    let mut last = code(first);
    for c in letters {
        if let Some(d) = code(c) {
            if Some(d) != last {
                out.push(d);
            }
            last = Some(d);
        }
    }
    while out.chars().count() < 4 {
        out.push('0');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{first_character_code, sound};

    #[test]
    fn ord_reads_the_first_characters_bytes() {
        assert_eq!(first_character_code(b"2", false), 50);
        assert_eq!(first_character_code("€x".as_bytes(), false), 14_844_588);
        assert_eq!(first_character_code("€x".as_bytes(), true), 0xE2);
        assert_eq!(first_character_code(b"", false), 0);
    }

    #[test]
    fn soundex_as_mysql() {
        assert_eq!(sound("Hello"), "H400");
        assert_eq!(sound("Quadratically"), "Q36324");
        assert_eq!(sound("Tymczak"), "T520");
        assert_eq!(sound("Ashcraft"), "A2613");
        assert_eq!(sound("Pfister"), "P236");
        assert_eq!(sound(""), "");
        assert_eq!(sound("12"), "");
    }
}
