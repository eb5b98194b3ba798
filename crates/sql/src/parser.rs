//! Entry point of the SQL surface: splits text into statements and routes each either to Basalt's
//! own grammar (Doris DDL, users, partitions) or to `sqlparser`'s MySQL dialect.

use crate::dialect::{BasaltDialect, SqlSyntax};
use crate::error::syntax_error;
use crate::statement::*;
use crate::words::{
    eat_word, eat_words, expect_word, ident, peek_nth_word, peek_word, string_literal,
};
use basalt_common::{BasaltError, Result};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// How deep the parser may recurse. sqlparser's default (50) refuses 30 levels of parentheses
/// in a WHERE clause, which generated SQL reaches (SQLite's sqllogictest corpus does); the
/// threads that parse have 64 MiB stacks, and the planner's own limits
/// (`MAX_EXPRESSION_DEPTH`, `MAX_QUERY_DEPTH`) apply after parsing.
pub const PARSER_DEPTH: usize = 400;

/// Parses every `;`-separated statement in `sql`.
pub fn parse_statements(sql: &str) -> Result<Vec<Statement>> {
    parse_statements_with(sql, SqlSyntax::default())
}

/// [`parse_statements`] under a session's `sql_mode` (NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT).
pub fn parse_statements_with(sql: &str, syntax: SqlSyntax) -> Result<Vec<Statement>> {
    let dialect = BasaltDialect::new(syntax);
    let tokens =
        crate::lexer::tokenize_with(sql, &dialect).map_err(|e| syntax_error(e.into(), sql))?;
    let (tokens, labels) = crate::insert_labels::take_insert_labels(tokens);
    // After the labels: `PARTITION (p) WITH LABEL l (a, b)` has its columns next to the list.
    let tokens = crate::partition_words::insert_columns_first(tokens);
    let dialect = dialect.for_tokens(&tokens);
    // `t1 LEFT JOIN t2 JOIN t3 ON c1 ON c2` fails to parse left to right; it is parsed again
    // with such joins nested (kept only when that succeeds).
    let joins = tokens
        .iter()
        .filter(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::JOIN))
        .count();
    // One statement only: the retry nests such joins all through the text it parses.
    let retry = (joins >= 2 && one_statement(&tokens)).then(|| tokens.clone());
    match parse_tokens(sql, tokens, &labels, &dialect) {
        Err(e) => match retry {
            Some(tokens) => {
                parse_tokens(sql, tokens, &labels, &dialect.with_nested_joins()).map_err(|_| e)
            }
            None => Err(e),
        },
        parsed => parsed,
    }
}

/// Whether `tokens` hold one statement: nothing but spaces and comments after a `;`.
fn one_statement(tokens: &[TokenWithSpan]) -> bool {
    let Some(end) = tokens.iter().position(|t| t.token == Token::SemiColon) else {
        return true;
    };
    tokens[end..].iter().all(|t| {
        matches!(
            t.token,
            Token::SemiColon | Token::Whitespace(_) | Token::EOF
        )
    })
}

/// The statements of `tokens` (of `sql`), labelled where `labels` say.
fn parse_tokens(
    sql: &str,
    tokens: Vec<TokenWithSpan>,
    labels: &[(usize, String)],
    dialect: &BasaltDialect,
) -> Result<Vec<Statement>> {
    let mut parser = Parser::new(dialect)
        .with_recursion_limit(PARSER_DEPTH)
        .with_tokens_with_locations(tokens);
    let mut out = Vec::new();
    loop {
        while parser.consume_token(&Token::SemiColon) {}
        if parser.peek_token().token == Token::EOF {
            break;
        }
        let start = parser.index();
        let stmt = if crate::routines::at_create_procedure(&parser) {
            crate::routines::parse_create_procedure(&mut parser, sql)
        } else {
            parse_statement(&mut parser)
        }
        .map_err(|e| syntax_error(e, sql))?;
        let label = labels
            .iter()
            .find(|(at, _)| (start..parser.index()).contains(at))
            .map(|(_, label)| label.clone());
        let stmt = match (label, stmt) {
            (None, stmt) => stmt,
            (Some(label), Statement::Standard(insert))
                if matches!(*insert, sqlparser::ast::Statement::Insert(_)) =>
            {
                Statement::LabelledInsert { label, insert }
            }
            (Some(_), _) => {
                return Err(BasaltError::syntax_at(
                    "WITH LABEL belongs to an INSERT",
                    sql,
                    1,
                    1,
                ))
            }
        };
        out.push(stmt);
        let next = parser.peek_token();
        if next.token != Token::SemiColon && next.token != Token::EOF {
            return Err(syntax_error(
                parser
                    .expected::<()>("end of statement", next)
                    .expect_err("expected() always fails"),
                sql,
            ));
        }
    }
    Ok(out)
}

