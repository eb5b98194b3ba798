//! MariaDB's `SET STATEMENT name = value [, ..] FOR statement`: one statement run with session
//! variables set for it alone (the settings are put back after it, whether it succeeds or not).
//! Dump files and test suites use it to run a statement under another `sql_mode`.

use crate::statement::Statement;
use crate::words::{eat_words, expect_word, peek_nth_word, peek_word};
use sqlparser::ast;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The statement, if `SET STATEMENT` begins here (nothing is consumed otherwise).
pub(crate) fn parse(
    p: &mut Parser,
    statement: fn(&mut Parser) -> Result<Statement, ParserError>,
) -> Result<Option<Statement>, ParserError> {
    if !(peek_word(p, "SET") && peek_nth_word(p, 1, "STATEMENT")) {
        return Ok(None);
    }
    eat_words(p, &["SET", "STATEMENT"]);
    let assignments = p.parse_comma_separated(assignment)?;
    expect_word(p, "FOR")?;
    let body = statement(p)?;
    Ok(Some(Statement::SetStatement {
        assignments,
        statement: Box::new(body),
    }))
}

/// `name = value` (or `name := value`).
fn assignment(p: &mut Parser) -> Result<ast::SetAssignment, ParserError> {
    let name = p.parse_object_name(false)?;
    if !p.consume_token(&Token::Eq) {
        p.expect_token(&Token::Assignment)?;
    }
    let value = p.parse_expr()?;
    Ok(ast::SetAssignment {
        scope: None,
        name,
        value,
    })
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, Statement};

    #[test]
    fn settings_and_the_statement() {
        let sql = "SET STATEMENT sql_mode = 'NO_ENGINE_SUBSTITUTION', max_sort_length = 20 FOR \
                   SELECT a FROM t";
        match parse_one(sql).unwrap() {
            Statement::SetStatement {
                assignments,
                statement,
            } => {
                let shown: Vec<String> = assignments.iter().map(|a| a.to_string()).collect();
                assert_eq!(
                    shown,
                    [
                        "sql_mode = 'NO_ENGINE_SUBSTITUTION'",
                        "max_sort_length = 20"
                    ]
                );
                assert!(matches!(*statement, Statement::Standard(_)));
            }
            other => panic!("{other:?}"),
        }
        // Basalt's own statements run under it too.
        match parse_one("set statement sql_mode=ONLY_FULL_GROUP_BY for create table t (a int)")
            .unwrap()
        {
            Statement::SetStatement { statement, .. } => {
                assert!(matches!(*statement, Statement::CreateTable(_)))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn needs_for_and_a_statement() {
        assert!(parse_one("SET STATEMENT sql_mode = ''").is_err());
        assert!(parse_one("SET STATEMENT sql_mode = '' FOR").is_err());
        // A plain SET is not this form.
        assert!(matches!(
            parse_one("SET sql_mode = ''").unwrap(),
            Statement::Standard(_)
        ));
    }
}
