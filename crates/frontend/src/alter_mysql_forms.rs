//! The changes of MySQL's `ALTER TABLE` beyond Doris's schema change, applied to the copy of
//! a table's definition [`crate::schema_change`] works on: a column's default (`ALTER COLUMN c
//! SET | DROP DEFAULT`), the primary key (`ADD | DROP PRIMARY KEY`, which Basalt cannot change:
//! a table's key model is chosen when it is created), `DROP CONSTRAINT` and the table options
//! that change nothing stored. What MariaDB answers with a note (`IF [NOT] EXISTS` forms) or a
//! warning (`ORDER BY`) is collected in [`AlterNotes`].

use crate::table_def::column_meta;
use basalt_catalog::{ColumnDefault, KeysModel, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::{AlterTableOption, ColumnDef, DefaultValue};

/// The notes and warnings one ALTER TABLE leaves: (level, code, message).
#[derive(Debug, Default)]
pub(crate) struct AlterNotes(pub Vec<(&'static str, u16, String)>);

impl AlterNotes {
    pub(crate) fn note(&mut self, code: u16, message: String) {
        self.0.push(("Note", code, message));
    }

    /// A skipped `IF [NOT] EXISTS` change: the error it would have been, as a note.
    pub(crate) fn skipped(&mut self, error: BasaltError) {
        self.note(error.mysql_code(), error.to_string());
    }
}

/// `ALTER [COLUMN] name SET DEFAULT v` (`default` Some) or `DROP DEFAULT`, the value checked as
/// CREATE TABLE checks it for the column's type.
pub(crate) fn set_column_default(
    table: &mut TableMeta,
    index: usize,
    default: Option<&DefaultValue>,
) -> Result<()> {
    let current = table.columns[index].clone();
    let Some(default) = default else {
        table.columns[index].default = None;
        return Ok(());
    };
    let invalid = || BasaltError::InvalidDefault(current.shown_name().to_string());
    if current.generated.is_some() || current.auto_increment {
        return Err(invalid());
    }
    let def = ColumnDef {
        name: current.shown_name().to_string(),
        ty: current.ty.clone(),
        agg: None,
        nullable: Some(current.nullable),
        default: Some(default.clone()),
        comment: None,
        auto_increment: false,
        key: current.is_key,
        unique: false,
        generated: None,
        allowed: None,
        on_update: false,
    };
    // Checked as a Duplicate table's column: only the default is taken from it.
    let mut value = match column_meta(&def, KeysModel::Duplicate, current.is_key, false) {
        Ok(checked) => checked.default,
        // Refused as CREATE TABLE refuses it.
        Err(e @ BasaltError::NotSupported(_)) => return Err(e),
        Err(_) => return Err(invalid()),
    };
    if let (Some(allowed), Some(ColumnDefault::Literal(v))) = (&current.allowed, &value) {
        match allowed.admit(v) {
            Some(stored) => value = Some(ColumnDefault::Literal(stored)),
            None => return Err(invalid()),
        }
    }
    table.columns[index].default = value;
    Ok(())
}

/// True when the table has MySQL's PRIMARY KEY: a Unique table's key.
fn has_primary_key(table: &TableMeta) -> bool {
    table.keys_model == KeysModel::Unique
}

/// `ADD PRIMARY KEY (columns)`: 1068 when the table has one (a note with IF NOT EXISTS); a
/// table without one cannot get one, its key model being fixed at CREATE TABLE.
pub(crate) fn add_primary_key(
    table: &TableMeta,
    if_not_exists: bool,
    notes: &mut AlterNotes,
) -> Result<()> {
    if has_primary_key(table) {
        if !if_not_exists {
            return Err(BasaltError::MultiplePrimaryKey);
        }
        notes.skipped(BasaltError::MultiplePrimaryKey);
        return Ok(());
    }
    Err(BasaltError::NotSupported(format!(
        "ADD PRIMARY KEY to {} KEY table '{}' (a table's key model is chosen when it is created: CREATE TABLE .. (PRIMARY KEY (..)) AS SELECT * FROM {} copies it into one)",
        table.keys_model.sql_name(),
        table.name,
        table.name
    )))
}

/// `DROP PRIMARY KEY`: the key of a Unique table decides which rows replace which, so it
/// stays; a table without one answers 1091 as MySQL does.
pub(crate) fn drop_primary_key(table: &TableMeta) -> Result<()> {
    if has_primary_key(table) {
        return Err(BasaltError::NotSupported(format!(
            "DROP PRIMARY KEY (the key of UNIQUE KEY table '{}' decides which rows replace which, and is fixed when the table is created)",
            table.name
        )));
    }
    Err(BasaltError::CantDropColumn("PRIMARY".into()))
}

/// `DROP CONSTRAINT name`: the unique key or foreign key of the name (Basalt keeps no CHECK
/// constraints); 1091 when there is none, a note with IF EXISTS.
pub(crate) fn drop_constraint(
    table: &mut TableMeta,
    name: &str,
    if_exists: bool,
    notes: &mut AlterNotes,
) -> Result<()> {
    let is_unique = table
        .indexes
        .iter()
        .any(|i| i.name.eq_ignore_ascii_case(name) && i.kind == basalt_catalog::IndexKind::Unique);
    if is_unique {
        return crate::table_keys::drop_index(table, name, false);
    }
    let is_foreign_key = table
        .foreign_keys
        .iter()
        .any(|f| f.name.eq_ignore_ascii_case(name));
    if is_foreign_key {
        return crate::table_keys::drop_foreign_key(table, name, false);
    }
    let missing = BasaltError::CantDropColumn(name.to_string());
    if !if_exists {
        return Err(missing);
    }
    notes.skipped(missing);
    Ok(())
}

/// A table option: the engine checked as CREATE TABLE checks it; `AUTO_INCREMENT = n`
/// returned for the caller to apply once the ALTER is published.
pub(crate) fn table_option(
    table: &TableMeta,
    option: &AlterTableOption,
    notes: &mut AlterNotes,
) -> Result<Option<u64>> {
    match option {
        AlterTableOption::Engine(engine) => crate::table_def::check_engine(engine)?,
        AlterTableOption::AutoIncrement(n) => return Ok(Some(*n)),
        AlterTableOption::OrderBy => notes.0.push((
            "Warning",
            1105,
            format!(
                "ORDER BY ignored as Basalt keeps the rows of table '{}' in its sort key order",
                table.name
            ),
        )),
        AlterTableOption::Algorithm(_) | AlterTableOption::Lock(_) | AlterTableOption::NoEffect => {
        }
    }
    Ok(None)
}

/// The `ALGORITHM` and `LOCK` a statement asks for, checked once its changes are known
/// (`rewrite`: the stored rows are written anew, which is a copy during which loads wait).
pub(crate) fn check_algorithm_and_lock(
    ops: &[basalt_sql::AlterTableOp],
    rewrite: bool,
) -> Result<()> {
    if !rewrite {
        return Ok(());
    }
    for op in ops {
        match op {
            basalt_sql::AlterTableOp::Option(AlterTableOption::Algorithm(a))
                if matches!(a.as_str(), "INSTANT" | "NOCOPY") =>
            {
                return Err(BasaltError::AlterAlgorithm {
                    operation: format!("ALGORITHM={a}"),
                    try_instead: "ALGORITHM=COPY".into(),
                })
            }
            basalt_sql::AlterTableOp::Option(AlterTableOption::Lock(l)) if l == "NONE" => {
                return Err(BasaltError::AlterLock {
                    operation: "LOCK=NONE".into(),
                    reason: "loads wait while ALTER TABLE rewrites the table's rows".into(),
                    try_instead: "LOCK=SHARED".into(),
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// `ADD CHECK`: Basalt keeps and enforces no CHECK constraint, and says so.
pub(crate) fn add_check(name: Option<&str>, notes: &mut AlterNotes) {
    let name = name.map(|n| format!(" '{n}'")).unwrap_or_default();
    notes.0.push((
        "Warning",
        1235,
        format!("CHECK constraint{name} is accepted but not kept or enforced by Basalt"),
    ));
}
