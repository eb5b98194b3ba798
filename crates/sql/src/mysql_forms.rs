//! MySQL (and MariaDB) spellings of statements `sqlparser` reads otherwise or not at all:
//! `EXPLAIN EXTENDED | PARTITIONS stmt` (MySQL 5.7's EXPLAIN modifiers, now part of every
//! EXPLAIN), `DROP [TEMPORARY] TABLES ..` (a synonym of DROP TABLE), `CREATE OR REPLACE
//! [TEMPORARY] TABLE ..`, `SELECT .. INTO @var, ..` (the result row kept in user variables)
//! and `UPDATE t1, t2 SET ..` / `UPDATE IGNORE ..` (`multi_update`), `DELETE IGNORE ..` /
//! `DELETE t1.* FROM ..` (`delete_forms`); `INSERT | REPLACE  LOW_PRIORITY | DELAYED |
//! HIGH_PRIORITY ..` (the priority dropped: [`drop_insert_priority`]).

use crate::statement::Statement;
use crate::words::{eat_word, eat_words, expect_word, peek_nth_word, peek_word};
use sqlparser::ast;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// One of the forms of this module, if the parser is at one.
pub(crate) fn parse_mysql_form(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if let Some(stmt) = parse_explain_modifier(p)? {
        return Ok(Some(stmt));
    }
    if let Some(stmt) = parse_drop_tables(p)? {
        return Ok(Some(stmt));
    }
    if let Some(stmt) = parse_create_or_replace_table(p)? {
        return Ok(Some(stmt));
    }
    if let Some(stmt) = crate::multi_update::parse_update_table_list(p)? {
        return Ok(Some(Statement::Standard(Box::new(stmt))));
    }
    if let Some(stmt) = crate::delete_forms::parse_delete_form(p)? {
        return Ok(Some(Statement::Standard(Box::new(stmt))));
    }
    parse_select_into_variables(p)
}

