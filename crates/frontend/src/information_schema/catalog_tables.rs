//! The information_schema tables that describe the catalog's objects: SCHEMATA, TABLES,
//! COLUMNS, VIEWS and PARTITIONS (indexes and constraints are `key_tables`'). A table's sort
//! key is its index: `PRIMARY` (unique) on a Unique table, a unique `aggregate_key` on an
//! Aggregate table, a non-unique `duplicate_key` on a Duplicate table; only a Unique table has
//! a PRIMARY KEY constraint.

use super::{InformationSchema, TableSpec, I, T};
use crate::show::ResultBuilder;
use basalt_catalog::{ColumnMeta, KeysModel, PartitionBound, PartitionKind, TableMeta, ViewMeta};
use basalt_common::SqlType;
use std::sync::Arc;

pub(super) const SPECS: &[TableSpec] = &[
    TableSpec {
        name: "schemata",
        columns: &[
            ("CATALOG_NAME", T),
            ("SCHEMA_NAME", T),
            ("DEFAULT_CHARACTER_SET_NAME", T),
            ("DEFAULT_COLLATION_NAME", T),
            ("SQL_PATH", T),
            ("DEFAULT_ENCRYPTION", T),
        ],
    },
    TableSpec {
        name: "tables",
        columns: &[
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("TABLE_TYPE", T),
            ("ENGINE", T),
            ("VERSION", I),
            ("ROW_FORMAT", T),
            ("TABLE_ROWS", I),
            ("AVG_ROW_LENGTH", I),
            ("DATA_LENGTH", I),
            ("MAX_DATA_LENGTH", I),
            ("INDEX_LENGTH", I),
            ("DATA_FREE", I),
            ("AUTO_INCREMENT", I),
            ("CREATE_TIME", T),
            ("UPDATE_TIME", T),
            ("CHECK_TIME", T),
            ("TABLE_COLLATION", T),
            ("CHECKSUM", I),
            ("CREATE_OPTIONS", T),
            ("TABLE_COMMENT", T),
        ],
    },
    TableSpec {
        name: "columns",
        columns: &[
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("COLUMN_NAME", T),
            ("ORDINAL_POSITION", I),
            ("COLUMN_DEFAULT", T),
            ("IS_NULLABLE", T),
            ("DATA_TYPE", T),
            ("CHARACTER_MAXIMUM_LENGTH", I),
            ("CHARACTER_OCTET_LENGTH", I),
            ("NUMERIC_PRECISION", I),
            ("NUMERIC_SCALE", I),
            ("DATETIME_PRECISION", I),
            ("CHARACTER_SET_NAME", T),
            ("COLLATION_NAME", T),
            ("COLUMN_TYPE", T),
            ("COLUMN_KEY", T),
            ("EXTRA", T),
            ("PRIVILEGES", T),
            ("COLUMN_COMMENT", T),
            ("GENERATION_EXPRESSION", T),
            ("SRS_ID", I),
        ],
    },
    TableSpec {
        name: "views",
        columns: &[
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("VIEW_DEFINITION", T),
            ("CHECK_OPTION", T),
            ("IS_UPDATABLE", T),
            ("DEFINER", T),
            ("SECURITY_TYPE", T),
            ("CHARACTER_SET_CLIENT", T),
            ("COLLATION_CONNECTION", T),
        ],
    },
    TableSpec {
        name: "partitions",
        columns: &[
            ("TABLE_CATALOG", T),
            ("TABLE_SCHEMA", T),
            ("TABLE_NAME", T),
            ("PARTITION_NAME", T),
            ("SUBPARTITION_NAME", T),
            ("PARTITION_ORDINAL_POSITION", I),
            ("SUBPARTITION_ORDINAL_POSITION", I),
            ("PARTITION_METHOD", T),
            ("SUBPARTITION_METHOD", T),
            ("PARTITION_EXPRESSION", T),
            ("SUBPARTITION_EXPRESSION", T),
            ("PARTITION_DESCRIPTION", T),
            ("TABLE_ROWS", I),
            ("AVG_ROW_LENGTH", I),
            ("DATA_LENGTH", I),
            ("MAX_DATA_LENGTH", I),
            ("INDEX_LENGTH", I),
            ("DATA_FREE", I),
            ("CREATE_TIME", T),
            ("UPDATE_TIME", T),
            ("CHECK_TIME", T),
            ("CHECKSUM", I),
            ("PARTITION_COMMENT", T),
            ("NODEGROUP", T),
            ("TABLESPACE_NAME", T),
        ],
    },
];

