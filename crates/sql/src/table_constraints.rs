//! MySQL's constraint grammar in `CREATE TABLE`, beyond keys: `CONSTRAINT name ..`,
//! `FOREIGN KEY .. REFERENCES ..`, `CHECK (..)`, and the column-level `REFERENCES`, `CHECK`,
//! `UNIQUE`. Basalt accepts them and does not keep them, as Doris (whose constraints are
//! informational) and MySQL 5.7 (which parses CHECK and ignores it) do; foreign keys are not
//! enforced, as on MySQL's MyISAM tables. What tools such as ORMs emit in their DDL thus
//! creates the table instead of failing.

use crate::words::{eat_word, eat_words, ident, peek_word};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The constraint after `CONSTRAINT` when it starts here without a name.
fn constraint_kind_starts(p: &Parser) -> bool {
    ["PRIMARY", "UNIQUE", "FOREIGN", "CHECK"]
        .iter()
        .any(|w| peek_word(p, w))
}

/// `CONSTRAINT [name]`: eats it and its optional name. The constraint itself follows.
pub(crate) fn eat_constraint_name(p: &mut Parser) -> Result<bool, ParserError> {
    if !eat_word(p, "CONSTRAINT") {
        return Ok(false);
    }
    if !constraint_kind_starts(p) {
        ident(p)?;
    }
    Ok(true)
}

/// A table-level `FOREIGN KEY [name] (cols) REFERENCES ..` or `CHECK (expr) [[NOT] ENFORCED]`;
/// `false` (nothing eaten) when neither starts here.
pub(crate) fn skip_table_constraint(p: &mut Parser) -> Result<bool, ParserError> {
    if eat_words(p, &["FOREIGN", "KEY"]) {
        if !matches!(p.peek_token().token, Token::LParen) {
            ident(p)?;
        }
        skip_key_parts(p)?;
        skip_references(p)?;
        return Ok(true);
    }
    if eat_word(p, "CHECK") {
        skip_check_body(p)?;
        return Ok(true);
    }
    Ok(false)
}

/// A column attribute of this family: `REFERENCES ..`, `CHECK (..)`, `UNIQUE [KEY]`,
/// `[CONSTRAINT [name]] CHECK (..)`; `false` (nothing eaten) when none starts here.
pub(crate) fn skip_column_constraint(p: &mut Parser) -> Result<bool, ParserError> {
    if peek_word(p, "REFERENCES") {
        skip_references(p)?;
        return Ok(true);
    }
    if eat_word(p, "CONSTRAINT") {
        if !peek_word(p, "CHECK") {
            ident(p)?;
        }
        if !eat_word(p, "CHECK") {
            return p.expected("CHECK", p.peek_token());
        }
        skip_check_body(p)?;
        return Ok(true);
    }
    if eat_word(p, "CHECK") {
        skip_check_body(p)?;
        return Ok(true);
    }
    if eat_word(p, "UNIQUE") {
        let _ = eat_word(p, "KEY");
        return Ok(true);
    }
    Ok(false)
}

/// `(key_part, ..)` of an index: names with an optional prefix length and ASC/DESC.
pub(crate) fn skip_key_parts(p: &mut Parser) -> Result<Vec<String>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let names = p.parse_comma_separated(|p| {
        let name = ident(p)?;
        if p.consume_token(&Token::LParen) {
            crate::words::uint_literal(p)?;
            p.expect_token(&Token::RParen)?;
        }
        let _ = eat_word(p, "ASC") || eat_word(p, "DESC");
        Ok(name)
    })?;
    p.expect_token(&Token::RParen)?;
    Ok(names)
}

/// `REFERENCES table [(cols)] [MATCH FULL|PARTIAL|SIMPLE] [ON DELETE action] [ON UPDATE action]`.
fn skip_references(p: &mut Parser) -> Result<(), ParserError> {
    if !eat_word(p, "REFERENCES") {
        return p.expected("REFERENCES", p.peek_token());
    }
    crate::parser::parse_table_name(p)?;
    if matches!(p.peek_token().token, Token::LParen) {
        skip_key_parts(p)?;
    }
    if eat_word(p, "MATCH") {
        ident(p)?;
    }
    while eat_word(p, "ON") {
        if !(eat_word(p, "DELETE") || eat_word(p, "UPDATE")) {
            return p.expected("DELETE or UPDATE", p.peek_token());
        }
        let action = eat_word(p, "RESTRICT")
            || eat_word(p, "CASCADE")
            || eat_words(p, &["SET", "NULL"])
            || eat_words(p, &["SET", "DEFAULT"])
            || eat_words(p, &["NO", "ACTION"]);
        if !action {
            return p.expected(
                "RESTRICT, CASCADE, SET NULL, SET DEFAULT or NO ACTION",
                p.peek_token(),
            );
        }
    }
    Ok(())
}

/// `(expr) [[NOT] ENFORCED]` after CHECK.
fn skip_check_body(p: &mut Parser) -> Result<(), ParserError> {
    p.expect_token(&Token::LParen)?;
    p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    let _ = eat_words(p, &["NOT", "ENFORCED"]) || eat_word(p, "ENFORCED");
    Ok(())
}
