//! MySQL's index and constraint grammar in `CREATE TABLE` and `ALTER TABLE`: `INDEX`/`KEY`,
//! `UNIQUE`, `FULLTEXT`, Doris's `INDEX .. USING INVERTED | BITMAP | NGRAM_BF`, `CONSTRAINT
//! name ..`, `FOREIGN KEY .. REFERENCES ..`, `CHECK (..)`, and the column-level `REFERENCES`,
//! `CHECK`, `UNIQUE`. Indexes and table-level foreign keys are parsed into definitions the
//! table keeps (informational, as Doris's constraints are); CHECK is accepted and dropped (as
//! MySQL 5.7 does), and so is a column-level `REFERENCES` (which MySQL parses and ignores).

use crate::statement::{
    ForeignKeyDef, IndexColumn, IndexDef, IndexKind, ReferentialAction, TableName,
};
use crate::words::{eat_word, eat_words, ident, peek_word, string_literal};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The constraint after `CONSTRAINT` when it starts here without a name.
fn constraint_kind_starts(p: &Parser) -> bool {
    ["PRIMARY", "UNIQUE", "FOREIGN", "CHECK"]
        .iter()
        .any(|w| peek_word(p, w))
}

/// `CONSTRAINT [name]`: eats it; `None` when absent, `Some(name)` (the name if written) when
/// present. The constraint itself follows.
pub(crate) fn eat_constraint_name(p: &mut Parser) -> Result<Option<Option<String>>, ParserError> {
    if !eat_word(p, "CONSTRAINT") {
        return Ok(None);
    }
    eat_constraint_name_after(p)
}

/// The `[name]` after `CONSTRAINT` (already eaten).
pub(crate) fn eat_constraint_name_after(
    p: &mut Parser,
) -> Result<Option<Option<String>>, ParserError> {
    if constraint_kind_starts(p) {
        return Ok(Some(None));
    }
    Ok(Some(Some(ident(p)?)))
}

/// A table element of this family after an optional `CONSTRAINT [name]` (`constraint`):
/// an index, a unique key, a foreign key or a check.
pub(crate) enum TableConstraint {
    Index(IndexDef),
    ForeignKey(ForeignKeyDef),
    Check,
}

/// The index or constraint starting here (`None`, nothing eaten, when none does).
/// `constraint` is the name after `CONSTRAINT`, if one was written; with it only UNIQUE,
/// FOREIGN KEY and CHECK may follow.
pub(crate) fn parse_table_constraint(
    p: &mut Parser,
    constraint: Option<Option<String>>,
) -> Result<Option<TableConstraint>, ParserError> {
    parse_table_constraint_in(p, constraint, None)
}

/// [`parse_table_constraint`], and with `if_not_exists` (ALTER TABLE's ADD) MariaDB's `IF NOT
/// EXISTS` after an index's keywords, which sets it.
pub(crate) fn parse_table_constraint_in(
    p: &mut Parser,
    constraint: Option<Option<String>>,
    mut if_not_exists: Option<&mut bool>,
) -> Result<Option<TableConstraint>, ParserError> {
    let mut eat_if_not_exists = |p: &mut Parser| {
        if let Some(flag) = if_not_exists.as_deref_mut() {
            *flag |= eat_words(p, &["IF", "NOT", "EXISTS"]);
        }
    };
    let symbol = constraint.clone().flatten();
    if eat_words(p, &["FOREIGN", "KEY"]) {
        eat_if_not_exists(p);
        let index_name = match p.peek_token().token {
            Token::LParen => None,
            _ => Some(ident(p)?),
        };
        let columns = key_parts(p)?.into_iter().map(|c| c.name).collect();
        let mut fk = parse_references(p, columns)?;
        fk.name = symbol.or(index_name);
        return Ok(Some(TableConstraint::ForeignKey(fk)));
    }
    if eat_word(p, "CHECK") {
        skip_check_body(p)?;
        return Ok(Some(TableConstraint::Check));
    }
    if eat_word(p, "UNIQUE") {
        let _ = eat_word(p, "KEY") || eat_word(p, "INDEX");
        eat_if_not_exists(p);
        let mut index = parse_index_body(p, IndexKind::Unique)?;
        if index.name.is_none() {
            index.name = symbol;
        }
        return Ok(Some(TableConstraint::Index(index)));
    }
    if constraint.is_some() {
        return p.expected("PRIMARY KEY, UNIQUE, FOREIGN KEY or CHECK", p.peek_token());
    }
    let kind = if eat_word(p, "INDEX") || eat_word(p, "KEY") {
        IndexKind::Plain
    } else if eat_word(p, "FULLTEXT") || eat_word(p, "SPATIAL") {
        let _ = eat_word(p, "INDEX") || eat_word(p, "KEY");
        IndexKind::Fulltext
    } else {
        return Ok(None);
    };
    eat_if_not_exists(p);
    Ok(Some(TableConstraint::Index(parse_index_body(p, kind)?)))
}

/// An index after its keyword: `[name] [USING type] (key_part, ..) [USING BTREE | HASH |
/// INVERTED | BITMAP | NGRAM_BF] [PROPERTIES (..)] [COMMENT '..']` and MySQL's other index
/// options (accepted). Doris's `USING` types make `kind` theirs.
pub(crate) fn parse_index_body(p: &mut Parser, kind: IndexKind) -> Result<IndexDef, ParserError> {
    let mut index = IndexDef {
        name: None,
        kind,
        columns: Vec::new(),
        comment: None,
        properties: Vec::new(),
    };
    if !matches!(p.peek_token().token, Token::LParen) && !peek_word(p, "USING") {
        index.name = Some(ident(p)?);
    }
    index_using(p, &mut index)?;
    index.columns = key_parts(p)?;
    loop {
        if peek_word(p, "USING") {
            index_using(p, &mut index)?;
        } else if eat_word(p, "PROPERTIES") {
            index.properties = crate::ddl::parse_properties(p)?;
        } else if eat_word(p, "COMMENT") {
            index.comment = Some(string_literal(p)?);
        } else if eat_word(p, "KEY_BLOCK_SIZE") {
            let _ = p.consume_token(&Token::Eq);
            crate::words::uint_literal(p)?;
        } else if eat_words(p, &["WITH", "PARSER"]) {
            ident(p)?;
        } else if eat_word(p, "VISIBLE") || eat_word(p, "INVISIBLE") {
        } else {
            break;
        }
    }
    Ok(index)
}

