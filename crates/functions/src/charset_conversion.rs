//! MySQL's conversions between character sets: `CONVERT(x USING cs)`, `CAST(x AS CHAR
//! CHARACTER SET cs)`, `CHAR(n, .. USING cs)` and a character set introducer before a hex
//! literal (`_utf8mb4 0xD0B1`, `_latin1 0xFC`), all planned as
//! `mysql_convert_charset(x, 'cs', mode)`.
//!
//! Basalt keeps every string as UTF-8 text, so a conversion answers with the characters the
//! value has in `cs`: a binary string (its bytes) is decoded as `cs`; text (and a number or
//! date, as its text) keeps the characters `cs` can hold. A byte sequence that is no character
//! of `cs`, or a character `cs` lacks, is `?` (mode 0, CONVERT's rule), makes the value NULL
//! (mode 1, CHAR(.. USING)'s) or fails the statement (mode 2, an introducer's: "Invalid
//! utf8mb4 character string"). The character sets are utf8mb4, utf8 / utf8mb3 (no characters
//! past U+FFFF), latin1 (MySQL's: Windows-1252), ascii and, for text only, ucs2 / utf16 /
//! utf32; any other is an error rather than a guess.

use crate::mysql_values::{bytes, texts};
use crate::util::{arguments, output, plain_function};
use datafusion::arrow::array::{Array, AsArray, StringArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{exec_err, not_impl_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, Volatility,
};
use std::sync::Arc;

/// The function's name.
pub const NAME: &str = "mysql_convert_charset";
/// Modes: what a sequence or character the character set cannot hold gives.
pub const INVALID_AS_QUESTION_MARK: i64 = 0;
pub const INVALID_AS_NULL: i64 = 1;
pub const INVALID_IS_ERROR: i64 = 2;

pub fn function() -> ScalarUDF {
    plain_function(
        NAME,
        Signature::any(3, Volatility::Immutable),
        DataType::Utf8,
        convert,
    )
}

/// A character set Basalt converts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Charset {
    Utf8mb4,
    Utf8mb3,
    Latin1,
    Ascii,
    /// ucs2 (no characters past U+FFFF), utf16, utf32: from text only.
    Unicode {
        bmp_only: bool,
    },
}

impl Charset {
    fn named(name: &str) -> Option<Charset> {
        Some(match name.to_ascii_lowercase().as_str() {
            "utf8mb4" => Charset::Utf8mb4,
            "utf8" | "utf8mb3" => Charset::Utf8mb3,
            "latin1" => Charset::Latin1,
            "ascii" => Charset::Ascii,
            "ucs2" => Charset::Unicode { bmp_only: true },
            "utf16" | "utf16le" | "utf32" => Charset::Unicode { bmp_only: false },
            _ => return None,
        })
    }

    /// Whether the character set holds `c`.
    fn holds(self, c: char) -> bool {
        match self {
            Charset::Utf8mb4 => true,
            Charset::Utf8mb3 | Charset::Unicode { bmp_only: true } => u32::from(c) <= 0xFFFF,
            Charset::Unicode { bmp_only: false } => true,
            Charset::Latin1 => latin1_byte(c).is_some(),
            Charset::Ascii => c.is_ascii(),
        }
    }

    /// The characters `bytes` spell in this character set, each bad byte as `None`.
    fn decode(self, bytes: &[u8], name: &str) -> Result<Vec<Option<char>>> {
        Ok(match self {
            Charset::Utf8mb4 | Charset::Utf8mb3 => {
                let mut out = Vec::with_capacity(bytes.len());
                let mut rest = bytes;
                while !rest.is_empty() {
                    let (good, bad) = match std::str::from_utf8(rest) {
                        Ok(s) => (s, false),
                        Err(e) => (
                            std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
                            true,
                        ),
                    };
                    // A character past the set (a 4-byte one in utf8mb3) is a bad byte each.
                    for c in good.chars() {
                        if self.holds(c) {
                            out.push(Some(c));
                        } else {
                            out.extend(std::iter::repeat_n(None, c.len_utf8()));
                        }
                    }
                    rest = &rest[good.len()..];
                    if bad {
                        // One byte at a time, as MySQL steps over a bad sequence.
                        out.push(None);
                        rest = &rest[1..];
                    }
                }
                out
            }
            Charset::Latin1 => bytes.iter().map(|b| Some(latin1_char(*b))).collect(),
            Charset::Ascii => bytes
                .iter()
                .map(|b| b.is_ascii().then_some(char::from(*b)))
                .collect(),
            Charset::Unicode { .. } => {
                return not_impl_err!("Conversion of a binary string to {name} is not supported")
            }
        })
    }
}

/// Windows-1252's characters for the bytes 0x80..0x9F (MySQL's latin1; the five bytes that
/// code page leaves undefined stand for the C1 controls, as in MySQL).
const WINDOWS_1252_HIGH: [u32; 32] = [
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
];

