//! MySQL's DELETE spellings `sqlparser` does not read: the modifiers
//! `DELETE [LOW_PRIORITY] [QUICK] [IGNORE] ..` (none changes what a Basalt DELETE does: it
//! raises no errors per row for IGNORE to turn into warnings), and targets written
//! `t.*` in a multiple-table DELETE (`DELETE t1.*, t2.* FROM t1, t2 WHERE ..`, the same as
//! `DELETE t1, t2 FROM ..`).

use crate::words::{eat_word, peek_nth_word, peek_word};
use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// At most this many tokens are looked through for a `t.*` target before FROM.
const LOOKAHEAD: usize = 256;

/// The statement, if the parser is at a DELETE with modifiers or `t.*` targets; otherwise
/// nothing is consumed.
pub(crate) fn parse_delete_form(p: &mut Parser) -> Result<Option<ast::Statement>, ParserError> {
    if !peek_word(p, "DELETE") {
        return Ok(None);
    }
    let has_modifiers = ["LOW_PRIORITY", "QUICK", "IGNORE"]
        .iter()
        .any(|w| peek_nth_word(p, 1, w));
    let starred = starred_targets(p);
    if !has_modifiers && !starred {
        return Ok(None);
    }
    let token = p.next_token();
    while eat_word(p, "LOW_PRIORITY") || eat_word(p, "QUICK") || eat_word(p, "IGNORE") {}
    if !starred {
        return p.parse_delete(token).map(Some);
    }
    let tables = p.parse_comma_separated(target)?;
    p.expect_keyword(Keyword::FROM)?;
    let from = p.parse_comma_separated(Parser::parse_table_and_joins)?;
    let selection = if p.parse_keyword(Keyword::WHERE) {
        Some(p.parse_expr()?)
    } else {
        None
    };
    let order_by = if p.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
        p.parse_comma_separated(Parser::parse_order_by_expr)?
    } else {
        vec![]
    };
    let limit = if p.parse_keyword(Keyword::LIMIT) {
        Some(p.parse_expr()?)
    } else {
        None
    };
    Ok(Some(ast::Statement::Delete(ast::Delete {
        delete_token: token.into(),
        optimizer_hints: vec![],
        tables,
        from: ast::FromTable::WithFromKeyword(from),
        using: None,
        selection,
        returning: None,
        output: None,
        order_by,
        limit,
    })))
}

/// Whether a `name.*` comes before the first FROM.
fn starred_targets(p: &Parser) -> bool {
    for n in 1..LOOKAHEAD {
        match p.peek_nth_token(n).token {
            Token::EOF | Token::SemiColon => return false,
            Token::Word(w) if w.keyword == Keyword::FROM => return false,
            Token::Period if p.peek_nth_token(n + 1).token == Token::Mul => return true,
            _ => {}
        }
    }
    false
}

/// A target: `t`, `db.t`, `t.*` or `db.t.*`.
fn target(p: &mut Parser) -> Result<ast::ObjectName, ParserError> {
    let mut parts = vec![p.parse_identifier()?];
    while p.peek_token().token == Token::Period {
        if p.peek_nth_token(1).token == Token::Mul {
            p.next_token();
            p.next_token();
            break;
        }
        p.next_token();
        parts.push(p.parse_identifier()?);
    }
    Ok(ast::ObjectName::from(parts))
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};
    use sqlparser::ast;

    fn delete(sql: &str) -> ast::Delete {
        match parse_one(sql) {
            Ok(Statement::Standard(s)) => match *s {
                ast::Statement::Delete(d) => d,
                other => panic!("not a DELETE: {other}"),
            },
            other => panic!("not parsed: {other:?}"),
        }
    }

    #[test]
    fn starred_targets_name_their_tables() {
        let d = delete("DELETE t2.*, d.t3.* FROM t1, t2, d.t3 WHERE t1.a = t2.a");
        let names: Vec<String> = d.tables.iter().map(|t| t.to_string()).collect();
        assert_eq!(names, ["t2", "d.t3"]);
        let ast::FromTable::WithFromKeyword(from) = &d.from else {
            panic!("no FROM");
        };
        assert_eq!(from.len(), 3);
        assert!(d.selection.is_some());
    }

    #[test]
    fn modifiers_are_read() {
        let d = delete("DELETE LOW_PRIORITY QUICK IGNORE FROM t WHERE a = 1");
        assert!(d.tables.is_empty());
        assert!(d.selection.is_some());
        let d = delete("DELETE IGNORE t1.* FROM t1, t2 WHERE t1.a = t2.a");
        assert_eq!(d.tables.len(), 1);
        let d = delete("DELETE FROM t WHERE a = 1");
        assert!(d.tables.is_empty());
    }
}