/// Parses text that must hold exactly one statement.
pub fn parse_one(sql: &str) -> Result<Statement> {
    parse_one_with(sql, SqlSyntax::default())
}

/// [`parse_one`] under a session's `sql_mode`.
pub fn parse_one_with(sql: &str, syntax: SqlSyntax) -> Result<Statement> {
    let mut stmts = parse_statements_with(sql, syntax)?;
    match stmts.len() {
        1 => Ok(stmts.remove(0)),
        0 => Err(BasaltError::syntax_at("empty statement", sql, 1, 1)),
        // MySQL without CLIENT_MULTI_STATEMENTS: a syntax error at the second statement.
        _ => {
            let pieces = crate::lexer::split_statements(sql);
            let near = pieces.get(1).copied().unwrap_or_default();
            // The pieces are slices of `sql`: the second one's offset gives its line.
            let offset = (near.as_ptr() as usize)
                .saturating_sub(sql.as_ptr() as usize)
                .min(sql.len());
            let line = sql.get(..offset).map_or(0, |s| s.matches('\n').count()) as u64 + 1;
            Err(BasaltError::Syntax {
                message: "more than one statement needs the CLIENT_MULTI_STATEMENTS option"
                    .to_string(),
                near: near.chars().take(80).collect(),
                line,
            })
        }
    }
}

