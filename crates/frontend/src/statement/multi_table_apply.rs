//! Running multiple-table DELETE and UPDATE (planned by `multi_table_plan`): every target's
//! row query runs first, over the tables as the statement found them, and its rows are kept;
//! only then is each target written, so one target's change cannot alter which rows of
//! another match. A target row that joins several rows is deleted or updated once, with the
//! first of them (MySQL's rule for UPDATE).
//!
//! Unique tables are written as one merge-on-write load (tombstones, or the changed rows'
//! new versions); Duplicate and Aggregate tables are rewritten (DELETE: without the rows equal
//! to a matched one, rows of such tables having no identity but their values; UPDATE: with
//! those rows replaced, Duplicate tables only). A statement writing several tables outside a
//! transaction stages its writes and publishes them together
//! ([`crate::transaction::stage_statement`]): all tables change, or none.
//!
//! New values are fitted to their columns as an INSERT's are (strictly or not, as `sql_mode`
//! says). Counts are MySQL's: DELETE the rows deleted; UPDATE the rows whose values changed,
//! with the rows matched in the info line.

use super::multi_table_plan::Target;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_catalog::{KeysModel, Privilege, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_storage::conform::conform;
use basalt_storage::{no_partition_error, RewriteRows, RewriteScope, StorageEngine, UpdatedRows};
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{cast, concat_batches, filter_record_batch, interleave};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::arrow::row::{RowConverter, SortField};
use futures::StreamExt;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Attempts before giving up on a table that compactions keep changing.
const ATTEMPTS: usize = 3;

/// A target's matched rows, each target row once: its old values (the table's columns) and
/// for UPDATE its new ones (the table's columns, fitted and in storage types).
struct Matched {
    table: Arc<TableMeta>,
    old: RecordBatch,
    new: Option<RecordBatch>,
    /// UPDATE: which columns the statement assigns.
    assigned: Vec<bool>,
}

/// What applying the statement to one table did.
#[derive(Default)]
struct Counts {
    matched: u64,
    changed: u64,
}

impl QueryEngine {
    /// `DELETE t1[, t2] FROM ..`, `DELETE FROM t1 USING ..`.
    pub(super) async fn multi_delete(
        &self,
        session: &Session,
        delete: &ast::Delete,
    ) -> Result<Output> {
        let targets = super::multi_table_plan::plan_delete(&self.services, session, delete)?;
        let counts = self.run_multi(session, targets, None).await?;
        Ok(Output::Ok {
            affected_rows: counts.changed,
            last_insert_id: 0,
            info: String::new(),
        })
    }

    /// `UPDATE t1, t2 SET ..`, `UPDATE t1 JOIN t2 .. SET ..`, `UPDATE t SET .. FROM t2 ..`,
    /// `UPDATE IGNORE ..`.
    pub(super) async fn multi_update(
        &self,
        session: &Session,
        update: &ast::Update,
    ) -> Result<Output> {
        let targets = super::multi_table_plan::plan_update(&self.services, session, update)?;
        // IGNORE fits values as outside strict mode.
        let store = match update.or {
            Some(ast::SqliteOnConflict::Ignore) => basalt_query::StoreWarnings::default(),
            _ => crate::lenient_insert::store_warnings(session),
        };
        let store = Arc::new(store.with_implicit_defaults());
        let counts = self.run_multi(session, targets, Some(&store)).await;
        let warnings = crate::lenient_insert::report(session, &store);
        let counts = counts?;
        Ok(Output::Ok {
            affected_rows: counts.changed,
            last_insert_id: 0,
            info: format!(
                "Rows matched: {}  Changed: {}  Warnings: {warnings}",
                counts.matched, counts.changed
            ),
        })
    }

    /// Finds every target's rows, then writes each target. `store`: UPDATE's value fitting.
    async fn run_multi(
        &self,
        session: &Session,
        targets: Vec<Target>,
        store: Option<&Arc<basalt_query::StoreWarnings>>,
    ) -> Result<Counts> {
        for t in &targets {
            session
                .access()
                .require_table(Privilege::Load, &t.table.database, &t.table.name)?;
        }
        // DELETE and UPDATE on one table run one at a time; tables locked in id order.
        let mut ids: Vec<_> = targets.iter().map(|t| t.table.id).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut _serialized = Vec::with_capacity(ids.len());
        for id in ids {
            _serialized.push(self.dml_locks.lock(id).await);
        }
        let mut matched = Vec::with_capacity(targets.len());
        for target in targets {
            let rows = self.target_rows(session, &target).await?;
            matched.push(first_of_each(target, rows, store)?);
        }
        let staging = (matched.len() > 1)
            .then(|| crate::transaction::stage_statement(&self.services, session));
        let mut result = Ok(Counts::default());
        for m in matched.into_iter().filter(|m| m.old.num_rows() > 0) {
            let applied = self.apply(session, m).await;
            match (&mut result, applied) {
                (Ok(total), Ok(c)) => {
                    total.matched += c.matched;
                    total.changed += c.changed;
                }
                (_, Err(e)) => {
                    result = Err(e);
                    break;
                }
                _ => {}
            }
        }
        match staging {
            Some(staging) => staging.finish(&self.services, session, result),
            None => result,
        }
    }

    /// The rows of a target's row query.
    async fn target_rows(&self, session: &Session, target: &Target) -> Result<Vec<RecordBatch>> {
        let stmt = ast::Statement::Query(Box::new(target.query.clone()));
        let mut stream = match self.run_datafusion(session, stmt, false).await? {
            Output::Rows { stream, .. } => stream,
            _ => return Err(BasaltError::Internal("a row query gave no rows".into())),
        };
        let mut batches = Vec::new();
        while let Some(batch) = stream.next().await {
            batches.push(batch?);
        }
        Ok(batches)
    }

    /// Writes one target's change, through the statement's storage (its staging, if any).
    async fn apply(&self, session: &Session, m: Matched) -> Result<Counts> {
        let storage = crate::transaction::storage(&self.services, session);
        let current = |storage: &Arc<StorageEngine>| {
            storage.catalog().table_by_id(m.table.id).ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", m.table.database, m.table.name))
            })
        };
        match (&m.new, m.table.keys_model) {
            (None, KeysModel::Unique) => {
                let rows = storage_rows(&m.table, &m.old)?;
                let n = rows.num_rows() as u64;
                load(&storage, current(&storage)?, rows, true).await?;
                Ok(Counts {
                    matched: n,
                    changed: n,
                })
            }
            (Some(new), KeysModel::Unique)
                if m.assigned[..m.table.num_key_columns].iter().any(|a| *a) =>
            {
                // Rows moving to other keys: checked as MySQL moves them, then the old keys
                // deleted and the new rows written in one load.
                let old = storage_rows(&m.table, &m.old)?;
                let mut held = self.held_keys(session, &m.table).await?;
                super::key_updates::check_moves(&m.table, &mut held, &old, new, 0)?;
                let changed = differing(&old, new)?;
                let n = changed.true_count() as u64;
                let old_rows = filter_record_batch(&old, &changed).map_err(internal)?;
                let new_rows = filter_record_batch(new, &changed).map_err(internal)?;
                if n > 0 {
                    move_rows(&storage, current(&storage)?, old_rows, new_rows).await?;
                }
                Ok(Counts {
                    matched: old.num_rows() as u64,
                    changed: n,
                })
            }
            (Some(new), KeysModel::Unique) => {
                let old = storage_rows(&m.table, &m.old)?;
                let changed = differing(&old, new)?;
                let rows = filter_record_batch(new, &changed).map_err(internal)?;
                let n = rows.num_rows() as u64;
                if n > 0 {
                    load(&storage, current(&storage)?, rows, false).await?;
                }
                Ok(Counts {
                    matched: old.num_rows() as u64,
                    changed: n,
                })
            }
            (new, _) => {
                let _gate = storage.rewrite_gate(m.table.id).write_owned().await;
                let set = Arc::new(RowSet {
                    rows: m.old.clone(),
                });
                let mut attempt = 0;
                loop {
                    attempt += 1;
                    let table = current(&storage)?;
                    if table.schema_version != m.table.schema_version {
                        return Err(BasaltError::ConcurrentDdl(format!(
                            "table {} was altered during the statement; nothing was changed",
                            table.name
                        )));
                    }
                    let done = rewrite(
                        storage.clone(),
                        table,
                        set.clone(),
                        new.clone(),
                        m.assigned.clone(),
                    )
                    .await;
                    match done {
                        Err(BasaltError::ConcurrentDdl(_)) if attempt < ATTEMPTS => continue,
                        other => return other,
                    }
                }
            }
        }
    }
}

