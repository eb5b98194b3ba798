//! Tokens of a SQL text as MySQL reads them: `sqlparser`'s tokenizer for Basalt's dialect, with
//! MySQL's executable comments expanded. `/*! ... */` is always code; `/*!NNNNN ... */` is code
//! only when the server's version (`MYSQL_VERSION_ID`, 5.7.99) is at least NNNNN, else a comment
//! (so `SELECT 1 /*!80001 + 1 */` is 1, as on a 5.7 server, while mysqldump's `/*!40101 SET
//! ... */` lines run). Doris's join hints (`JOIN [shuffle]`) are dropped.

use crate::dialect::BasaltDialect;
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{
    Location, Span, Token, TokenWithSpan, Tokenizer, TokenizerError, Whitespace,
};

/// The MySQL version Basalt presents itself as (5.7.99), as version comments compare it.
pub const MYSQL_VERSION_ID: u32 = 50799;

/// Tokenizes `sql`, expanding the version comments this version executes.
pub fn tokenize(sql: &str) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    tokenize_with(sql, &BasaltDialect::default())
}

/// [`tokenize`] with a dialect's string-literal rules (`sql_mode` NO_BACKSLASH_ESCAPES).
pub fn tokenize_with(
    sql: &str,
    dialect: &BasaltDialect,
) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    let mut base = Tokenizer::new(dialect, sql).tokenize_with_location()?;
    if dialect.supports_string_literal_backslash_escape() {
        base = crate::string_escapes::mysql_escapes(base, sql);
    }
    let tokens = without_drop_force(with_set_assignments(with_quoted_user_variables(
        without_join_hints(crate::partition_words::partition_lists(
            crate::partition_words::partition_stars(
                crate::partition_words::temporary_partition_lists(base),
            ),
        )),
    )));
    let tokens = crate::group_by_order::group_by_directions(
        crate::compound_intervals::single_units(tokens)?,
    );
    let tokens = crate::trim_forms::trim_pairs(crate::asof_joins::asof_sides(
        crate::join_lists::comma_joins(tokens),
    ));
    if !tokens
        .iter()
        .any(|t| executable_comment(&t.token).is_some())
    {
        return Ok(tokens);
    }
    let mut out = Vec::with_capacity(tokens.len());
    for t in tokens {
        let Some(comment) = executable_comment(&t.token) else {
            out.push(t);
            continue;
        };
        let Some(code) = code_of(comment) else {
            // A version comment for a later version: a comment.
            out.push(t);
            continue;
        };
        let skipped = comment.chars().count() - code.chars().count();
        let mut inner_tokens = Tokenizer::new(dialect, code).tokenize_with_location()?;
        if dialect.supports_string_literal_backslash_escape() {
            inner_tokens = crate::string_escapes::mysql_escapes(inner_tokens, code);
        }
        for inner in inner_tokens {
            let span = Span::new(
                shift(inner.span.start, t.span.start, skipped),
                shift(inner.span.end, t.span.start, skipped),
            );
            out.push(TokenWithSpan::new(inner.token, span));
        }
    }
    Ok(out)
}

/// The text of `sql`'s tokens, as the token passes leave them (for their unit tests).
#[cfg(test)]
pub(crate) fn spelled(sql: &str) -> String {
    tokenize(sql)
        .expect("tokens")
        .iter()
        .map(|t| t.token.to_string())
        .collect()
}

