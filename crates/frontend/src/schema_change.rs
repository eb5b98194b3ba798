//! ALTER TABLE: Doris's schema change and MySQL's column changes. The statement's changes are
//! applied in order to a copy of the table's definition, checked as CREATE TABLE checks a
//! definition (key prefix, aggregation types, defaults, partition and bucket columns), and then
//! published:
//! - changes that leave the stored rows as they are (the table's name and comment, a column's
//!   comment or default, properties other than `store_row_column`, indexes) change the catalog
//!   only;
//! - changes that reach the rows (columns added, dropped, renamed, retyped, moved, made NOT
//!   NULL) rewrite every tablet through [`StorageEngine::rewrite_table`], atomically: a value
//!   that does not fit its new type fails the statement and leaves the table as it was.
//!
//! A load that was writing under the old definition fails at publish (1412) and loads nothing.
//! MySQL's forms beyond Doris's are in [`crate::alter_mysql_forms`].

use crate::alter_mysql_forms::{self as mysql_forms, AlterNotes};
use crate::catalog_provider::Services;
use crate::output::Output;
use crate::table_def::{check_property, column_meta};
use basalt_catalog::{ColumnDefault, ColumnMeta, KeysModel, TableMeta};
use basalt_common::{BasaltError, Result, SqlType};
use basalt_sql::{AlterTableOp, ColumnDef, ColumnPosition};
use basalt_storage::{RewriteRows, RewriteScope};
use datafusion::arrow::array::{new_null_array, Array, ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{Field, Schema};
use std::sync::Arc;

/// Attempts before giving up on a table that compactions or DDL keep changing.
const ATTEMPTS: usize = 3;

/// The table's definition after the changes, and where each new column's values come from.
struct AlterPlan {
    table: TableMeta,
    /// For each column of `table`: the old column it was, or `None` when added.
    sources: Vec<Option<usize>>,
    /// True when the stored rows must be rewritten.
    rewrite: bool,
    /// `AUTO_INCREMENT = n`: the counter's new floor.
    auto_increment: Option<u64>,
}

/// Runs `ALTER TABLE db.name ops`, the references of foreign keys it adds checked when
/// `foreign_key_checks` is on; with the notes and warnings it leaves.
pub(crate) async fn alter_table(
    services: &Services,
    database: &str,
    name: &str,
    ops: &[AlterTableOp],
    foreign_key_checks: bool,
) -> Result<(Output, AlterNotes)> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        // Running loads finish first; loads that start meanwhile wait for the ALTER.
        let id = services.catalog.table(database, name)?.id;
        let _gate = services.storage.rewrite_gate(id).write_owned().await;
        let old = services.catalog.table(database, name)?;
        if old.id != id {
            continue;
        }
        let mut notes = AlterNotes::default();
        let plan = {
            let lookup = |db: &str, name: &str| services.catalog.table(db, name).ok();
            let references = References {
                lookup: &lookup,
                name_case: services.catalog.table_name_case(),
                checks: foreign_key_checks,
            };
            plan_alter(&old, ops, &references, &mut notes)?
        };
        let auto_increment = plan.auto_increment;
        let storage = services.storage.clone();
        let result = tokio::task::spawn_blocking(move || -> Result<()> {
            if plan.rewrite {
                let sources = plan.sources.clone();
                let target = plan.table.clone();
                let transform = move |batch: RecordBatch| carry_rows(&target, &sources, batch);
                storage.rewrite_table(
                    &old,
                    plan.table,
                    RewriteRows::EachStoredRow,
                    RewriteScope::AllTablets,
                    &transform,
                )?;
            } else {
                storage.alter_definition(&old, plan.table)?;
            }
            Ok(())
        })
        .await
        .map_err(|e| BasaltError::Internal(format!("ALTER TABLE task failed: {e}")))?;
        match result {
            Err(BasaltError::ConcurrentDdl(_)) if attempt < ATTEMPTS => continue,
            // MySQL's answer to NOT NULL over stored NULLs.
            Err(BasaltError::ColumnCannotBeNull(_)) => return Err(BasaltError::InvalidUseOfNull),
            Err(e) => return Err(e),
            Ok(()) => {
                if let Some(floor) = auto_increment {
                    // The next generated value is at least `floor` (never below one given).
                    services.catalog.reserve_auto_increment(id, 0, floor)?;
                }
                return Ok((Output::ok(), notes));
            }
        }
    }
}

