//! The information_schema tables of indexes and constraints: STATISTICS (the sort key as an
//! index, then the secondary indexes), KEY_COLUMN_USAGE (primary key, unique indexes, foreign
//! keys), TABLE_CONSTRAINTS and REFERENTIAL_CONSTRAINTS. Basalt enforces a Unique table's
//! primary key (rows with the same key replace each other) and nothing else: unique indexes and
//! foreign keys are kept and shown, with TABLE_CONSTRAINTS.ENFORCED = 'NO'.

use super::catalog_tables::key_index;
use super::{InformationSchema, TableSpec, I, T};
use crate::show::ResultBuilder;
use basalt_catalog::{IndexKind, KeysModel, TableMeta};

pub(super) const SPECS: &[TableSpec] = &[
    TableSpec {
        name: "statistics",
        columns: &[
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("NON_UNIQUE", I),
            ("INDEX_SCHEMA", T),
            ("INDEX_NAME", T),
            ("SEQ_IN_INDEX", I),
            ("COLUMN_NAME", T),
            ("COLLATION", T),
            ("CARDINALITY", I),
            ("SUB_PART", I),
            ("PACKED", T),
            ("NULLABLE", T),
            ("INDEX_TYPE", T),
            ("COMMENT", T),
            ("INDEX_COMMENT", T),
            ("IS_VISIBLE", T),
            ("EXPRESSION", T),
        ],
    },
    TableSpec {
        name: "key_column_usage",
        columns: &[
            ("CONSTRAINT_CATALOG", T),
            ("CONSTRAINT_SCHEMA", T),
            ("CONSTRAINT_NAME", T),
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("COLUMN_NAME", T),
            ("ORDINAL_POSITION", I),
            ("POSITION_IN_UNIQUE_CONSTRAINT", I),
            ("REFERENCED_TABLE_SCHEMA", T),
            ("REFERENCED_TABLE_NAME", T),
            ("REFERENCED_COLUMN_NAME", T),
        ],
    },
    TableSpec {
        name: "table_constraints",
        columns: &[
            ("CONSTRAINT_CATALOG", T),
            ("CONSTRAINT_SCHEMA", T),
            ("CONSTRAINT_NAME", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("CONSTRAINT_TYPE", T),
            ("ENFORCED", T),
        ],
    },
    TableSpec {
        name: "referential_constraints",
        columns: &[
            ("CONSTRAINT_CATALOG", T),
            ("CONSTRAINT_SCHEMA", T),
            ("CONSTRAINT_NAME", T),
            ("UNIQUE_CONSTRAINT_CATALOG", T),
            ("UNIQUE_CONSTRAINT_SCHEMA", T),
            ("UNIQUE_CONSTRAINT_NAME", T),
            ("MATCH_OPTION", T),
            ("UPDATE_RULE", T),
            ("DELETE_RULE", T),
            ("TABLE_NAME", T),
            ("REFERENCED_TABLE_NAME", T),
        ],
    },
];

pub(super) fn build(is: &InformationSchema, name: &str) -> Option<ResultBuilder> {
    let spec = SPECS.iter().find(|s| s.name == name)?;
    let mut b = spec.builder();
    let tables = is.visible_tables();
    for t in &tables {
        match name {
            "statistics" => statistics(t, &mut b),
            "key_column_usage" => key_column_usage(t, &mut b),
            "table_constraints" => table_constraints(t, &mut b),
            _ => referential_constraints(is, t, &mut b),
        }
    }
    Some(b)
}

/// The shown name of the table's column `name` (lower case).
fn shown<'a>(t: &'a TableMeta, name: &'a str) -> &'a str {
    t.column_index(name)
        .map(|i| t.columns[i].shown_name())
        .unwrap_or(name)
}

/// The indexes in MySQL's order: unique ones, then the others, each as added.
fn ordered_indexes(t: &TableMeta) -> impl Iterator<Item = &basalt_catalog::IndexMeta> {
    let unique = t.indexes.iter().filter(|i| i.kind == IndexKind::Unique);
    unique.chain(t.indexes.iter().filter(|i| i.kind != IndexKind::Unique))
}

fn statistics(t: &TableMeta, b: &mut ResultBuilder) {
    let (index, unique) = key_index(t);
    let rows = t.num_rows() as i64;
    let mut row = |non_unique: bool,
                   index: &str,
                   seq: usize,
                   column: &str,
                   sub_part: Option<u32>,
                   index_type: &str,
                   comment: &str| {
        let nullable = t
            .column_index(column)
            .is_some_and(|i| t.columns[i].nullable);
        b.row(vec![
            "def".into(),
            t.database.clone().into(),
            t.name.clone().into(),
            i64::from(non_unique).into(),
            t.database.clone().into(),
            index.to_string().into(),
            (seq as i64 + 1).into(),
            shown(t, column).to_string().into(),
            (index_type != "FULLTEXT").then_some("A").into(),
            rows.into(),
            sub_part.map(i64::from).into(),
            None::<String>.into(),
            (if nullable { "YES" } else { "" }).into(),
            index_type.to_string().into(),
            "".into(),
            comment.to_string().into(),
            "YES".into(),
            None::<String>.into(),
        ]);
    };
    for (i, c) in t.key_columns().iter().enumerate() {
        row(!unique, index, i, &c.name, None, "BTREE", "");
    }
    for index in ordered_indexes(t) {
        for (i, c) in index.columns.iter().enumerate() {
            row(
                index.kind != IndexKind::Unique,
                &index.name,
                i,
                &c.name,
                c.length,
                index.kind.index_type(),
                &index.comment,
            );
        }
    }
}

fn key_column_usage(t: &TableMeta, b: &mut ResultBuilder) {
    let mut row =
        |constraint: &str, column: &str, i: usize, reference: Option<(&str, &str, &str)>| {
            b.row(vec![
                "def".into(),
                t.database.clone().into(),
                constraint.to_string().into(),
                "def".into(),
                t.database.clone().into(),
                t.name.clone().into(),
                shown(t, column).to_string().into(),
                (i as i64 + 1).into(),
                reference.map(|_| i as i64 + 1).into(),
                reference.map(|r| r.0.to_string()).into(),
                reference.map(|r| r.1.to_string()).into(),
                reference.map(|r| r.2.to_string()).into(),
            ]);
        };
    if t.keys_model == KeysModel::Unique {
        for (i, c) in t.key_columns().iter().enumerate() {
            row("PRIMARY", &c.name, i, None);
        }
    }
    for index in t.indexes.iter().filter(|i| i.kind == IndexKind::Unique) {
        for (i, c) in index.columns.iter().enumerate() {
            row(&index.name, &c.name, i, None);
        }
    }
    for fk in &t.foreign_keys {
        for (i, (c, r)) in fk.columns.iter().zip(&fk.ref_columns).enumerate() {
            row(
                &fk.name,
                c,
                i,
                Some((&fk.ref_database, &fk.ref_table, r.as_str())),
            );
        }
    }
}

fn table_constraints(t: &TableMeta, b: &mut ResultBuilder) {
    let mut row = |name: &str, kind: &str, enforced: &str| {
        b.row(vec![
            "def".into(),
            t.database.clone().into(),
            name.to_string().into(),
            t.database.clone().into(),
            t.name.clone().into(),
            kind.into(),
            enforced.into(),
        ]);
    };
    if t.keys_model == KeysModel::Unique {
        row("PRIMARY", "PRIMARY KEY", "YES");
    }
    for index in t.indexes.iter().filter(|i| i.kind == IndexKind::Unique) {
        row(&index.name, "UNIQUE", "NO");
    }
    for fk in &t.foreign_keys {
        row(&fk.name, "FOREIGN KEY", "NO");
    }
}

fn referential_constraints(is: &InformationSchema, t: &TableMeta, b: &mut ResultBuilder) {
    for fk in &t.foreign_keys {
        let referenced = is
            .services
            .catalog
            .table(&fk.ref_database, &fk.ref_table)
            .ok();
        let unique =
            referenced.and_then(|r| crate::table_keys::unique_key_named_by(&r, &fk.ref_columns));
        b.row(vec![
            "def".into(),
            t.database.clone().into(),
            fk.name.clone().into(),
            "def".into(),
            fk.ref_database.clone().into(),
            unique.into(),
            "NONE".into(),
            fk.on_update.as_deref().unwrap_or("RESTRICT").into(),
            fk.on_delete.as_deref().unwrap_or("RESTRICT").into(),
            t.name.clone().into(),
            fk.ref_table.clone().into(),
        ]);
    }
}