/// Drops Doris's join distribution hints (`JOIN [shuffle]`, `[broadcast]`, `[bucket]`,
/// `[colocate]`): Basalt's planner chooses how joins are distributed.
fn without_join_hints(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let is_hint = |w: &Token| {
        matches!(w, Token::Word(w) if ["shuffle", "broadcast", "bucket", "colocate"]
            .iter()
            .any(|h| w.value.eq_ignore_ascii_case(h)))
    };
    let mut i = 0;
    while i < tokens.len() {
        let is_join = matches!(&tokens[i].token, Token::Word(w) if w.keyword == Keyword::JOIN);
        if is_join {
            let code: Vec<usize> = (i + 1..tokens.len())
                .filter(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
                .take(3)
                .collect();
            if let [open, hint, close] = code[..] {
                if tokens[open].token == Token::LBracket
                    && is_hint(&tokens[hint].token)
                    && tokens[close].token == Token::RBracket
                {
                    tokens.drain(open..=close);
                }
            }
        }
        i += 1;
    }
    tokens
}

/// Doris's `DROP TABLE t FORCE` / `DROP DATABASE d FORCE` (drop without the recycle bin) as
/// the plain DROP: Basalt keeps no recycle bin, so every DROP is forced. Only a FORCE that ends
/// a statement beginning with DROP. Also MySQL's `SHOW LOCAL VARIABLES|STATUS` as `SHOW
/// SESSION ..` (LOCAL is SESSION's synonym).
fn without_drop_force(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut start = 0;
    while start < tokens.len() {
        let end = (start..tokens.len())
            .find(|&i| tokens[i].token == Token::SemiColon)
            .unwrap_or(tokens.len());
        let code: Vec<usize> = (start..end)
            .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
            .collect();
        let word = |i: usize, k: Keyword| matches!(&tokens[i].token, Token::Word(w) if w.keyword == k && w.quote_style.is_none());
        if let (Some(&first), Some(&last)) = (code.first(), code.last()) {
            let drop_force =
                code.len() > 2 && word(first, Keyword::DROP) && word(last, Keyword::FORCE);
            let show_local = code.len() > 2
                && word(first, Keyword::SHOW)
                && word(code[1], Keyword::LOCAL)
                && (word(code[2], Keyword::VARIABLES) || word(code[2], Keyword::STATUS));
            if drop_force {
                tokens[last].token = Token::Whitespace(Whitespace::Space);
            }
            if show_local {
                tokens[code[1]].token = Token::make_keyword("SESSION");
            }
        }
        start = end + 1;
    }
    tokens
}

/// MySQL's `SET @x := 1` as `SET @x = 1`: in a SET statement, `:=` outside parentheses is the
/// assignment `=` is.
fn with_set_assignments(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut in_set = false;
    let mut at_start = true;
    let mut depth = 0usize;
    for t in tokens.iter_mut() {
        match &t.token {
            Token::Whitespace(_) => continue,
            Token::SemiColon => {
                (in_set, at_start, depth) = (false, true, 0);
                continue;
            }
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Assignment if in_set && depth == 0 => t.token = Token::Eq,
            Token::Word(w) if at_start => in_set = w.keyword == Keyword::SET,
            _ => {}
        }
        at_start = false;
    }
    tokens
}

/// MySQL's quoted user variable names, `` @`name` `` (PyMySQL's `callproc` writes them), as
/// one word `@name`, as `@name` is read.
fn with_quoted_user_variables(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut i = 0;
    while i + 1 < tokens.len() {
        let after_at = i > 0 && tokens[i - 1].token == Token::AtSign;
        let quoted = matches!(&tokens[i + 1].token, Token::Word(w) if w.quote_style == Some('`'));
        if tokens[i].token == Token::AtSign && quoted && !after_at {
            if let Token::Word(w) = &tokens[i + 1].token {
                let mut word = w.clone();
                word.value = format!("@{}", w.value);
                word.quote_style = None;
                let span = Span::new(tokens[i].span.start, tokens[i + 1].span.end);
                tokens.splice(i..i + 2, [TokenWithSpan::new(Token::Word(word), span)]);
            }
        }
        i += 1;
    }
    tokens
}

/// The statements of a multi-statement text (COM_QUERY with CLIENT_MULTI_STATEMENTS), split at
/// the `;` outside strings, identifiers, comments and the `BEGIN .. END` body of a routine
/// being created (see `compound`); pieces holding only whitespace or comments are dropped. Text
/// the tokenizer rejects is returned whole, for the parser to report.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let dialect = BasaltDialect::default();
    let Ok(tokens) = Tokenizer::new(&dialect, sql).tokenize_with_location() else {
        return vec![sql];
    };
    match crate::compound::statement_ranges(sql, &tokens, false) {
        Some(ranges) => ranges
            .into_iter()
            .map(|(start, end)| sql[start..end].trim())
            .collect(),
        None => vec![sql],
    }
}