const CHARSET: &str = "utf8mb4";
const COLLATION: &str = "utf8mb4_general_ci";

/// The index a table's sort key forms: its name and whether it is unique.
pub(crate) fn key_index(t: &TableMeta) -> (&'static str, bool) {
    match t.keys_model {
        KeysModel::Unique => ("PRIMARY", true),
        KeysModel::Aggregate => ("aggregate_key", true),
        KeysModel::Duplicate => ("duplicate_key", false),
    }
}

/// MySQL's COLUMN_KEY: PRI for a primary-key column, UNI for a one-column unique index, MUL
/// for the first column of a non-unique index, in that order of precedence (the sort key
/// first, then the secondary indexes). `position` is the storage index.
fn column_key(t: &TableMeta, position: usize) -> &'static str {
    let c = &t.columns[position];
    let sort_key = match (t.keys_model, c.is_key) {
        (_, false) => "",
        (KeysModel::Unique, true) => "PRI",
        (KeysModel::Aggregate, true) if t.num_key_columns == 1 => "UNI",
        (_, true) if position == 0 => "MUL",
        _ => "",
    };
    let leads = |i: &&basalt_catalog::IndexMeta| i.columns[0].name == c.name;
    let unique = t
        .indexes
        .iter()
        .filter(leads)
        .any(|i| i.kind == basalt_catalog::IndexKind::Unique && i.columns.len() == 1);
    match sort_key {
        "PRI" | "UNI" => sort_key,
        _ if unique => "UNI",
        "MUL" => sort_key,
        _ if t.indexes.iter().any(|i| leads(&i)) => "MUL",
        _ => "",
    }
}

/// Bytes a character column can hold (4 per character in utf8mb4).
fn octet_length(ty: &SqlType) -> Option<i64> {
    match ty {
        SqlType::Char(n) | SqlType::Varchar(n) => Some(i64::from(*n) * 4),
        SqlType::String => Some(i64::from(u32::MAX)),
        SqlType::Binary(n) | SqlType::Varbinary(n) => Some(i64::from(*n)),
        SqlType::Blob => Some(65535),
        _ => None,
    }
}

fn is_text(ty: &SqlType) -> bool {
    matches!(ty, SqlType::Char(_) | SqlType::Varchar(_) | SqlType::String)
}

impl InformationSchema {
    /// Every table the session's account may see.
    pub(super) fn visible_tables(&self) -> Vec<Arc<TableMeta>> {
        let access = self.access();
        let catalog = &self.services.catalog;
        catalog
            .databases()
            .into_iter()
            .flat_map(|db| catalog.tables(&db.name).unwrap_or_default())
            .filter(|t| crate::temporary_tables::listed(&t.name))
            .filter(|t| access.may_see_table(&t.database, &t.name))
            .collect()
    }

    /// Every view the session's account may see.
    fn visible_views(&self) -> Vec<Arc<ViewMeta>> {
        let access = self.access();
        let catalog = &self.services.catalog;
        catalog
            .databases()
            .into_iter()
            .flat_map(|db| catalog.views(&db.name))
            .filter(|v| access.may_see_table(&v.database, &v.name))
            .collect()
    }
}

pub(super) fn build(is: &InformationSchema, name: &str) -> Option<ResultBuilder> {
    let spec = SPECS.iter().find(|s| s.name == name)?;
    let mut b = spec.builder();
    match name {
        "schemata" => schemata(is, &mut b),
        "tables" => tables(is, &mut b),
        "columns" => columns(is, &mut b),
        "views" => views(is, &mut b),
        "partitions" => partitions(is, &mut b),
        _ => return None,
    }
    Some(b)
}

