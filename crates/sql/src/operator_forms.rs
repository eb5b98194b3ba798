//! MySQL operators and call forms that `sqlparser` reads otherwise or not at all, called from
//! the dialect's prefix and infix hooks:
//! - `INTERVAL(n, n1, n2, ..)`, MySQL's index function (how many of the bounds `n` reaches),
//!   read as the call `interval(n, n1, ..)`. `INTERVAL (expr) unit` stays an interval: the
//!   function has a comma inside its parentheses, an interval never has.
//! - `a SOUNDS LIKE b`, read as `soundex(a) = soundex(b)` (MySQL's definition).
//! - `a [NOT] REGEXP | RLIKE NULL ..`: the parser takes `NULL` after `REGEXP` for the `NOT NULL`
//!   of `a NOT NULL` and then reads the next word as the pattern; here `NULL` is the pattern.
//! - Doris's full-text operators `col MATCH_ANY 'words'` (and `MATCH`, `MATCH_ALL`,
//!   `MATCH_PHRASE`, `MATCH_PHRASE_PREFIX`, `MATCH_PHRASE_EDGE`, `MATCH_REGEXP`), comparisons
//!   read as the calls `match_any(col, 'words')` ..

use crate::calls::function_call;
use crate::words::peek_word;
use sqlparser::ast::{BinaryOperator, Expr};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// `INTERVAL(n, n1, ..)` at the start of an operand (nothing consumed otherwise).
pub(crate) fn parse_interval_call(p: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let at_interval =
        matches!(&p.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::INTERVAL);
    if !at_interval || p.peek_nth_token_ref(1).token != Token::LParen || !comma_in_parens(p) {
        return None;
    }
    p.next_token();
    Some(parse_arguments(p).map(|args| function_call("interval", args)))
}

/// Whether the parenthesized group after the next token has a comma of its own.
fn comma_in_parens(p: &Parser) -> bool {
    let mut depth = 0usize;
    for n in 1.. {
        match &p.peek_nth_token_ref(n).token {
            Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace => {
                depth -= 1;
                if depth == 0 {
                    return false;
                }
            }
            Token::Comma if depth == 1 => return true,
            Token::EOF | Token::SemiColon => return false,
            _ => {}
        }
    }
    false
}

fn parse_arguments(p: &mut Parser) -> Result<Vec<Expr>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let args = p.parse_comma_separated(Parser::parse_expr)?;
    p.expect_token(&Token::RParen)?;
    Ok(args)
}

/// Whether the parser is at `SOUNDS LIKE` (an infix operator of comparison precedence).
fn at_sounds_like(p: &Parser) -> bool {
    peek_word(p, "SOUNDS")
        && matches!(&p.peek_nth_token_ref(1).token, Token::Word(w) if w.keyword == Keyword::LIKE)
}

/// Doris's full-text operators, each with the function it is read as.
const MATCH_OPERATORS: [(&str, &str); 7] = [
    ("MATCH", "match_any"),
    ("MATCH_ANY", "match_any"),
    ("MATCH_ALL", "match_all"),
    ("MATCH_PHRASE", "match_phrase"),
    ("MATCH_PHRASE_PREFIX", "match_phrase_prefix"),
    ("MATCH_PHRASE_EDGE", "match_phrase_edge"),
    ("MATCH_REGEXP", "match_regexp"),
];

/// The function of the full-text operator the parser is at, if it is at one (a word followed
/// by a string or a `?`, so `MATCH (..) AGAINST`, calls like `match_all(..)` and a column
/// aliased `match` are left alone).
fn at_match_operator(p: &Parser) -> Option<&'static str> {
    at_match_operator_from(p, 0)
}

/// [`at_match_operator`], looking from the `n`th token on.
fn at_match_operator_from(p: &Parser, n: usize) -> Option<&'static str> {
    let Token::Word(word) = &p.peek_nth_token_ref(n).token else {
        return None;
    };
    if word.quote_style.is_some() {
        return None;
    }
    let function = MATCH_OPERATORS
        .iter()
        .find(|(name, _)| word.value.eq_ignore_ascii_case(name))?
        .1;
    match &p.peek_nth_token_ref(n + 1).token {
        Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) | Token::Placeholder(_) => {
            Some(function)
        }
        _ => None,
    }
}

/// `NOT MATCH_* 'words'`: the negated full-text operator's function.
fn at_not_match_operator(p: &Parser) -> Option<&'static str> {
    let not = matches!(&p.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::NOT);
    not.then(|| at_match_operator_from(p, 1)).flatten()
}

/// Whether the parser is at an infix operator of comparison precedence that `sqlparser` does
/// not know: a full-text `[NOT] MATCH_*`.
pub(crate) fn at_comparison_form(p: &Parser) -> bool {
    at_match_operator(p).is_some() || at_not_match_operator(p).is_some()
}

/// Whether the parser is at an infix operator of predicate precedence (that of LIKE) that
/// `sqlparser` does not know: `SOUNDS LIKE`.
pub(crate) fn at_predicate_form(p: &Parser) -> bool {
    at_sounds_like(p)
}