/// `USING type`: MySQL's BTREE and HASH change nothing; Doris's kinds set the index's kind.
fn index_using(p: &mut Parser, index: &mut IndexDef) -> Result<(), ParserError> {
    if !eat_word(p, "USING") {
        return Ok(());
    }
    let t = p.peek_token();
    let kind = ident(p)?.to_ascii_uppercase();
    index.kind = match kind.as_str() {
        "BTREE" | "HASH" => index.kind,
        "INVERTED" => IndexKind::Inverted,
        "BITMAP" => IndexKind::Bitmap,
        "NGRAM_BF" => IndexKind::NgramBf,
        _ => return p.expected("BTREE, HASH, INVERTED, BITMAP or NGRAM_BF", t),
    };
    Ok(())
}

/// A column attribute of this family: `REFERENCES ..` (dropped), `CHECK (..)`, `UNIQUE
/// [KEY]`, `[CONSTRAINT [name]] CHECK (..)`; `None` (nothing eaten) when none starts here,
/// `Some(true)` for UNIQUE.
pub(crate) fn parse_column_constraint(p: &mut Parser) -> Result<Option<bool>, ParserError> {
    if peek_word(p, "REFERENCES") {
        parse_references(p, Vec::new())?;
        return Ok(Some(false));
    }
    if eat_word(p, "CONSTRAINT") {
        if !peek_word(p, "CHECK") {
            ident(p)?;
        }
        if !eat_word(p, "CHECK") {
            return p.expected("CHECK", p.peek_token());
        }
        skip_check_body(p)?;
        return Ok(Some(false));
    }
    if eat_word(p, "CHECK") {
        skip_check_body(p)?;
        return Ok(Some(false));
    }
    if eat_word(p, "UNIQUE") {
        let _ = eat_word(p, "KEY");
        return Ok(Some(true));
    }
    Ok(None)
}

/// `(key_part, ..)` of an index: names with an optional prefix length and ASC/DESC.
pub(crate) fn key_parts(p: &mut Parser) -> Result<Vec<IndexColumn>, ParserError> {
    p.expect_token(&Token::LParen)?;
    let parts = p.parse_comma_separated(|p| {
        let name = ident(p)?;
        let mut length = None;
        if p.consume_token(&Token::LParen) {
            let t = p.peek_token();
            let n = crate::words::uint_literal(p)?;
            length = Some(u32::try_from(n).or_else(|_| p.expected("a prefix length", t))?);
            p.expect_token(&Token::RParen)?;
        }
        let _ = eat_word(p, "ASC") || eat_word(p, "DESC");
        Ok(IndexColumn { name, length })
    })?;
    p.expect_token(&Token::RParen)?;
    Ok(parts)
}

/// `REFERENCES table [(cols)] [MATCH FULL|PARTIAL|SIMPLE] [ON DELETE action] [ON UPDATE
/// action]`, for the local `columns`.
fn parse_references(p: &mut Parser, columns: Vec<String>) -> Result<ForeignKeyDef, ParserError> {
    if !eat_word(p, "REFERENCES") {
        return p.expected("REFERENCES", p.peek_token());
    }
    let table: TableName = crate::parser::parse_table_name(p)?;
    let mut referenced = Vec::new();
    if matches!(p.peek_token().token, Token::LParen) {
        referenced = key_parts(p)?.into_iter().map(|c| c.name).collect();
    }
    if eat_word(p, "MATCH") {
        ident(p)?;
    }
    let (mut on_delete, mut on_update) = (None, None);
    while eat_word(p, "ON") {
        let delete = if eat_word(p, "DELETE") {
            true
        } else if eat_word(p, "UPDATE") {
            false
        } else {
            return p.expected("DELETE or UPDATE", p.peek_token());
        };
        let action = if eat_word(p, "RESTRICT") {
            ReferentialAction::Restrict
        } else if eat_word(p, "CASCADE") {
            ReferentialAction::Cascade
        } else if eat_words(p, &["SET", "NULL"]) {
            ReferentialAction::SetNull
        } else if eat_words(p, &["SET", "DEFAULT"]) {
            ReferentialAction::SetDefault
        } else if eat_words(p, &["NO", "ACTION"]) {
            ReferentialAction::NoAction
        } else {
            return p.expected(
                "RESTRICT, CASCADE, SET NULL, SET DEFAULT or NO ACTION",
                p.peek_token(),
            );
        };
        match delete {
            true => on_delete = Some(action),
            false => on_update = Some(action),
        }
    }
    Ok(ForeignKeyDef {
        name: None,
        columns,
        table,
        referenced,
        on_delete,
        on_update,
    })
}

/// `(expr) [[NOT] ENFORCED]` after CHECK.
fn skip_check_body(p: &mut Parser) -> Result<(), ParserError> {
    p.expect_token(&Token::LParen)?;
    p.parse_expr()?;
    p.expect_token(&Token::RParen)?;
    let _ = eat_words(p, &["NOT", "ENFORCED"]) || eat_word(p, "ENFORCED");
    Ok(())
}
