//! MySQL's backslash escapes in string literals. `sqlparser` reads `\a` as BEL and `\f` as a
//! form feed; MySQL knows neither and keeps the letter (`'\a'` is `a`, as any other unknown
//! escape). A literal whose value holds one of those two characters is read again from its
//! text with MySQL's rules: `\0 \b \n \r \t \Z`, `\\`, `\'`, `\"`, `\%` and `\_` keep their
//! backslash (LIKE's escapes), any other `\c` is `c`, and a doubled quote is one quote.

use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

/// `tokens` (of `sql`) with their string literals' values read as MySQL reads them.
pub(crate) fn mysql_escapes(mut tokens: Vec<TokenWithSpan>, sql: &str) -> Vec<TokenWithSpan> {
    let suspect = |s: &str| s.contains(['\u{7}', '\u{c}']);
    if !tokens.iter().any(|t| match &t.token {
        Token::SingleQuotedString(s)
        | Token::DoubleQuotedString(s)
        | Token::NationalStringLiteral(s) => suspect(s),
        _ => false,
    }) {
        return tokens;
    }
    let lines: Vec<usize> = std::iter::once(0)
        .chain(sql.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    for t in tokens.iter_mut() {
        let value = match &mut t.token {
            Token::SingleQuotedString(s)
            | Token::DoubleQuotedString(s)
            | Token::NationalStringLiteral(s)
                if suspect(s) =>
            {
                s
            }
            _ => continue,
        };
        let (Some(start), Some(end)) = (
            offset(sql, &lines, t.span.start),
            offset(sql, &lines, t.span.end),
        ) else {
            continue;
        };
        if let Some(read) = sql.get(start..end).and_then(unescaped) {
            *value = read;
        }
    }
    tokens
}

/// The byte offset of a 1-based line and column (in characters) of `sql`.
fn offset(sql: &str, lines: &[usize], at: Location) -> Option<usize> {
    let line_start = *lines.get(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
    let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
    let rest = sql.get(line_start..)?;
    Some(
        line_start
            + rest
                .char_indices()
                .nth(column)
                .map_or(rest.len(), |(i, _)| i),
    )
}

/// The value of the literal `raw` (from its first quote to its closing one, maybe after an
/// `N` prefix), by MySQL's escapes.
fn unescaped(raw: &str) -> Option<String> {
    let open = raw.find(['\'', '"'])?;
    let quote = raw[open..].chars().next()?;
    let body = raw[open + 1..].strip_suffix(quote)?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('0') => out.push('\0'),
                Some('b') => out.push('\u{8}'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('Z') => out.push('\u{1a}'),
                Some(w @ ('%' | '_')) => {
                    out.push('\\');
                    out.push(w);
                }
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else if c == quote && chars.peek() == Some(&quote) {
            chars.next();
            out.push(quote);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::unescaped;

    #[test]
    fn reads_escapes_as_mysql() {
        assert_eq!(unescaped(r"'\a\f\x'").as_deref(), Some("afx"));
        assert_eq!(
            unescaped(r"'\0\b\n\r\t\Z'").as_deref(),
            Some("\0\u{8}\n\r\t\u{1a}")
        );
        assert_eq!(unescaped(r"'\%\_\\'").as_deref(), Some(r"\%\_\"));
        assert_eq!(
            unescaped(r#""it""s \"q\"""#).as_deref(),
            Some(r#"it"s "q""#)
        );
        assert_eq!(unescaped(r"N'don''t \a'").as_deref(), Some("don't a"));
    }
}
