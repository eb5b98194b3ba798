//! MySQL's compound interval units (`INTERVAL '1:30' HOUR_MINUTE`, `'1 2:03:04' DAY_SECOND`,
//! `'2-1' YEAR_MONTH`, `'1.5' SECOND_MICROSECOND`, ...), which `sqlparser` does not know, as the
//! single-unit interval they amount to: `INTERVAL 90 MINUTE`. The value is read as MySQL
//! reads it (`get_interval_value`): leading spaces, an optional `-` that negates every part,
//! then integers separated by any other characters; fewer parts than the unit has fill it from
//! the right (`'30' HOUR_MINUTE` is 30 minutes); the microseconds of a `*_MICROSECOND` unit are
//! a fraction scaled to six digits (`'1.5'` is 1 s 500000 µs); more parts than the unit has
//! make the interval NULL. Only a literal value can be read at parse time: another value
//! before a compound unit is a syntax error that says so. `EXTRACT(DAY_HOUR FROM x)` becomes
//! a call of [`EXTRACT_FUNCTION`] with the unit's name.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, TokenizerError, Whitespace, Word};

/// A compound unit: its parts' sizes in its smallest unit, that unit's name, and whether the
/// last part is microseconds written as a fraction.
struct Compound {
    name: &'static str,
    sizes: &'static [i64],
    unit: &'static str,
    fraction: bool,
}

const SECOND_US: i64 = 1_000_000;

const COMPOUNDS: &[Compound] = &[
    Compound {
        name: "YEAR_MONTH",
        sizes: &[12, 1],
        unit: "MONTH",
        fraction: false,
    },
    Compound {
        name: "DAY_HOUR",
        sizes: &[24, 1],
        unit: "HOUR",
        fraction: false,
    },
    Compound {
        name: "DAY_MINUTE",
        sizes: &[1440, 60, 1],
        unit: "MINUTE",
        fraction: false,
    },
    Compound {
        name: "DAY_SECOND",
        sizes: &[86_400, 3_600, 60, 1],
        unit: "SECOND",
        fraction: false,
    },
    Compound {
        name: "HOUR_MINUTE",
        sizes: &[60, 1],
        unit: "MINUTE",
        fraction: false,
    },
    Compound {
        name: "HOUR_SECOND",
        sizes: &[3_600, 60, 1],
        unit: "SECOND",
        fraction: false,
    },
    Compound {
        name: "MINUTE_SECOND",
        sizes: &[60, 1],
        unit: "SECOND",
        fraction: false,
    },
    Compound {
        name: "DAY_MICROSECOND",
        sizes: &[
            86_400 * SECOND_US,
            3_600 * SECOND_US,
            60 * SECOND_US,
            SECOND_US,
            1,
        ],
        unit: "MICROSECOND",
        fraction: true,
    },
    Compound {
        name: "HOUR_MICROSECOND",
        sizes: &[3_600 * SECOND_US, 60 * SECOND_US, SECOND_US, 1],
        unit: "MICROSECOND",
        fraction: true,
    },
    Compound {
        name: "MINUTE_MICROSECOND",
        sizes: &[60 * SECOND_US, SECOND_US, 1],
        unit: "MICROSECOND",
        fraction: true,
    },
    Compound {
        name: "SECOND_MICROSECOND",
        sizes: &[SECOND_US, 1],
        unit: "MICROSECOND",
        fraction: true,
    },
];

fn compound(token: &Token) -> Option<&'static Compound> {
    let Token::Word(w) = token else {
        return None;
    };
    if w.quote_style.is_some() {
        return None;
    }
    COMPOUNDS
        .iter()
        .find(|c| w.value.eq_ignore_ascii_case(c.name))
}

/// The count of `unit.unit` that `text` spells in `unit`, as MySQL reads it; None where MySQL's
/// interval is NULL (too many parts, or a count past 64 bits).
fn total(text: &str, unit: &Compound) -> Option<i64> {
    let text = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let bytes = text.as_bytes();
    let count = unit.sizes.len();
    let mut at = bytes
        .iter()
        .position(u8::is_ascii_digit)
        .unwrap_or(bytes.len());
    let mut values: Vec<i64> = Vec::with_capacity(count);
    let mut last_digits = 0;
    while values.len() < count {
        let start = at;
        let mut value: i64 = 0;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            value = value
                .checked_mul(10)?
                .checked_add(i64::from(bytes[at] - b'0'))?;
            at += 1;
        }
        last_digits = at - start;
        while at < bytes.len() && !bytes[at].is_ascii_digit() {
            at += 1;
        }
        values.push(value);
        if at == bytes.len() {
            break;
        }
    }
    if at != bytes.len() {
        return None;
    }
    // Fewer parts than the unit has are its last ones.
    let mut parts = vec![0; count - values.len()];
    parts.extend(values);
    if unit.fraction && last_digits > 0 {
        let last = parts.last_mut()?;
        if last_digits < 6 {
            *last *= 10_i64.pow(6 - last_digits as u32);
        } else {
            *last /= 10_i64.pow(last_digits as u32 - 6);
        }
    }
    let mut sum: i64 = 0;
    for (part, size) in parts.iter().zip(unit.sizes) {
        sum = sum.checked_add(part.checked_mul(*size)?)?;
    }
    Some(if negative { -sum } else { sum })
}