fn latin1_char(b: u8) -> char {
    match b {
        0x80..=0x9F => char::from_u32(WINDOWS_1252_HIGH[usize::from(b - 0x80)]).unwrap_or('?'),
        _ => char::from(b),
    }
}

fn latin1_byte(c: char) -> Option<u8> {
    let code = u32::from(c);
    match code {
        0..=0x7F | 0xA0..=0xFF => Some(code as u8),
        _ => WINDOWS_1252_HIGH
            .iter()
            .position(|h| *h == code)
            .map(|i| 0x80 + i as u8),
    }
}

fn convert(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    let (arrays, scalar) = arguments(args)?;
    let names = texts(&arrays[1])?;
    let modes = arrays[2].as_primitive_opt::<Int64Type>();
    let mode_at = |i: usize| {
        modes
            .filter(|m| m.is_valid(i))
            .map_or(INVALID_AS_QUESTION_MARK, |m| m.value(i))
    };
    let binary = matches!(
        arrays[0].data_type(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    );
    let values: Vec<Option<Vec<Option<char>>>> = if binary {
        let raw = bytes(&arrays[0])?;
        let mut out = Vec::with_capacity(raw.len());
        for (i, v) in raw.iter().enumerate() {
            let name = names[i].as_deref().unwrap_or("utf8mb4");
            let charset = charset_named(name)?;
            out.push(match v {
                Some(b) => Some(charset.decode(b, name)?),
                None => None,
            });
        }
        out
    } else {
        let text = texts(&arrays[0])?;
        let mut out = Vec::with_capacity(text.len());
        for (i, v) in text.iter().enumerate() {
            let charset = charset_named(names[i].as_deref().unwrap_or("utf8mb4"))?;
            out.push(v.as_ref().map(|s| {
                s.chars()
                    .map(|c| Some(c).filter(|c| charset.holds(*c)))
                    .collect()
            }));
        }
        out
    };
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.into_iter().enumerate() {
        let Some(chars) = v else {
            out.push(None);
            continue;
        };
        if chars.iter().all(Option::is_some) {
            out.push(Some(chars.into_iter().flatten().collect::<String>()));
            continue;
        }
        match mode_at(i) {
            INVALID_AS_NULL => out.push(None),
            INVALID_IS_ERROR => {
                let name = names[i].as_deref().unwrap_or("utf8mb4");
                return exec_err!(
                    "Invalid {name} character string: '{}'",
                    bad_tail(&arrays[0], i)?
                );
            }
            _ => out.push(Some(chars.into_iter().map(|c| c.unwrap_or('?')).collect())),
        }
    }
    output(Arc::new(StringArray::from(out)), scalar)
}

fn charset_named(name: &str) -> Result<Charset> {
    match Charset::named(name) {
        Some(c) => Ok(c),
        None => not_impl_err!("Character set '{name}' is not supported (Basalt converts to utf8mb4, utf8mb3, latin1 and ascii)"),
    }
}

/// The hex digits of row `i`'s bytes from the first that is no character, as MySQL's error
/// shows them.
fn bad_tail(values: &Arc<dyn Array>, i: usize) -> Result<String> {
    let raw = bytes(&values.slice(i, 1))?;
    let b = raw.into_iter().next().flatten().unwrap_or_default();
    let start = match std::str::from_utf8(&b) {
        Ok(_) => 0,
        Err(e) => e.valid_up_to(),
    };
    Ok(b[start..].iter().map(|b| format!("{b:02X}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(charset: Charset, b: &[u8]) -> String {
        charset
            .decode(b, "x")
            .expect("decodes")
            .into_iter()
            .map(|c| c.unwrap_or('?'))
            .collect()
    }

    #[test]
    fn bytes_decode_as_the_character_set_with_question_marks() {
        assert_eq!(decoded(Charset::Utf8mb4, &[0xD0, 0xB1]), "б");
        assert_eq!(decoded(Charset::Utf8mb4, &[0x41, 0xFF, 0x42]), "A?B");
        assert_eq!(decoded(Charset::Utf8mb4, &[0xF0, 0x8F, 0x80, 0x80]), "????");
        assert_eq!(decoded(Charset::Utf8mb3, "😎".as_bytes()), "????");
        assert_eq!(decoded(Charset::Latin1, &[0x80, 0xFC, 0x41]), "€üA");
        assert_eq!(decoded(Charset::Ascii, &[0x41, 0xE9]), "A?");
    }

    #[test]
    fn latin1_is_windows_1252_both_ways() {
        for b in 0..=255u8 {
            assert_eq!(latin1_byte(latin1_char(b)), Some(b));
        }
        assert_eq!(latin1_byte('я'), None);
        assert!(Charset::Latin1.holds('€'));
        assert!(!Charset::Ascii.holds('é'));
        assert_eq!(Charset::named("KOI8R"), None);
    }
}
