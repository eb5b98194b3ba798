//! Grammar of `ALTER TABLE`: MySQL's column changes (`ADD/DROP/MODIFY/CHANGE/RENAME COLUMN`,
//! `RENAME TO`, `COMMENT =`) and Doris's (`ADD COLUMN c INT KEY`, `ADD COLUMN (..)`,
//! `RENAME COLUMN a b`, `RENAME b`, `MODIFY COMMENT`, `MODIFY COLUMN c COMMENT`, `SET (..)`,
//! `ADD/DROP [TEMPORARY] PARTITION`, `REPLACE PARTITION .. WITH TEMPORARY PARTITION ..`), several changes separated by commas; MySQL's `RENAME TABLE a TO b` is
//! `ALTER TABLE a RENAME b`. Also MySQL's `ALTER [COLUMN] c SET | DROP DEFAULT`, `ADD | DROP
//! PRIMARY KEY`, `DROP CONSTRAINT | CHECK`, MariaDB's `IF [NOT] EXISTS` on column and index
//! changes, and the table options of [`crate::alter_options`] (no commas needed between them).

use crate::ddl::{parse_column_def, parse_partition_def, parse_properties};
use crate::parser::parse_table_name;
use crate::statement::*;
use crate::table_constraints::{self, TableConstraint};
use crate::words::{eat_word, eat_words, expect_word, ident, peek_word, string_literal};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

pub(crate) fn parse_alter_table(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "ALTER")?;
    expect_word(p, "TABLE")?;
    let if_exists = eat_words(p, &["IF", "EXISTS"]);
    let table = parse_table_name(p)?;
    if let Some(op) = partition_op(p)? {
        return Ok(Statement::AlterPartitions { table, op });
    }
    let mut ops = Vec::new();
    // `ALTER TABLE t` alone changes nothing (MySQL accepts it).
    while !matches!(p.peek_token().token, Token::EOF | Token::SemiColon) {
        let op = table_op(p)?;
        let option = matches!(op, AlterTableOp::Option(_));
        ops.push(op);
        // Table options may follow each other without a comma.
        if !p.consume_token(&Token::Comma) && !option {
            break;
        }
    }
    Ok(Statement::AlterTable {
        table,
        ops,
        if_exists,
    })
}

/// `RENAME TABLE [db.]a TO [db.]b`: one table, kept in its database (several pairs, or a move
/// to another database, are refused by name rather than half done).
pub(crate) fn parse_rename_table(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "RENAME")?;
    expect_word(p, "TABLE")?;
    let table = parse_table_name(p)?;
    expect_word(p, "TO")?;
    let target = parse_table_name(p)?;
    if p.consume_token(&Token::Comma) {
        return Err(ParserError::ParserError(
            "RENAME TABLE of several tables at once is not supported: rename one per statement"
                .into(),
        ));
    }
    if target.database.is_some() && target.database != table.database {
        return Err(ParserError::ParserError(
            "RENAME TABLE to another database is not supported".into(),
        ));
    }
    Ok(Statement::AlterTable {
        table,
        ops: vec![AlterTableOp::Rename(target.table)],
        if_exists: false,
    })
}