fn is_space(t: &TokenWithSpan) -> bool {
    matches!(t.token, Token::Whitespace(_))
}

/// The index of the next token from `i` that is not whitespace.
fn next_code(tokens: &[TokenWithSpan], mut i: usize) -> usize {
    while i < tokens.len() && is_space(&tokens[i]) {
        i += 1;
    }
    i
}

fn error(message: String, location: Location) -> TokenizerError {
    TokenizerError { message, location }
}

/// `tokens` with every `INTERVAL <literal> <compound unit>` as `INTERVAL '<count>' <unit>`
/// (`INTERVAL NULL <unit>` where MySQL's interval is NULL).
pub(crate) fn single_units(
    mut tokens: Vec<TokenWithSpan>,
) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    if !tokens.iter().any(|t| compound(&t.token).is_some()) {
        return Ok(tokens);
    }
    extract_calls(&mut tokens);
    let mut i = 0;
    while i < tokens.len() {
        let is_interval =
            matches!(&tokens[i].token, Token::Word(w) if w.keyword == Keyword::INTERVAL);
        if !is_interval {
            i += 1;
            continue;
        }
        let first = next_code(&tokens, i + 1);
        let (negative, value) = match tokens.get(first).map(|t| &t.token) {
            Some(Token::Minus) => (true, next_code(&tokens, first + 1)),
            _ => (false, first),
        };
        let text = match tokens.get(value).map(|t| &t.token) {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) if !negative => {
                Some(s.clone())
            }
            Some(Token::Number(n, _)) => Some(if negative { format!("-{n}") } else { n.clone() }),
            _ => None,
        };
        let unit_at = next_code(&tokens, value + 1);
        let unit = tokens.get(unit_at).and_then(|t| compound(&t.token));
        match (text, unit) {
            (Some(text), Some(unit)) => {
                let span = tokens[first].span;
                // A number, not text: MySQL's interval of a compound unit has no fractional
                // digits of its own (`INTERVAL '90' SECOND`, text, would have six).
                let mut replacement = match total(&text, unit) {
                    Some(n) if n < 0 => vec![
                        TokenWithSpan::new(Token::Minus, span),
                        TokenWithSpan::new(
                            Token::Number(n.unsigned_abs().to_string(), false),
                            span,
                        ),
                    ],
                    Some(n) => vec![TokenWithSpan::new(
                        Token::Number(n.to_string(), false),
                        span,
                    )],
                    None => vec![TokenWithSpan::new(Token::make_keyword("NULL"), span)],
                };
                replacement.extend([
                    TokenWithSpan::new(Token::Whitespace(Whitespace::Space), span),
                    TokenWithSpan::new(Token::Word(unit_word(unit.unit)), tokens[unit_at].span),
                ]);
                let added = replacement.len();
                tokens.splice(first..=unit_at, replacement);
                i = first + added;
            }
            _ => {
                // A value that is no literal: find whether a compound unit ends it.
                if let Some(at) = unit_after_expression(&tokens, first) {
                    let unit = compound(&tokens[at].token).map_or("", |c| c.name);
                    return Err(error(
                        format!(
                            "INTERVAL .. {unit} takes a literal value (a string such as '1:30')"
                        ),
                        tokens[at].span.start,
                    ));
                }
                i += 1;
            }
        }
    }
    Ok(tokens)
}

/// The function computing `EXTRACT(<compound unit> FROM x)`.
pub const EXTRACT_FUNCTION: &str = "mysql_extract_compound";

