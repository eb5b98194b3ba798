//! Doris's INSERT into named partitions and INSERT OVERWRITE:
//!
//! - `INSERT INTO t PARTITION (p1, p2) ..` writes only into those partitions; a row of another
//!   partition fails the statement (1748, as MySQL), so nothing is written.
//! - `INSERT OVERWRITE TABLE t ..` replaces the table's rows with the statement's: every
//!   partition is emptied, the rows land where they belong. On an AUTO PARTITION table a row
//!   with no partition makes its partition only with `enable_auto_create_when_overwrite` on;
//!   otherwise it fails the statement.
//! - `INSERT OVERWRITE TABLE t PARTITION (p1, p2) ..` replaces the rows of those partitions
//!   only (rows of others fail the statement, as above).
//! - `INSERT OVERWRITE TABLE t PARTITION (*) ..` replaces the partitions the rows fall in and
//!   leaves the others as they were.
//!
//! An overwrite is staged as a multi-table write is ([`crate::transaction::stage_statement`]):
//! the rows are written, then the partitions it overwrites drop every rowset they held before
//! it, and all of that publishes at once — other sessions see the old rows until then, and a
//! statement that fails leaves the table as it was.

use super::ddl::database_of;
use crate::engine::{split_name, QueryEngine};
use crate::output::Output;
use crate::session::Session;
use crate::transaction::rowset_ids;
use basalt_catalog::{PartitionId, Privilege, RowsetMeta, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_query::{PartitionTargets, TargetPartitions};
use basalt_sql::ast;
use std::collections::HashSet;
use std::sync::Arc;

/// The partitions a statement names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Named {
    /// No PARTITION clause.
    All,
    /// `PARTITION (p1, ..)`, as the table spells them.
    These(Vec<String>),
    /// `PARTITION (*)`: those the rows fall in.
    Detected,
    /// Doris's `TEMPORARY PARTITION (tp1, ..)`, as the table spells them.
    Temporary(Vec<String>),
}

/// The partition list of `insert`, checked against `table`.
fn named_partitions(table: &TableMeta, insert: &ast::Insert) -> Result<Named> {
    let Some(exprs) = &insert.partitioned else {
        return Ok(Named::All);
    };
    let mut names = Vec::with_capacity(exprs.len());
    let mut temporary = Vec::new();
    for expr in exprs {
        let ident = match expr {
            ast::Expr::Identifier(ident) => ident,
            other => return Err(syntax("expected a partition name", other.to_string())),
        };
        if ident.value == "*" && ident.quote_style.is_some() {
            if exprs.len() > 1 {
                return Err(syntax("PARTITION (*) names no other partition", "*".into()));
            }
            return Ok(Named::Detected);
        }
        if let Some(name) = basalt_sql::temporary_partition(&ident.value) {
            let partition = table
                .temporary_partition_by_name(name)
                .ok_or_else(|| BasaltError::UnknownPartition(name.to_string()))?;
            if !temporary.contains(&partition.name) {
                temporary.push(partition.name.clone());
            }
            continue;
        }
        let partition = table
            .partition_by_name(&ident.value)
            .ok_or_else(|| BasaltError::UnknownPartition(ident.value.clone()))?;
        if !names.contains(&partition.name) {
            names.push(partition.name.clone());
        }
    }
    match (names.is_empty(), temporary.is_empty()) {
        (true, false) => Ok(Named::Temporary(temporary)),
        (_, true) => Ok(Named::These(names)),
        (false, false) => Err(BasaltError::NotSupported(
            "writing formal and temporary partitions in one partition list".into(),
        )),
    }
}

fn syntax(message: &str, near: String) -> BasaltError {
    BasaltError::Syntax {
        message: message.into(),
        near,
        line: 1,
    }
}

/// The partitions an overwrite empties of the rows they held before it (`before`): all, the
/// named ones, or those the statement wrote rows into.
fn overwritten(table: &TableMeta, named: &Named, before: &HashSet<u64>) -> HashSet<PartitionId> {
    table
        .partitions
        .iter()
        .filter(|p| match named {
            Named::All => true,
            Named::These(names) => names.contains(&p.name),
            Named::Temporary(_) => false,
            Named::Detected => p
                .tablets
                .iter()
                .any(|t| t.rowsets.iter().any(|r| !before.contains(&r.id))),
        })
        .map(|p| p.id)
        .collect()
}