fn partition_op(p: &mut Parser) -> Result<Option<PartitionOp>, ParserError> {
    let temporary_next = |p: &Parser| {
        crate::words::peek_nth_word(p, 1, "TEMPORARY")
            && crate::words::peek_nth_word(p, 2, "PARTITION")
    };
    if peek_word(p, "ADD") && (crate::words::peek_nth_word(p, 1, "PARTITION") || temporary_next(p))
    {
        p.next_token();
        let temporary = eat_word(p, "TEMPORARY");
        let def = parse_partition_def(p)?;
        return Ok(Some(PartitionOp::Add { def, temporary }));
    }
    if peek_word(p, "DROP") && (crate::words::peek_nth_word(p, 1, "PARTITION") || temporary_next(p))
    {
        p.next_token();
        let temporary = eat_word(p, "TEMPORARY");
        expect_word(p, "PARTITION")?;
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let name = ident(p)?;
        return Ok(Some(PartitionOp::Drop {
            name,
            if_exists,
            temporary,
        }));
    }
    if peek_word(p, "REPLACE")
        && (crate::words::peek_nth_word(p, 1, "PARTITION")
            || crate::words::peek_nth_word(p, 1, "PARTITIONS"))
    {
        p.next_token();
        p.next_token();
        let formal = partition_names(p)?;
        expect_word(p, "WITH")?;
        expect_word(p, "TEMPORARY")?;
        if !eat_word(p, "PARTITIONS") {
            expect_word(p, "PARTITION")?;
        }
        let temporary = partition_names(p)?;
        let properties = if eat_word(p, "PROPERTIES") {
            parse_properties(p)?
        } else {
            Vec::new()
        };
        return Ok(Some(PartitionOp::Replace {
            formal,
            temporary,
            properties,
        }));
    }
    if eat_words(p, &["RENAME", "PARTITION"]) {
        let from = ident(p)?;
        let to = ident(p)?;
        return Ok(Some(PartitionOp::Rename { from, to }));
    }
    Ok(None)
}

/// `(p1, p2)` or a single `p1`.
fn partition_names(p: &mut Parser) -> Result<Vec<String>, ParserError> {
    if p.consume_token(&Token::LParen) {
        let names = p.parse_comma_separated(ident)?;
        p.expect_token(&Token::RParen)?;
        Ok(names)
    } else {
        Ok(vec![ident(p)?])
    }
}

fn table_op(p: &mut Parser) -> Result<AlterTableOp, ParserError> {
    if eat_word(p, "ADD") {
        if let Some(op) = add_index_or_constraint(p)? {
            return Ok(op);
        }
        eat_word(p, "COLUMN");
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let columns = if p.consume_token(&Token::LParen) {
            let defs = p.parse_comma_separated(column_def)?;
            p.expect_token(&Token::RParen)?;
            defs
        } else {
            vec![column_def(p)?]
        };
        let position = position(p)?;
        rollup_and_properties(p)?;
        return Ok(AlterTableOp::AddColumns {
            columns,
            position,
            if_not_exists,
        });
    }
    if eat_word(p, "DROP") {
        if eat_word(p, "INDEX") || eat_word(p, "KEY") {
            let if_exists = eat_words(p, &["IF", "EXISTS"]);
            let name = ident(p)?;
            return Ok(AlterTableOp::DropIndex { name, if_exists });
        }
        if eat_words(p, &["FOREIGN", "KEY"]) {
            let if_exists = eat_words(p, &["IF", "EXISTS"]);
            let name = ident(p)?;
            return Ok(AlterTableOp::DropForeignKey { name, if_exists });
        }
        if eat_words(p, &["PRIMARY", "KEY"]) {
            return Ok(AlterTableOp::DropPrimaryKey);
        }
        if eat_words(p, &["CONSTRAINT", "PRIMARY", "KEY"]) {
            return Ok(AlterTableOp::DropPrimaryKey);
        }
        if eat_word(p, "CONSTRAINT") || eat_word(p, "CHECK") {
            let if_exists = eat_words(p, &["IF", "EXISTS"]);
            let name = ident(p)?;
            return Ok(AlterTableOp::DropConstraint { name, if_exists });
        }
        eat_word(p, "COLUMN");
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let name = ident(p)?;
        rollup_and_properties(p)?;
        return Ok(AlterTableOp::DropColumn { name, if_exists });
    }
    if eat_word(p, "MODIFY") {
        if eat_word(p, "COMMENT") {
            return Ok(AlterTableOp::Comment(string_literal(p)?));
        }
        eat_word(p, "COLUMN");
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        if !if_exists && peek_word_at(p, 1, "COMMENT") {
            let name = ident(p)?;
            expect_word(p, "COMMENT")?;
            let comment = string_literal(p)?;
            return Ok(AlterTableOp::ModifyColumnComment { name, comment });
        }
        let column = column_def(p)?;
        let position = position(p)?;
        rollup_and_properties(p)?;
        return Ok(AlterTableOp::ModifyColumn {
            from: column.name.clone(),
            column,
            position,
            if_exists,
        });
    }
    if eat_word(p, "CHANGE") {
        // MySQL: CHANGE [COLUMN] old new_definition
        eat_word(p, "COLUMN");
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let from = ident(p)?;
        let column = column_def(p)?;
        let position = position(p)?;
        return Ok(AlterTableOp::ModifyColumn {
            from,
            column,
            position,
            if_exists,
        });
    }
    if eat_word(p, "RENAME") {
        if eat_word(p, "INDEX") || eat_word(p, "KEY") {
            let if_exists = eat_words(p, &["IF", "EXISTS"]);
            let from = ident(p)?;
            expect_word(p, "TO")?;
            let to = ident(p)?;
            return Ok(AlterTableOp::RenameIndex {
                from,
                to,
                if_exists,
            });
        }
        if eat_word(p, "COLUMN") {
            let from = ident(p)?;
            eat_word(p, "TO");
            let to = ident(p)?;
            return Ok(AlterTableOp::RenameColumn { from, to });
        }
        if !eat_word(p, "TO") {
            eat_word(p, "AS");
        }
        return Ok(AlterTableOp::Rename(ident(p)?));
    }
    if eat_word(p, "COMMENT") {
        let _ = p.consume_token(&Token::Eq);
        return Ok(AlterTableOp::Comment(string_literal(p)?));
    }
    if eat_word(p, "SET") {
        return Ok(AlterTableOp::SetProperties(parse_properties(p)?));
    }
    if eat_word(p, "ALTER") {
        return alter_column_default(p);
    }
    if let Some(op) = crate::alter_options::parse_alter_option(p)? {
        return Ok(op);
    }
    p.expected(
        "ADD, DROP, MODIFY, CHANGE, ALTER, RENAME, COMMENT, SET or a table option",
        p.peek_token(),
    )
}