/// Drops the priority of every INSERT and REPLACE in `stmt`. `LOW_PRIORITY` and
/// `HIGH_PRIORITY` order a write among MyISAM's table locks and `DELAYED` queues it (MySQL 5.7
/// and later run it as a plain INSERT); Basalt's writes take no table lock and commit before
/// the statement returns, so none of them changes what the INSERT does.
pub(crate) fn drop_insert_priority(stmt: &mut ast::Statement) {
    let _ = ast::visit_statements_mut(stmt, |s| {
        if let ast::Statement::Insert(insert) = s {
            insert.priority = None;
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// `EXPLAIN | DESCRIBE | DESC  EXTENDED | PARTITIONS  stmt`: the statement's plan.
fn parse_explain_modifier(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let at_explain = ["EXPLAIN", "DESCRIBE", "DESC"]
        .iter()
        .any(|w| peek_word(p, w));
    let modifier = peek_nth_word(p, 1, "EXTENDED") || peek_nth_word(p, 1, "PARTITIONS");
    if !at_explain || !modifier {
        return Ok(None);
    }
    let alias = match p.next_token().token {
        Token::Word(w) if w.value.eq_ignore_ascii_case("EXPLAIN") => ast::DescribeAlias::Explain,
        Token::Word(w) if w.value.eq_ignore_ascii_case("DESC") => ast::DescribeAlias::Desc,
        _ => ast::DescribeAlias::Describe,
    };
    p.next_token();
    let statement = p.parse_statement()?;
    Ok(Some(Statement::Standard(Box::new(
        ast::Statement::Explain {
            describe_alias: alias,
            analyze: false,
            verbose: false,
            query_plan: false,
            estimate: false,
            statement: Box::new(statement),
            format: None,
            options: None,
        },
    ))))
}

/// `DROP [TEMPORARY] TABLES [IF EXISTS] t1, t2 [RESTRICT | CASCADE]`.
fn parse_drop_tables(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let temporary = peek_nth_word(p, 1, "TEMPORARY");
    let words: &[&str] = if temporary {
        &["DROP", "TEMPORARY", "TABLES"]
    } else {
        &["DROP", "TABLES"]
    };
    if !eat_words(p, words) {
        return Ok(None);
    }
    let if_exists = eat_words(p, &["IF", "EXISTS"]);
    let names = p.parse_comma_separated(|p| p.parse_object_name(false))?;
    let cascade = eat_word(p, "CASCADE");
    let restrict = !cascade && eat_word(p, "RESTRICT");
    Ok(Some(Statement::Standard(Box::new(ast::Statement::Drop {
        object_type: ast::ObjectType::Table,
        if_exists,
        names,
        cascade,
        restrict,
        purge: false,
        temporary,
        table: None,
    }))))
}

/// MariaDB's `CREATE OR REPLACE [TEMPORARY] TABLE ..`: the table dropped if it exists, then
/// created.
fn parse_create_or_replace_table(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let table_at = if peek_nth_word(p, 3, "TEMPORARY") {
        4
    } else {
        3
    };
    if !(peek_word(p, "CREATE")
        && peek_nth_word(p, 1, "OR")
        && peek_nth_word(p, 2, "REPLACE")
        && peek_nth_word(p, table_at, "TABLE"))
    {
        return Ok(None);
    }
    for _ in 0..3 {
        p.next_token();
    }
    let inner = if eat_word(p, "TEMPORARY") {
        expect_word(p, "TABLE")?;
        Statement::CreateTemporaryTable(Box::new(crate::ddl::parse_create_table_rest(p)?))
    } else {
        expect_word(p, "TABLE")?;
        crate::ddl::parse_create_table_rest(p)?
    };
    Ok(Some(Statement::ReplaceTable(Box::new(inner))))
}

/// `SELECT .. INTO @a, @b [FROM ..]` or `SELECT .. FROM .. INTO @a, @b` (the clause outside
/// parentheses, its targets all user variables): the query without the clause.
fn parse_select_into_variables(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if !peek_word(p, "SELECT") {
        return Ok(None);
    }
    // The statement's tokens up to its end (read ahead, then given back), and where a
    // top-level INTO @.. clause lies.
    let mut tokens: Vec<TokenWithSpan> = Vec::new();
    let mut depth = 0usize;
    loop {
        let t = p.next_token();
        match &t.token {
            Token::EOF => break,
            Token::SemiColon if depth == 0 => break,
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        tokens.push(t);
    }
    for _ in 0..=tokens.len() {
        p.prev_token();
    }
    let clause = into_variables(&tokens);
    let Some((start, end, variables)) = clause else {
        return Ok(None);
    };
    let mut rest: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    rest.extend(tokens[..start].iter().cloned());
    rest.extend(tokens[end.min(tokens.len())..].iter().cloned());
    let total = tokens.len();
    let dialect = crate::dialect::BasaltDialect::default().for_tokens(&rest);
    let mut inner = Parser::new(&dialect)
        .with_recursion_limit(crate::parser::PARSER_DEPTH)
        .with_tokens_with_locations(rest);
    let query = inner.parse_query()?;
    if inner.peek_token().token != Token::EOF {
        let next = inner.peek_token();
        return inner.expected("end of statement", next);
    }
    for _ in 0..total {
        p.next_token();
    }
    Ok(Some(Statement::SelectIntoVariables { query, variables }))
}

/// Where the top-level `INTO @a, @b` clause of a SELECT's tokens starts and ends, and its
/// variables; `None` without one (INTO a table, OUTFILE or a procedure's variable is
/// something else).
fn into_variables(tokens: &[TokenWithSpan]) -> Option<(usize, usize, Vec<String>)> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Word(w)
                if depth == 0
                    && w.quote_style.is_none()
                    && w.value.eq_ignore_ascii_case("INTO") =>
            {
                let mut names = Vec::new();
                let mut k = i + 1;
                while let Some((name, used)) = user_variable_at(&tokens[k.min(tokens.len())..]) {
                    names.push(name);
                    k += used;
                    if tokens.get(k).map(|t| &t.token) == Some(&Token::Comma) {
                        k += 1;
                    } else {
                        break;
                    }
                }
                return (!names.is_empty()).then_some((i, k, names));
            }
            _ => {}
        }
    }
    None
}

/// The user variable (`@name` or `@'name'`, not `@@name`) the tokens start with, and how many
/// tokens it takes.
fn user_variable_at(tokens: &[TokenWithSpan]) -> Option<(String, usize)> {
    match &tokens.first()?.token {
        Token::Word(w) if w.value.starts_with('@') && !w.value.starts_with("@@") => {
            Some((w.value[1..].to_string(), 1))
        }
        Token::AtSign => match &tokens.get(1)?.token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some((s.clone(), 2)),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};
    use sqlparser::ast;

    #[test]
    fn explain_modifiers_are_plain_explains() {
        for sql in [
            "EXPLAIN EXTENDED SELECT 1",
            "explain partitions select * from t",
            "DESC EXTENDED SELECT a FROM t",
        ] {
            match parse_one(sql).unwrap() {
                Statement::Standard(s) => {
                    assert!(matches!(*s, ast::Statement::Explain { .. }), "{sql}")
                }
                other => panic!("{sql}: {other:?}"),
            }
        }
    }

    #[test]
    fn drop_tables_is_drop_table() {
        match parse_one("DROP TABLES IF EXISTS t1, db.t2").unwrap() {
            Statement::Standard(s) => match *s {
                ast::Statement::Drop {
                    object_type: ast::ObjectType::Table,
                    if_exists: true,
                    names,
                    ..
                } => assert_eq!(names.len(), 2),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn create_or_replace_wraps_the_create() {
        match parse_one("CREATE OR REPLACE TABLE t (a INT)").unwrap() {
            Statement::ReplaceTable(inner) => {
                assert!(matches!(*inner, Statement::CreateTable(_)))
            }
            other => panic!("{other:?}"),
        }
        match parse_one("create or replace temporary table t as select 1").unwrap() {
            Statement::ReplaceTable(inner) => {
                assert!(matches!(*inner, Statement::CreateTemporaryTable(_)))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn select_into_variables_in_either_place() {
        for (sql, query) in [
            (
                "SELECT a, b INTO @x, @y FROM t WHERE a = 1",
                "SELECT a, b FROM t WHERE a = 1",
            ),
            ("select max(a) from t into @m", "SELECT max(a) FROM t"),
            ("SELECT (SELECT 1) INTO @v", "SELECT (SELECT 1)"),
        ] {
            match parse_one(sql).unwrap() {
                Statement::SelectIntoVariables {
                    query: q,
                    variables,
                } => {
                    assert_eq!(q.to_string(), query);
                    assert!(!variables.is_empty());
                }
                other => panic!("{sql}: {other:?}"),
            }
        }
        // INTO a table or a file is something else.
        assert!(!matches!(
            parse_one("SELECT a INTO t2 FROM t"),
            Ok(Statement::SelectIntoVariables { .. })
        ));
    }

    #[test]
    fn insert_priorities_are_dropped() {
        for (sql, plain) in [
            (
                "INSERT DELAYED INTO t (x) VALUES (1)",
                "INSERT INTO t (x) VALUES (1)",
            ),
            (
                "insert low_priority into t values (1, 2)",
                "INSERT INTO t VALUES (1, 2)",
            ),
            (
                "INSERT HIGH_PRIORITY INTO t SELECT * FROM u",
                "INSERT INTO t SELECT * FROM u",
            ),
            (
                "REPLACE DELAYED INTO t (x) VALUES (1)",
                "REPLACE INTO t (x) VALUES (1)",
            ),
        ] {
            match parse_one(sql).unwrap() {
                Statement::Standard(stmt) => assert_eq!(stmt.to_string(), plain),
                other => panic!("{other:?}"),
            }
        }
    }
}
