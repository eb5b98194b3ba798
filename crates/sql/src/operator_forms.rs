//! MySQL operators and call forms that `sqlparser` reads otherwise or not at all, called from
//! the dialect's prefix and infix hooks:
//! - `INTERVAL(n, n1, n2, ..)`, MySQL's index function (how many of the bounds `n` reaches),
//!   read as the call `interval(n, n1, ..)`. `INTERVAL (expr) unit` stays an interval: the
//!   function has a comma inside its parentheses, an interval never has.
//! - `a SOUNDS LIKE b`, read as `soundex(a) = soundex(b)` (MySQL's definition).
//! - `a [NOT] REGEXP | RLIKE NULL ..`: the parser takes `NULL` after `REGEXP` for the `NOT NULL`
//!   of `a NOT NULL` and then reads the next word as the pattern; here `NULL` is the pattern.

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
pub(crate) fn at_sounds_like(p: &Parser) -> bool {
    peek_word(p, "SOUNDS")
        && matches!(&p.peek_nth_token_ref(1).token, Token::Word(w) if w.keyword == Keyword::LIKE)
}

/// `SOUNDS LIKE b` after `left`, or `[NOT] REGEXP | RLIKE NULL`, when the parser is at one.
/// `precedence` is the operator's own: the right operand is what binds tighter.
pub(crate) fn parse_infix(
    p: &mut Parser,
    left: &Expr,
    precedence: u8,
) -> Option<Result<Expr, ParserError>> {
    if at_sounds_like(p) {
        p.next_token();
        p.next_token();
        return Some(p.parse_subexpr(precedence).map(|right| Expr::BinaryOp {
            left: Box::new(function_call("soundex", vec![left.clone()])),
            op: BinaryOperator::Eq,
            right: Box::new(function_call("soundex", vec![right])),
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
    fn sounds_like_compares_soundex_codes_at_comparison_precedence() {
        assert_eq!(
            parse_one("SELECT a SOUNDS LIKE 'mud' AND b"),
            "SELECT soundex(a) = soundex('mud') AND b"
        );
        assert_eq!(parse_one("SELECT sounds FROM t"), "SELECT sounds FROM t");
        assert_eq!(
            parse_one("SELECT a sounds FROM t"),
            "SELECT a AS sounds FROM t"
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
