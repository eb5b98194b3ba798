//! MySQL's UPDATE spellings `sqlparser` does not read: the modifiers
//! `UPDATE [LOW_PRIORITY] [IGNORE] ..` (LOW_PRIORITY has no effect; IGNORE is kept as
//! `or: Some(SqliteOnConflict::Ignore)`, the executor's business), and the multiple-table
//! UPDATE over a comma list of tables:
//! `UPDATE t1 [AS a], t2 [JOIN t3 ON ..] SET .. [WHERE ..] [ORDER BY ..] [LIMIT ..]`.
//! `sqlparser` reads one table with its joins after UPDATE; here the tables after the first
//! comma go in the statement's `from`, as [`ast::UpdateTableFromKind::BeforeSet`] (where
//! Doris's `UPDATE t SET .. FROM t2 ..` has them after SET). The statement is otherwise the
//! one `sqlparser` builds, ORDER BY and LIMIT included (the executor refuses them, MySQL's
//! error 1221).

use crate::words::{eat_word, peek_nth_word, peek_word};
use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Eats `LOW_PRIORITY` and `IGNORE`; says whether IGNORE was there.
fn modifiers(p: &mut Parser) -> bool {
    let mut ignore = false;
    loop {
        if eat_word(p, "LOW_PRIORITY") {
            continue;
        }
        if eat_word(p, "IGNORE") {
            ignore = true;
            continue;
        }
        return ignore;
    }
}

/// The statement, if the parser is at `UPDATE <modifiers> ..` or `UPDATE <table>, ..`;
/// otherwise nothing is consumed.
pub(crate) fn parse_update_table_list(
    p: &mut Parser,
) -> Result<Option<ast::Statement>, ParserError> {
    if !peek_word(p, "UPDATE") {
        return Ok(None);
    }
    let has_modifiers = peek_nth_word(p, 1, "LOW_PRIORITY") || peek_nth_word(p, 1, "IGNORE");
    // Only a comma after the first table (and its joins) makes the table-list form.
    let first = p.maybe_parse(|p| {
        let token = p.next_token();
        let ignore = modifiers(p);
        let table = p.parse_table_and_joins()?;
        if p.peek_token().token != Token::Comma {
            return p.expected("a comma", p.peek_token());
        }
        Ok((token, ignore, table))
    })?;
    let (update_token, ignore, table) = match first {
        Some(first) => first,
        None if has_modifiers => {
            let token = p.next_token();
            let ignore = modifiers(p);
            let mut stmt = p.parse_update(token)?;
            if let ast::Statement::Update(update) = &mut stmt {
                update.or = ignore.then_some(ast::SqliteOnConflict::Ignore);
            }
            return Ok(Some(stmt));
        }
        None => return Ok(None),
    };
    p.expect_token(&Token::Comma)?;
    let others = p.parse_comma_separated(Parser::parse_table_and_joins)?;
    p.expect_keyword(Keyword::SET)?;
    let assignments = p.parse_comma_separated(Parser::parse_assignment)?;
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
    Ok(Some(
        ast::Update {
            update_token: update_token.into(),
            optimizer_hints: vec![],
            table,
            assignments,
            from: Some(ast::UpdateTableFromKind::BeforeSet(others)),
            selection,
            returning: None,
            output: None,
            or: ignore.then_some(ast::SqliteOnConflict::Ignore),
            order_by,
            limit,
        }
        .into(),
    ))
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};
    use sqlparser::ast;

    fn update(sql: &str) -> ast::Update {
        match parse_one(sql) {
            Ok(Statement::Standard(s)) => match *s {
                ast::Statement::Update(u) => u,
                other => panic!("not an UPDATE: {other}"),
            },
            other => panic!("not parsed: {other:?}"),
        }
    }

    #[test]
    fn comma_lists_put_the_other_tables_before_set() {
        let u =
            update("UPDATE t1 AS a, d.t2 JOIN t3 ON t2.x = t3.x SET a.v = t3.w WHERE a.k = t2.k");
        assert_eq!(u.table.to_string(), "t1 AS a");
        let Some(ast::UpdateTableFromKind::BeforeSet(others)) = &u.from else {
            panic!("no table list: {:?}", u.from);
        };
        assert_eq!(others.len(), 1);
        assert_eq!(others[0].to_string(), "d.t2 JOIN t3 ON t2.x = t3.x");
        assert_eq!(u.assignments.len(), 1);
        assert_eq!(
            u.selection.map(|s| s.to_string()).as_deref(),
            Some("a.k = t2.k")
        );
    }

    #[test]
    fn single_tables_and_joins_stay_sqlparsers() {
        let u = update("UPDATE t1 JOIN t2 ON t1.k = t2.k SET t1.v = 1");
        assert!(u.from.is_none());
        assert_eq!(u.table.joins.len(), 1);
        let u = update("UPDATE t SET v = 1 WHERE k = 2 ORDER BY k LIMIT 1");
        assert!(u.from.is_none());
        assert!(u.limit.is_some());
    }

    #[test]
    fn modifiers_are_read_and_ignore_kept() {
        let u = update("UPDATE LOW_PRIORITY IGNORE t1, t2 SET t1.v = 1");
        assert_eq!(u.table.to_string(), "t1");
        assert_eq!(u.or, Some(ast::SqliteOnConflict::Ignore));
        let u = update("UPDATE IGNORE t SET v = 1");
        assert_eq!(u.table.to_string(), "t");
        assert_eq!(u.or, Some(ast::SqliteOnConflict::Ignore));
        let u = update("UPDATE LOW_PRIORITY t SET v = 1");
        assert_eq!(u.table.to_string(), "t");
        assert!(u.or.is_none());
    }

    #[test]
    fn order_by_and_limit_are_kept_for_the_executor_to_refuse() {
        let u = update("UPDATE t1, t2 SET t1.v = 1 ORDER BY t1.k LIMIT 2");
        assert_eq!(u.order_by.len(), 1);
        assert!(u.limit.is_some());
    }
}
