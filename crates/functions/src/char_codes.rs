//! MySQL's `CHAR(n1, n2, ..)`, the bytes of the integers (each big-endian without its leading
//! zero bytes, so `CHAR(256)` is 0x01 0x00; NULLs skipped) as a binary string, and
//! `SOUNDEX(s)`, MySQL's variant: the first letter, then the codes of the later consonants
//! (vowels, H, W and Y skipped, a code equal to the previous one dropped), at least 4
//! characters.

use crate::mysql_values::{integers, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{BinaryArray, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// `char` and `soundex`.
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
    ]
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
    use super::sound;

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
