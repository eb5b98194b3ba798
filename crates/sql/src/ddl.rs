//! Grammar of Doris-style `CREATE TABLE` (also accepting MySQL's column list with PRIMARY KEY and
//! ENGINE), of `CREATE TABLE .. AS SELECT`, and of partition definitions.

use crate::column_forms;
use crate::parser::parse_table_name;
use crate::statement::*;
use crate::table_constraints::{self, TableConstraint};
use crate::table_options;
use crate::words::{
    eat_word, eat_words, expect_word, ident, peek_nth_word, peek_word, string_literal, uint_literal,
};
use basalt_common::{SqlType, StructField};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token};

/// `CREATE TABLE ..`, or `CREATE TABLE .. [AS] query` (MySQL's and Doris's CTAS): after the
/// name an optional list of column definitions (MySQL) or of bare names (Doris, renaming the
/// query's columns), the table options, then the query.
pub fn parse_create_table_statement(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "CREATE")?;
    if eat_word(p, "TEMPORARY") {
        expect_word(p, "TABLE")?;
        let table = parse_create_table_rest(p)?;
        return Ok(Statement::CreateTemporaryTable(Box::new(table)));
    }
    expect_word(p, "TABLE")?;
    parse_create_table_rest(p)
}

/// `CREATE [TEMPORARY] TABLE` after TABLE: the name, then MySQL's `LIKE source` (also in
/// parentheses), a definition, or a query.
pub(crate) fn parse_create_table_rest(p: &mut Parser) -> Result<Statement, ParserError> {
    let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
    let name = parse_table_name(p)?;
    let parenthesized_like =
        matches!(p.peek_token().token, Token::LParen) && peek_nth_word(p, 1, "LIKE");
    if parenthesized_like {
        p.next_token();
    }
    if eat_word(p, "LIKE") {
        let like = parse_table_name(p)?;
        if parenthesized_like {
            p.expect_token(&Token::RParen)?;
        }
        return Ok(Statement::CreateTableLike {
            table: name,
            like,
            if_not_exists,
        });
    }
    let mut table = CreateTable {
        name,
        if_not_exists,
        columns: Vec::new(),
        keys: None,
        primary_key: None,
        indexes: Vec::new(),
        foreign_keys: Vec::new(),
        engine: None,
        comment: None,
        partition: None,
        distribution: None,
        properties: Vec::new(),
    };
    let mut column_names = Vec::new();
    let has_element_list = matches!(p.peek_token().token, Token::LParen) && !query_starts(p);
    if has_element_list {
        p.next_token();
        if is_bare_name(p) {
            column_names = p.parse_comma_separated(ident)?;
            p.expect_token(&Token::RParen)?;
        } else {
            parse_table_elements(p, &mut table)?;
        }
    }
    parse_table_options(p, &mut table)?;
    let duplicates = if eat_word(p, "IGNORE") {
        Some(CtasDuplicates::Ignore)
    } else if eat_word(p, "REPLACE") {
        Some(CtasDuplicates::Replace)
    } else {
        None
    };
    let explicit_as = eat_word(p, "AS");
    if duplicates.is_some() || explicit_as || query_starts(p) {
        let query = p.parse_query()?;
        return Ok(Statement::CreateTableAs(Box::new(CreateTableAs {
            table,
            column_names,
            query,
            duplicates,
        })));
    }
    if !has_element_list {
        return p.expected("a column list or AS SELECT", p.peek_token());
    }
    if !column_names.is_empty() {
        return p.expected("a column type", p.peek_token());
    }
    Ok(Statement::CreateTable(Box::new(table)))
}

/// True when a query begins here: SELECT, WITH, or a parenthesis opening one.
fn query_starts(p: &Parser) -> bool {
    let mut n = 0;
    while matches!(p.peek_nth_token(n).token, Token::LParen) {
        n += 1;
    }
    peek_nth_word(p, n, "SELECT") || peek_nth_word(p, n, "WITH")
}

/// True when the element list holds a bare name (`(a, b)` of Doris's CTAS), not a definition.
fn is_bare_name(p: &Parser) -> bool {
    matches!(p.peek_token().token, Token::Word(_))
        && matches!(p.peek_nth_token(1).token, Token::Comma | Token::RParen)
}

/// The column definitions, keys and indexes after the opening parenthesis, through the closing one.
fn parse_table_elements(p: &mut Parser, table: &mut CreateTable) -> Result<(), ParserError> {
    loop {
        parse_table_element(p, table)?;
        if p.consume_token(&Token::Comma) {
            // Doris accepts a comma before the closing parenthesis.
            if p.consume_token(&Token::RParen) {
                break;
            }
            continue;
        }
        p.expect_token(&Token::RParen)?;
        break;
    }
    Ok(())
}

