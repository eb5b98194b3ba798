//! Doris's map literal `{k1: v1, k2: v2}` (and `{}`, the empty map), read at the start of an
//! operand ([`parse`], called from the dialect's prefix hook) as the call `map(k1, v1, k2,
//! v2)`. Keys and values are any expressions. ODBC escapes (`{d '2024-01-01'}`,
//! `{fn concat(a, b)}`) are not map literals: a brace whose contents do not read as
//! `key: value` pairs is left to the parser.

use sqlparser::ast::Expr;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The map literal the parser is at, if it is at one (nothing consumed otherwise).
pub(crate) fn parse(p: &mut Parser) -> Option<Result<Expr, ParserError>> {
    if p.peek_token_ref().token != Token::LBrace {
        return None;
    }
    match p.maybe_parse(parse_pairs) {
        Ok(Some(call)) => Some(Ok(call)),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

fn parse_pairs(p: &mut Parser) -> Result<Expr, ParserError> {
    p.expect_token(&Token::LBrace)?;
    let mut args = Vec::new();
    if !p.consume_token(&Token::RBrace) {
        loop {
            args.push(p.parse_expr()?);
            p.expect_token(&Token::Colon)?;
            args.push(p.parse_expr()?);
            if p.consume_token(&Token::RBrace) {
                break;
            }
            p.expect_token(&Token::Comma)?;
        }
    }
    Ok(crate::calls::function_call("map", args))
}

#[cfg(test)]
mod tests {
    use crate::dialect::BasaltDialect;
    use sqlparser::parser::Parser;

    fn parse_one(sql: &str) -> Result<sqlparser::ast::Statement, sqlparser::parser::ParserError> {
        let dialect = BasaltDialect::new(Default::default());
        Parser::new(&dialect).try_with_sql(sql)?.parse_statement()
    }

    #[test]
    fn braces_of_pairs_are_map_calls_and_odbc_escapes_are_not() {
        for (sql, expected) in [
            (
                "SELECT {'a': \"b\", 'c': 1}",
                "SELECT map('a', \"b\", 'c', 1)",
            ),
            ("SELECT {1: 'x'}", "SELECT map(1, 'x')"),
            ("SELECT {}", "SELECT map()"),
            (
                "SELECT {'k': {'n': [1, 2]}}",
                "SELECT map('k', map('n', [1, 2]))",
            ),
            ("SELECT {d '2024-01-01'}", "SELECT {d '2024-01-01'}"),
            (
                "SELECT {fn concat('a', 'b')}",
                "SELECT {fn concat('a', 'b')}",
            ),
        ] {
            let parsed = parse_one(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            assert_eq!(parsed.to_string(), expected, "{sql}");
        }
        assert!(parse_one("SELECT {'a' 1}").is_err());
        assert!(parse_one("SELECT {'a': 1,}").is_err());
    }
}