/// Rewrites a Duplicate or Aggregate table: without the rows in `set` (`new` is `None`), or
/// with them replaced by their rows of `new`.
async fn rewrite(
    storage: Arc<StorageEngine>,
    table: Arc<TableMeta>,
    set: Arc<RowSet>,
    new: Option<RecordBatch>,
    assigned: Vec<bool>,
) -> Result<Counts> {
    tokio::task::spawn_blocking(move || match new {
        None => {
            let transform = |batch: RecordBatch| {
                let found = set.find(&batch)?;
                let keep: BooleanArray = found.iter().map(|f| Some(f.is_none())).collect();
                filter_record_batch(&batch, &keep).map_err(internal)
            };
            let stats = storage.rewrite_table(
                &table,
                (*table).clone(),
                RewriteRows::Merged,
                RewriteScope::FormalPartitions,
                &transform,
            )?;
            let deleted = stats.rows_before.saturating_sub(stats.rows_after);
            Ok(Counts {
                matched: deleted,
                changed: deleted,
            })
        }
        Some(new) => {
            if table.keys_model != KeysModel::Duplicate {
                return Err(BasaltError::NotSupported(format!(
                    "UPDATE on {}.{}, an AGGREGATE KEY table",
                    table.database, table.name
                )));
            }
            let routing: Vec<usize> = table
                .distribution
                .columns
                .iter()
                .copied()
                .chain(table.partition_column)
                .collect();
            // Rows may move between tablets when a routing column is assigned.
            let routes_change = routing.iter().any(|i| assigned.get(*i) == Some(&true));
            let update = |rows: RecordBatch| replace(&set, &new, rows);
            let stats = storage.update_table(&table, routes_change, &update)?;
            Ok(Counts {
                matched: stats.matched,
                changed: stats.changed,
            })
        }
    })
    .await
    .map_err(|e| BasaltError::Internal(format!("rewrite task failed: {e}")))?
}