fn schemata(is: &InformationSchema, b: &mut ResultBuilder) {
    let access = is.access();
    let mut names: Vec<String> = is
        .services
        .catalog
        .databases()
        .into_iter()
        .map(|d| d.name)
        .filter(|d| access.may_see_database(d))
        .collect();
    names.push(crate::catalog_provider::INFORMATION_SCHEMA.into());
    names.sort();
    for n in names {
        b.row(vec![
            "def".into(),
            n.into(),
            CHARSET.into(),
            COLLATION.into(),
            None::<String>.into(),
            "NO".into(),
        ]);
    }
}

fn tables(is: &InformationSchema, b: &mut ResultBuilder) {
    for t in is.visible_tables() {
        let rows = t.num_rows() as i64;
        let bytes = t.data_bytes() as i64;
        let updated = t
            .tablets()
            .flat_map(|(_, tablet)| tablet.rowsets.iter())
            .map(|r| r.created_ms)
            .max();
        b.row(vec![
            "def".into(),
            t.database.clone().into(),
            t.name.clone().into(),
            "BASE TABLE".into(),
            "OLAP".into(),
            10i64.into(),
            "Dynamic".into(),
            rows.into(),
            bytes.checked_div(rows).unwrap_or(0).into(),
            bytes.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            None::<i64>.into(),
            crate::show::format_ms(t.created_ms).into(),
            updated.and_then(crate::show::format_ms).into(),
            None::<String>.into(),
            COLLATION.into(),
            None::<i64>.into(),
            "".into(),
            t.comment.clone().into(),
        ]);
    }
    for v in is.visible_views() {
        b.row(vec![
            "def".into(),
            v.database.clone().into(),
            v.name.clone().into(),
            "VIEW".into(),
            None::<String>.into(),
            None::<i64>.into(),
            None::<String>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            None::<i64>.into(),
            crate::show::format_ms(v.created_ms).into(),
            None::<String>.into(),
            None::<String>.into(),
            None::<String>.into(),
            None::<i64>.into(),
            None::<String>.into(),
            "VIEW".into(),
        ]);
    }
    for t in super::table_names() {
        b.row(vec![
            "def".into(),
            crate::catalog_provider::INFORMATION_SCHEMA.into(),
            t.to_uppercase().into(),
            "SYSTEM VIEW".into(),
            None::<String>.into(),
            10i64.into(),
            None::<String>.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            None::<i64>.into(),
            None::<String>.into(),
            None::<String>.into(),
            None::<String>.into(),
            None::<String>.into(),
            None::<i64>.into(),
            "".into(),
            "".into(),
        ]);
    }
}

fn columns(is: &InformationSchema, b: &mut ResultBuilder) {
    for t in is.visible_tables() {
        for (position, (i, c)) in t.declared_columns().enumerate() {
            column_row(b, (&t.database, &t.name), position, c, column_key(&t, i));
        }
    }
    // A view's columns, with the types its SELECT gave when it was created (MySQL lists them
    // too); a view stored before Basalt recorded them is left out.
    for v in is.visible_views() {
        if v.column_types.len() != v.columns.len() {
            continue;
        }
        for (position, (name, ty)) in v.columns.iter().zip(&v.column_types).enumerate() {
            let c = ColumnMeta {
                name: name.to_lowercase(),
                display_name: Some(name.clone()),
                ty: ty.clone(),
                nullable: true,
                is_key: false,
                agg: None,
                default: None,
                comment: v.column_comments.get(position).cloned().unwrap_or_default(),
                auto_increment: false,
                generated: None,
                allowed: None,
                on_update_current_timestamp: false,
            };
            column_row(b, (&v.database, &v.name), position, &c, "");
        }
    }
}

