//! MySQL's CREATE VIEW and ALTER VIEW, read here rather than by `sqlparser` (which reads
//! neither ALTER's ALGORITHM / DEFINER / SQL SECURITY clauses nor the closing
//! `WITH [CASCADED | LOCAL] CHECK OPTION`):
//!
//! ```text
//! CREATE [OR REPLACE] | ALTER
//!     [ALGORITHM = {UNDEFINED | MERGE | TEMPTABLE}]
//!     [DEFINER = user | CURRENT_USER [()]]
//!     [SQL SECURITY {DEFINER | INVOKER}]
//!     VIEW [IF NOT EXISTS] name [(column, ..)]
//!     AS select [LOCK IN SHARE MODE | FOR UPDATE | FOR SHARE ..]
//!     [WITH [CASCADED | LOCAL] CHECK OPTION]
//! ```

use crate::parser::parse_definer;
use crate::statement::{Statement, UserName, ViewCheckOption, ViewDefinition};
use crate::words::{eat_word, eat_words, expect_word, peek_word};
use sqlparser::ast::{CreateViewAlgorithm, CreateViewSecurity};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The view statement the parser is at, if it is at one (else nothing is consumed).
pub(crate) fn parse_view_statement(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if !peek_word(p, "CREATE") && !peek_word(p, "ALTER") {
        return Ok(None);
    }
    // The clauses before VIEW also start CREATE DEFINER = .. TRIGGER and the like: only a
    // VIEW after them makes this a view statement.
    let Some(head) = p.maybe_parse(parse_head)? else {
        return Ok(None);
    };
    let if_not_exists = !head.alter && eat_words(p, &["IF", "NOT", "EXISTS"]);
    let name = p.parse_object_name(false)?;
    let (columns, column_comments) = parse_columns(p)?;
    let comment = if eat_word(p, "COMMENT") {
        Some(p.parse_literal_string()?)
    } else {
        None
    };
    expect_word(p, "AS")?;
    let mut query = p.parse_query()?;
    crate::locking_reads::take_query_lock_in_share_mode(p, &mut query);
    let check_option = parse_check_option(p)?;
    Ok(Some(Statement::View(Box::new(ViewDefinition {
        alter: head.alter,
        or_replace: head.or_replace,
        if_not_exists,
        name,
        columns,
        query,
        algorithm: head.algorithm,
        definer: head.definer,
        security: head.security,
        check_option,
        column_comments,
        comment,
    }))))
}

/// `[(a [COMMENT 'x'], ..)]`: the names, and the comments ("" none) when any is given.
fn parse_columns(p: &mut Parser) -> Result<(Vec<String>, Vec<String>), ParserError> {
    let mut names = Vec::new();
    let mut comments = Vec::new();
    if !p.consume_token(&Token::LParen) {
        return Ok((names, comments));
    }
    loop {
        names.push(p.parse_identifier()?.value);
        comments.push(if eat_word(p, "COMMENT") {
            p.parse_literal_string()?
        } else {
            String::new()
        });
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen)?;
    if comments.iter().all(String::is_empty) {
        comments.clear();
    }
    Ok((names, comments))
}

/// What comes before the view's name.
struct Head {
    alter: bool,
    or_replace: bool,
    algorithm: Option<CreateViewAlgorithm>,
    definer: Option<UserName>,
    security: Option<CreateViewSecurity>,
}