/// After ALTER: `[COLUMN] [IF EXISTS] c {SET DEFAULT v | DROP DEFAULT}`.
fn alter_column_default(p: &mut Parser) -> Result<AlterTableOp, ParserError> {
    eat_word(p, "COLUMN");
    let if_exists = eat_words(p, &["IF", "EXISTS"]);
    let name = ident(p)?;
    let default = if eat_words(p, &["SET", "DEFAULT"]) {
        Some(crate::ddl::parse_default(p)?)
    } else if eat_words(p, &["DROP", "DEFAULT"]) {
        None
    } else {
        return p.expected("SET DEFAULT or DROP DEFAULT", p.peek_token());
    };
    Ok(AlterTableOp::AlterColumnDefault {
        name,
        default,
        if_exists,
    })
}

/// After ADD: `[CONSTRAINT [name]] UNIQUE | FOREIGN KEY ..`, `INDEX | KEY | FULLTEXT ..`;
/// `None`, nothing eaten, when a column follows instead.
fn add_index_or_constraint(p: &mut Parser) -> Result<Option<AlterTableOp>, ParserError> {
    let start = p.peek_token();
    let mut if_not_exists = false;
    // MariaDB's `CONSTRAINT IF NOT EXISTS name ..`.
    let constraint = if peek_word(p, "CONSTRAINT") && crate::words::peek_nth_word(p, 1, "IF") {
        p.next_token();
        if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        table_constraints::eat_constraint_name_after(p)?
    } else {
        table_constraints::eat_constraint_name(p)?
    };
    if eat_words(p, &["PRIMARY", "KEY"]) {
        if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let index = table_constraints::parse_index_body(p, IndexKind::Unique)?;
        return Ok(Some(AlterTableOp::AddPrimaryKey {
            columns: index.columns.into_iter().map(|c| c.name).collect(),
            if_not_exists,
        }));
    }
    let name = constraint.clone().flatten();
    let found =
        table_constraints::parse_table_constraint_in(p, constraint, Some(&mut if_not_exists))?;
    match found {
        None => Ok(None),
        Some(TableConstraint::Index(index)) => Ok(Some(AlterTableOp::AddIndex {
            index,
            if_not_exists,
        })),
        Some(TableConstraint::ForeignKey(fk)) if fk.referenced.is_empty() => {
            p.expected("the referenced columns after REFERENCES table", start)
        }
        Some(TableConstraint::ForeignKey(fk)) if if_not_exists => {
            Ok(Some(AlterTableOp::AddForeignKeyIfNotExists(fk)))
        }
        Some(TableConstraint::ForeignKey(fk)) => Ok(Some(AlterTableOp::AddForeignKey(fk))),
        Some(TableConstraint::Check) => Ok(Some(AlterTableOp::AddCheck { name })),
    }
}