/// `EXTRACT(DAY_HOUR FROM x)` as `mysql_extract_compound('DAY_HOUR', x)`: the unit's parts
/// read from x as one number (MySQL's `EXTRACT`, `304` for day 3 hour 4).
fn extract_calls(tokens: &mut Vec<TokenWithSpan>) {
    let mut i = 0;
    while i < tokens.len() {
        let is_extract =
            matches!(&tokens[i].token, Token::Word(w) if w.keyword == Keyword::EXTRACT);
        let open = next_code(tokens, i + 1);
        let unit_at = next_code(tokens, open + 1);
        let from = next_code(tokens, unit_at + 1);
        let unit = tokens.get(unit_at).and_then(|t| compound(&t.token));
        let shape = is_extract
            && matches!(tokens.get(open).map(|t| &t.token), Some(Token::LParen))
            && matches!(tokens.get(from).map(|t| &t.token), Some(Token::Word(w)) if w.keyword == Keyword::FROM);
        match unit {
            Some(unit) if shape => {
                let span = tokens[i].span;
                let replacement = [
                    TokenWithSpan::new(Token::make_word(EXTRACT_FUNCTION, None), span),
                    TokenWithSpan::new(Token::LParen, tokens[open].span),
                    TokenWithSpan::new(
                        Token::SingleQuotedString(unit.name.to_string()),
                        tokens[unit_at].span,
                    ),
                    TokenWithSpan::new(Token::Comma, tokens[from].span),
                ];
                tokens.splice(i..=from, replacement);
                i += 4;
            }
            _ => i += 1,
        }
    }
}

fn unit_word(unit: &str) -> Word {
    match Token::make_keyword(unit) {
        Token::Word(w) => w,
        _ => unreachable!("make_keyword makes a word"),
    }
}

/// The compound unit closing the interval value that starts at `from`, if one does: the first
/// word at the value's own parenthesis depth that is a compound unit, before the value ends
/// (a comma, a closing parenthesis or a semicolon at that depth).
fn unit_after_expression(tokens: &[TokenWithSpan], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (at, t) in tokens.iter().enumerate().skip(from) {
        match &t.token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket if depth == 0 => return None,
            Token::RParen | Token::RBracket => depth -= 1,
            Token::Comma | Token::SemiColon if depth == 0 => return None,
            Token::Word(w) if depth == 0 && w.keyword == Keyword::INTERVAL => return None,
            token if depth == 0 && compound(token).is_some() => return Some(at),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str) -> &'static Compound {
        COMPOUNDS.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn values_read_as_mysql_reads_them() {
        assert_eq!(total("1:30", unit("HOUR_MINUTE")), Some(90));
        assert_eq!(total("30", unit("HOUR_MINUTE")), Some(30));
        assert_eq!(total(" - 1:30", unit("HOUR_MINUTE")), Some(-90));
        assert_eq!(total("x1:30x", unit("HOUR_MINUTE")), Some(90));
        assert_eq!(total("", unit("HOUR_MINUTE")), Some(0));
        assert_eq!(total("1:2:3", unit("HOUR_MINUTE")), None);
        assert_eq!(total("1-1", unit("YEAR_MONTH")), Some(13));
        assert_eq!(total("1 2:3:4", unit("DAY_SECOND")), Some(93_784));
        assert_eq!(total("1.5", unit("SECOND_MICROSECOND")), Some(1_500_000));
        assert_eq!(total("5", unit("SECOND_MICROSECOND")), Some(500_000));
        assert_eq!(
            total("1:2.1234567", unit("MINUTE_MICROSECOND")),
            Some(62_123_456)
        );
        assert_eq!(total("99999999999999999999", unit("DAY_HOUR")), None);
    }

    #[test]
    fn extract_of_a_compound_unit_is_a_call() {
        let tokens =
            crate::lexer::tokenize("SELECT EXTRACT( day_hour FROM d), EXTRACT(DAY FROM d)")
                .unwrap();
        let text: String = tokens.iter().map(|t| t.token.to_string()).collect();
        assert_eq!(
            text,
            "SELECT mysql_extract_compound('DAY_HOUR', d), EXTRACT(DAY FROM d)"
        );
    }

    fn rewritten(sql: &str) -> Result<String, TokenizerError> {
        let tokens = crate::lexer::tokenize(sql)?;
        Ok(tokens.iter().map(|t| t.token.to_string()).collect())
    }

    #[test]
    fn literals_become_single_units() {
        assert_eq!(
            rewritten("SELECT d + INTERVAL '1:30' hour_minute").unwrap(),
            "SELECT d + INTERVAL 90 MINUTE"
        );
        assert_eq!(
            rewritten("SELECT DATE_SUB(d, INTERVAL -1.5 HOUR_MINUTE)").unwrap(),
            "SELECT DATE_SUB(d, INTERVAL -65 MINUTE)"
        );
        assert_eq!(
            rewritten("SELECT d + INTERVAL '1:2:3' HOUR_MINUTE").unwrap(),
            "SELECT d + INTERVAL NULL MINUTE"
        );
        assert_eq!(
            rewritten("SELECT hour_minute FROM t").unwrap(),
            "SELECT hour_minute FROM t"
        );
        assert!(rewritten("SELECT d + INTERVAL concat('1', ':30') HOUR_MINUTE").is_err());
    }
}