/// ENGINE, the key clause, COMMENT, PARTITION BY, DISTRIBUTED BY, PROPERTIES and the MySQL
/// options Basalt ignores ([`crate::table_options`]), in any order, MySQL's commas between them.
fn parse_table_options(p: &mut Parser, table: &mut CreateTable) -> Result<(), ParserError> {
    let mut after_comma = false;
    loop {
        if eat_word(p, "ENGINE") {
            let _ = p.consume_token(&Token::Eq);
            table.engine = Some(ident(p)?);
        } else if let Some(model) = parse_keys_model(p) {
            expect_word(p, "KEY")?;
            table.keys = Some((model, column_list(p)?));
        } else if eat_word(p, "COMMENT") {
            let _ = p.consume_token(&Token::Eq);
            table.comment = Some(string_literal(p)?);
        } else if eat_words(p, &["PARTITION", "BY"]) {
            table.partition = Some(parse_partition_clause(p, false)?);
        } else if eat_words(p, &["AUTO", "PARTITION", "BY"]) {
            table.partition = Some(parse_partition_clause(p, true)?);
        } else if eat_words(p, &["DISTRIBUTED", "BY"]) {
            table.distribution = Some(parse_distribution(p)?);
        } else if eat_word(p, "PROPERTIES") {
            table.properties = parse_properties(p)?;
        } else if !table_options::eat_ignored_option(p)? {
            if after_comma {
                return p.expected("a table option", p.peek_token());
            }
            break;
        }
        after_comma = table_options::eat_option_comma(p);
    }
    Ok(())
}

fn parse_keys_model(p: &mut Parser) -> Option<KeysModel> {
    let next_is_key = |p: &Parser| matches!(&p.peek_nth_token(1).token, sqlparser::tokenizer::Token::Word(w) if w.value.eq_ignore_ascii_case("KEY"));
    let model = if peek_word(p, "DUPLICATE") {
        KeysModel::Duplicate
    } else if peek_word(p, "AGGREGATE") {
        KeysModel::Aggregate
    } else if peek_word(p, "UNIQUE") {
        KeysModel::Unique
    } else {
        return None;
    };
    if !next_is_key(p) {
        return None;
    }
    p.next_token();
    Some(model)
}

/// A column definition, `[CONSTRAINT [name]] PRIMARY KEY (..)`, or an index, unique key,
/// foreign key or check constraint (see [`crate::table_constraints`]).
fn parse_table_element(p: &mut Parser, table: &mut CreateTable) -> Result<(), ParserError> {
    let start = p.peek_token();
    let constraint = table_constraints::eat_constraint_name(p)?;
    if eat_words(p, &["PRIMARY", "KEY"]) {
        if table.primary_key.is_some() {
            return p.expected(
                "a single PRIMARY KEY (multiple primary keys defined)",
                start,
            );
        }
        // `[USING type] (key_part, ..) [USING type]`: the index type and prefix lengths
        // change nothing in Basalt's key (the whole value is the key).
        let index = table_constraints::parse_index_body(p, IndexKind::Unique)?;
        table.primary_key = Some(index.columns.into_iter().map(|c| c.name).collect());
        return Ok(());
    }
    match table_constraints::parse_table_constraint(p, constraint)? {
        Some(TableConstraint::Index(index)) => {
            table.indexes.push(index);
            return Ok(());
        }
        Some(TableConstraint::ForeignKey(fk)) => {
            if fk.referenced.is_empty() {
                return p.expected("the referenced columns after REFERENCES table", start);
            }
            table.foreign_keys.push(fk);
            return Ok(());
        }
        Some(TableConstraint::Check) => return Ok(()),
        None => {}
    }
    let (col, primary_key) = parse_column_def(p)?;
    // In MySQL's column grammar a lone `KEY` is `PRIMARY KEY`.
    if primary_key || col.key {
        if table.primary_key.is_some() {
            return p.expected(
                "a single PRIMARY KEY (multiple primary keys defined)",
                start,
            );
        }
        table.primary_key = Some(vec![col.name.clone()]);
    }
    if col.unique {
        table.indexes.push(unique_column_index(&col.name));
    }
    table.columns.push(col);
    Ok(())
}

/// The index a column's `UNIQUE` attribute declares (named after the column, as MySQL does).
pub fn unique_column_index(column: &str) -> IndexDef {
    IndexDef {
        name: None,
        kind: IndexKind::Unique,
        columns: vec![IndexColumn {
            name: column.to_string(),
            length: None,
        }],
        comment: None,
        properties: Vec::new(),
    }
}

