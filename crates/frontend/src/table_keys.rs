//! Secondary indexes and foreign keys of a table's definition, from the parsed DDL to the
//! catalog's [`IndexMeta`] and [`ForeignKeyMeta`], checked as MySQL checks them: the columns
//! exist (1072), index names are unique (1061) and not `PRIMARY` (1280), a foreign key names as
//! many columns as it references (1239) and, with `foreign_key_checks` on, a table and columns
//! that exist (1824, 3734). Unnamed ones are named as MySQL names them (an index after its
//! first column, `col_2` when taken; a foreign key `<table>_ibfk_<n>`), and a foreign key
//! without an index leading with its columns gets one, as InnoDB adds it. Both are
//! informational (see `basalt_catalog::IndexMeta`): nothing checks rows against them.

use basalt_catalog::{ForeignKeyMeta, IndexColumnMeta, IndexKind, IndexMeta, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql as sql;
use std::sync::Arc;

/// Finds a table by database and name (as the catalog stores names).
pub(crate) type TableLookup<'a> = &'a dyn Fn(&str, &str) -> Option<Arc<TableMeta>>;

fn kind(k: sql::IndexKind) -> IndexKind {
    match k {
        sql::IndexKind::Plain => IndexKind::Plain,
        sql::IndexKind::Unique => IndexKind::Unique,
        sql::IndexKind::Fulltext => IndexKind::Fulltext,
        sql::IndexKind::Inverted => IndexKind::Inverted,
        sql::IndexKind::Bitmap => IndexKind::Bitmap,
        sql::IndexKind::NgramBf => IndexKind::NgramBf,
    }
}

fn index_named<'a>(table: &'a TableMeta, name: &str) -> Option<&'a IndexMeta> {
    table
        .indexes
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(name))
}

/// True when `name` is taken by an index of `table` (or is the primary key's).
fn index_name_taken(table: &TableMeta, name: &str) -> bool {
    name.eq_ignore_ascii_case("PRIMARY") || index_named(table, name).is_some()
}

/// MySQL's name for an unnamed index on `first`: the column's name, else `first_2`, `first_3`..
fn free_index_name(table: &TableMeta, first: &str) -> String {
    if !index_name_taken(table, first) {
        return first.to_string();
    }
    (2..)
        .map(|n| format!("{first}_{n}"))
        .find(|name| !index_name_taken(table, name))
        .unwrap_or_else(|| first.to_string())
}

/// The shown name of `table`'s column `name`, or 1072 when it has none.
fn key_column(table: &TableMeta, name: &str) -> Result<String> {
    table
        .column_index(name)
        .map(|i| table.columns[i].name.clone())
        .ok_or_else(|| BasaltError::KeyColumnMissing(name.to_string()))
}

/// A prefix length (`col(n)`) needs a string column at least `n` long (1089).
fn check_prefix(table: &TableMeta, column: &str, length: u32) -> Result<()> {
    use basalt_common::SqlType;
    let Some(i) = table.column_index(column) else {
        return Ok(());
    };
    let fits = match &table.columns[i].ty {
        SqlType::Char(n) | SqlType::Varchar(n) | SqlType::Binary(n) | SqlType::Varbinary(n) => {
            length <= *n
        }
        ty => ty.is_string() || ty.is_binary(),
    };
    match fits {
        true => Ok(()),
        false => Err(BasaltError::WrongPrefixKey),
    }
}