fn peek_word_at(p: &Parser, n: usize, w: &str) -> bool {
    crate::words::peek_nth_word(p, n, w)
}

fn column_def(p: &mut Parser) -> Result<ColumnDef, ParserError> {
    let start = p.peek_token();
    let (column, primary_key) = parse_column_def(p)?;
    if primary_key {
        return p.expected("a column definition without PRIMARY KEY", start);
    }
    Ok(column)
}

/// `FIRST` or `AFTER c`.
fn position(p: &mut Parser) -> Result<Option<ColumnPosition>, ParserError> {
    if eat_word(p, "FIRST") {
        return Ok(Some(ColumnPosition::First));
    }
    if eat_word(p, "AFTER") {
        return Ok(Some(ColumnPosition::After(ident(p)?)));
    }
    Ok(None)
}

/// Doris's `[TO rollup | FROM rollup] [PROPERTIES (..)]` after a column change: Basalt has no
/// rollups, so only the base table may be named.
fn rollup_and_properties(p: &mut Parser) -> Result<(), ParserError> {
    if peek_word(p, "TO") || peek_word(p, "FROM") {
        let t = p.next_token();
        return p.expected("no rollup (Basalt tables have no rollups)", t);
    }
    if eat_word(p, "PROPERTIES") {
        parse_properties(p)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{parse_one, AlterTableOp, ColumnPosition, Statement};

    fn ops(sql: &str) -> Vec<AlterTableOp> {
        match parse_one(sql).unwrap() {
            Statement::AlterTable { ops, .. } => ops,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn mysql_and_doris_forms() {
        let got = ops("ALTER TABLE t ADD COLUMN c INT KEY DEFAULT '0' AFTER k, DROP COLUMN v");
        let AlterTableOp::AddColumns {
            columns, position, ..
        } = &got[0]
        else {
            panic!("{got:?}")
        };
        assert!(columns[0].key);
        assert_eq!(position, &Some(ColumnPosition::After("k".into())));
        assert!(matches!(&got[1], AlterTableOp::DropColumn { name, .. } if name == "v"));

        let got = ops("ALTER TABLE t ADD COLUMN (a INT, b VARCHAR(10) NOT NULL DEFAULT 'x')");
        assert!(matches!(&got[0], AlterTableOp::AddColumns { columns, .. } if columns.len() == 2));

        let got = ops("ALTER TABLE t CHANGE old_name new_name BIGINT FIRST");
        assert!(
            matches!(&got[0], AlterTableOp::ModifyColumn { from, column, position: Some(ColumnPosition::First), .. }
            if from == "old_name" && column.name == "new_name")
        );

        for sql in [
            "ALTER TABLE t RENAME COLUMN a b",
            "ALTER TABLE t RENAME COLUMN a TO b",
        ] {
            assert_eq!(
                ops(sql),
                vec![AlterTableOp::RenameColumn {
                    from: "a".into(),
                    to: "b".into()
                }]
            );
        }
        for sql in ["ALTER TABLE t RENAME t2", "ALTER TABLE t RENAME TO t2"] {
            assert_eq!(ops(sql), vec![AlterTableOp::Rename("t2".into())]);
            let renamed = crate::parse_one("RENAME TABLE db.t1 TO t2").unwrap();
            assert!(matches!(
                renamed,
                Statement::AlterTable {
                    ref table, ref ops, ..
                }
                    if table.database.as_deref() == Some("db")
                        && ops == &vec![AlterTableOp::Rename("t2".into())]
            ));
            assert!(crate::parse_one("RENAME TABLE a TO b, c TO d").is_err());
            assert!(crate::parse_one("RENAME TABLE a TO other.b").is_err());
        }
        assert_eq!(
            ops("ALTER TABLE t MODIFY COLUMN v COMMENT 'value'"),
            vec![AlterTableOp::ModifyColumnComment {
                name: "v".into(),
                comment: "value".into()
            }]
        );
        assert_eq!(
            ops("ALTER TABLE t MODIFY COMMENT 'x'"),
            vec![AlterTableOp::Comment("x".into())]
        );
        assert_eq!(
            ops("ALTER TABLE t SET (\"bloom_filter_columns\" = \"k\")"),
            vec![AlterTableOp::SetProperties(vec![(
                "bloom_filter_columns".into(),
                "k".into()
            )])]
        );
        assert!(parse_one("ALTER TABLE t ADD COLUMN c INT TO r1").is_err());
    }

    #[test]
    fn mysql_defaults_keys_and_if_exists_forms() {
        assert_eq!(
            ops("ALTER TABLE t ALTER COLUMN a SET DEFAULT 3, ALTER b DROP DEFAULT"),
            vec![
                AlterTableOp::AlterColumnDefault {
                    name: "a".into(),
                    default: Some(crate::DefaultValue::Literal("3".into())),
                    if_exists: false
                },
                AlterTableOp::AlterColumnDefault {
                    name: "b".into(),
                    default: None,
                    if_exists: false
                },
            ]
        );
        assert_eq!(
            ops("ALTER TABLE t DROP PRIMARY KEY, ADD CONSTRAINT pk PRIMARY KEY (a, b)"),
            vec![
                AlterTableOp::DropPrimaryKey,
                AlterTableOp::AddPrimaryKey {
                    columns: vec!["a".into(), "b".into()],
                    if_not_exists: false
                },
            ]
        );
        assert_eq!(
            ops("ALTER TABLE t DROP CONSTRAINT IF EXISTS c1"),
            vec![AlterTableOp::DropConstraint {
                name: "c1".into(),
                if_exists: true
            }]
        );
        let got = ops(
            "ALTER TABLE t ADD COLUMN IF NOT EXISTS c INT AFTER b, ADD KEY IF NOT EXISTS k (c), \
             ADD UNIQUE INDEX IF NOT EXISTS u (c), MODIFY IF EXISTS d BIGINT, \
             CHANGE COLUMN IF EXISTS e f INT, RENAME KEY IF EXISTS k TO k2",
        );
        assert!(matches!(
            &got[0],
            AlterTableOp::AddColumns {
                if_not_exists: true,
                ..
            }
        ));
        assert!(matches!(
            &got[1],
            AlterTableOp::AddIndex {
                if_not_exists: true,
                ..
            }
        ));
        assert!(matches!(
            &got[2],
            AlterTableOp::AddIndex {
                if_not_exists: true,
                ..
            }
        ));
        assert!(matches!(
            &got[3],
            AlterTableOp::ModifyColumn {
                if_exists: true,
                ..
            }
        ));
        assert!(
            matches!(&got[4], AlterTableOp::ModifyColumn { if_exists: true, from, .. } if from == "e")
        );
        assert!(matches!(
            &got[5],
            AlterTableOp::RenameIndex {
                if_exists: true,
                ..
            }
        ));
        // Ours, not sqlparser's, is the syntax error.
        let e = parse_one("ALTER TABLE t ALTER COLUMN a SET NOT NULL").unwrap_err();
        assert!(e.to_string().contains("SET DEFAULT or DROP DEFAULT"), "{e}");
    }
}
