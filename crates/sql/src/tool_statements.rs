//! The statements MySQL's tools send to learn about a server and to dump it, beyond what
//! `sqlparser` knows: `SHOW TABLE STATUS`, `SHOW INDEX|KEYS`, `SHOW ENGINES`, `SHOW PLUGINS`,
//! `SHOW PRIVILEGES`, `SHOW TRIGGERS`, `SHOW EVENTS`, `SHOW OPEN TABLES`, `SHOW CREATE
//! DATABASE`, `SHOW PROCEDURE|FUNCTION STATUS`, `SHOW MASTER STATUS`, `SHOW BINARY LOGS`,
//! `SHOW PROFILES`, `SHOW COUNT(*) WARNINGS|ERRORS`, Doris's `SHOW DATA [FROM t]`, `ALTER TABLE t DISABLE|ENABLE KEYS` and
//! `START TRANSACTION WITH CONSISTENT SNAPSHOT`, and Doris's `BEGIN WITH LABEL l`.

use crate::parser::parse_table_name;
use crate::statement::{MetadataShow, ShowFilter, Statement};
use crate::words::{
    eat_word, eat_words, expect_word, ident, peek_nth_word, peek_word, string_literal,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// A tool statement at the parser's position, or None (nothing consumed) when it is another.
pub(crate) fn parse_tool_statement(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if eat_words(
        p,
        &["START", "TRANSACTION", "WITH", "CONSISTENT", "SNAPSHOT"],
    ) {
        // `, READ ONLY` / `, READ WRITE` may follow.
        while p.consume_token(&Token::Comma) {
            expect_word(p, "READ")?;
            if !eat_word(p, "ONLY") {
                expect_word(p, "WRITE")?;
            }
        }
        return Ok(Some(Statement::StartConsistentSnapshot));
    }
    if peek_word(p, "ADMIN") && peek_nth_word(p, 1, "SET") {
        p.next_token();
        p.next_token();
        if !eat_word(p, "FRONTEND") {
            expect_word(p, "ALL")?;
            expect_word(p, "FRONTENDS")?;
        }
        expect_word(p, "CONFIG")?;
        p.expect_token(&Token::LParen)?;
        let settings = p.parse_comma_separated(|p| {
            let key = string_literal(p)?;
            p.expect_token(&Token::Eq)?;
            Ok((key, string_literal(p)?))
        })?;
        p.expect_token(&Token::RParen)?;
        return Ok(Some(Statement::AdminSetFrontendConfig { settings }));
    }
    if eat_words(p, &["ADMIN", "SHOW", "FRONTEND", "CONFIG"]) {
        let like = if eat_word(p, "LIKE") {
            Some(string_literal(p)?)
        } else {
            None
        };
        return Ok(Some(Statement::AdminShowFrontendConfig { like }));
    }
    if peek_word(p, "CLEAN") && peek_nth_word(p, 1, "LABEL") {
        p.next_token();
        p.next_token();
        let label = if eat_word(p, "FROM") {
            None
        } else {
            let label = ident(p)?;
            expect_word(p, "FROM")?;
            Some(label)
        };
        let database = ident(p)?;
        return Ok(Some(Statement::CleanLabel { label, database }));
    }
    if eat_words(p, &["BEGIN", "WITH", "LABEL"]) {
        let label = match p.peek_token().token {
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => string_literal(p)?,
            _ => ident(p)?,
        };
        return Ok(Some(Statement::BeginWithLabel { label }));
    }
    if peek_word(p, "ALTER") && peek_nth_word(p, 1, "TABLE") {
        let start = p.index();
        p.next_token();
        p.next_token();
        let table = parse_table_name(p)?;
        let enable = eat_word(p, "ENABLE");
        if (enable || eat_word(p, "DISABLE"))
            && eat_word(p, "KEYS")
            && matches!(p.peek_token().token, Token::EOF | Token::SemiColon)
        {
            return Ok(Some(Statement::AlterTableKeys { table, enable }));
        }
        while p.index() > start {
            p.prev_token();
        }
        return Ok(None);
    }
    if !peek_word(p, "SHOW") {
        return Ok(None);
    }
    let simple = [
        (&["ENGINES"][..], MetadataShow::Engines),
        (&["STORAGE", "ENGINES"], MetadataShow::Engines),
        (&["PLUGINS"], MetadataShow::Plugins),
        (&["PRIVILEGES"], MetadataShow::Privileges),
        (&["MASTER", "STATUS"], MetadataShow::MasterStatus),
        (&["BINARY", "LOG", "STATUS"], MetadataShow::MasterStatus),
        (&["BINARY", "LOGS"], MetadataShow::BinaryLogs),
        (&["MASTER", "LOGS"], MetadataShow::BinaryLogs),
        (&["PROFILES"], MetadataShow::Profiles),
    ];
    for (words, kind) in simple {
        if words
            .iter()
            .enumerate()
            .all(|(i, w)| peek_nth_word(p, i + 1, w))
            && matches!(
                p.peek_nth_token(words.len() + 1).token,
                Token::EOF | Token::SemiColon
            )
        {
            for _ in 0..=words.len() {
                p.next_token();
            }
            return Ok(Some(Statement::ShowMetadata {
                kind,
                database: None,
                table: None,
                filter: None,
            }));
        }
    }
    if peek_nth_word(p, 1, "DATA")
        && (peek_nth_word(p, 2, "FROM")
            || matches!(p.peek_nth_token(2).token, Token::EOF | Token::SemiColon))
    {
        p.next_token();
        p.next_token();
        let table = if eat_word(p, "FROM") {
            Some(parse_table_name(p)?)
        } else {
            None
        };
        return Ok(Some(Statement::ShowData { table }));
    }
    if peek_nth_word(p, 1, "COUNT") && p.peek_nth_token(2).token == Token::LParen {
        p.next_token();
        p.next_token();
        p.expect_token(&Token::LParen)?;
        p.expect_token(&Token::Mul)?;
        p.expect_token(&Token::RParen)?;
        if !eat_word(p, "WARNINGS") {
            expect_word(p, "ERRORS")?;
        }
        return Ok(Some(Statement::ShowWarningCount));
    }
    if peek_nth_word(p, 1, "CREATE")
        && (peek_nth_word(p, 2, "DATABASE") || peek_nth_word(p, 2, "SCHEMA"))
    {
        for _ in 0..3 {
            p.next_token();
        }
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let database = ident(p)?;
        return Ok(Some(Statement::ShowCreateDatabase {
            database,
            if_not_exists,
        }));
    }
    let (kind, skip) = if peek_nth_word(p, 1, "TABLE") && peek_nth_word(p, 2, "STATUS") {
        (MetadataShow::TableStatus, 3)
    } else if ["INDEX", "INDEXES", "KEYS"]
        .iter()
        .any(|w| peek_nth_word(p, 1, w))
    {
        (MetadataShow::Index, 2)
    } else if peek_nth_word(p, 2, "INDEX") && peek_nth_word(p, 1, "EXTENDED") {
        (MetadataShow::Index, 3)
    } else if peek_nth_word(p, 1, "TRIGGERS") {
        (MetadataShow::Triggers, 2)
    } else if peek_nth_word(p, 1, "EVENTS") {
        (MetadataShow::Events, 2)
    } else if peek_nth_word(p, 1, "OPEN") && peek_nth_word(p, 2, "TABLES") {
        (MetadataShow::OpenTables, 3)
    } else if peek_nth_word(p, 1, "PROCEDURE") && peek_nth_word(p, 2, "STATUS") {
        (MetadataShow::ProcedureStatus, 3)
    } else if peek_nth_word(p, 1, "FUNCTION") && peek_nth_word(p, 2, "STATUS") {
        (MetadataShow::FunctionStatus, 3)
    } else {
        return Ok(None);
    };
    for _ in 0..skip {
        p.next_token();
    }
    let table = if kind == MetadataShow::Index {
        if !eat_word(p, "FROM") {
            expect_word(p, "IN")?;
        }
        Some(parse_table_name(p)?)
    } else {
        None
    };
    let database = if eat_word(p, "FROM") || eat_word(p, "IN") {
        Some(ident(p)?)
    } else {
        None
    };
    let filter = parse_show_filter(p)?;
    Ok(Some(Statement::ShowMetadata {
        kind,
        database,
        table,
        filter,
    }))
}

/// `LIKE 'pattern'` or `WHERE expr`, if present.
pub(crate) fn parse_show_filter(p: &mut Parser) -> Result<Option<ShowFilter>, ParserError> {
    if eat_word(p, "LIKE") {
        return Ok(Some(ShowFilter::Like(string_literal(p)?)));
    }
    if eat_word(p, "WHERE") {
        return Ok(Some(ShowFilter::Where(Box::new(p.parse_expr()?))));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, MetadataShow, ShowFilter, Statement, TableName};

    fn show(
        sql: &str,
    ) -> (
        MetadataShow,
        Option<String>,
        Option<TableName>,
        Option<ShowFilter>,
    ) {
        match parse_one(sql).unwrap() {
            Statement::ShowMetadata {
                kind,
                database,
                table,
                filter,
                ..
            } => (kind, database, table, filter),
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn tool_shows() {
        let (kind, db, _, filter) = show("SHOW TABLE STATUS FROM d1 LIKE 'u%'");
        assert_eq!(kind, MetadataShow::TableStatus);
        assert_eq!(db.as_deref(), Some("d1"));
        assert!(matches!(filter, Some(ShowFilter::Like(p)) if p == "u%"));
        let (kind, db, table, filter) = show("SHOW KEYS FROM t IN d WHERE Key_name = 'PRIMARY'");
        assert_eq!(kind, MetadataShow::Index);
        assert_eq!(db.as_deref(), Some("d"));
        assert_eq!(table.unwrap().table, "t");
        assert!(matches!(filter, Some(ShowFilter::Where(_))));
        assert_eq!(
            show("SHOW INDEX FROM d.t").2.unwrap().database.as_deref(),
            Some("d")
        );
        assert_eq!(show("SHOW STORAGE ENGINES").0, MetadataShow::Engines);
        assert_eq!(
            show("SHOW PROCEDURE STATUS WHERE Db = 'x'").0,
            MetadataShow::ProcedureStatus
        );
        assert_eq!(show("SHOW OPEN TABLES FROM d").0, MetadataShow::OpenTables);
        assert!(matches!(
            parse_one("SHOW CREATE DATABASE IF NOT EXISTS d").unwrap(),
            Statement::ShowCreateDatabase {
                if_not_exists: true,
                ..
            }
        ));
        assert!(matches!(
            parse_one("SHOW COUNT(*) WARNINGS").unwrap(),
            Statement::ShowWarningCount
        ));
        assert!(matches!(
            parse_one("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY").unwrap(),
            Statement::StartConsistentSnapshot
        ));
        assert!(matches!(
            parse_one("BEGIN WITH LABEL load_1").unwrap(),
            Statement::BeginWithLabel { label } if label == "load_1"
        ));
        assert!(matches!(
            parse_one("begin with label 'a-b'").unwrap(),
            Statement::BeginWithLabel { label } if label == "a-b"
        ));
        assert!(parse_one("BEGIN WITH LABEL").is_err());
        assert!(parse_one("SHOW INDEX t").is_err());
        assert!(matches!(
            parse_one("SHOW DATA").unwrap(),
            Statement::ShowData { table: None }
        ));
        assert!(matches!(
            parse_one("SHOW DATA FROM d.t").unwrap(),
            Statement::ShowData { table: Some(_) }
        ));
        assert!(matches!(
            parse_one("ALTER TABLE d.t DISABLE KEYS").unwrap(),
            Statement::AlterTableKeys { enable: false, .. }
        ));
        assert!(matches!(
            parse_one("ALTER TABLE `t` ENABLE KEYS").unwrap(),
            Statement::AlterTableKeys { enable: true, .. }
        ));
    }
}