/// Adds the index `def` declares to `table`; false (nothing added) when `if_not_exists` and
/// one of the name exists.
pub(crate) fn add_index(
    table: &mut TableMeta,
    def: &sql::IndexDef,
    if_not_exists: bool,
) -> Result<bool> {
    let mut columns = Vec::with_capacity(def.columns.len());
    for c in &def.columns {
        let name = key_column(table, &c.name)?;
        if let Some(length) = c.length {
            check_prefix(table, &name, length)?;
        }
        if columns.iter().any(|k: &IndexColumnMeta| k.name == name) {
            return Err(BasaltError::DuplicateColumn(c.name.clone()));
        }
        columns.push(IndexColumnMeta {
            name,
            length: c.length,
        });
    }
    let kind = kind(def.kind);
    if kind.is_doris() && columns.len() != 1 {
        return Err(BasaltError::InvalidDdl(format!(
            "{} index '{}' takes exactly one column",
            kind.index_type(),
            def.name.as_deref().unwrap_or_default()
        )));
    }
    if kind == IndexKind::Inverted {
        // The analyzer it names must be one Basalt can cut words with (MATCH_* reads it).
        basalt_functions::full_text::check_analyzer(&def.properties)
            .map_err(BasaltError::InvalidDdl)?;
    }
    let name = match &def.name {
        Some(n) if n.eq_ignore_ascii_case("PRIMARY") => {
            return Err(BasaltError::WrongIndexName(n.clone()))
        }
        Some(n) if index_name_taken(table, n) => {
            return match if_not_exists {
                true => Ok(false),
                false => Err(BasaltError::DuplicateKeyName(n.clone())),
            }
        }
        Some(n) => n.clone(),
        None => {
            let first = &def.columns[0].name;
            let shown = table
                .column_index(first)
                .map(|i| table.columns[i].shown_name().to_string())
                .unwrap_or_else(|| first.clone());
            free_index_name(table, &shown)
        }
    };
    table.indexes.push(IndexMeta {
        name,
        kind,
        columns,
        comment: def.comment.clone().unwrap_or_default(),
        properties: def.properties.clone(),
    });
    Ok(true)
}

/// `DROP INDEX name`: 1091 when there is none (unless `if_exists`).
pub(crate) fn drop_index(table: &mut TableMeta, name: &str, if_exists: bool) -> Result<()> {
    match table
        .indexes
        .iter()
        .position(|i| i.name.eq_ignore_ascii_case(name))
    {
        Some(at) => {
            let dropped = table.indexes.remove(at);
            if table
                .foreign_keys
                .iter()
                .any(|f| !has_leading_index(table, &f.columns))
            {
                // Refused: the table keeps the index.
                let name = dropped.name.clone();
                table.indexes.insert(at, dropped);
                return Err(BasaltError::IndexNeededByForeignKey(name));
            }
            Ok(())
        }
        None if if_exists => Ok(()),
        None => Err(BasaltError::CantDropColumn(name.to_string())),
    }
}

/// `RENAME INDEX from TO to`.
pub(crate) fn rename_index(table: &mut TableMeta, from: &str, to: &str) -> Result<()> {
    if to.eq_ignore_ascii_case("PRIMARY") {
        return Err(BasaltError::WrongIndexName(to.to_string()));
    }
    if !from.eq_ignore_ascii_case(to) && index_name_taken(table, to) {
        return Err(BasaltError::DuplicateKeyName(to.to_string()));
    }
    let table_name = table.name.clone();
    let index = table
        .indexes
        .iter_mut()
        .find(|i| i.name.eq_ignore_ascii_case(from))
        .ok_or_else(|| BasaltError::KeyMissing {
            key: from.to_string(),
            table: table_name,
        })?;
    index.name = to.to_string();
    Ok(())
}