/// A column and its attributes in any order; `true` with it when one of them is `PRIMARY KEY`.
pub(crate) fn parse_column_def(p: &mut Parser) -> Result<(ColumnDef, bool), ParserError> {
    let name = ident(p)?;
    // MySQL's SERIAL: BIGINT [UNSIGNED] NOT NULL AUTO_INCREMENT UNIQUE.
    let serial = eat_word(p, "SERIAL");
    let (ty, allowed) = match (serial, parse_allowed_values(p)?) {
        (true, _) => (SqlType::BigIntUnsigned, None),
        (false, Some((ty, allowed))) => (ty, Some(allowed)),
        (false, None) => (parse_type(p)?, None),
    };
    let mut col = ColumnDef {
        name,
        ty,
        agg: None,
        nullable: None,
        default: None,
        comment: None,
        auto_increment: false,
        key: false,
        unique: false,
        generated: None,
        allowed,
        on_update: false,
    };
    let mut primary_key = false;
    let make_serial = |col: &mut ColumnDef| {
        col.nullable = Some(false);
        col.auto_increment = true;
        col.unique = true;
    };
    if serial {
        make_serial(&mut col);
    }
    loop {
        if let Some(agg) = parse_agg_kind(p) {
            col.agg = Some(agg);
        } else if eat_words(p, &["NOT", "NULL"]) {
            col.nullable = Some(false);
        } else if eat_word(p, "NULL") {
            col.nullable = Some(true);
        } else if eat_words(p, &["SERIAL", "DEFAULT", "VALUE"]) {
            // An integer column's SERIAL DEFAULT VALUE: NOT NULL AUTO_INCREMENT UNIQUE.
            make_serial(&mut col);
        } else if eat_word(p, "AUTO_INCREMENT") {
            col.auto_increment = true;
            // Doris: AUTO_INCREMENT(start)
            if p.consume_token(&Token::LParen) {
                uint_literal(p)?;
                p.expect_token(&Token::RParen)?;
            }
        } else if eat_word(p, "DEFAULT") {
            col.default = Some(parse_default(p)?);
        } else if eat_words(p, &["ON", "UPDATE"]) {
            column_forms::current_timestamp(p)?;
            col.on_update = true;
        } else if eat_word(p, "COMMENT") {
            col.comment = Some(string_literal(p)?);
        } else if eat_word(p, "UNSIGNED") || eat_word(p, "ZEROFILL") {
            // ZEROFILL implies UNSIGNED; its zero padding (deprecated in MySQL 8) is not shown.
            col.ty = col
                .ty
                .clone()
                .unsigned()
                .map_err(|e| ParserError::ParserError(format!("column '{}': {e}", col.name)))?;
        } else if eat_word(p, "SIGNED") || eat_word(p, "BINARY") {
            // SIGNED is the default; BINARY is the binary collation, which is how Basalt
            // compares strings anyway.
        } else if eat_words(p, &["PRIMARY", "KEY"]) {
            primary_key = true;
        } else if eat_word(p, "KEY") {
            col.key = true;
        } else if eat_word(p, "COLLATE")
            || eat_words(p, &["CHARACTER", "SET"])
            || eat_word(p, "CHARSET")
        {
            // MySQL's per-column character set and collation: Basalt stores UTF-8 and
            // compares binary, as for the table's options.
            ident(p)?;
        } else if let Some(generated) = parse_generated(p)? {
            col.generated = Some(generated);
        } else if let Some(unique) = table_constraints::parse_column_constraint(p)? {
            col.unique |= unique;
        } else {
            break;
        }
    }
    Ok((col, primary_key))
}

/// `ENUM('a', ..)` or `SET('a', ..)` as a column type: the VARCHAR that holds every value
/// the column may take (the longest member, or every member of a SET with its commas) and the
/// members. `None`, nothing eaten, for any other type.
fn parse_allowed_values(p: &mut Parser) -> Result<Option<(SqlType, AllowedValues)>, ParserError> {
    let set = peek_word(p, "SET");
    if !(set || peek_word(p, "ENUM")) || !matches!(p.peek_nth_token(1).token, Token::LParen) {
        return Ok(None);
    }
    p.next_token();
    p.next_token();
    let values = p.parse_comma_separated(string_literal)?;
    p.expect_token(&Token::RParen)?;
    let lengths = values.iter().map(|v| v.chars().count());
    let width = match set {
        true => lengths.sum::<usize>() + values.len().saturating_sub(1),
        false => lengths.max().unwrap_or(0),
    };
    let width = u32::try_from(width.max(1))
        .map_err(|_| ParserError::ParserError("ENUM or SET members too long".into()))?;
    Ok(Some((
        SqlType::Varchar(width),
        AllowedValues { set, values },
    )))
}

/// `[GENERATED ALWAYS] AS (expr) [VIRTUAL | STORED | PERSISTENT]`; `None`, nothing eaten,
/// when no generated column starts here.
fn parse_generated(p: &mut Parser) -> Result<Option<GeneratedColumn>, ParserError> {
    if eat_word(p, "GENERATED") {
        expect_word(p, "ALWAYS")?;
        expect_word(p, "AS")?;
    } else if peek_word(p, "AS") && matches!(p.peek_nth_token(1).token, Token::LParen) {
        p.next_token();
    } else {
        return Ok(None);
    }
    p.expect_token(&Token::LParen)?;
    let expr = p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    let stored = eat_word(p, "STORED") || eat_word(p, "PERSISTENT");
    if !stored {
        eat_word(p, "VIRTUAL");
    }
    Ok(Some(GeneratedColumn {
        // Read back by DataFusion's parser, which groups operators otherwise.
        expr: crate::parenthesized(&expr),
        stored,
    }))
}

fn parse_agg_kind(p: &mut Parser) -> Option<AggKind> {
    let kinds = [
        ("SUM", AggKind::Sum),
        ("MIN", AggKind::Min),
        ("MAX", AggKind::Max),
        ("REPLACE_IF_NOT_NULL", AggKind::ReplaceIfNotNull),
        ("REPLACE", AggKind::Replace),
        ("BITMAP_UNION", AggKind::BitmapUnion),
        ("HLL_UNION", AggKind::HllUnion),
        ("QUANTILE_UNION", AggKind::QuantileUnion),
    ];
    for (word, kind) in kinds {
        if eat_word(p, word) {
            return Some(kind);
        }
    }
    None
}

