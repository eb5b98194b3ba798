//! Values bound to the `?` placeholders of a prepared statement, as the client sent them (the
//! binary protocol's typed values, or user variables for SQL-level EXECUTE), and their rendering
//! as SQL literals.

use std::fmt::Write;

/// One parameter value.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    /// An exact decimal number in text form (MySQL's DECIMAL parameters).
    Decimal(String),
    /// Character or binary data.
    Bytes(Vec<u8>),
    Date {
        year: u16,
        month: u8,
        day: u8,
    },
    DateTime {
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micros: u32,
    },
    Time {
        negative: bool,
        days: u32,
        hour: u8,
        minute: u8,
        second: u8,
        micros: u32,
    },
}

/// A parameter's value as a SQL literal reads it: a bare number, or text (dates and times as
/// their text forms, which MySQL converts where a temporal value is expected).
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Number(String),
    Text(String),
}

impl ParamValue {
    /// The literal that reads back as this value.
    pub fn literal(&self) -> Literal {
        match self {
            ParamValue::Null => Literal::Null,
            ParamValue::Int(v) => Literal::Number(v.to_string()),
            ParamValue::UInt(v) => Literal::Number(v.to_string()),
            // `{:e}` keeps every digit and always reads back as a floating-point literal.
            ParamValue::Double(v) if v.is_finite() => Literal::Number(format!("{v:e}")),
            ParamValue::Double(_) => Literal::Null,
            ParamValue::Decimal(text) if is_decimal_text(text) => {
                Literal::Number(text.trim().to_string())
            }
            ParamValue::Decimal(text) => Literal::Text(text.clone()),
            ParamValue::Bytes(bytes) => Literal::Text(String::from_utf8_lossy(bytes).into_owned()),
            ParamValue::Date { year, month, day } => {
                Literal::Text(format!("{year:04}-{month:02}-{day:02}"))
            }
            ParamValue::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            } => {
                let mut out =
                    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}");
                if *micros != 0 {
                    let _ = write!(out, ".{micros:06}");
                }
                Literal::Text(out)
            }
            ParamValue::Time {
                negative,
                days,
                hour,
                minute,
                second,
                micros,
            } => {
                let hours = u64::from(*days) * 24 + u64::from(*hour);
                let sign = if *negative { "-" } else { "" };
                let mut out = format!("{sign}{hours:02}:{minute:02}:{second:02}");
                if *micros != 0 {
                    let _ = write!(out, ".{micros:06}");
                }
                Literal::Text(out)
            }
        }
    }

    /// The value as a SQL literal that reads back as the same value: numbers bare, text and
    /// temporal values quoted with quotes and backslashes escaped.
    pub fn to_sql_literal(&self) -> String {
        match self.literal() {
            Literal::Null => "NULL".to_string(),
            Literal::Number(n) => n,
            Literal::Text(t) => {
                let mut out = String::with_capacity(t.len() + 2);
                quote_into(&mut out, t.as_bytes());
                out
            }
        }
    }
}

/// True for `[-+]digits[.digits][e[-+]digits]`.
fn is_decimal_text(text: &str) -> bool {
    let t = text.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = !(int.is_empty() && frac.is_empty()) && digits(int) && digits(frac);
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// A single-quoted string literal; `'` and `\` are escaped, invalid UTF-8 is replaced.
fn quote_into(out: &mut String, bytes: &[u8]) {
    out.push('\'');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(ParamValue::Null.to_sql_literal(), "NULL");
        assert_eq!(ParamValue::Int(-5).to_sql_literal(), "-5");
        assert_eq!(
            ParamValue::UInt(u64::MAX).to_sql_literal(),
            "18446744073709551615"
        );
        assert_eq!(ParamValue::Double(1.5).to_sql_literal(), "1.5e0");
        assert_eq!(
            ParamValue::Decimal("-12.50".into()).to_sql_literal(),
            "-12.50"
        );
        assert_eq!(
            ParamValue::Decimal("1; DROP".into()).to_sql_literal(),
            "'1; DROP'"
        );
        assert_eq!(
            ParamValue::Bytes(b"it's a \\ test".to_vec()).to_sql_literal(),
            "'it''s a \\\\ test'"
        );
        assert_eq!(
            ParamValue::DateTime {
                year: 2024,
                month: 2,
                day: 29,
                hour: 13,
                minute: 5,
                second: 9,
                micros: 120
            }
            .to_sql_literal(),
            "'2024-02-29 13:05:09.000120'"
        );
        assert_eq!(
            ParamValue::Time {
                negative: true,
                days: 1,
                hour: 2,
                minute: 3,
                second: 4,
                micros: 0
            }
            .to_sql_literal(),
            "'-26:03:04'"
        );
    }

    #[test]
    fn decimal_text() {
        assert!(is_decimal_text("1"));
        assert!(is_decimal_text("-1.25"));
        assert!(is_decimal_text(".5"));
        assert!(is_decimal_text("1e-3"));
        assert!(!is_decimal_text("."));
        assert!(!is_decimal_text("1e"));
        assert!(!is_decimal_text("abc"));
    }
}