/// Adds the foreign key `def` declares to `table` (in `database`); `lookup` finds the
/// referenced table, checked when `checks` (`foreign_key_checks`) is on. A reference to the
/// table itself resolves against `table`.
pub(crate) fn add_foreign_key(
    table: &mut TableMeta,
    database: &str,
    def: &sql::ForeignKeyDef,
    ref_database: &str,
    lookup: TableLookup,
    checks: bool,
) -> Result<()> {
    let name = def.name.clone().unwrap_or_else(|| next_fk_name(table));
    if table
        .foreign_keys
        .iter()
        .any(|f| f.name.eq_ignore_ascii_case(&name))
    {
        return Err(BasaltError::DuplicateForeignKey(name));
    }
    if def.columns.len() != def.referenced.len() {
        return Err(BasaltError::ForeignKeyMismatch(name));
    }
    let columns = def
        .columns
        .iter()
        .map(|c| key_column(table, c))
        .collect::<Result<Vec<_>>>()?;
    let self_reference =
        ref_database == database && def.table.table.eq_ignore_ascii_case(&table.name);
    if checks {
        let referenced = match self_reference {
            true => Some(Arc::new(table.clone())),
            false => lookup(ref_database, &def.table.table),
        };
        let Some(referenced) = referenced else {
            return Err(BasaltError::ForeignKeyTableMissing(format!(
                "{ref_database}.{}",
                def.table.table
            )));
        };
        if let Some(missing) = def
            .referenced
            .iter()
            .find(|c| referenced.column_index(c).is_none())
        {
            return Err(BasaltError::ForeignKeyColumnMissing {
                column: missing.clone(),
                constraint: name,
                table: referenced.name.clone(),
            });
        }
    }
    if !has_leading_index(table, &columns) {
        let index = sql::IndexDef {
            name: def.name.clone(),
            kind: sql::IndexKind::Plain,
            columns: def
                .columns
                .iter()
                .map(|c| sql::IndexColumn {
                    name: c.clone(),
                    length: None,
                })
                .collect(),
            comment: None,
            properties: Vec::new(),
        };
        add_index(table, &index, false)?;
    }
    table.foreign_keys.push(ForeignKeyMeta {
        name,
        columns,
        ref_database: ref_database.to_string(),
        ref_table: match self_reference {
            true => table.name.clone(),
            false => def.table.table.clone(),
        },
        ref_columns: def.referenced.clone(),
        on_delete: def.on_delete.map(|a| a.sql().to_string()),
        on_update: def.on_update.map(|a| a.sql().to_string()),
    });
    Ok(())
}

/// True when an index of `table` (or its sort key) starts with `columns`.
fn has_leading_index(table: &TableMeta, columns: &[String]) -> bool {
    let leads = |names: Vec<&str>| {
        names.len() >= columns.len() && names.iter().zip(columns).all(|(a, b)| a == b)
    };
    leads(
        table
            .key_columns()
            .iter()
            .map(|c| c.name.as_str())
            .collect(),
    ) || table
        .indexes
        .iter()
        .any(|i| leads(i.columns.iter().map(|c| c.name.as_str()).collect()))
}

/// InnoDB's name for an unnamed foreign key: `<table>_ibfk_<n>`, one past the highest taken.
fn next_fk_name(table: &TableMeta) -> String {
    let prefix = format!("{}_ibfk_", table.name);
    let highest = table
        .foreign_keys
        .iter()
        .filter_map(|f| f.name.strip_prefix(&prefix)?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!("{prefix}{}", highest + 1)
}

/// `DROP FOREIGN KEY name`: 1091 when there is none (unless `if_exists`). Its index stays,
/// as in MySQL.
pub(crate) fn drop_foreign_key(table: &mut TableMeta, name: &str, if_exists: bool) -> Result<()> {
    match table
        .foreign_keys
        .iter()
        .position(|f| f.name.eq_ignore_ascii_case(name))
    {
        Some(at) => {
            table.foreign_keys.remove(at);
            Ok(())
        }
        None if if_exists => Ok(()),
        None => Err(BasaltError::CantDropColumn(name.to_string())),
    }
}

/// A column renamed from `from` (lower case) keeps its place in indexes and foreign keys.
pub(crate) fn rename_key_column(table: &mut TableMeta, from: &str, to: &str) {
    let to = to.to_lowercase();
    for c in table.indexes.iter_mut().flat_map(|i| i.columns.iter_mut()) {
        if c.name == from {
            c.name = to.clone();
        }
    }
    for c in table
        .foreign_keys
        .iter_mut()
        .flat_map(|f| f.columns.iter_mut())
    {
        if *c == from {
            *c = to.clone();
        }
    }
}

/// A dropped column (lower case) leaves its indexes (an index left without columns goes, as
/// in MySQL); a column a foreign key uses cannot be dropped (1828).
pub(crate) fn drop_key_column(table: &mut TableMeta, column: &str) -> Result<()> {
    if let Some(fk) = table
        .foreign_keys
        .iter()
        .find(|f| f.columns.iter().any(|c| c == column))
    {
        return Err(BasaltError::ForeignKeyColumnDrop {
            column: column.to_string(),
            constraint: fk.name.clone(),
        });
    }
    for index in &mut table.indexes {
        index.columns.retain(|c| c.name != column);
    }
    table.indexes.retain(|i| !i.columns.is_empty());
    Ok(())
}

/// The warning a UNIQUE index gets when created: Basalt keeps it and does not enforce it.
pub(crate) fn unenforced_unique(index: &str) -> (u16, String) {
    (
        1235,
        format!(
            "This version of Basalt doesn't yet support 'enforcing UNIQUE index `{index}`': \
             the index is kept in the table's definition and duplicates are not rejected"
        ),
    )
}

/// The unique indexes `after` has that `before` had not (their warnings are due).
pub(crate) fn new_unique_indexes<'a>(
    before: Option<&TableMeta>,
    after: &'a TableMeta,
) -> Vec<&'a str> {
    after
        .indexes
        .iter()
        .filter(|i| i.kind == IndexKind::Unique)
        .filter(|i| before.is_none_or(|b| index_named(b, &i.name).is_none()))
        .map(|i| i.name.as_str())
        .collect()
}