/// How foreign keys an ALTER adds find (and check) the tables they refer to.
struct References<'a> {
    lookup: crate::table_keys::TableLookup<'a>,
    name_case: basalt_common::TableNameCase,
    checks: bool,
}

/// `ADD FOREIGN KEY`: its referenced table is in the table's database unless it names one.
fn add_foreign_key(
    table: &mut TableMeta,
    fk: &basalt_sql::ForeignKeyDef,
    refs: &References,
) -> Result<()> {
    let database = table.database.clone();
    let ref_db = match &fk.table.database {
        Some(d) => refs.name_case.stored(d),
        None => database.clone(),
    };
    crate::table_keys::add_foreign_key(table, &database, fk, &ref_db, refs.lookup, refs.checks)
}

/// Applies `ops` to a copy of `old`.
fn plan_alter(
    old: &TableMeta,
    ops: &[AlterTableOp],
    refs: &References,
    notes: &mut AlterNotes,
) -> Result<AlterPlan> {
    // A table declared in another order than it stores is changed in its declared order.
    // So is a Unique (MySQL PRIMARY KEY) table whose columns FIRST / AFTER move: a value
    // column may then be declared before the key, as MySQL allows.
    let moves = ops.iter().any(|op| {
        matches!(
            op,
            AlterTableOp::AddColumns {
                position: Some(_),
                ..
            } | AlterTableOp::ModifyColumn {
                position: Some(_),
                ..
            }
        )
    });
    let declared = old.has_declared_order() || (old.keys_model == KeysModel::Unique && moves);
    let (mut table, mut sources) = match declared {
        true => crate::alter_declared_order::declared_view(old),
        false => (old.clone(), (0..old.columns.len()).map(Some).collect()),
    };
    let mut rewrite = false;
    let mut columns_changed = false;
    let mut auto_increment = None;
    let swaps = swapped_renames(ops);
    let mut renamed_last: Vec<(String, String)> = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        match op {
            AlterTableOp::AddColumns {
                columns,
                position,
                if_not_exists,
            } => {
                let mut at = None;
                for def in columns {
                    if table.column_index(&def.name).is_some() {
                        let duplicate = BasaltError::DuplicateColumn(def.name.clone());
                        if *if_not_exists {
                            notes.skipped(duplicate);
                            continue;
                        }
                        return Err(duplicate);
                    }
                    if def.generated.is_some() {
                        return Err(BasaltError::NotSupported(
                            "adding a generated column with ALTER TABLE".into(),
                        ));
                    }
                    let column = new_column(&table, def, None)?;
                    let index = match (at, position) {
                        // The columns of one ADD COLUMN (..) stay together, in order.
                        (Some(previous), _) => previous + 1,
                        (None, Some(p)) => position_index(&table, p)?,
                        (None, None) if column.is_key && !declared => table.num_key_columns,
                        (None, None) => table.columns.len(),
                    };
                    table.columns.insert(index, column);
                    sources.insert(index, None);
                    at = Some(index);
                    if def.unique {
                        let unique = basalt_sql::unique_column_index(&def.name);
                        crate::table_keys::add_index(&mut table, &unique, false)?;
                    }
                }
                rewrite |= at.is_some();
            }
            AlterTableOp::DropColumn { name, if_exists } => {
                let Some(index) = table.column_index(name) else {
                    if *if_exists {
                        continue;
                    }
                    return Err(BasaltError::CantDropColumn(name.clone()));
                };
                check_droppable(&table, index)?;
                let name = table.columns[index].name.clone();
                crate::table_keys::drop_key_column(&mut table, &name)?;
                let dropped = table.columns.remove(index);
                sources.remove(index);
                remove_from_bloom_filters(&mut table, &dropped.name);
                rewrite = true;
            }
            AlterTableOp::ModifyColumn {
                from,
                column,
                position,
                if_exists,
            } => {
                let Some(index) = table.column_index(from) else {
                    if *if_exists {
                        notes.skipped(unknown_column(from, &table));
                        continue;
                    }
                    return Err(unknown_column(from, &table));
                };
                let held = swaps[k].then(|| held_name(k));
                if let Some(held) = &held {
                    rename_column(&mut table, index, held)?;
                    renamed_last.push((held.clone(), column.name.clone()));
                } else if !column.name.eq_ignore_ascii_case(from) {
                    rename_column(&mut table, index, &column.name)?;
                }
                let current = table.columns[index].clone();
                let mut changed = new_column(&table, column, Some(&current))?;
                check_type_change(&table, index, &current, &changed)?;
                if changed.ty != current.ty || (current.nullable && !changed.nullable) {
                    rewrite = true;
                }
                if let Some(held) = &held {
                    changed.set_name(held);
                }
                table.columns[index] = changed;
                if let Some(p) = position {
                    let column = table.columns.remove(index);
                    let source = sources.remove(index);
                    let to = position_index(&table, p)?;
                    table.columns.insert(to, column);
                    sources.insert(to, source);
                    rewrite = true;
                }
            }
            AlterTableOp::ModifyColumnComment { name, comment } => {
                let index = table
                    .column_index(name)
                    .ok_or_else(|| unknown_column(name, &table))?;
                table.columns[index].comment = comment.clone();
            }
            AlterTableOp::RenameColumn { from, to } => {
                let index = table
                    .column_index(from)
                    .ok_or_else(|| unknown_column(from, &table))?;
                if swaps[k] {
                    rename_column(&mut table, index, &held_name(k))?;
                    renamed_last.push((held_name(k), to.clone()));
                } else {
                    rename_column(&mut table, index, to)?;
                }
                // Segments name their columns; renamed columns are written anew.
                rewrite = true;
            }
            // The catalog stores it as `lower_case_table_names` says.
            AlterTableOp::Rename(new_name) => table.name = new_name.clone(),
            AlterTableOp::Comment(comment) => table.comment = comment.clone(),
            AlterTableOp::SetProperties(properties) => {
                for (k, v) in properties {
                    let key = check_property(k, v, |c| {
                        table
                            .column_index(c)
                            .map(|_| ())
                            .ok_or_else(|| unknown_column(c, &table))
                    })?;
                    if key == "enable_unique_key_merge_on_write" && !v.eq_ignore_ascii_case("true")
                    {
                        return Err(BasaltError::NotSupported(
                            "Unique-key tables are always merge-on-write".into(),
                        ));
                    }
                    if key == "store_row_column"
                        && table.stores_rows() != v.eq_ignore_ascii_case("true")
                    {
                        // Row stores are written beside each segment.
                        rewrite = true;
                    }
                    table.properties.insert(key, v.clone());
                }
                crate::dynamic_partitions::check_table(&table)?;
            }
            AlterTableOp::AddIndex {
                index,
                if_not_exists,
            } => {
                if !crate::table_keys::add_index(&mut table, index, *if_not_exists)? {
                    let name = index.name.clone().unwrap_or_default();
                    notes.skipped(BasaltError::DuplicateKeyName(name));
                }
            }
            AlterTableOp::DropIndex { name, if_exists } => {
                crate::table_keys::drop_index(&mut table, name, *if_exists)?
            }
            AlterTableOp::RenameIndex {
                from,
                to,
                if_exists,
            } => match crate::table_keys::rename_index(&mut table, from, to) {
                Err(missing @ BasaltError::KeyMissing { .. }) if *if_exists => {
                    notes.skipped(missing)
                }
                other => other?,
            },
            AlterTableOp::AddForeignKey(fk) => add_foreign_key(&mut table, fk, refs)?,
            AlterTableOp::DropForeignKey { name, if_exists } => {
                crate::table_keys::drop_foreign_key(&mut table, name, *if_exists)?
            }
            AlterTableOp::AlterColumnDefault {
                name,
                default,
                if_exists,
            } => {
                let Some(index) = table.column_index(name) else {
                    if *if_exists {
                        notes.skipped(unknown_column(name, &table));
                        continue;
                    }
                    return Err(unknown_column(name, &table));
                };
                mysql_forms::set_column_default(&mut table, index, default.as_ref())?;
            }
            AlterTableOp::AddPrimaryKey { if_not_exists, .. } => {
                mysql_forms::add_primary_key(&table, *if_not_exists, notes)?
            }
            AlterTableOp::DropPrimaryKey => mysql_forms::drop_primary_key(&table)?,
            AlterTableOp::DropConstraint { name, if_exists } => {
                mysql_forms::drop_constraint(&mut table, name, *if_exists, notes)?
            }
            AlterTableOp::AddForeignKeyIfNotExists(fk) => {
                let taken = fk.name.as_ref().is_some_and(|n| {
                    table
                        .foreign_keys
                        .iter()
                        .any(|f| f.name.eq_ignore_ascii_case(n))
                });
                match (taken, &fk.name) {
                    (true, Some(name)) => {
                        notes.skipped(BasaltError::DuplicateForeignKey(name.clone()))
                    }
                    _ => add_foreign_key(&mut table, fk, refs)?,
                }
            }
            AlterTableOp::AddCheck { name } => mysql_forms::add_check(name.as_deref(), notes),
            AlterTableOp::Option(option) => {
                if let Some(floor) = mysql_forms::table_option(&table, option, notes)? {
                    auto_increment = Some(floor);
                }
            }
        }
        columns_changed |= rewrite;
    }
    // Names held aside take their new names, each checked against the final columns.
    for (held, to) in renamed_last {
        if let Some(index) = table.column_index(&held) {
            rename_column(&mut table, index, &to)?;
            rewrite = true;
            columns_changed = true;
        }
    }
    mysql_forms::check_algorithm_and_lock(ops, rewrite)?;
    if declared {
        crate::alter_declared_order::restore_storage_order(&mut table, &mut sources);
    }
    finish(old, &mut table, &sources)?;
    if columns_changed {
        table.schema_version = old.schema_version + 1;
    }
    Ok(AlterPlan {
        table,
        sources,
        rewrite,
        auto_increment,
    })
}

