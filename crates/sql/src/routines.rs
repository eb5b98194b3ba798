//! Stored routine statements: `CREATE PROCEDURE` and `CREATE FUNCTION` (the body kept as
//! written, to the `END` that closes it), `DROP PROCEDURE|FUNCTION`, `CALL` and
//! `SHOW CREATE PROCEDURE|FUNCTION`.

use crate::compound::{BlockDepth, Offsets};
use crate::statement::{CreateProcedure, ParameterMode, ProcedureParam, Statement};
use crate::words::{
    eat_word, eat_words, expect_word, ident, peek_nth_word, peek_word, string_literal,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// True when the parser stands at `CREATE [DEFINER = ..] PROCEDURE|FUNCTION`.
pub(crate) fn at_create_procedure(p: &Parser) -> bool {
    if !peek_word(p, "CREATE") {
        return false;
    }
    if peek_nth_word(p, 1, "PROCEDURE") || peek_nth_word(p, 1, "FUNCTION") {
        return true;
    }
    peek_nth_word(p, 1, "DEFINER")
        && (2..10).any(|n| peek_nth_word(p, n, "PROCEDURE") || peek_nth_word(p, n, "FUNCTION"))
}

/// `CREATE [DEFINER = user] PROCEDURE [IF NOT EXISTS] [db.]name ([IN|OUT|INOUT] p type, ..)
/// [characteristic ..] body`, or `CREATE [DEFINER = user] FUNCTION [IF NOT EXISTS]
/// [db.]name (p type, ..) RETURNS type [characteristic ..] body`; `sql` is the whole text the
/// parser reads, for the body's text.
pub(crate) fn parse_create_procedure(p: &mut Parser, sql: &str) -> Result<Statement, ParserError> {
    expect_word(p, "CREATE")?;
    let definer = crate::parser::parse_definer(p)?;
    let function = eat_word(p, "FUNCTION");
    if !function {
        expect_word(p, "PROCEDURE")?;
    }
    let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
    let name = crate::parser::parse_table_name(p)?;
    p.expect_token(&Token::LParen)?;
    let mut parameters = vec![];
    if !p.consume_token(&Token::RParen) {
        parameters = p.parse_comma_separated(parse_parameter)?;
        p.expect_token(&Token::RParen)?;
    }
    let returns = if function {
        if parameters.iter().any(|p| p.mode != ParameterMode::In) {
            return Err(ParserError::ParserError(
                "a function's parameters are IN parameters".into(),
            ));
        }
        expect_word(p, "RETURNS")?;
        let data_type = p.parse_data_type()?.to_string();
        eat_charset_collation(p)?;
        if peek_word(p, "SONAME") {
            return Err(ParserError::ParserError(
                "loadable functions (SONAME) are not supported".into(),
            ));
        }
        Some(data_type)
    } else {
        None
    };
    let mut procedure = CreateProcedure {
        returns,
        name,
        if_not_exists,
        definer,
        parameters,
        body: String::new(),
        comment: String::new(),
        deterministic: false,
        data_access: "CONTAINS SQL".into(),
        security: "DEFINER".into(),
    };
    parse_characteristics(p, &mut procedure)?;
    procedure.body = body_text(p, sql)?;
    if procedure.body.is_empty() {
        let next = p.peek_token();
        return p.expected("a procedure body", next);
    }
    Ok(Statement::CreateProcedure(Box::new(procedure)))
}

fn parse_parameter(p: &mut Parser) -> Result<ProcedureParam, ParserError> {
    let mode = if eat_word(p, "INOUT") {
        ParameterMode::InOut
    } else if eat_word(p, "OUT") {
        ParameterMode::Out
    } else {
        eat_word(p, "IN");
        ParameterMode::In
    };
    let name = ident(p)?;
    let data_type = p.parse_data_type()?.to_string();
    eat_charset_collation(p)?;
    Ok(ProcedureParam {
        mode,
        name,
        data_type,
    })
}

/// A string type's character set and collation, which a routine's types may name.
fn eat_charset_collation(p: &mut Parser) -> Result<(), ParserError> {
    if eat_word(p, "CHARSET") || eat_words(p, &["CHARACTER", "SET"]) {
        ident(p)?;
    }
    if eat_word(p, "COLLATE") {
        ident(p)?;
    }
    Ok(())
}

fn parse_characteristics(
    p: &mut Parser,
    procedure: &mut CreateProcedure,
) -> Result<(), ParserError> {
    loop {
        if eat_word(p, "COMMENT") {
            procedure.comment = string_literal(p)?;
        } else if eat_words(p, &["LANGUAGE", "SQL"]) {
        } else if eat_words(p, &["NOT", "DETERMINISTIC"]) {
            procedure.deterministic = false;
        } else if eat_word(p, "DETERMINISTIC") {
            procedure.deterministic = true;
        } else if eat_words(p, &["CONTAINS", "SQL"]) {
            procedure.data_access = "CONTAINS SQL".into();
        } else if eat_words(p, &["NO", "SQL"]) {
            procedure.data_access = "NO SQL".into();
        } else if eat_words(p, &["READS", "SQL", "DATA"]) {
            procedure.data_access = "READS SQL DATA".into();
        } else if eat_words(p, &["MODIFIES", "SQL", "DATA"]) {
            procedure.data_access = "MODIFIES SQL DATA".into();
        } else if eat_words(p, &["SQL", "SECURITY"]) {
            if eat_word(p, "DEFINER") {
                procedure.security = "DEFINER".into();
            } else {
                expect_word(p, "INVOKER")?;
                procedure.security = "INVOKER".into();
            }
        } else {
            return Ok(());
        }
    }
}

/// Consumes the body (to the `;` or end of text outside its blocks) and returns its text.
fn body_text(p: &mut Parser, sql: &str) -> Result<String, ParserError> {
    let offsets = Offsets::new(sql);
    let start_token = p.peek_token();
    if matches!(start_token.token, Token::EOF | Token::SemiColon) {
        return Ok(String::new());
    }
    let start = offsets
        .of(start_token.span.start)
        .ok_or_else(|| ParserError::ParserError("a body outside the statement".into()))?;
    let mut depth = BlockDepth::default();
    let end = loop {
        let t = p.peek_token();
        match t.token {
            Token::EOF => break sql.len(),
            Token::SemiColon if depth.depth() <= 0 => {
                break offsets.of(t.span.start).unwrap_or(sql.len());
            }
            _ => {}
        }
        p.next_token();
        let next = p.peek_token();
        if !depth.step(&t.token, Some(&next.token)) {
            return p.expected("a statement (END without BEGIN)", t);
        }
    };
    if depth.depth() > 0 {
        return Err(ParserError::ParserError(
            "BEGIN without END in the procedure body".into(),
        ));
    }
    Ok(sql.get(start..end).unwrap_or_default().trim().to_string())
}

/// `DROP PROCEDURE|FUNCTION`, `CALL` and `SHOW CREATE PROCEDURE|FUNCTION`.
pub(crate) fn parse_routine_statement(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if peek_word(p, "DROP") && (peek_nth_word(p, 1, "PROCEDURE") || peek_nth_word(p, 1, "FUNCTION"))
    {
        p.next_token();
        let function = eat_word(p, "FUNCTION");
        if !function {
            p.next_token();
        }
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let name = crate::parser::parse_table_name(p)?;
        return Ok(Some(Statement::DropProcedure {
            name,
            if_exists,
            function,
        }));
    }
    if eat_word(p, "CALL") {
        let name = crate::parser::parse_table_name(p)?;
        let mut args = vec![];
        if p.consume_token(&Token::LParen) && !p.consume_token(&Token::RParen) {
            args = p.parse_comma_separated(Parser::parse_expr)?;
            p.expect_token(&Token::RParen)?;
        }
        return Ok(Some(Statement::Call { name, args }));
    }
    if eat_words(p, &["SHOW", "CREATE", "PROCEDURE"]) {
        let name = crate::parser::parse_table_name(p)?;
        return Ok(Some(Statement::ShowCreateProcedure {
            name,
            function: false,
        }));
    }
    if eat_words(p, &["SHOW", "CREATE", "FUNCTION"]) {
        let name = crate::parser::parse_table_name(p)?;
        return Ok(Some(Statement::ShowCreateProcedure {
            name,
            function: true,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, parse_statements, Statement};

    #[test]
    fn create_procedure_keeps_its_body_as_written() {
        let sql = "CREATE PROCEDURE IF NOT EXISTS db.p(IN a INT, OUT b VARCHAR(10) CHARSET utf8, c DECIMAL(10,2))\n\
                   COMMENT 'x' DETERMINISTIC READS SQL DATA SQL SECURITY INVOKER\n\
                   BEGIN\n  SELECT a; -- one\n  SELECT 'END;';\nEND";
        let Statement::CreateProcedure(p) = parse_one(sql).unwrap() else {
            panic!()
        };
        assert!(p.if_not_exists);
        assert_eq!(p.name.database.as_deref(), Some("db"));
        assert_eq!(p.parameters.len(), 3);
        assert_eq!(p.parameters[1].data_type, "VARCHAR(10)");
        assert_eq!(p.comment, "x");
        assert!(p.deterministic);
        assert_eq!(p.security, "INVOKER");
        assert_eq!(p.body, "BEGIN\n  SELECT a; -- one\n  SELECT 'END;';\nEND");
        let both = parse_statements("CREATE PROCEDURE q() SELECT 1; CALL q").unwrap();
        assert!(matches!(&both[0], Statement::CreateProcedure(p) if p.body == "SELECT 1"));
        assert!(matches!(&both[1], Statement::Call { args, .. } if args.is_empty()));
    }

    #[test]
    fn create_function_has_a_return_type() {
        let sql =
            "CREATE DEFINER=root@localhost FUNCTION IF NOT EXISTS d.f(a INT, b VARCHAR(10))\n\
                   RETURNS VARCHAR(20) CHARSET utf8mb4 DETERMINISTIC NO SQL\nRETURN CONCAT(b, a)";
        let Statement::CreateProcedure(f) = parse_one(sql).unwrap() else {
            panic!()
        };
        assert_eq!(f.returns.as_deref(), Some("VARCHAR(20)"));
        assert_eq!(f.parameters.len(), 2);
        assert_eq!(f.data_access, "NO SQL");
        assert_eq!(f.body, "RETURN CONCAT(b, a)");
        assert!(parse_one("CREATE FUNCTION f() RETURN 1").is_err());
        assert!(parse_one("CREATE FUNCTION f(OUT a INT) RETURNS INT RETURN 1").is_err());
        assert!(matches!(
            parse_one("DROP FUNCTION IF EXISTS f").unwrap(),
            Statement::DropProcedure {
                if_exists: true,
                function: true,
                ..
            }
        ));
        assert!(matches!(
            parse_one("SHOW CREATE FUNCTION d.f").unwrap(),
            Statement::ShowCreateProcedure { function: true, .. }
        ));
    }

    #[test]
    fn call_drop_show() {
        assert!(matches!(
            parse_one("CALL p(@_p_0, 1 + 2, 'x')").unwrap(),
            Statement::Call { args, .. } if args.len() == 3
        ));
        assert!(matches!(
            parse_one("DROP PROCEDURE IF EXISTS `foo`").unwrap(),
            Statement::DropProcedure {
                if_exists: true,
                ..
            }
        ));
        assert!(matches!(
            parse_one("SHOW CREATE PROCEDURE d.p").unwrap(),
            Statement::ShowCreateProcedure { .. }
        ));
        assert_eq!(
            parse_one("CREATE PROCEDURE p() BEGIN SELECT 1;")
                .unwrap_err()
                .mysql_code(),
            1064
        );
    }
}