/// The text of a `/*! .. */` comment after its `/*`, if `token` is one.
fn executable_comment(token: &Token) -> Option<&str> {
    match token {
        Token::Whitespace(Whitespace::MultiLineComment(c)) if c.starts_with('!') => Some(c),
        _ => None,
    }
}

/// The code inside `!NNNNN code` (the text after `/*`) when this version runs it. MySQL reads
/// five digits as the version (six from 8.0.34 on, for versions 10.0 and later).
fn code_of(comment: &str) -> Option<&str> {
    let rest = &comment[1..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits < 5 {
        return Some(rest);
    }
    let digits = digits.min(6);
    let version: u32 = rest[..digits].parse().ok()?;
    (version <= MYSQL_VERSION_ID).then_some(&rest[digits..])
}

/// Where a token at `inner` (counted from the start of a comment's code) is in the whole text:
/// the comment starts at `comment`, and its code `skipped` characters after the `/*`.
fn shift(inner: Location, comment: Location, skipped: usize) -> Location {
    if inner.line <= 1 {
        Location::new(
            comment.line,
            comment.column + 2 + skipped as u64 + inner.column - 1,
        )
    } else {
        Location::new(comment.line + inner.line - 1, inner.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(sql: &str) -> Vec<String> {
        tokenize(sql)
            .expect("tokens")
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|t| t.token.to_string())
            .collect()
    }

    #[test]
    fn version_comments_run_by_version() {
        assert_eq!(words("SELECT 1 /*!80001 + 1 */"), ["SELECT", "1"]);
        assert_eq!(words("SELECT 1 /*!50001 + 1 */"), ["SELECT", "1", "+", "1"]);
        assert_eq!(words("SELECT 1 /*! + 2 */"), ["SELECT", "1", "+", "2"]);
        assert_eq!(
            words("a JOIN [shuffle] b JOIN  [Broadcast]c JOIN [x] d"),
            ["a", "JOIN", "b", "JOIN", "c", "JOIN", "[", "x", "]", "d"]
        );
        assert_eq!(words("SELECT 1 /*!100000 + 1 */"), ["SELECT", "1"]);
        assert_eq!(words("SELECT 1 /* + 1 */"), ["SELECT", "1"]);
        // A version comment inside a string is part of the string.
        assert_eq!(
            words("SELECT '/*!50001 x */'"),
            ["SELECT", "'/*!50001 x */'"]
        );
    }

    #[test]
    fn set_assigns_with_colon_equals() {
        assert_eq!(
            words("SET @a := 1, @b := (@c := 2); SELECT @a := 1"),
            ["SET", "@a", "=", "1", ",", "@b", "=", "(", "@c", ":=", "2", ")", ";"]
                .into_iter()
                .chain(["SELECT", "@a", ":=", "1"])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn statements_split_at_semicolons_outside_strings_and_comments() {
        assert_eq!(
            split_statements("SELECT 1; SELECT ';' AS `a;b`;\n/* x; */ SELECT 'é;';"),
            ["SELECT 1", "SELECT ';' AS `a;b`", "/* x; */ SELECT 'é;'"]
        );
        assert_eq!(split_statements("SELECT 1"), ["SELECT 1"]);
        assert_eq!(
            split_statements(" ; -- only a comment\n"),
            Vec::<&str>::new()
        );
        assert_eq!(
            split_statements("SELECT 'unterminated; x"),
            ["SELECT 'unterminated; x"]
        );
    }

    #[test]
    fn quoted_user_variables_are_one_word() {
        assert_eq!(
            words("SET @`_p_0`='x'; SELECT @` a`, @@x, 'u'@'h'"),
            [
                "SET", "@_p_0", "=", "'x'", ";", "SELECT", "@ a", ",", "@@x", ",", "'u'", "@",
                "'h'"
            ]
        );
    }

    #[test]
    fn tokens_inside_comments_keep_their_place() {
        let tokens = tokenize("SELECT /*!40101 ?*/").expect("tokens");
        let q = tokens
            .iter()
            .find(|t| t.token == Token::Placeholder("?".into()))
            .expect("placeholder");
        // S=1 .. the `?` is the 17th character.
        assert_eq!((q.span.start.line, q.span.start.column), (1, 17));
    }
}