/// A column definition of ADD or MODIFY checked against the table; `current` is the column a
/// MODIFY changes (its key membership and aggregation carry over when not restated).
fn new_column(
    table: &TableMeta,
    def: &ColumnDef,
    current: Option<&ColumnMeta>,
) -> Result<ColumnMeta> {
    let is_key = match current {
        Some(c) if def.key && !c.is_key => {
            return Err(ddl(format!(
                "Can not change value column '{}' to a key column",
                c.name
            )))
        }
        Some(c) => c.is_key,
        None => def.key,
    };
    // MODIFY / CHANGE may restate the AUTO_INCREMENT of the column that has it.
    if def.auto_increment && !current.is_some_and(|c| c.auto_increment) {
        return Err(BasaltError::NotSupported(format!(
            "adding or changing AUTO_INCREMENT column '{}' by ALTER TABLE",
            def.name
        )));
    }
    let mut def = def.clone();
    if let Some(c) = current {
        if def.agg.is_none() && c.agg.is_some() {
            def.agg = current_agg(c);
        }
    }
    let column = column_meta(&def, table.keys_model, is_key, false)?;
    if let Some(c) = current {
        if c.agg != column.agg {
            return Err(ddl(format!(
                "Can not change the aggregation type of column '{}'",
                c.name
            )));
        }
    }
    if is_key && matches!(column.ty, SqlType::Float | SqlType::Double) {
        return Err(ddl(format!(
            "Float or double can not used as a key, use decimal instead: '{}'",
            column.name
        )));
    }
    // A NOT NULL column without DEFAULT whose type has no implicit default (a date) can be
    // added to a table without rows only: `fill` refuses it for stored rows.
    Ok(column)
}