fn parse_statement(p: &mut Parser) -> Result<Statement, ParserError> {
    if peek_word(p, "CREATE") {
        if peek_nth_word(p, 1, "TABLE")
            || (peek_nth_word(p, 1, "TEMPORARY") && peek_nth_word(p, 2, "TABLE"))
        {
            return crate::ddl::parse_create_table_statement(p);
        }
        if peek_nth_word(p, 1, "USER") {
            return parse_create_user(p);
        }
    }
    if let Some(set) = crate::set_transaction::parse(p)? {
        return Ok(set);
    }
    if let Some(set) = crate::set_statement::parse(p, parse_statement)? {
        return Ok(set);
    }
    if peek_word(p, "SYNC") && matches!(p.peek_nth_token(1).token, Token::EOF | Token::SemiColon) {
        p.next_token();
        return Ok(Statement::Sync);
    }
    // MySQL's `DO expr, ..`: the expressions are evaluated (their assignments made, their
    // errors raised) and their values discarded.
    if peek_word(p, "DO") && !matches!(p.peek_nth_token(1).token, Token::EOF | Token::SemiColon) {
        p.next_token();
        let exprs = p.parse_comma_separated(Parser::parse_expr)?;
        let list: Vec<String> = exprs.iter().map(ToString::to_string).collect();
        let select = format!("SELECT {}", list.join(", "));
        return match parse_one(&select) {
            Ok(Statement::Standard(stmt)) => match *stmt {
                sqlparser::ast::Statement::Query(query) => Ok(Statement::Do { query }),
                _ => Err(ParserError::ParserError("DO takes expressions".into())),
            },
            _ => Err(ParserError::ParserError("DO takes expressions".into())),
        };
    }
    if eat_words(p, &["ANALYZE", "TABLE"]) {
        let table = parse_table_name(p)?;
        // Columns, WITH SYNC / WITH SAMPLE .. / PROPERTIES: all for collecting statistics.
        while !matches!(p.peek_token().token, Token::EOF | Token::SemiColon) {
            p.next_token();
        }
        return Ok(Statement::AnalyzeTable { table });
    }
    if eat_words(p, &["DROP", "USER"]) {
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let users = p.parse_comma_separated(parse_user_name)?;
        return Ok(Statement::DropUser { users, if_exists });
    }
    if eat_words(p, &["SET", "PASSWORD"]) {
        let user = if eat_word(p, "FOR") {
            Some(parse_user_name(p)?)
        } else {
            None
        };
        p.expect_token(&Token::Eq)?;
        let password = if eat_word(p, "PASSWORD") {
            p.expect_token(&Token::LParen)?;
            let s = string_literal(p)?;
            p.expect_token(&Token::RParen)?;
            s
        } else {
            string_literal(p)?
        };
        return Ok(Statement::SetPassword { user, password });
    }
    if eat_words(p, &["SHOW", "WARNINGS"]) || eat_words(p, &["SHOW", "ERRORS"]) {
        if eat_word(p, "LIMIT") {
            p.parse_expr()?;
        }
        return Ok(Statement::ShowWarnings);
    }
    if eat_words(p, &["SHOW", "QUERY", "PROFILE"]) {
        let path = if matches!(
            p.peek_token().token,
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_)
        ) {
            string_literal(p)?
        } else {
            String::new()
        };
        // Doris's form is a path: "/" lists, "/<query id>" shows one.
        let id = path.trim().trim_matches('/').to_string();
        return Ok(Statement::ShowQueryProfile {
            query_id: (!id.is_empty()).then_some(id),
        });
    }
    if eat_words(p, &["SHOW", "BACKENDS"]) {
        return Ok(Statement::ShowBackends);
    }
    if eat_words(p, &["SHOW", "PROC"]) {
        return Ok(Statement::ShowProc {
            path: string_literal(p)?,
        });
    }
    let backend_action = if eat_words(p, &["ALTER", "SYSTEM"]) {
        Some(if eat_word(p, "ADD") {
            BackendAction::Add
        } else if eat_word(p, "DROP") || eat_word(p, "DROPP") {
            BackendAction::Drop
        } else if eat_word(p, "DECOMMISSION") {
            BackendAction::Decommission
        } else {
            let next = p.peek_token();
            return p.expected("ADD, DROP or DECOMMISSION BACKEND", next);
        })
    } else if eat_words(p, &["CANCEL", "DECOMMISSION"]) {
        Some(BackendAction::CancelDecommission)
    } else {
        None
    };
    if let Some(action) = backend_action {
        expect_word(p, "BACKEND")?;
        let mut addresses = vec![string_literal(p)?];
        while p.consume_token(&Token::Comma) {
            addresses.push(string_literal(p)?);
        }
        return Ok(Statement::AlterSystemBackends { action, addresses });
    }
    if peek_word(p, "SHOW") && peek_nth_word(p, 1, "DYNAMIC") {
        p.next_token();
        p.next_token();
        expect_word(p, "PARTITION")?;
        expect_word(p, "TABLES")?;
        let database = if eat_word(p, "FROM") || eat_word(p, "IN") {
            Some(ident(p)?)
        } else {
            None
        };
        return Ok(Statement::ShowDynamicPartitionTables { database });
    }
    let temporary = peek_nth_word(p, 1, "TEMPORARY") && peek_nth_word(p, 2, "PARTITIONS");
    if peek_word(p, "SHOW")
        && (peek_nth_word(p, 1, "PARTITIONS") || peek_nth_word(p, 1, "TABLETS") || temporary)
    {
        p.next_token();
        eat_word(p, "TEMPORARY");
        let partitions = eat_word(p, "PARTITIONS");
        if !partitions {
            expect_word(p, "TABLETS")?;
        }
        expect_word(p, "FROM")?;
        let table = parse_table_name(p)?;
        return Ok(if partitions {
            let rows = Box::new(parse_show_rows(p)?);
            Statement::ShowPartitions {
                table,
                temporary,
                rows,
            }
        } else {
            let mut partitions = Vec::new();
            if eat_word(p, "PARTITION") {
                p.expect_token(&Token::LParen)?;
                partitions = p.parse_comma_separated(ident)?;
                p.expect_token(&Token::RParen)?;
            }
            let rows = Box::new(parse_show_rows(p)?);
            Statement::ShowTablets {
                table,
                partitions,
                rows,
            }
        });
    }
    if peek_word(p, "SHOW") && peek_nth_word(p, 1, "TRANSACTION") {
        p.next_token();
        p.next_token();
        let database = if eat_word(p, "FROM") || eat_word(p, "IN") {
            Some(ident(p)?)
        } else {
            None
        };
        expect_word(p, "WHERE")?;
        let key = ident(p)?.to_ascii_lowercase();
        p.expect_token(&Token::Eq)?;
        let value = string_or_number(p)?;
        let filter = match key.as_str() {
            "id" => TransactionFilter::Id(value.parse().map_err(|_| {
                ParserError::ParserError(format!("a transaction id is a number, got {value}"))
            })?),
            "label" => TransactionFilter::Label(value),
            "status" => TransactionFilter::Status(value),
            other => {
                return Err(ParserError::ParserError(format!(
                    "SHOW TRANSACTION filters by ID, LABEL or STATUS, not {other}"
                )))
            }
        };
        return Ok(Statement::ShowTransaction { database, filter });
    }
    if peek_word(p, "SHOW")
        && (peek_nth_word(p, 1, "LOAD")
            || (peek_nth_word(p, 1, "STREAM") && peek_nth_word(p, 2, "LOAD")))
    {
        p.next_token();
        let stream = eat_word(p, "STREAM");
        expect_word(p, "LOAD")?;
        let database = if eat_word(p, "FROM") || eat_word(p, "IN") {
            Some(ident(p)?)
        } else {
            None
        };
        let mut label = None;
        if eat_word(p, "WHERE") {
            expect_word(p, "LABEL")?;
            p.expect_token(&Token::Eq)?;
            label = Some(string_literal(p)?);
        }
        let mut limit = None;
        if eat_word(p, "LIMIT") {
            let n = string_or_number(p)?;
            limit = Some(n.parse().map_err(|_| {
                ParserError::ParserError(format!("LIMIT must be a count, got {n}"))
            })?);
        }
        return Ok(Statement::ShowLoad {
            stream,
            database,
            label,
            limit,
        });
    }
    if let Some(stmt) = crate::routines::parse_routine_statement(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = crate::load_data::parse_load_data(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = crate::tool_statements::parse_tool_statement(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = parse_prepared_statement_sql(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = parse_index_ddl(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = crate::workload::parse_workload_statement(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = crate::privileges::parse_privilege_statement(p)? {
        return Ok(stmt);
    }
    if peek_word(p, "ALTER") && peek_nth_word(p, 1, "TABLE") {
        return crate::alter::parse_alter_table(p);
    }
    if peek_word(p, "RENAME") && peek_nth_word(p, 1, "TABLE") {
        return crate::alter::parse_rename_table(p);
    }
    if let Some(stmt) = crate::view_forms::parse_view_statement(p)? {
        return Ok(stmt);
    }
    if let Some(stmt) = crate::mysql_forms::parse_mysql_form(p)? {
        return Ok(stmt);
    }
    let mut stmt = p.parse_statement()?;
    crate::locking_reads::take_lock_in_share_mode(p, &mut stmt);
    crate::mysql_forms::drop_insert_priority(&mut stmt);
    Ok(Statement::Standard(Box::new(stmt)))
}

/// `[WHERE ..] [ORDER BY ..] [LIMIT n [OFFSET m] | LIMIT m, n]` after a SHOW.
fn parse_show_rows(p: &mut Parser) -> Result<ShowRows, ParserError> {
    let mut rows = ShowRows::default();
    if eat_word(p, "WHERE") {
        rows.filter = Some(p.parse_expr()?);
    }
    if eat_words(p, &["ORDER", "BY"]) {
        rows.order_by = p.parse_comma_separated(Parser::parse_order_by_expr)?;
    }
    if eat_word(p, "LIMIT") {
        let first = p.parse_expr()?;
        if p.consume_token(&Token::Comma) {
            rows.offset = Some(first);
            rows.limit = Some(p.parse_expr()?);
        } else {
            rows.limit = Some(first);
            if eat_word(p, "OFFSET") {
                rows.offset = Some(p.parse_expr()?);
            }
        }
    }
    Ok(rows)
}

/// A user variable name after `@` (the tokenizer may give `@name` as one word).
fn user_variable(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::AtSign => ident(p),
        Token::Word(w) if w.value.starts_with('@') && !w.value.starts_with("@@") => {
            Ok(w.value[1..].to_string())
        }
        other => p.expected(
            "a user variable",
            sqlparser::tokenizer::TokenWithSpan::wrap(other),
        ),
    }
}

/// SQL-level prepared statements: PREPARE, EXECUTE, DEALLOCATE / DROP PREPARE.
fn parse_prepared_statement_sql(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if peek_word(p, "PREPARE") {
        p.next_token();
        let name = ident(p)?;
        expect_word(p, "FROM")?;
        let source = if matches!(
            p.peek_token().token,
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_)
        ) {
            PrepareSource::Text(string_literal(p)?)
        } else {
            PrepareSource::Variable(user_variable(p)?)
        };
        return Ok(Some(Statement::Prepare { name, source }));
    }
    if peek_word(p, "EXECUTE") {
        p.next_token();
        let name = ident(p)?;
        let mut using = Vec::new();
        if eat_word(p, "USING") {
            using = p.parse_comma_separated(user_variable)?;
        }
        return Ok(Some(Statement::Execute { name, using }));
    }
    if (peek_word(p, "DEALLOCATE") || peek_word(p, "DROP")) && peek_nth_word(p, 1, "PREPARE") {
        p.next_token();
        p.next_token();
        let name = ident(p)?;
        return Ok(Some(Statement::Deallocate { name }));
    }
    Ok(None)
}

/// `CREATE [UNIQUE | FULLTEXT] INDEX [IF NOT EXISTS] name [USING ..] ON t (cols) [options]`
/// and `DROP INDEX [IF EXISTS] name ON t`.
fn parse_index_ddl(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    let kind_words = |p: &Parser| {
        if peek_nth_word(p, 1, "INDEX") {
            Some(IndexKind::Plain)
        } else if peek_nth_word(p, 2, "INDEX") && peek_nth_word(p, 1, "UNIQUE") {
            Some(IndexKind::Unique)
        } else if peek_nth_word(p, 2, "INDEX") && peek_nth_word(p, 1, "FULLTEXT") {
            Some(IndexKind::Fulltext)
        } else {
            None
        }
    };
    if let Some(kind) = kind_words(p).filter(|_| peek_word(p, "CREATE")) {
        p.next_token();
        if kind != IndexKind::Plain {
            p.next_token();
        }
        expect_word(p, "INDEX")?;
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let name = ident(p)?;
        if eat_word(p, "USING") {
            ident(p)?;
        }
        expect_word(p, "ON")?;
        let table = parse_table_name(p)?;
        let mut index = crate::table_constraints::parse_index_body(p, kind)?;
        index.name = Some(name);
        return Ok(Some(Statement::CreateIndex {
            table,
            index,
            if_not_exists,
        }));
    }
    if peek_word(p, "DROP") && peek_nth_word(p, 1, "INDEX") {
        p.next_token();
        p.next_token();
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let name = ident(p)?;
        expect_word(p, "ON")?;
        let table = parse_table_name(p)?;
        return Ok(Some(Statement::DropIndex {
            name,
            table,
            if_exists,
        }));
    }
    Ok(None)
}

/// Byte offsets of the `?` placeholders in `sql`, in order (ignoring `?` inside strings,
/// quoted identifiers and comments).
pub fn placeholder_offsets(sql: &str) -> Result<Vec<usize>> {
    let tokens = crate::lexer::tokenize(sql).map_err(|e| {
        BasaltError::syntax_at(e.message.clone(), sql, e.location.line, e.location.column)
    })?;
    // Tokens come in order, so one cursor walks the text once from position to position
    // (line and column are 1-based and count characters).
    let mut chars = sql.char_indices().peekable();
    let (mut line, mut column) = (1u64, 1u64);
    let mut out = Vec::new();
    for t in tokens {
        if t.token != Token::Placeholder("?".to_string()) {
            continue;
        }
        let loc = t.span.start;
        while (line, column) < (loc.line, loc.column) {
            match chars.next() {
                Some((_, '\n')) => {
                    line += 1;
                    column = 1;
                }
                Some(_) => column += 1,
                None => break,
            }
        }
        let offset = chars.peek().map_or(sql.len(), |(i, _)| *i);
        if sql.as_bytes().get(offset) == Some(&b'?') {
            out.push(offset);
        } else {
            return Err(BasaltError::Internal(format!(
                "placeholder position {}:{} does not hold '?'",
                loc.line, loc.column
            )));
        }
    }
    Ok(out)
}

fn string_or_number(p: &mut Parser) -> Result<String, ParserError> {
    match p.next_token().token {
        Token::Number(n, _) => Ok(n),
        Token::SingleQuotedString(s) => Ok(s),
        other => p.expected("a number", sqlparser::tokenizer::TokenWithSpan::wrap(other)),
    }
}

fn parse_create_user(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "CREATE")?;
    expect_word(p, "USER")?;
    let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
    let user = parse_user_name(p)?;
    let password = if eat_words(p, &["IDENTIFIED", "BY"]) {
        eat_word(p, "PASSWORD");
        Some(string_literal(p)?)
    } else {
        None
    };
    let role = if eat_words(p, &["DEFAULT", "ROLE"]) {
        Some(crate::privileges::role_name(p)?)
    } else {
        None
    };
    Ok(Statement::CreateUser {
        user,
        password,
        role,
        if_not_exists,
    })
}

/// `[DEFINER = user | CURRENT_USER[()]]` of CREATE VIEW/PROCEDURE/FUNCTION: the user named,
/// `None` without the clause or for CURRENT_USER (the creator).
pub(crate) fn parse_definer(p: &mut Parser) -> Result<Option<UserName>, ParserError> {
    if !crate::words::eat_word(p, "DEFINER") {
        return Ok(None);
    }
    p.expect_token(&Token::Eq)?;
    if crate::words::eat_word(p, "CURRENT_USER") {
        if p.consume_token(&Token::LParen) {
            p.expect_token(&Token::RParen)?;
        }
        return Ok(None);
    }
    parse_user_name(p).map(Some)
}

/// `'u'@'h'`, `u@h`, `'u'` (host defaults to `%`).
pub(crate) fn parse_user_name(p: &mut Parser) -> Result<UserName, ParserError> {
    let t = p.next_token();
    let user = match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
        Token::Word(w) => w.value,
        _ => return p.expected("a user name", t),
    };
    // The tokenizer may read `'u'@'h'` as a string followed by `@'h'` or as an `@h` word.
    let host = match p.peek_token().token {
        Token::AtSign => {
            p.next_token();
            let t = p.next_token();
            match t.token {
                Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
                Token::Word(w) => w.value,
                Token::Mod => "%".to_string(),
                _ => return p.expected("a host name", t),
            }
        }
        Token::Word(ref w) if w.value.starts_with('@') => {
            let h = w.value.trim_start_matches('@').to_string();
            p.next_token();
            h
        }
        _ => "%".to_string(),
    };
    Ok(UserName { user, host })
}

pub(crate) fn parse_table_name(p: &mut Parser) -> Result<TableName, ParserError> {
    let first = ident(p)?;
    if p.consume_token(&Token::Period) {
        let table = ident(p)?;
        Ok(TableName {
            database: Some(first),
            table,
        })
    } else {
        Ok(TableName {
            database: None,
            table: first,
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholder_offsets_skip_strings_and_comments_across_lines() {
        let sql = "SELECT 'é?', ? -- ?\n, `a?`, /* ? */ ?\r\n+ ?";
        let offsets = super::placeholder_offsets(sql).unwrap();
        assert_eq!(offsets.len(), 3);
        assert!(offsets.iter().all(|&o| &sql[o..o + 1] == "?"));
        let wide = vec!["?"; 50_000].join(",");
        assert_eq!(super::placeholder_offsets(&wide).unwrap().len(), 50_000);
    }

    use super::*;

    #[test]
    fn standard_statements_go_to_sqlparser() {
        let s = parse_statements("SELECT 1; select @@version_comment limit 1;").unwrap();
        assert_eq!(s.len(), 2);
        assert!(matches!(s[0], Statement::Standard(_)));
    }

    #[test]
    fn two_statements_in_one_text_are_a_syntax_error_at_the_second() {
        let e = parse_one("SELECT 1;\n SELECT 'x;y'").unwrap_err();
        assert_eq!(e.mysql_code(), 1064);
        assert!(
            e.to_string().ends_with("near 'SELECT 'x;y'' at line 2"),
            "{e}"
        );
        assert!(parse_one("SELECT 1;").is_ok());
    }

    #[test]
    fn syntax_error_has_position() {
        let e = parse_one("SELECT * FORM t").unwrap_err();
        assert_eq!(e.mysql_code(), 1064);
        assert!(e.to_string().contains("near 'FORM t' at line 1"), "{e}");
        let e = parse_one("SELEC 1").unwrap_err();
        assert!(e.to_string().contains("near 'SELEC 1'"), "{e}");
    }

    #[test]
    fn users() {
        match parse_one("CREATE USER 'bob'@'%' IDENTIFIED BY 'pw'").unwrap() {
            Statement::CreateUser { user, password, .. } => {
                assert_eq!(
                    user,
                    UserName {
                        user: "bob".into(),
                        host: "%".into()
                    }
                );
                assert_eq!(password.as_deref(), Some("pw"));
            }
            other => panic!("{other:?}"),
        }
        match parse_one("DROP USER IF EXISTS 'bob'@'localhost', carol").unwrap() {
            Statement::DropUser { users, if_exists } => {
                assert!(if_exists);
                assert_eq!(users[0].host, "localhost");
                assert_eq!(
                    users[1],
                    UserName {
                        user: "carol".into(),
                        host: "%".into()
                    }
                );
            }
            other => panic!("{other:?}"),
        }
        match parse_one("SET PASSWORD FOR 'bob'@'%' = PASSWORD('x')").unwrap() {
            Statement::SetPassword { user, password } => {
                assert_eq!(user.unwrap().user, "bob");
                assert_eq!(password, "x");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("SET PASSWORD = 'y'").unwrap(),
            Statement::SetPassword { user: None, .. }
        ));
    }

    #[test]
    fn partitions_admin() {
        match parse_one("ALTER TABLE db.t ADD PARTITION p3 VALUES LESS THAN ('2024-04-01')")
            .unwrap()
        {
            Statement::AlterPartitions {
                table,
                op:
                    PartitionOp::Add {
                        def,
                        temporary: false,
                    },
            } => {
                assert_eq!(table.database.as_deref(), Some("db"));
                assert_eq!(def.name(), "p3");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("ALTER TABLE t DROP PARTITION p1").unwrap(),
            Statement::AlterPartitions {
                op: PartitionOp::Drop { .. },
                ..
            }
        ));
        assert!(matches!(
            parse_one("ALTER TABLE t ADD TEMPORARY PARTITION tp1 VALUES [('1'), ('5'))").unwrap(),
            Statement::AlterPartitions {
                op: PartitionOp::Add {
                    temporary: true,
                    ..
                },
                ..
            }
        ));
        assert!(matches!(
            parse_one("ALTER TABLE t DROP TEMPORARY PARTITION IF EXISTS tp1").unwrap(),
            Statement::AlterPartitions {
                op: PartitionOp::Drop {
                    temporary: true,
                    if_exists: true,
                    ..
                },
                ..
            }
        ));
        match parse_one(
            "ALTER TABLE t REPLACE PARTITION (p1, p2) WITH TEMPORARY PARTITION (tp1) \
             PROPERTIES ('strict_range' = 'false')",
        )
        .unwrap()
        {
            Statement::AlterPartitions {
                op:
                    PartitionOp::Replace {
                        formal,
                        temporary,
                        properties,
                    },
                ..
            } => {
                assert_eq!(formal, ["p1", "p2"]);
                assert_eq!(temporary, ["tp1"]);
                assert_eq!(properties, [("strict_range".into(), "false".into())]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_one("ALTER TABLE t ADD COLUMN c INT").unwrap(),
            Statement::AlterTable { .. }
        ));
        assert!(matches!(
            parse_one("SHOW PARTITIONS FROM t").unwrap(),
            Statement::ShowPartitions { .. }
        ));
        assert!(matches!(
            parse_one("SHOW STREAM LOAD FROM db WHERE LABEL = 'x' LIMIT 5").unwrap(),
            Statement::ShowLoad { stream: true, ref label, limit: Some(5), .. } if label.as_deref() == Some("x")
        ));
        assert!(matches!(
            parse_one("show load").unwrap(),
            Statement::ShowLoad {
                stream: false,
                database: None,
                ..
            }
        ));
        assert!(matches!(
            parse_one("SHOW PARTITIONS FROM t").unwrap(),
            Statement::ShowPartitions { .. }
        ));
        assert!(matches!(
            parse_one("SHOW DYNAMIC PARTITION TABLES FROM d").unwrap(),
            Statement::ShowDynamicPartitionTables { database: Some(ref d) } if d == "d"
        ));
    }
}