pub(crate) fn parse_default(p: &mut Parser) -> Result<DefaultValue, ParserError> {
    if matches!(p.peek_token().token, Token::LParen) {
        return column_forms::parenthesized_default(p);
    }
    if eat_word(p, "NULL") {
        return Ok(DefaultValue::Null);
    }
    if column_forms::eat_current_timestamp(p)? {
        return Ok(DefaultValue::CurrentTimestamp);
    }
    match literal(p)? {
        PartitionLiteral::Value(v) => Ok(DefaultValue::Literal(v)),
        PartitionLiteral::MaxValue => p.expected("a default value", p.peek_token()),
    }
}

/// A column type: `NAME [(n [, m])]`, `DOUBLE PRECISION`, or a nested
/// `ARRAY<T>` / `MAP<K, V>` / `STRUCT<name:T [COMMENT '..'], ...>`.
fn parse_type(p: &mut Parser) -> Result<SqlType, ParserError> {
    let mut closers = PendingClosers::default();
    let ty = parse_type_in(p, &mut closers)?;
    if closers.pending > 0 {
        return Err(ParserError::ParserError(
            "unbalanced '>' in a column type".into(),
        ));
    }
    Ok(ty)
}

/// How deep ARRAY/MAP/STRUCT types may nest (the parser recurses per level).
const MAX_TYPE_DEPTH: u32 = 32;

/// The `>` still owed by a `>>` token that closed two nested types at once, and how deep the
/// type being read is.
#[derive(Default)]
struct PendingClosers {
    pending: u32,
    depth: u32,
}

impl PendingClosers {
    fn expect_close(&mut self, p: &mut Parser) -> Result<(), ParserError> {
        if self.pending > 0 {
            self.pending -= 1;
            return Ok(());
        }
        let t = p.next_token();
        match t.token {
            Token::Gt => Ok(()),
            Token::ShiftRight => {
                self.pending += 1;
                Ok(())
            }
            _ => p.expected("'>'", t),
        }
    }

    /// True when the next thing is a `>` (owed, or a token).
    fn at_close(&self, p: &Parser) -> bool {
        self.pending > 0 || matches!(p.peek_token().token, Token::Gt | Token::ShiftRight)
    }
}

/// `ARRAY<T>`, `MAP<K, V>` or `STRUCT<name:T [COMMENT '..'], ..>` after its keyword `kind`.
fn parse_nested_type(
    p: &mut Parser,
    closers: &mut PendingClosers,
    kind: &str,
    start: Location,
) -> Result<SqlType, ParserError> {
    match kind {
        "ARRAY" => {
            p.expect_token(&Token::Lt)?;
            let element = parse_type_in(p, closers)?;
            closers.expect_close(p)?;
            Ok(SqlType::Array(Box::new(element)))
        }
        "MAP" => {
            p.expect_token(&Token::Lt)?;
            let key = parse_type_in(p, closers)?;
            p.expect_token(&Token::Comma)?;
            let value = parse_type_in(p, closers)?;
            closers.expect_close(p)?;
            if !key.can_be_key() {
                return Err(ParserError::ParserError(format!(
                    "a MAP key cannot be {key}{}",
                    start
                )));
            }
            Ok(SqlType::Map(Box::new(key), Box::new(value)))
        }
        "STRUCT" => {
            p.expect_token(&Token::Lt)?;
            let mut fields: Vec<StructField> = Vec::new();
            loop {
                let field_name = ident(p)?;
                p.expect_token(&Token::Colon)?;
                let ty = parse_type_in(p, closers)?;
                if eat_word(p, "COMMENT") {
                    string_literal(p)?;
                }
                if fields
                    .iter()
                    .any(|f| f.name.eq_ignore_ascii_case(&field_name))
                {
                    return Err(ParserError::ParserError(format!(
                        "duplicate STRUCT field '{field_name}'{}",
                        start
                    )));
                }
                fields.push(StructField {
                    name: field_name,
                    ty,
                });
                if closers.at_close(p) || !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            closers.expect_close(p)?;
            Ok(SqlType::Struct(fields))
        }
        _ => Err(ParserError::ParserError(format!(
            "{kind} is not a nested type"
        ))),
    }
}

fn parse_type_in(p: &mut Parser, closers: &mut PendingClosers) -> Result<SqlType, ParserError> {
    let t = p.next_token();
    let name = match &t.token {
        Token::Word(w) => w.value.clone(),
        _ => return p.expected("a column type", t),
    };
    let upper = name.to_ascii_uppercase();
    // MySQL's national character types are its CHAR and VARCHAR in UTF-8, as Basalt's are.
    if upper == "NATIONAL" {
        return parse_type_in(p, closers);
    }
    let name = match upper.as_str() {
        "NCHAR" | "CHARACTER" => "CHAR".to_string(),
        "NVARCHAR" => "VARCHAR".to_string(),
        _ => column_forms::integer_synonym(&upper).map_or(name, str::to_string),
    };
    let upper = name.to_ascii_uppercase();
    if matches!(upper.as_str(), "ARRAY" | "MAP" | "STRUCT") {
        closers.depth += 1;
        if closers.depth > MAX_TYPE_DEPTH {
            return Err(ParserError::ParserError(format!(
                "column type nested more than {MAX_TYPE_DEPTH} levels deep{}",
                t.span.start
            )));
        }
        let nested = parse_nested_type(p, closers, &upper, t.span.start);
        closers.depth -= 1;
        return nested;
    }
    let mut args = Vec::new();
    if p.consume_token(&Token::LParen) {
        args = p.parse_comma_separated(uint_literal)?;
        p.expect_token(&Token::RParen)?;
    }
    // MySQL display widths such as INT(11) carry no meaning.
    if matches!(
        upper.as_str(),
        "TINYINT" | "SMALLINT" | "INT" | "INTEGER" | "BIGINT" | "LARGEINT"
    ) {
        args.clear();
    }
    if upper == "DOUBLE" {
        eat_word(p, "PRECISION");
    }
    // MySQL's LONG [VARCHAR] is MEDIUMTEXT, LONG VARBINARY (or LONG BYTE) MEDIUMBLOB.
    if upper == "LONG" {
        if eat_word(p, "VARBINARY") || eat_word(p, "BYTE") {
            return Ok(SqlType::Blob);
        }
        eat_word(p, "VARCHAR");
        return Ok(SqlType::String);
    }
    match SqlType::from_name(&name, &args) {
        Ok(ty) => Ok(ty),
        Err(msg) => Err(ParserError::ParserError(format!("{msg}{}", t.span.start))),
    }
}

fn column_list(p: &mut Parser) -> Result<Vec<String>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let cols = p.parse_comma_separated(ident)?;
    p.expect_token(&Token::RParen)?;
    Ok(cols)
}