/// The SQL aggregation a MODIFY inherits (the catalog's kind, back in the statement's terms).
fn current_agg(c: &ColumnMeta) -> Option<basalt_sql::AggKind> {
    use basalt_catalog::AggKind as A;
    use basalt_sql::AggKind as S;
    c.agg.map(|a| match a {
        A::Sum => S::Sum,
        A::Min => S::Min,
        A::Max => S::Max,
        A::Replace => S::Replace,
        A::ReplaceIfNotNull => S::ReplaceIfNotNull,
        A::BitmapUnion => S::BitmapUnion,
        A::HllUnion => S::HllUnion,
        A::QuantileUnion => S::QuantileUnion,
    })
}

/// The value existing rows get in a NOT NULL column added without DEFAULT (MySQL's implicit
/// default): zero or the empty string; none for types without one.
fn implicit_default(ty: &SqlType) -> Option<&'static str> {
    if ty.is_numeric() || matches!(ty, SqlType::Boolean) {
        Some("0")
    } else if ty.is_string() {
        Some("")
    } else {
        None
    }
}

/// For each of `ops`, whether it renames a column to the name a later op of the statement
/// renames away (`CHANGE a b .., CHANGE b a ..` swaps two names, as MySQL allows: each op names
/// the columns as the table had them). Such a column is held under another name
/// ([`held_name`]) until every op is applied, and then takes its new name.
fn swapped_renames(ops: &[AlterTableOp]) -> Vec<bool> {
    let renames: Vec<Option<(&str, &str)>> = ops
        .iter()
        .map(|op| match op {
            AlterTableOp::ModifyColumn { from, column, .. } => {
                Some((from.as_str(), column.name.as_str()))
            }
            AlterTableOp::RenameColumn { from, to } => Some((from.as_str(), to.as_str())),
            _ => None,
        })
        .collect();
    renames
        .iter()
        .enumerate()
        .map(|(k, rename)| match rename {
            Some((from, to)) if !from.eq_ignore_ascii_case(to) => renames[k + 1..]
                .iter()
                .flatten()
                .any(|(later, _)| later.eq_ignore_ascii_case(to)),
            _ => false,
        })
        .collect()
}