/// `SOUNDS LIKE b` after `left`, `col MATCH_* 'words'`, or `[NOT] REGEXP | RLIKE NULL`, when
/// the parser is at one.
/// `precedence` is the operator's own: the right operand is what binds tighter.
pub(crate) fn parse_infix(
    p: &mut Parser,
    left: &Expr,
    precedence: u8,
) -> Option<Result<Expr, ParserError>> {
    if at_sounds_like(p) {
        p.next_token();
        p.next_token();
        // In parentheses: printed bare, `x = a SOUNDS LIKE b` would read back as
        // `(x = soundex(a)) = soundex(b)` (a view's stored text).
        return Some(p.parse_subexpr(precedence).map(|right| {
            Expr::Nested(Box::new(Expr::BinaryOp {
                left: Box::new(function_call("soundex", vec![left.clone()])),
                op: BinaryOperator::Eq,
                right: Box::new(function_call("soundex", vec![right])),
            }))
        }));
    }
    if let Some(function) = at_match_operator(p) {
        p.next_token();
        return Some(
            p.parse_subexpr(precedence)
                .map(|words| function_call(function, vec![left.clone(), words])),
        );
    }
    if let Some(function) = at_not_match_operator(p) {
        p.next_token();
        p.next_token();
        return Some(p.parse_subexpr(precedence).map(|words| Expr::UnaryOp {
            op: sqlparser::ast::UnaryOperator::Not,
            expr: Box::new(function_call(function, vec![left.clone(), words])),
        }));
    }
    regexp_null(p, left, precedence)
}

fn regexp_null(p: &mut Parser, left: &Expr, precedence: u8) -> Option<Result<Expr, ParserError>> {
    let is = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
    let regexp = |t: &Token| is(t, Keyword::REGEXP) || is(t, Keyword::RLIKE);
    let [first, second, third] = p.peek_tokens::<3>();
    let negated = is(&first, Keyword::NOT);
    let (op, null) = if negated {
        (second, third)
    } else {
        (first, second)
    };
    if !regexp(&op) || !is(&null, Keyword::NULL) {
        return None;
    }
    if negated {
        p.next_token();
    }
    p.next_token();
    Some(p.parse_subexpr(precedence).map(|pattern| Expr::RLike {
        negated,
        expr: Box::new(left.clone()),
        pattern: Box::new(pattern),
        regexp: is(&op, Keyword::REGEXP),
    }))
}

#[cfg(test)]
mod tests {
    use crate::dialect::BasaltDialect;
    use sqlparser::parser::Parser;

    fn parse_one(sql: &str) -> String {
        let dialect = BasaltDialect::new(Default::default());
        Parser::new(&dialect)
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_statement())
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .to_string()
    }

    #[test]
    fn interval_with_a_list_is_the_index_function_and_without_one_an_interval() {
        assert_eq!(
            parse_one("SELECT INTERVAL(55, 10, (20), 1+1) + 1"),
            "SELECT interval(55, 10, (20), 1 + 1) + 1"
        );
        assert_eq!(
            parse_one("SELECT d + INTERVAL (1 + 2) DAY"),
            "SELECT d + INTERVAL (1 + 2) DAY"
        );
        assert_eq!(
            parse_one("SELECT INTERVAL(f(1, 2)) DAY"),
            "SELECT INTERVAL (f(1, 2)) DAY"
        );
    }

    #[test]
    fn sounds_like_compares_soundex_codes_at_predicate_precedence() {
        assert_eq!(
            parse_one("SELECT a SOUNDS LIKE 'mud' AND b"),
            "SELECT (soundex(a) = soundex('mud')) AND b"
        );
        assert_eq!(parse_one("SELECT sounds FROM t"), "SELECT sounds FROM t");
        assert_eq!(
            parse_one("SELECT a sounds FROM t"),
            "SELECT a AS sounds FROM t"
        );
    }

    #[test]
    fn full_text_operators_are_comparisons_read_as_calls() {
        assert_eq!(
            parse_one("SELECT * FROM t WHERE c MATCH_ANY 'a b' AND d match_phrase \"x y\" OR NOT e MATCH 'z'"),
            "SELECT * FROM t WHERE match_any(c, 'a b') AND match_phrase(d, \"x y\") OR NOT match_any(e, 'z')"
        );
        assert_eq!(
            parse_one(
                "SELECT c MATCH_ALL 'a' = 1, match_all(c, 'a'), MATCH (c) AGAINST ('a') FROM t"
            ),
            "SELECT match_all(c, 'a') = 1, match_all(c, 'a'), MATCH (c) AGAINST ('a') FROM t"
        );
        assert_eq!(
            parse_one("SELECT * FROM t WHERE c NOT MATCH_ANY 'a' AND c NOT LIKE 'b'"),
            "SELECT * FROM t WHERE NOT match_any(c, 'a') AND c NOT LIKE 'b'"
        );
    }

    #[test]
    fn null_after_regexp_is_the_pattern() {
        assert_eq!(
            parse_one("SELECT '' RLIKE NULL AS c1, 'a' NOT REGEXP NULL c2"),
            "SELECT '' RLIKE NULL AS c1, 'a' NOT REGEXP NULL AS c2"
        );
    }
}
