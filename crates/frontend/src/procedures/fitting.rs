//! A value stored into a routine's typed slot (a parameter, a local variable, a stored
//! function's return value), fitted to the declared type as MySQL stores a value into a column:
//! text longer than a CHAR/VARCHAR(n) holds is 1406; text into a number type that is only partly
//! a number is 1265, no number at all 1366; an integer outside its type's range 1264. In strict
//! mode these are errors; otherwise the value is cut to fit (the text's first n characters, its
//! leading number, the range's nearest end) with the same code as a warning.

use crate::session::Session;
use basalt_common::{BasaltError, Result};

/// Whether a routine created under `sql_mode` stores values strictly (STRICT_TRANS_TABLES,
/// STRICT_ALL_TABLES or TRADITIONAL); a routine that kept no mode runs as the session's INSERTs.
pub(super) fn strict(sql_mode: &str, session: &Session) -> bool {
    if sql_mode.trim().is_empty() {
        return crate::lenient_insert::strict_inserts(session);
    }
    sql_mode.split(',').any(|m| {
        ["STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "TRADITIONAL"]
            .iter()
            .any(|s| m.trim().eq_ignore_ascii_case(s))
    })
}

/// A stored value (`None`: NULL) and the warning (code, message) storing it gave.
pub(super) type Fitted = (Option<String>, Option<(u16, String)>);

/// The value `text` stored into `name` of `data_type`, and the warning storing it gave (outside
/// strict mode; in strict mode what would warn is an error).
pub(super) fn fit(
    data_type: &str,
    name: &str,
    text: Option<String>,
    strict: bool,
) -> Result<Fitted> {
    let Some(text) = text else {
        return Ok((None, None));
    };
    let declared = Declared::of(data_type);
    let problem = match &declared {
        Declared::Text { length: Some(max) } if text.chars().count() > *max => {
            let cut = text.chars().take(*max).collect();
            Some((
                1406,
                format!("Data too long for column '{name}' at row 1"),
                cut,
            ))
        }
        Declared::Integer { range } | Declared::Number { range, .. } => {
            number_problem(&declared, range, name, &text)
        }
        _ => None,
    };
    match problem {
        None => Ok((Some(text), None)),
        Some((code, message, _)) if strict => Err(BasaltError::StoredValue { code, message }),
        Some((code, message, cut)) => {
            // 1406's warning outside strict mode is MySQL's 1265.
            let code = if code == 1406 { 1265 } else { code };
            let message = message.replace("Data too long", "Data truncated");
            Ok((Some(cut), Some((code, message))))
        }
    }
}

/// What the declared type asks of a value.
enum Declared {
    Text {
        length: Option<usize>,
    },
    Integer {
        range: Option<(i128, i128)>,
    },
    Number {
        range: Option<(i128, i128)>,
        kind: &'static str,
    },
    Other,
}

impl Declared {
    fn of(data_type: &str) -> Declared {
        let upper = data_type.trim().to_ascii_uppercase();
        let base = upper.split(['(', ' ']).next().unwrap_or_default();
        let length = || {
            let inside = upper.split_once('(')?.1.split_once(')')?.0;
            inside.trim().parse::<usize>().ok()
        };
        let unsigned = upper.contains("UNSIGNED");
        let bits = match base {
            "TINYINT" | "BOOL" | "BOOLEAN" => Some(8),
            "SMALLINT" => Some(16),
            "MEDIUMINT" => Some(24),
            "INT" | "INTEGER" => Some(32),
            "BIGINT" => Some(64),
            "LARGEINT" => Some(128),
            _ => None,
        };
        if let Some(bits) = bits {
            let range = match (unsigned, bits) {
                (_, 128) => None,
                (true, b) => Some((0, (1i128 << b) - 1)),
                (false, b) => Some((-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)),
            };
            return Declared::Integer { range };
        }
        match base {
            "CHAR" | "VARCHAR" | "NCHAR" | "NVARCHAR" | "CHARACTER" => {
                Declared::Text { length: length() }
            }
            "DECIMAL" | "DEC" | "NUMERIC" | "DECIMALV3" => Declared::Number {
                range: None,
                kind: "decimal",
            },
            "FLOAT" | "DOUBLE" | "REAL" => Declared::Number {
                range: None,
                kind: "double",
            },
            _ => Declared::Other,
        }
    }
}

/// What is wrong with `text` as a value of a number type: (code, message, the value stored
/// outside strict mode).
fn number_problem(
    declared: &Declared,
    range: &Option<(i128, i128)>,
    name: &str,
    text: &str,
) -> Option<(u16, String, String)> {
    let trimmed = text.trim();
    let leading = super::binding::leading_number(trimmed);
    let kind = match declared {
        Declared::Number { kind, .. } => kind,
        _ => "integer",
    };
    let whole = leading == trimmed;
    if !whole {
        let digits = trimmed.trim_start_matches(['-', '+']);
        let digits = digits.strip_prefix('.').unwrap_or(digits);
        let has_number = digits.starts_with(|c: char| c.is_ascii_digit());
        return Some(match has_number {
            true => (
                1265,
                format!("Data truncated for column '{name}' at row 1"),
                leading,
            ),
            false => (
                1366,
                format!("Incorrect {kind} value: '{text}' for column '{name}' at row 1"),
                "0".into(),
            ),
        });
    }
    let (low, high) = (*range)?;
    let value = leading.parse::<f64>().ok()?.round();
    let clamped = if value < low as f64 {
        low
    } else if value > high as f64 {
        high
    } else {
        return None;
    };
    Some((
        1264,
        format!("Out of range value for column '{name}' at row 1"),
        clamped.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(ty: &str, text: &str) -> std::result::Result<Option<String>, u16> {
        fit(ty, "x", Some(text.into()), true)
            .map(|(v, _)| v)
            .map_err(|e| e.mysql_code())
    }

    fn lenient(ty: &str, text: &str) -> (Option<String>, Option<u16>) {
        let (v, w) = fit(ty, "x", Some(text.into()), false).unwrap();
        (v, w.map(|(code, _)| code))
    }

    #[test]
    fn text_longer_than_its_type() {
        assert_eq!(strict("VARCHAR(3)", "abc"), Ok(Some("abc".into())));
        assert_eq!(strict("VARCHAR(3)", "abcd"), Err(1406));
        assert_eq!(strict("CHAR(2) CHARACTER SET utf8", "héé"), Err(1406));
        assert_eq!(
            lenient("VARCHAR(3)", "abcdef"),
            (Some("abc".into()), Some(1265))
        );
        assert_eq!(
            strict("TEXT", &"a".repeat(500)).map(|v| v.map(|s| s.len())),
            Ok(Some(500))
        );
    }

    #[test]
    fn numbers_from_text() {
        assert_eq!(strict("INT", " 12 "), Ok(Some(" 12 ".into())));
        assert_eq!(strict("INT", "2.6"), Ok(Some("2.6".into())));
        assert_eq!(strict("INT", "12abc"), Err(1265));
        assert_eq!(strict("INT", "abc"), Err(1366));
        assert_eq!(strict("DECIMAL(5,2)", "x"), Err(1366));
        assert_eq!(lenient("INT", "12abc"), (Some("12".into()), Some(1265)));
        assert_eq!(lenient("INT", "abc"), (Some("0".into()), Some(1366)));
        assert_eq!(strict("DOUBLE", "1e3"), Ok(Some("1e3".into())));
    }

    #[test]
    fn integers_outside_their_range() {
        assert_eq!(strict("TINYINT", "127"), Ok(Some("127".into())));
        assert_eq!(strict("TINYINT", "128"), Err(1264));
        assert_eq!(strict("INT UNSIGNED", "-1"), Err(1264));
        assert_eq!(lenient("TINYINT", "300"), (Some("127".into()), Some(1264)));
        assert_eq!(
            lenient("SMALLINT", "-40000"),
            (Some("-32768".into()), Some(1264))
        );
        assert_eq!(
            strict("BIGINT", "9223372036854775807"),
            Ok(Some("9223372036854775807".into()))
        );
    }
}