/// The name the column op `k` renames is held under while the ALTER's ops apply (no column
/// name can be written so).
fn held_name(k: usize) -> String {
    format!("\u{1}renamed {k}")
}

/// Where `FIRST` / `AFTER c` puts a column in `table` (the column itself already removed).
fn position_index(table: &TableMeta, position: &ColumnPosition) -> Result<usize> {
    match position {
        ColumnPosition::First => Ok(0),
        ColumnPosition::After(name) => table
            .column_index(name)
            .map(|i| i + 1)
            .ok_or_else(|| unknown_column(name, table)),
    }
}

fn rename_column(table: &mut TableMeta, index: usize, to: &str) -> Result<()> {
    if let Some(other) = table.column_index(to) {
        if other != index {
            return Err(BasaltError::DuplicateColumn(to.to_string()));
        }
    }
    let from = table.columns[index].name.clone();
    table.columns[index].set_name(to);
    crate::table_keys::rename_key_column(table, &from, to);
    if let Some(list) = table.properties.get_mut("bloom_filter_columns") {
        *list = list
            .split(',')
            .map(str::trim)
            .map(|c| {
                if c.eq_ignore_ascii_case(&from) {
                    to.to_lowercase()
                } else {
                    c.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(",");
    }
    Ok(())
}

fn remove_from_bloom_filters(table: &mut TableMeta, column: &str) {
    if let Some(list) = table.properties.get_mut("bloom_filter_columns") {
        *list = list
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case(column))
            .collect::<Vec<_>>()
            .join(",");
    }
}

/// Key columns of Unique and Aggregate tables, partition and bucket columns, and the last
/// column stay.
fn check_droppable(table: &TableMeta, index: usize) -> Result<()> {
    let column = &table.columns[index];
    if table.columns.len() == 1 {
        return Err(BasaltError::CantDropAllColumns);
    }
    if column.is_key && table.keys_model != KeysModel::Duplicate {
        return Err(ddl(format!(
            "Can not drop key column '{}' of a {} KEY table",
            column.name,
            table.keys_model.sql_name()
        )));
    }
    if column.is_key && table.num_key_columns == 1 {
        return Err(ddl(format!(
            "Can not drop '{}', the only key column",
            column.name
        )));
    }
    if column.auto_increment {
        return Err(ddl(format!(
            "Can not drop AUTO_INCREMENT column '{}'",
            column.name
        )));
    }
    check_not_placement(table, index, "drop")
}

/// Partition and bucket columns decide where rows live: they keep their type.
fn check_type_change(
    table: &TableMeta,
    index: usize,
    current: &ColumnMeta,
    changed: &ColumnMeta,
) -> Result<()> {
    if current.ty == changed.ty {
        return Ok(());
    }
    if current.ty.is_sketch() || changed.ty.is_sketch() {
        return Err(ddl(format!(
            "Can not change column '{}' from {} to {}",
            current.name, current.ty, changed.ty
        )));
    }
    check_not_placement(table, index, "change the type of")
}

fn check_not_placement(table: &TableMeta, index: usize, verb: &str) -> Result<()> {
    let name = &table.columns[index].name;
    if table.partition_column == Some(index) {
        return Err(ddl(format!("Can not {verb} partition column '{name}'")));
    }
    if table.distribution.columns.contains(&index) {
        return Err(ddl(format!("Can not {verb} distribution column '{name}'")));
    }
    Ok(())
}

/// Key columns first, then the indexes of partition and bucket columns follow their columns.
fn finish(old: &TableMeta, table: &mut TableMeta, sources: &[Option<usize>]) -> Result<()> {
    let num_keys = table.columns.iter().take_while(|c| c.is_key).count();
    if let Some(misplaced) = table.columns[num_keys..].iter().find(|c| c.is_key) {
        return Err(ddl(format!(
            "Invalid column order: key column '{}' must come before the value columns",
            misplaced.name
        )));
    }
    if old.keeps_load_order() && num_keys > 0 {
        return Err(ddl(
            "a table in load order (enable_duplicate_without_keys_by_default) takes no key columns",
        ));
    }
    if num_keys == 0 && !old.keeps_load_order() {
        return Err(ddl("a table needs at least one key column"));
    }
    table.num_key_columns = num_keys;
    crate::table_def::check_row_store(table)?;
    let new_index = |old_index: usize| {
        sources
            .iter()
            .position(|s| *s == Some(old_index))
            .ok_or_else(|| BasaltError::Internal("ALTER lost a placement column".into()))
    };
    table.partition_column = old.partition_column.map(new_index).transpose()?;
    table.distribution.columns = old
        .distribution
        .columns
        .iter()
        .map(|&i| new_index(i))
        .collect::<Result<_>>()?;
    if table.keys_model != KeysModel::Duplicate {
        let placed = table
            .partition_column
            .iter()
            .chain(&table.distribution.columns);
        if let Some(&i) = placed.into_iter().find(|&&i| i >= num_keys) {
            return Err(ddl(format!(
                "Column '{}' places rows (partition or bucket column) and must stay in the key",
                table.columns[i].name
            )));
        }
    }
    Ok(())
}

/// One batch of the old definition's rows in the new definition's columns.
fn carry_rows(
    table: &TableMeta,
    sources: &[Option<usize>],
    batch: RecordBatch,
) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let mut columns = Vec::with_capacity(table.columns.len());
    for (column, source) in table.columns.iter().zip(sources) {
        let target = column.ty.arrow_type();
        let values = match source {
            Some(old) => {
                let values = batch.column(*old);
                if values.data_type() == &target {
                    values.clone()
                } else {
                    // INT UNSIGNED is Arrow UInt32 too: only an IPV4 column's values are addresses.
                    let addresses =
                        basalt_common::ip_address::ip_family(batch.schema().field(*old))
                            == Some(basalt_common::ip_address::IpFamily::V4);
                    convert(values, column, addresses)?
                }
            }
            None => fill(column, rows)?,
        };
        columns.push(values);
    }
    // NOT NULL is checked after this, with the column's name in the error.
    let fields: Vec<Field> = table
        .arrow_schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| BasaltError::Internal(e.to_string()))
}