/// `RANGE|LIST (cols) (partitions)` after `[AUTO] PARTITION BY`; an AUTO RANGE names its
/// column inside `date_trunc(col, 'unit')`.
fn parse_partition_clause(p: &mut Parser, auto: bool) -> Result<PartitionClause, ParserError> {
    let kind = if eat_word(p, "RANGE") {
        PartitionKind::Range
    } else if eat_word(p, "LIST") {
        PartitionKind::List
    } else {
        return p.expected("RANGE or LIST", p.peek_token());
    };
    let mut date_trunc_unit = None;
    let columns = if auto && kind == PartitionKind::Range {
        // Doris 2.1.0 wrote the call without the outer parentheses.
        let outer = p.consume_token(&Token::LParen);
        expect_word(p, "DATE_TRUNC")?;
        p.expect_token(&Token::LParen)?;
        let column = ident(p)?;
        p.expect_token(&Token::Comma)?;
        date_trunc_unit = Some(string_literal(p)?.to_ascii_lowercase());
        p.expect_token(&Token::RParen)?;
        if outer {
            p.expect_token(&Token::RParen)?;
        }
        vec![column]
    } else {
        column_list(p)?
    };
    p.expect_token(&Token::LParen)?;
    let mut partitions = Vec::new();
    if !p.consume_token(&Token::RParen) {
        partitions = p.parse_comma_separated(parse_partition_def)?;
        p.expect_token(&Token::RParen)?;
    }
    for def in &partitions {
        let ok = matches!(
            (kind, def),
            (PartitionKind::Range, PartitionDef::Range { .. })
                | (PartitionKind::List, PartitionDef::List { .. })
        );
        if !ok {
            return Err(ParserError::ParserError(format!(
                "partition {} does not match PARTITION BY {:?}",
                def.name(),
                kind
            )));
        }
    }
    Ok(PartitionClause {
        kind,
        columns,
        partitions,
        auto,
        date_trunc_unit,
    })
}

/// `PARTITION name VALUES LESS THAN (..) | VALUES [(..), (..)) | VALUES IN (..)`.
pub fn parse_partition_def(p: &mut Parser) -> Result<PartitionDef, ParserError> {
    expect_word(p, "PARTITION")?;
    eat_words(p, &["IF", "NOT", "EXISTS"]);
    let name = ident(p)?;
    expect_word(p, "VALUES")?;
    if eat_words(p, &["LESS", "THAN"]) {
        let upper = if eat_word(p, "MAXVALUE") {
            vec![PartitionLiteral::MaxValue]
        } else {
            literal_tuple(p)?
        };
        return Ok(PartitionDef::Range {
            name,
            bound: RangeBound::LessThan(upper),
        });
    }
    if p.consume_token(&Token::LBracket) {
        let lower = literal_tuple(p)?;
        p.expect_token(&Token::Comma)?;
        let upper = literal_tuple(p)?;
        p.expect_token(&Token::RParen)?;
        return Ok(PartitionDef::Range {
            name,
            bound: RangeBound::Fixed { lower, upper },
        });
    }
    expect_word(p, "IN")?;
    p.expect_token(&Token::LParen)?;
    let values = p.parse_comma_separated(|p| {
        if matches!(p.peek_token().token, Token::LParen) {
            literal_tuple(p)
        } else {
            Ok(vec![literal(p)?])
        }
    })?;
    p.expect_token(&Token::RParen)?;
    Ok(PartitionDef::List { name, values })
}