/// The name of the unique key of `table` whose columns are `columns` (PRIMARY for a Unique
/// table's key), as REFERENTIAL_CONSTRAINTS names the key a foreign key refers to.
pub(crate) fn unique_key_named_by(table: &TableMeta, columns: &[String]) -> Option<String> {
    let same = |names: Vec<&str>| {
        names.len() == columns.len()
            && names
                .iter()
                .zip(columns)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    };
    if table.keys_model == basalt_catalog::KeysModel::Unique
        && same(
            table
                .key_columns()
                .iter()
                .map(|c| c.name.as_str())
                .collect(),
        )
    {
        return Some("PRIMARY".into());
    }
    table
        .indexes
        .iter()
        .filter(|i| i.kind == IndexKind::Unique)
        .find(|i| same(i.columns.iter().map(|c| c.name.as_str()).collect()))
        .map(|i| i.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TableMeta {
        let stmt = match basalt_sql::parse_one(
            "CREATE TABLE t (id INT PRIMARY KEY, a INT, B INT, c VARCHAR(20))",
        )
        .unwrap()
        {
            basalt_sql::Statement::CreateTable(t) => t,
            other => panic!("{other:?}"),
        };
        crate::table_def::build_for_tests(&stmt).unwrap()
    }

    fn index(sql: &str) -> sql::IndexDef {
        match basalt_sql::parse_one(sql).unwrap() {
            basalt_sql::Statement::CreateIndex { index, .. } => index,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn index_names_and_checks() {
        let mut t = table();
        let mut unnamed = index("CREATE INDEX x ON t (b, a)");
        unnamed.name = None;
        assert!(add_index(&mut t, &unnamed, false).unwrap());
        assert!(add_index(&mut t, &unnamed, false).unwrap());
        let names: Vec<&str> = t.indexes.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["B", "B_2"]);
        assert_eq!(t.indexes[0].columns[0].name, "b");
        let e = add_index(&mut t, &index("CREATE INDEX b ON t (a)"), false).unwrap_err();
        assert_eq!(e.mysql_code(), 1061);
        assert!(!add_index(&mut t, &index("CREATE INDEX b ON t (a)"), true).unwrap());
        let e = add_index(&mut t, &index("CREATE INDEX z ON t (nope)"), false).unwrap_err();
        assert_eq!(e.mysql_code(), 1072);
        let e = add_index(&mut t, &index("CREATE INDEX primary ON t (a)"), false).unwrap_err();
        assert_eq!(e.mysql_code(), 1280);
        drop_index(&mut t, "b_2", false).unwrap();
        assert_eq!(
            drop_index(&mut t, "b_2", false).unwrap_err().mysql_code(),
            1091
        );
        drop_index(&mut t, "b_2", true).unwrap();
        rename_key_column(&mut t, "a", "A2");
        assert_eq!(t.indexes[0].columns[1].name, "a2");
        drop_key_column(&mut t, "b").unwrap();
        drop_key_column(&mut t, "a2").unwrap();
        assert!(t.indexes.is_empty());
    }

    #[test]
    fn foreign_keys_are_named_indexed_and_checked() {
        let mut t = table();
        let parent = Arc::new(table());
        let lookup = |db: &str, name: &str| (db == "d" && name == "p").then(|| parent.clone());
        let fk = |sql: &str| -> sql::ForeignKeyDef {
            match basalt_sql::parse_one(sql).unwrap() {
                basalt_sql::Statement::AlterTable { mut ops, .. } => match ops.remove(0) {
                    sql::AlterTableOp::AddForeignKey(fk) => fk,
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            }
        };
        let plain = fk("ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES p (id)");
        add_foreign_key(&mut t, "d", &plain, "d", &lookup, true).unwrap();
        add_foreign_key(&mut t, "d", &plain, "d", &lookup, true).unwrap();
        let names: Vec<&str> = t.foreign_keys.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["t_ibfk_1", "t_ibfk_2"]);
        // One index for both, named after the column, as InnoDB adds it.
        assert_eq!(t.indexes.len(), 1);
        assert_eq!(t.indexes[0].name, "a");
        let named = fk(
            "ALTER TABLE t ADD CONSTRAINT fk_c FOREIGN KEY (c) REFERENCES p (id) ON DELETE CASCADE",
        );
        add_foreign_key(&mut t, "d", &named, "d", &lookup, true).unwrap();
        assert_eq!(t.indexes[1].name, "fk_c");
        assert_eq!(t.foreign_keys[2].on_delete.as_deref(), Some("CASCADE"));
        let e = add_foreign_key(&mut t, "d", &named, "d", &lookup, true).unwrap_err();
        assert_eq!(e.mysql_code(), 1826);
        let missing = fk("ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES q (id)");
        let e = add_foreign_key(&mut t, "d", &missing, "d", &lookup, true).unwrap_err();
        assert_eq!(e.mysql_code(), 1824);
        add_foreign_key(&mut t, "d", &missing, "d", &lookup, false).unwrap();
        let bad_column = fk("ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES p (nope)");
        let e = add_foreign_key(&mut t, "d", &bad_column, "d", &lookup, true).unwrap_err();
        assert_eq!(e.mysql_code(), 3734);
        let count = fk("ALTER TABLE t ADD FOREIGN KEY (a, b) REFERENCES p (id)");
        let e = add_foreign_key(&mut t, "d", &count, "d", &lookup, true).unwrap_err();
        assert_eq!(e.mysql_code(), 1239);
        let own = fk("ALTER TABLE t ADD FOREIGN KEY (b) REFERENCES t (id)");
        add_foreign_key(&mut t, "d", &own, "d", &|_: &str, _: &str| None, true).unwrap();
        assert_eq!(drop_key_column(&mut t, "c").unwrap_err().mysql_code(), 1828);
        assert_eq!(
            drop_index(&mut t, "fk_c", false).unwrap_err().mysql_code(),
            1553
        );
        drop_foreign_key(&mut t, "fk_c", false).unwrap();
        drop_index(&mut t, "fk_c", false).unwrap();
        assert_eq!(
            drop_foreign_key(&mut t, "fk_c", false)
                .unwrap_err()
                .mysql_code(),
            1091
        );
        assert_eq!(
            unique_key_named_by(&parent, &["ID".into()]).as_deref(),
            Some("PRIMARY")
        );
    }
}