/// Old values in a column's new type (`ipv4_values`: they are IPV4 addresses); a value that
/// does not convert fails the ALTER.
fn convert(values: &ArrayRef, column: &ColumnMeta, ipv4_values: bool) -> Result<ArrayRef> {
    if let Some(addresses) = convert_addresses(values, column, ipv4_values)? {
        return Ok(addresses);
    }
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(values, &column.ty.arrow_type(), &strict).map_err(|e| {
        BasaltError::InvalidData(format!(
            "column '{}' can not hold an existing value as {}: {e}",
            column.name, column.ty
        ))
    })
}

/// Values into or out of an address column: text read as IPV4 / IPV6 addresses, IPV4 values
/// as IPV6 ones or as their text (None for other conversions).
fn convert_addresses(
    values: &ArrayRef,
    column: &ColumnMeta,
    ipv4_values: bool,
) -> Result<Option<ArrayRef>> {
    use basalt_common::ip_address::{format_ipv4, ip_column, ipv4_to_ipv6, IpFamily};
    use datafusion::arrow::array::{AsArray, BinaryArray};
    use datafusion::arrow::datatypes::{DataType, UInt32Type};
    let is_text = matches!(
        values.data_type(),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8
    );
    let family = column.ty.ip_family();
    Ok(match (family, values.data_type()) {
        (Some(family), _) if is_text => {
            let strict = CastOptions::default();
            let text = cast_with_options(values, &DataType::Utf8, &strict)
                .map_err(|e| BasaltError::Internal(e.to_string()))?;
            let strings = text.as_string::<i32>();
            let (addresses, failed) = ip_column(strings, family);
            if let Some(&row) = failed.first() {
                return Err(BasaltError::InvalidData(format!(
                    "column '{}' can not hold an existing value as {}: '{}'",
                    column.name,
                    column.ty,
                    strings.value(row)
                )));
            }
            Some(addresses)
        }
        (Some(IpFamily::V6), DataType::UInt32) if ipv4_values => Some(Arc::new(
            values
                .as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map(|v| ipv4_to_ipv6(v).to_be_bytes()))
                .collect::<BinaryArray>(),
        )),
        (None, DataType::UInt32) if ipv4_values && column.ty.is_string() => Some(Arc::new(
            values
                .as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map(format_ipv4))
                .collect::<StringArray>(),
        )),
        _ => None,
    })
}