fn literal_tuple(p: &mut Parser) -> Result<Vec<PartitionLiteral>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let values = p.parse_comma_separated(literal)?;
    p.expect_token(&Token::RParen)?;
    Ok(values)
}

/// A string, a (possibly negative) number, or MAXVALUE.
pub(crate) fn literal(p: &mut Parser) -> Result<PartitionLiteral, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            Ok(PartitionLiteral::Value(s))
        }
        Token::Number(n, _) => Ok(PartitionLiteral::Value(n)),
        Token::Minus => {
            let t = p.next_token();
            match t.token {
                Token::Number(n, _) => Ok(PartitionLiteral::Value(format!("-{n}"))),
                _ => p.expected("a number", t),
            }
        }
        Token::Word(w) if w.value.eq_ignore_ascii_case("MAXVALUE") => {
            Ok(PartitionLiteral::MaxValue)
        }
        Token::Word(w)
            if w.value.eq_ignore_ascii_case("TRUE") || w.value.eq_ignore_ascii_case("FALSE") =>
        {
            Ok(PartitionLiteral::Value(w.value.to_ascii_lowercase()))
        }
        _ => p.expected("a literal value", t),
    }
}

fn parse_distribution(p: &mut Parser) -> Result<Distribution, ParserError> {
    let columns = if eat_word(p, "HASH") {
        column_list(p)?
    } else if eat_word(p, "RANDOM") {
        Vec::new()
    } else {
        return p.expected("HASH or RANDOM", p.peek_token());
    };
    let mut buckets = None;
    if eat_word(p, "BUCKETS") && !eat_word(p, "AUTO") {
        let t = p.peek_token();
        let n = uint_literal(p)?;
        if n == 0 || n > 65536 {
            return p.expected("BUCKETS between 1 and 65536", t);
        }
        buckets = Some(n as u32);
    }
    Ok(Distribution { columns, buckets })
}