/// `table` with the rowsets in `before` gone from the `partitions`, with their delete bitmaps;
/// and the rowsets that left.
fn without_old_rows(
    table: &TableMeta,
    partitions: &HashSet<PartitionId>,
    before: &HashSet<u64>,
) -> (TableMeta, Vec<Arc<RowsetMeta>>) {
    let mut new = table.clone();
    let mut removed = Vec::new();
    for partition in new
        .partitions
        .iter_mut()
        .filter(|p| partitions.contains(&p.id))
    {
        for tablet in &mut partition.tablets {
            let (gone, kept): (Vec<_>, Vec<_>) = tablet
                .rowsets
                .drain(..)
                .partition(|r| before.contains(&r.id));
            tablet.rowsets = kept;
            let live: HashSet<String> = tablet.segment_paths().map(str::to_string).collect();
            tablet.delete_bitmaps.retain(|path, _| live.contains(path));
            removed.extend(gone);
        }
    }
    (new, removed)
}

impl QueryEngine {
    /// `INSERT [OVERWRITE] [TABLE] t PARTITION (..) ..` and `INSERT OVERWRITE [TABLE] t ..`.
    pub(super) async fn insert_into_partitions(
        &self,
        session: &Session,
        mut insert: ast::Insert,
    ) -> Result<Output> {
        let ast::TableObject::TableName(name) = &insert.table else {
            return Err(BasaltError::NotSupported(
                "INSERT OVERWRITE into a table function".into(),
            ));
        };
        let (db, table_name) = split_name(name);
        let db = database_of(session, &db)?;
        let overwrite = insert.overwrite;
        if overwrite {
            // It deletes rows as well: Doris asks for the load privilege.
            session
                .access()
                .require_table(Privilege::Load, &db, &table_name)?;
        }
        if !overwrite {
            return self
                .write_partitions(session, &mut insert, &db, &table_name, false)
                .await;
        }
        let staging = crate::transaction::stage_statement(&self.services, session);
        let result = self
            .write_partitions(session, &mut insert, &db, &table_name, true)
            .await;
        staging.finish(&self.services, session, result)
    }

    async fn write_partitions(
        &self,
        session: &Session,
        insert: &mut ast::Insert,
        db: &str,
        table_name: &str,
        overwrite: bool,
    ) -> Result<Output> {
        let storage = crate::transaction::storage(&self.services, session);
        let catalog = storage.catalog().clone();
        let table = catalog.table(db, table_name)?;
        let named = named_partitions(&table, insert)?;
        if overwrite && matches!(named, Named::Temporary(_)) {
            return Err(BasaltError::NotSupported(
                "INSERT OVERWRITE into temporary partitions (write them with INSERT INTO, then \
                 REPLACE PARTITION)"
                    .into(),
            ));
        }
        let targets = match &named {
            Named::These(names) => Some(TargetPartitions::Named(names.clone())),
            Named::Temporary(names) => Some(TargetPartitions::Temporary(names.clone())),
            _ if table.auto_partition.is_some()
                && overwrite
                && !auto_create_when_overwrite(session) =>
            {
                Some(TargetPartitions::Existing)
            }
            _ => None,
        };
        let before = rowset_ids(&table);
        insert.overwrite = false;
        insert.partitioned = None;
        insert.has_table_keyword = false;
        let restriction = Arc::new(PartitionTargets::default());
        if let Some(targets) = targets {
            restriction.set(table.id, targets);
        }
        session
            .ctx
            .state_ref()
            .write()
            .config_mut()
            .set_extension(restriction.clone());
        let written = self.insert(session, insert.clone()).await;
        restriction.clear();
        let output = written?;
        if overwrite {
            let current = catalog.table_by_id(table.id).ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", table.database, table.name))
            })?;
            let partitions = overwritten(&current, &named, &before);
            let (new, removed_old) = without_old_rows(&current, &partitions, &before);
            if !removed_old.is_empty() {
                // Rowsets an earlier statement of the transaction staged leave with their
                // files; published ones leave when the statement publishes.
                let (_, staged_only) = catalog.alter_table(&current, new)?;
                self.services.storage.retire_rowsets(&current, &staged_only);
            }
        }
        Ok(output)
    }
}

/// Doris's `enable_auto_create_when_overwrite` (off unless set).
fn auto_create_when_overwrite(session: &Session) -> bool {
    matches!(
        session
            .variables()
            .get("enable_auto_create_when_overwrite")
            .map(|v| v.as_text()),
        Ok(v) if v == "1" || v.eq_ignore_ascii_case("true")
    )
}