/// The value existing rows get in an added column: its DEFAULT, else NULL, else the type's
/// implicit default.
fn fill(column: &ColumnMeta, rows: usize) -> Result<ArrayRef> {
    let text = match &column.default {
        Some(ColumnDefault::Literal(v)) => v.clone(),
        Some(ColumnDefault::CurrentTimestamp) => chrono::Utc::now()
            .format("%Y-%m-%d %H:%M:%S%.6f")
            .to_string(),
        Some(ColumnDefault::Expression(text)) => {
            // Each row's own value (`uuid()` differs).
            let ty = column.ty.arrow_type();
            let values = basalt_functions::generated_columns::default_values(text, &ty, rows)
                .map_err(|e| ddl(format!("DEFAULT ({text}) of '{}': {e}", column.name)))?;
            return convert(&values, column, false);
        }
        Some(ColumnDefault::Null) | None if column.nullable => {
            return Ok(new_null_array(&column.ty.arrow_type(), rows))
        }
        Some(ColumnDefault::Null) | None if rows == 0 => {
            return Ok(datafusion::arrow::array::new_empty_array(
                &column.ty.arrow_type(),
            ))
        }
        Some(ColumnDefault::Null) | None => implicit_default(&column.ty)
            .ok_or_else(|| {
                ddl(format!(
                    "Column '{}' is NOT NULL and its type has no implicit default: give it a DEFAULT (the table has rows)",
                    column.name
                ))
            })?
            .to_string(),
    };
    let text: ArrayRef = Arc::new(StringArray::from(vec![text.as_str(); rows]));
    let values = convert(&text, column, false)?;
    debug_assert_eq!(values.len(), rows);
    Ok(values)
}

fn unknown_column(name: &str, table: &TableMeta) -> BasaltError {
    BasaltError::UnknownColumn {
        column: name.to_string(),
        context: format!("table {}", table.name),
    }
}

fn ddl(msg: impl Into<String>) -> BasaltError {
    BasaltError::InvalidDdl(msg.into())
}