/// One row of COLUMNS: column `c` at `position` (from 0) of `table` in `database`.
fn column_row(
    b: &mut ResultBuilder,
    (database, table): (&str, &str),
    position: usize,
    c: &ColumnMeta,
    key: &str,
) {
    let (len, prec, scale) = crate::show::type_dimensions(&c.ty);
    let datetime_precision = match c.ty {
        SqlType::DateTime { scale } | SqlType::Time { scale } => Some(i64::from(scale)),
        _ => None,
    };
    let text = is_text(&c.ty);
    b.row(vec![
        "def".into(),
        database.into(),
        table.into(),
        c.shown_name().into(),
        (position as i64 + 1).into(),
        crate::show::default_text(c).into(),
        (if c.nullable { "YES" } else { "NO" }).into(),
        match &c.allowed {
            Some(a) if a.set => "set".into(),
            Some(_) => "enum".into(),
            None => c.ty.data_type_name().into(),
        },
        len.into(),
        octet_length(&c.ty).into(),
        prec.into(),
        scale.into(),
        datetime_precision.into(),
        text.then_some(CHARSET).into(),
        text.then_some(COLLATION).into(),
        crate::ddl_text::column_type(c).into(),
        key.into(),
        crate::show::extra_text(c).into(),
        "select,insert,update,references".into(),
        c.comment.clone().into(),
        c.generated
            .as_ref()
            .map_or(String::new(), |g| g.expr.clone())
            .into(),
        None::<i64>.into(),
    ]);
}

fn views(is: &InformationSchema, b: &mut ResultBuilder) {
    for v in is.visible_views() {
        b.row(vec![
            "def".into(),
            v.database.clone().into(),
            v.name.clone().into(),
            v.definition.clone().into(),
            v.check_option.word().into(),
            // Updatable: a view MySQL merges into the statement naming it.
            match crate::view_merge::is_mergeable(is.services.catalog.as_ref(), &v) {
                true => "YES",
                false => "NO",
            }
            .into(),
            v.definer.clone().into(),
            "INVOKER".into(),
            CHARSET.into(),
            COLLATION.into(),
        ]);
    }
}

fn partitions(is: &InformationSchema, b: &mut ResultBuilder) {
    for t in is.visible_tables() {
        let partitioned = t.partition_kind != PartitionKind::Unpartitioned;
        let method = match t.partition_kind {
            PartitionKind::Range => Some("RANGE"),
            PartitionKind::List => Some("LIST"),
            _ => None,
        };
        let expression = t
            .partition_column_meta()
            .map(|c| format!("`{}`", c.shown_name()));
        let ty = t.partition_column_meta().map(|c| c.ty.clone());
        for (n, p) in t.partitions.iter().enumerate() {
            let rows = p.num_rows();
            let bytes = p.data_bytes();
            let display = |v: &basalt_catalog::PartitionValue| match &ty {
                Some(ty) => format!("'{}'", v.display(ty)),
                None => String::new(),
            };
            let description = match &p.bound {
                PartitionBound::All => None,
                PartitionBound::Range { upper, .. } => {
                    Some(upper.as_ref().map(display).unwrap_or("MAXVALUE".into()))
                }
                PartitionBound::List { values } => {
                    Some(values.iter().map(display).collect::<Vec<_>>().join(","))
                }
            };
            b.row(vec![
                "def".into(),
                t.database.clone().into(),
                t.name.clone().into(),
                partitioned.then(|| p.name.clone()).into(),
                None::<String>.into(),
                partitioned.then_some(n as i64 + 1).into(),
                None::<i64>.into(),
                method.into(),
                None::<String>.into(),
                expression.clone().into(),
                None::<String>.into(),
                description.into(),
                (rows as i64).into(),
                (bytes.checked_div(rows).unwrap_or(0) as i64).into(),
                (bytes as i64).into(),
                0i64.into(),
                0i64.into(),
                0i64.into(),
                crate::show::format_ms(t.created_ms).into(),
                None::<String>.into(),
                None::<String>.into(),
                None::<i64>.into(),
                "".into(),
                "default".into(),
                None::<String>.into(),
            ]);
        }
    }
}