/// `CREATE [OR REPLACE] | ALTER  [clauses] VIEW`; fails (and the caller rewinds) when no VIEW
/// follows.
fn parse_head(p: &mut Parser) -> Result<Head, ParserError> {
    let alter = eat_word(p, "ALTER");
    if !alter {
        expect_word(p, "CREATE")?;
    }
    let or_replace = !alter && eat_words(p, &["OR", "REPLACE"]);
    let algorithm = if eat_word(p, "ALGORITHM") {
        p.expect_token(&Token::Eq)?;
        Some(if eat_word(p, "UNDEFINED") {
            CreateViewAlgorithm::Undefined
        } else if eat_word(p, "MERGE") {
            CreateViewAlgorithm::Merge
        } else {
            expect_word(p, "TEMPTABLE")?;
            CreateViewAlgorithm::TempTable
        })
    } else {
        None
    };
    let definer = parse_definer(p)?;
    let security = if eat_words(p, &["SQL", "SECURITY"]) {
        Some(if eat_word(p, "DEFINER") {
            CreateViewSecurity::Definer
        } else {
            expect_word(p, "INVOKER")?;
            CreateViewSecurity::Invoker
        })
    } else {
        None
    };
    expect_word(p, "VIEW")?;
    Ok(Head {
        alter,
        or_replace,
        algorithm,
        definer,
        security,
    })
}

/// `WITH [CASCADED | LOCAL] CHECK OPTION` after the view's query.
fn parse_check_option(p: &mut Parser) -> Result<ViewCheckOption, ParserError> {
    if !eat_word(p, "WITH") {
        return Ok(ViewCheckOption::None);
    }
    let option = if eat_word(p, "LOCAL") {
        ViewCheckOption::Local
    } else {
        eat_word(p, "CASCADED");
        ViewCheckOption::Cascaded
    };
    expect_word(p, "CHECK")?;
    expect_word(p, "OPTION")?;
    Ok(option)
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement, ViewCheckOption, ViewDefinition};

    fn view(sql: &str) -> ViewDefinition {
        match parse_one(sql).unwrap() {
            Statement::View(v) => *v,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn check_options() {
        let v = view("create view v1 as select a from t1 where a < 2 with check option");
        assert_eq!(v.check_option, ViewCheckOption::Cascaded);
        assert_eq!(v.query.to_string(), "SELECT a FROM t1 WHERE a < 2");
        let v = view("CREATE VIEW v2 AS SELECT a FROM t1 WITH LOCAL CHECK OPTION");
        assert_eq!(v.check_option, ViewCheckOption::Local);
        let v = view("create view v3 as select a from t1 with cascaded check option");
        assert_eq!(v.check_option, ViewCheckOption::Cascaded);
        let v = view("create view v4 as select a from t1");
        assert_eq!(v.check_option, ViewCheckOption::None);
    }

    #[test]
    fn alter_with_clauses() {
        let v = view("alter algorithm=merge view v2 (c) as select b+1 from t1 with check option");
        assert!(v.alter);
        assert_eq!(v.columns, vec!["c".to_string()]);
        assert!(v.algorithm.is_some());
        let v = view("ALTER DEFINER='u'@'h' SQL SECURITY INVOKER VIEW db.v AS SELECT 1");
        assert_eq!(v.definer.unwrap().host, "h");
        assert_eq!(v.name.to_string(), "db.v");
    }

    #[test]
    fn definers_and_prefixes() {
        let v = view("create definer = current_user() sql security invoker view v1 as select 1");
        assert!(v.definer.is_none() && v.security.is_some());
        let v = view("create or replace algorithm=temptable view v6 (c) as select c+1 from v1");
        assert!(v.or_replace && !v.alter);
        let v = view("create view if not exists v as select 1");
        assert!(v.if_not_exists);
    }

    #[test]
    fn locking_clauses_in_the_select() {
        let v = view("CREATE VIEW v1 AS SELECT * FROM t1 LOCK IN SHARE MODE");
        assert_eq!(v.query.locks.len(), 1);
        let v = view("CREATE VIEW v3 AS SELECT id FROM t1 LOCK IN SHARE MODE SKIP LOCKED");
        assert_eq!(v.query.locks.len(), 1);
        let v = view("CREATE VIEW v1 AS SELECT 1 FROM t1 UNION SELECT 1 FROM DUAL FOR UPDATE");
        assert_eq!(v.query.locks.len(), 1);
    }

    #[test]
    fn other_create_statements_are_not_views() {
        assert!(!matches!(
            parse_one("CREATE TABLE t (a int)").unwrap(),
            Statement::View(_)
        ));
        assert!(parse_one("create view v as select 1 with check").is_err());
    }
}