pub(crate) fn parse_properties(p: &mut Parser) -> Result<Vec<(String, String)>, ParserError> {
    p.expect_token(&Token::LParen)?;
    if p.consume_token(&Token::RParen) {
        return Ok(Vec::new());
    }
    let props = p.parse_comma_separated(|p| {
        let key = string_literal(p)?;
        p.expect_token(&Token::Eq)?;
        let value = string_literal(p)?;
        Ok((key, value))
    })?;
    p.expect_token(&Token::RParen)?;
    Ok(props)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_one, Statement};

    fn create(sql: &str) -> CreateTable {
        match parse_one(sql).unwrap() {
            Statement::CreateTable(t) => *t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn doris_range_table() {
        let t = create(
            r#"CREATE TABLE IF NOT EXISTS demo.orders (
                order_date DATE NOT NULL COMMENT "day",
                id BIGINT NOT NULL,
                amount DECIMAL(15, 2) SUM DEFAULT "0",
                note VARCHAR(32) REPLACE_IF_NOT_NULL NULL
            ) ENGINE=OLAP
            AGGREGATE KEY(order_date, id)
            COMMENT 'orders'
            PARTITION BY RANGE(order_date) (
                PARTITION p1 VALUES LESS THAN ("2024-02-01"),
                PARTITION p2 VALUES [("2024-02-01"), ("2024-03-01")),
                PARTITION pmax VALUES LESS THAN MAXVALUE
            )
            DISTRIBUTED BY HASH(id) BUCKETS 4
            PROPERTIES ("replication_num" = "1")"#,
        );
        assert!(t.if_not_exists);
        assert_eq!(t.name.database.as_deref(), Some("demo"));
        assert_eq!(t.columns.len(), 4);
        assert_eq!(t.columns[2].agg, Some(AggKind::Sum));
        assert_eq!(
            t.columns[2].ty,
            SqlType::Decimal {
                precision: 15,
                scale: 2
            }
        );
        assert_eq!(t.columns[3].agg, Some(AggKind::ReplaceIfNotNull));
        assert_eq!(t.columns[0].comment.as_deref(), Some("day"));
        assert_eq!(
            t.keys,
            Some((KeysModel::Aggregate, vec!["order_date".into(), "id".into()]))
        );
        let part = t.partition.unwrap();
        assert_eq!(part.partitions.len(), 3);
        assert_eq!(
            part.partitions[1],
            PartitionDef::Range {
                name: "p2".into(),
                bound: RangeBound::Fixed {
                    lower: vec![PartitionLiteral::Value("2024-02-01".into())],
                    upper: vec![PartitionLiteral::Value("2024-03-01".into())],
                }
            }
        );
        assert_eq!(
            t.distribution,
            Some(Distribution {
                columns: vec!["id".into()],
                buckets: Some(4)
            })
        );
        assert_eq!(
            t.properties,
            vec![("replication_num".to_string(), "1".to_string())]
        );
    }

    #[test]
    fn list_and_unique() {
        let t = create(
            "CREATE TABLE t (k INT, city VARCHAR(10), v STRING) UNIQUE KEY(k, city) \
             PARTITION BY LIST(city) (PARTITION p_bj VALUES IN ('beijing', 'tianjin'), PARTITION p_sh VALUES IN (('shanghai'))) \
             DISTRIBUTED BY HASH(k) BUCKETS AUTO",
        );
        assert_eq!(t.keys.as_ref().unwrap().0, KeysModel::Unique);
        let part = t.partition.unwrap();
        assert_eq!(part.kind, PartitionKind::List);
        match &part.partitions[0] {
            PartitionDef::List { values, .. } => assert_eq!(values.len(), 2),
            other => panic!("{other:?}"),
        }
        assert_eq!(t.distribution.unwrap().buckets, None);
    }

    #[test]
    fn mysql_style_table() {
        let t = create(
            "CREATE TABLE sbtest1 (id INT(11) NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT '0', \
             c CHAR(120) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
        );
        assert_eq!(t.primary_key, Some(vec!["id".to_string()]));
        assert!(t.columns[0].auto_increment);
        assert_eq!(t.engine.as_deref(), Some("InnoDB"));
        assert_eq!(
            t.columns[2].default,
            Some(DefaultValue::Literal(String::new()))
        );
    }

    #[test]
    fn inline_primary_key() {
        let t = create(
            "CREATE TABLE t (id INT PRIMARY KEY NOT NULL AUTO_INCREMENT COMMENT 'k', v VARCHAR(20))",
        );
        assert_eq!(t.primary_key, Some(vec!["id".to_string()]));
        assert_eq!(t.columns[0].nullable, Some(false));
        assert!(t.columns[0].auto_increment);
        assert_eq!(t.columns[0].comment.as_deref(), Some("k"));
        let e =
            parse_one("CREATE TABLE t (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))").unwrap_err();
        assert!(e.to_string().contains("multiple primary keys"), "{e}");
        let e = parse_one("CREATE TABLE t (a INT PRIMARY KEY, b INT PRIMARY KEY)").unwrap_err();
        assert_eq!(e.mysql_code(), 1064);
        assert!(e.to_string().contains("multiple primary keys"), "{e}");
    }

    #[test]
    fn mysql_constraints_are_accepted() {
        let t = create(
            "CREATE TABLE users (id INTEGER NOT NULL, name VARCHAR(20) COLLATE utf8mb4_bin UNIQUE, \
             parent_id INTEGER REFERENCES users (id) ON DELETE CASCADE, \
             test2 INTEGER CONSTRAINT c2 CHECK (test2 > 0), \
             CONSTRAINT pk_users PRIMARY KEY (id), \
             CONSTRAINT uq_name UNIQUE (name(10) DESC), \
             CONSTRAINT fk_parent FOREIGN KEY(parent_id) REFERENCES users (id) ON UPDATE SET NULL ON DELETE NO ACTION, \
             FOREIGN KEY fk2 (parent_id) REFERENCES other.users (id) MATCH FULL, \
             CONSTRAINT zz_test2_gt_zero CHECK (test2 > 0), CHECK (test2 <= 1000) NOT ENFORCED, \
             FULLTEXT INDEX ft (name), INDEX USING BTREE (parent_id)) ENGINE=InnoDB",
        );
        assert_eq!(t.primary_key, Some(vec!["id".to_string()]));
        assert_eq!(t.columns.len(), 4);
        // Indexes and table-level foreign keys are kept; CHECK and column REFERENCES are not.
        let indexes: Vec<(Option<&str>, IndexKind, usize)> = t
            .indexes
            .iter()
            .map(|i| (i.name.as_deref(), i.kind, i.columns.len()))
            .collect();
        assert_eq!(
            indexes,
            vec![
                (None, IndexKind::Unique, 1),
                (Some("uq_name"), IndexKind::Unique, 1),
                (Some("ft"), IndexKind::Fulltext, 1),
                (None, IndexKind::Plain, 1),
            ]
        );
        assert_eq!(t.indexes[1].columns[0].length, Some(10));
        let fks: Vec<(Option<&str>, &str, Option<ReferentialAction>)> = t
            .foreign_keys
            .iter()
            .map(|f| (f.name.as_deref(), f.table.table.as_str(), f.on_delete))
            .collect();
        assert_eq!(
            fks,
            vec![
                (
                    Some("fk_parent"),
                    "users",
                    Some(ReferentialAction::NoAction)
                ),
                (Some("fk2"), "users", None),
            ]
        );
        assert_eq!(t.foreign_keys[1].table.database.as_deref(), Some("other"));
        assert_eq!(
            t.foreign_keys[0].on_update,
            Some(ReferentialAction::SetNull)
        );
        let t = create(
            "CREATE TABLE d (k INT, s STRING, INDEX idx_s (s) USING INVERTED PROPERTIES (\"parser\" = \"english\") COMMENT 'text', \
             INDEX b (k) USING BITMAP) DUPLICATE KEY(k)",
        );
        assert_eq!(t.indexes[0].kind, IndexKind::Inverted);
        assert_eq!(t.indexes[0].comment.as_deref(), Some("text"));
        assert_eq!(t.indexes[0].properties.len(), 1);
        assert_eq!(t.indexes[1].kind, IndexKind::Bitmap);
        let t = create(
            "CREATE TABLE n (a NATIONAL VARCHAR(10), b NATIONAL CHAR(3), c NCHAR(2), d NVARCHAR(5), e CHARACTER(4))",
        );
        let types: Vec<SqlType> = t.columns.iter().map(|c| c.ty.clone()).collect();
        assert_eq!(
            types,
            vec![
                SqlType::Varchar(10),
                SqlType::Char(3),
                SqlType::Char(2),
                SqlType::Varchar(5),
                SqlType::Char(4)
            ]
        );
        let e = parse_one("CREATE TABLE t (a INT, CONSTRAINT c INDEX (a))").unwrap_err();
        assert!(
            e.to_string()
                .contains("PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK"),
            "{e}"
        );
        let e = parse_one("CREATE TABLE t (a INT REFERENCES u (a) ON DELETE EXPLODE)").unwrap_err();
        assert!(e.to_string().contains("CASCADE"), "{e}");
    }

    #[test]
    fn enum_set_and_generated_columns() {
        let t = create(
            "CREATE TABLE e (id INT, s ENUM('a', 'bcd', 'it''s') NOT NULL DEFAULT 'a', \
             m SET('x', 'y'), g INT GENERATED ALWAYS AS (id * 2) STORED NOT NULL, \
             v BIGINT AS (id + 1), w INT AS (id) VIRTUAL COMMENT 'c')",
        );
        assert_eq!(t.columns[1].ty, SqlType::Varchar(4));
        let allowed = t.columns[1].allowed.as_ref().unwrap();
        assert!(!allowed.set);
        assert_eq!(allowed.values, vec!["a", "bcd", "it's"]);
        assert_eq!(t.columns[2].ty, SqlType::Varchar(3));
        assert!(t.columns[2].allowed.as_ref().unwrap().set);
        let g = t.columns[3].generated.as_ref().unwrap();
        assert_eq!((g.expr.as_str(), g.stored), ("id * 2", true));
        assert_eq!(t.columns[3].nullable, Some(false));
        assert!(!t.columns[4].generated.as_ref().unwrap().stored);
        assert_eq!(t.columns[5].comment.as_deref(), Some("c"));
        assert!(parse_one("CREATE TABLE e (s ENUM())").is_err());
    }

    fn create_as(sql: &str) -> CreateTableAs {
        match parse_one(sql).unwrap() {
            Statement::CreateTableAs(t) => *t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn create_table_as_select_forms() {
        let t = create_as("CREATE TABLE c1 AS SELECT k, s FROM t");
        assert_eq!(t.table.name.table, "c1");
        assert!(t.table.columns.is_empty() && t.column_names.is_empty());
        assert_eq!(t.query.to_string(), "SELECT k, s FROM t");

        let t = create_as(
            "CREATE TABLE IF NOT EXISTS d.c2 (a, `b`) ENGINE=OLAP UNIQUE KEY(a) COMMENT 'x' \
             DISTRIBUTED BY HASH(a) BUCKETS 2 PROPERTIES ('replication_num' = '1') \
             AS WITH w AS (SELECT 1 AS k) SELECT k, k FROM w UNION ALL SELECT 2, 3",
        );
        assert!(t.table.if_not_exists);
        assert_eq!(t.table.name.database.as_deref(), Some("d"));
        assert_eq!(t.column_names, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(t.table.keys, Some((KeysModel::Unique, vec!["a".into()])));
        assert_eq!(t.table.distribution.as_ref().unwrap().buckets, Some(2));
        assert!(t.query.with.is_some());

        // Parenthesized, and MySQL's forms: without AS, with column definitions.
        let t = create_as("CREATE TABLE c3 AS (SELECT 1 AS k)");
        assert_eq!(t.query.to_string(), "(SELECT 1 AS k)");
        let t = create_as("CREATE TABLE c4 (SELECT 1 AS k)");
        assert!(t.table.columns.is_empty());
        let t = create_as("CREATE TABLE c5 SELECT 1 AS k");
        assert!(t.table.columns.is_empty());
        let t = create_as(
            "CREATE TABLE c6 (k INT NOT NULL, v VARCHAR(10)) ENGINE=InnoDB SELECT 1 AS k",
        );
        assert_eq!(t.table.columns.len(), 2);
        assert_eq!(t.table.columns[1].ty, SqlType::Varchar(10));
        assert_eq!(t.table.engine.as_deref(), Some("InnoDB"));
    }

    #[test]
    fn create_table_needs_columns_or_a_query() {
        for sql in [
            "CREATE TABLE t",
            "CREATE TABLE t (a, b)",
            "CREATE TABLE t (a, b INT) AS SELECT 1, 2",
            "CREATE TABLE t AS SELECT 1 garbage garbage",
        ] {
            let e = parse_one(sql).unwrap_err();
            assert_eq!(e.mysql_code(), 1064, "{sql}: {e}");
        }
    }

    #[test]
    fn bad_ddl_is_a_positioned_syntax_error() {
        let e = parse_one("CREATE TABLE t (a INT, b FANCY) DUPLICATE KEY(a)").unwrap_err();
        assert_eq!(e.mysql_code(), 1064);
        assert!(e.to_string().contains("unknown column type 'FANCY'"), "{e}");
        assert!(e.to_string().contains("near 'FANCY) DUPLICATE"), "{e}");
        let e = parse_one("CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 0").unwrap_err();
        assert_eq!(e.mysql_code(), 1064);
    }
}
