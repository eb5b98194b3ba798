//! `x [NOT] IN ((SELECT ..), (SELECT ..), ..)`: a list whose items are scalar subqueries.
//!
//! The parser's own rule reads the `(` after `IN (` as the start of a subquery: `IN ((SELECT
//! 1))` is the subquery `(SELECT 1)`, and a comma after it is a syntax error. MySQL reads a
//! parenthesized query followed by a comma as the first item of a value list. Here the subquery
//! is tried first (`IN ((SELECT 1) UNION (SELECT 2))` stays one subquery); when it is not
//! followed by the closing `)` the whole list is read as values.

use sqlparser::ast::Expr;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Parses `[NOT] IN ((..), ..)` after `expr`, when the next tokens begin one (None: they do
/// not, the parser's own rules apply).
pub fn parse(parser: &mut Parser, expr: &Expr) -> Option<Result<Expr, ParserError>> {
    let is_word = |t: &Token, k: Keyword| matches!(t, Token::Word(w) if w.keyword == k);
    let [first, second, third, fourth] = parser.peek_tokens::<4>();
    let negated =
        if is_word(&first, Keyword::IN) && second == Token::LParen && third == Token::LParen {
            false
        } else if is_word(&first, Keyword::NOT)
            && is_word(&second, Keyword::IN)
            && third == Token::LParen
            && fourth == Token::LParen
        {
            true
        } else {
            return None;
        };
    Some(parse_after_check(parser, expr, negated))
}

fn parse_after_check(parser: &mut Parser, expr: &Expr, negated: bool) -> Result<Expr, ParserError> {
    if negated {
        parser.expect_keyword_is(Keyword::NOT)?;
    }
    parser.expect_keyword_is(Keyword::IN)?;
    parser.expect_token(&Token::LParen)?;
    let subquery = parser.maybe_parse(|p| {
        let q = p.parse_query()?;
        p.expect_token(&Token::RParen)?;
        Ok(q)
    })?;
    if let Some(subquery) = subquery {
        return Ok(Expr::InSubquery {
            expr: Box::new(expr.clone()),
            subquery,
            negated,
        });
    }
    let list = parser.parse_comma_separated(Parser::parse_expr)?;
    parser.expect_token(&Token::RParen)?;
    Ok(Expr::InList {
        expr: Box::new(expr.clone()),
        list,
        negated,
    })
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};

    fn text(sql: &str) -> String {
        let Statement::Standard(stmt) = parse_one(sql).expect("parses") else {
            panic!("not a standard statement");
        };
        stmt.to_string()
    }

    #[test]
    fn a_list_of_subqueries_is_a_value_list() {
        assert_eq!(
            text("SELECT a IN ((SELECT 1), (SELECT 2)) FROM t"),
            "SELECT a IN ((SELECT 1), (SELECT 2)) FROM t"
        );
        assert_eq!(
            text("SELECT a NOT IN ((SELECT 1), 2, (SELECT b FROM u)) FROM t"),
            "SELECT a NOT IN ((SELECT 1), 2, (SELECT b FROM u)) FROM t"
        );
        assert_eq!(text("SELECT a IN ((1), (2))"), "SELECT a IN ((1), (2))");
    }

    #[test]
    fn one_parenthesized_query_is_still_a_subquery() {
        let sql = text("SELECT a IN ((SELECT 1) UNION (SELECT 2)) FROM t");
        assert_eq!(sql, "SELECT a IN ((SELECT 1) UNION (SELECT 2)) FROM t");
        let sql = text("SELECT a NOT IN ((SELECT 1)) FROM t");
        assert_eq!(sql, "SELECT a NOT IN ((SELECT 1)) FROM t");
        let Statement::Standard(stmt) = parse_one("SELECT a IN ((SELECT 1))").expect("parses")
        else {
            panic!("not a standard statement");
        };
        let found = format!("{stmt:?}");
        assert!(found.contains("InSubquery"), "{found}");
    }
}