/// A tablet's rows with those in `set` replaced by their new versions (`new`, row for row
/// with `set`).
fn replace(set: &RowSet, new: &RecordBatch, rows: RecordBatch) -> Result<Option<UpdatedRows>> {
    let found = set.find(&rows)?;
    let matched: BooleanArray = found.iter().map(|f| Some(f.is_some())).collect();
    if matched.true_count() == 0 {
        return Ok(None);
    }
    let picks: Vec<(usize, usize)> = found
        .iter()
        .enumerate()
        .map(|(i, f)| match f {
            Some(n) => (1, *n),
            None => (0, i),
        })
        .collect();
    let columns = rows
        .columns()
        .iter()
        .zip(new.columns())
        .map(|(old, new)| {
            let new = if new.data_type() == old.data_type() {
                new.clone()
            } else {
                cast(new, old.data_type()).map_err(internal)?
            };
            interleave(&[old.as_ref(), new.as_ref()], &picks).map_err(internal)
        })
        .collect::<Result<Vec<_>>>()?;
    // NOT NULL is checked by storage, with the column's name in the error.
    let fields: Vec<Field> = rows
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    Ok(Some(UpdatedRows {
        rows: RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(internal)?,
        matched,
    }))
}

/// The first row of each target row among a row query's rows (by key on a Unique table, by
/// all values on the others), split into old and fitted new values.
fn first_of_each(
    target: Target,
    batches: Vec<RecordBatch>,
    store: Option<&Arc<basalt_query::StoreWarnings>>,
) -> Result<Matched> {
    let table = target.table;
    let width = table.columns.len();
    let identity = match table.keys_model {
        KeysModel::Unique => table.num_key_columns,
        _ => width,
    };
    let Some(first) = batches.first() else {
        let schema = Arc::new(Schema::empty());
        return Ok(Matched {
            table,
            old: RecordBatch::new_empty(schema),
            new: None,
            assigned: vec![],
        });
    };
    let all = concat_batches(&first.schema(), &batches).map_err(internal)?;
    let fields = (0..identity)
        .map(|i| SortField::new(all.column(i).data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields).map_err(internal)?;
    let keys = converter
        .convert_columns(&all.columns()[..identity])
        .map_err(internal)?;
    let mut seen = HashSet::new();
    let keep: BooleanArray = (0..all.num_rows())
        .map(|i| Some(seen.insert(keys.row(i).as_ref().to_vec())))
        .collect();
    let all = filter_record_batch(&all, &keep).map_err(internal)?;
    let old = all
        .project(&(0..width).collect::<Vec<_>>())
        .map_err(internal)?;
    let new = match store {
        Some(store) => {
            let columns: Vec<ArrayRef> = (0..width)
                .map(|i| all.column(target.assigned[i].unwrap_or(i)).clone())
                .collect();
            let fields: Vec<Field> = table
                .columns
                .iter()
                .zip(&columns)
                .map(|(c, a)| Field::new(&c.name, a.data_type().clone(), true))
                .collect();
            let raw =
                RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(internal)?;
            let fitted = basalt_query::fit_batch(&table, raw, store)?;
            let computed = basalt_query::compute_generated(&table, fitted)?;
            Some(storage_rows(&table, &computed)?)
        }
        None => None,
    };
    let assigned = target.assigned.iter().map(Option::is_some).collect();
    Ok(Matched {
        table,
        old,
        new,
        assigned,
    })
}

/// `batch` (the table's columns) in the table's storage types and schema.
fn storage_rows(table: &TableMeta, batch: &RecordBatch) -> Result<RecordBatch> {
    let columns = conform(table, batch)?;
    RecordBatch::try_new(table.arrow_schema(), columns)
        .map_err(|e| BasaltError::InvalidData(e.to_string()))
}

/// Which rows of `new` differ from the same row of `old` (same schema).
fn differing(old: &RecordBatch, new: &RecordBatch) -> Result<BooleanArray> {
    let fields = old
        .columns()
        .iter()
        .map(|c| SortField::new(c.data_type().clone()))
        .collect();
    let converter = RowConverter::new(fields).map_err(internal)?;
    let a = converter.convert_columns(old.columns()).map_err(internal)?;
    let b = converter.convert_columns(new.columns()).map_err(internal)?;
    Ok((0..old.num_rows())
        .map(|i| Some(a.row(i) != b.row(i)))
        .collect())
}

/// Rows to find among a table's rows by all their values.
struct RowSet {
    rows: RecordBatch,
}

impl RowSet {
    /// For each row of `batch` (the table's columns as scans give them), the set's row equal
    /// to it, if any.
    fn find(&self, batch: &RecordBatch) -> Result<Vec<Option<usize>>> {
        if batch.num_columns() != self.rows.num_columns() {
            return Err(BasaltError::Internal(
                "a table's rows have another shape than its matched rows".into(),
            ));
        }
        let fields = batch
            .columns()
            .iter()
            .map(|c| SortField::new(c.data_type().clone()))
            .collect();
        let converter = RowConverter::new(fields).map_err(internal)?;
        let mine = self
            .rows
            .columns()
            .iter()
            .zip(batch.columns())
            .map(|(c, like)| {
                if c.data_type() == like.data_type() {
                    Ok(c.clone())
                } else {
                    cast(c, like.data_type()).map_err(internal)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let mine = converter.convert_columns(&mine).map_err(internal)?;
        let mut index: HashMap<Vec<u8>, usize> = HashMap::with_capacity(mine.num_rows());
        for i in 0..mine.num_rows() {
            index.entry(mine.row(i).as_ref().to_vec()).or_insert(i);
        }
        let theirs = converter
            .convert_columns(batch.columns())
            .map_err(internal)?;
        Ok((0..theirs.num_rows())
            .map(|i| index.get(theirs.row(i).as_ref()).copied())
            .collect())
    }
}

/// Writes `rows` (storage schema) to a Unique table in one load: as tombstones of their keys
/// (`delete`) or as new versions.
async fn load(
    storage: &Arc<StorageEngine>,
    table: Arc<TableMeta>,
    rows: RecordBatch,
    delete: bool,
) -> Result<()> {
    let mut writer = storage.begin_load(table).await?;
    tokio::task::spawn_blocking(move || {
        let flags = delete.then(|| BooleanArray::from(vec![true; rows.num_rows()]));
        let unrouted = writer.write_with_deletes(&rows, flags.as_ref())?;
        if let Some((_, value)) = unrouted.first() {
            return Err(no_partition_error(writer.table(), value));
        }
        writer.commit().map(|_| ())
    })
    .await
    .map_err(|e| BasaltError::Internal(format!("load task failed: {e}")))?
}

/// One load that deletes the keys of `old` (whole rows of a Unique table), then writes `new`:
/// within a load the newest row of a key decides, so a row moved onto a key another row left
/// is kept.
async fn move_rows(
    storage: &Arc<StorageEngine>,
    table: Arc<TableMeta>,
    old: RecordBatch,
    new: RecordBatch,
) -> Result<()> {
    let mut writer = storage.begin_load(table).await?;
    tokio::task::spawn_blocking(move || {
        let deletes = BooleanArray::from(vec![true; old.num_rows()]);
        let mut unrouted = writer.write_with_deletes(&old, Some(&deletes))?;
        unrouted.extend(writer.write(&new)?);
        if let Some((_, value)) = unrouted.first() {
            return Err(no_partition_error(writer.table(), value));
        }
        writer.commit().map(|_| ())
    })
    .await
    .map_err(|e| BasaltError::Internal(format!("load task failed: {e}")))?
}

fn internal(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::Internal(e.to_string())
}
