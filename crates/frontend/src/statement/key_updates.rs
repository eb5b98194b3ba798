//! UPDATE of a Unique-key table's key columns (`UPDATE t SET id = id + 10 WHERE ..`): each row
//! moves to its new key, as in MySQL. MySQL changes the rows one at a time, in the statement's
//! ORDER BY (else in key order), and fails with 1062 when a row's new key is one the table
//! holds at that moment: then nothing changes. The moves are checked that way first, over the
//! keys the table holds (under the table's DML lock); the rows are then written as one load
//! that deletes the old keys and stores the new rows (the INSERT of a value-column UPDATE, whose
//! sink takes the old rows first: `basalt_query::KeyMoves`), so the change publishes at once.
//! A multiple-table UPDATE assigning a key checks its moves the same way
//! (`multi_table_apply`).

use super::dml::{quoted, row_query, DmlPlan};
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use basalt_catalog::TableMeta;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, AssignmentTarget, Expr, SelectItem};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use futures::TryStreamExt;
use std::collections::HashSet;
use std::sync::Arc;

/// True when `update` assigns one of `table`'s key columns.
pub(crate) fn assigns_key(table: &TableMeta, update: &ast::Update) -> bool {
    update
        .assignments
        .iter()
        .any(|a| key_index(table, &a.target).is_some_and(|i| i < table.num_key_columns))
}

fn key_index(table: &TableMeta, target: &AssignmentTarget) -> Option<usize> {
    let AssignmentTarget::ColumnName(name) = target else {
        return None;
    };
    let column = name.0.last()?.as_ident()?.value.clone();
    table
        .columns
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(&column))
}

/// The query of the rows an UPDATE moves, in the order MySQL changes them: every column of
/// each row as stored, then the new value of each key column.
fn moves_query(table: &TableMeta, update: &ast::Update) -> ast::Query {
    let mut projection: Vec<SelectItem> = table
        .columns
        .iter()
        .map(|c| SelectItem::UnnamedExpr(Expr::Identifier(quoted(&c.name))))
        .collect();
    for (i, column) in table.columns[..table.num_key_columns].iter().enumerate() {
        let assigned = update
            .assignments
            .iter()
            .rev()
            .find(|a| key_index(table, &a.target) == Some(i));
        let value = match assigned {
            Some(a) => Expr::Nested(Box::new(a.value.clone())),
            None => Expr::Identifier(quoted(&column.name)),
        };
        projection.push(SelectItem::ExprWithAlias {
            expr: value,
            alias: quoted(&format!("__basalt_new_key_{i}")),
        });
    }
    row_query(
        projection,
        update.table.clone(),
        update.selection.clone(),
        &update.order_by,
        update.limit.clone(),
    )
}

/// `ORDER BY` the key columns: the order MySQL changes rows in without one.
fn key_order(table: &TableMeta) -> Vec<ast::OrderByExpr> {
    table.columns[..table.num_key_columns]
        .iter()
        .map(|c| ast::OrderByExpr {
            expr: Expr::Identifier(quoted(&c.name)),
            options: ast::OrderByOptions {
                asc: None,
                nulls_first: None,
            },
            with_fill: None,
        })
        .collect()
}

/// The keys of `batch`'s rows as MySQL shows a key in error 1062: the key columns' values
/// (columns `from..from + n`, each read as the type of the key column `types` has) joined by
/// '-'.
fn key_texts(
    table: &TableMeta,
    batch: &RecordBatch,
    from: usize,
    types: &RecordBatch,
) -> Result<Vec<String>> {
    let mut texts = vec![String::new(); batch.num_rows()];
    for k in 0..table.num_key_columns {
        let target = types.column(k).data_type().clone();
        let column: ArrayRef = cast(batch.column(from + k), &target)
            .and_then(|c| cast(&c, &DataType::Utf8))
            .map_err(|e| from_df(e.into()))?;
        let column = column.as_string::<i32>();
        for (row, text) in texts.iter_mut().enumerate() {
            if k > 0 {
                text.push('-');
            }
            text.push_str(match column.is_null(row) {
                true => "NULL",
                false => column.value(row),
            });
        }
    }
    Ok(texts)
}

/// The moves of `old`'s rows (whole stored rows) to the keys in `new` (from column
/// `new_from`), made one row after another over the keys `held`: 1062 at the first row whose
/// new key is held at that moment.
pub(super) fn check_moves(
    table: &TableMeta,
    held: &mut HashSet<String>,
    old: &RecordBatch,
    new: &RecordBatch,
    new_from: usize,
) -> Result<()> {
    let from = key_texts(table, old, 0, old)?;
    let to = key_texts(table, new, new_from, old)?;
    for (from, to) in from.iter().zip(to) {
        held.remove(from);
        if !held.insert(to.clone()) {
            return Err(BasaltError::DuplicateEntry {
                entry: to,
                key: "PRIMARY".into(),
            });
        }
    }
    Ok(())
}

/// `FROM db.t`.
fn from_table(table: &TableMeta) -> ast::TableWithJoins {
    ast::TableWithJoins {
        relation: super::dml::table_factor(table),
        joins: vec![],
    }
}

impl QueryEngine {
    /// `UPDATE t SET <key column> = ..` on `table`, a Unique table ([`assigns_key`]). Runs
    /// under the table's DML lock.
    pub(super) async fn update_keys(
        &self,
        session: &Session,
        update: &ast::Update,
        table: Arc<TableMeta>,
    ) -> Result<Output> {
        // The rows in the order they move, also for the INSERT (a LIMIT picks the same rows).
        let mut update = update.clone();
        if update.order_by.is_empty() {
            update.order_by = key_order(&table);
        }
        let update = &update;
        let plan: DmlPlan = super::dml::plan_update(&self.services, session, update)?;
        let query = ast::Statement::Query(Box::new(moves_query(&table, update)));
        let moves = self.collect(session, query).await?;
        let rows: usize = moves.iter().map(|b| b.num_rows()).sum();
        if rows == 0 {
            return Ok(Output::Ok {
                affected_rows: 0,
                last_insert_id: 0,
                info: "Rows matched: 0  Changed: 0  Warnings: 0".into(),
            });
        }
        // The keys the table holds now; each row leaves its key, then takes its new one.
        let mut held = self.held_keys(session, &table).await?;
        let width = table.columns.len();
        for batch in &moves {
            check_moves(&table, &mut held, batch, batch, width)?;
        }
        let old_rows = moves
            .iter()
            .map(|b| b.project(&(0..width).collect::<Vec<_>>()))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| from_df(e.into()))?;
        let key_moves = Arc::new(basalt_query::KeyMoves::default());
        key_moves.set(table.id, old_rows);
        session
            .ctx
            .state_ref()
            .write()
            .config_mut()
            .set_extension(key_moves.clone());
        let written = self.run_datafusion(session, plan.statement, false).await;
        key_moves.clear();
        match written? {
            Output::Ok { last_insert_id, .. } => Ok(Output::Ok {
                affected_rows: rows as u64,
                last_insert_id,
                info: format!(
                    "Rows matched: {rows}  Changed: {rows}  Warnings: {}",
                    session.info.warnings.count()
                ),
            }),
            _ => Err(BasaltError::Internal("UPDATE's write gave no count".into())),
        }
    }

    /// The keys `table` holds, as [`key_texts`] shows them.
    pub(super) async fn held_keys(
        &self,
        session: &Session,
        table: &TableMeta,
    ) -> Result<HashSet<String>> {
        let names: Vec<SelectItem> = table.columns[..table.num_key_columns]
            .iter()
            .map(|c| SelectItem::UnnamedExpr(Expr::Identifier(quoted(&c.name))))
            .collect();
        let all_keys = row_query(names, from_table(table), None, &[], None);
        let stored = self
            .collect(session, ast::Statement::Query(Box::new(all_keys)))
            .await?;
        let mut held = HashSet::new();
        for batch in &stored {
            held.extend(key_texts(table, batch, 0, batch)?);
        }
        Ok(held)
    }

    /// A query's rows, all of them.
    async fn collect(&self, session: &Session, query: ast::Statement) -> Result<Vec<RecordBatch>> {
        match self.run_datafusion(session, query, false).await? {
            Output::Rows { stream, .. } => stream.try_collect().await,
            _ => Err(BasaltError::Internal(
                "an UPDATE's row query gave no rows".into(),
            )),
        }
    }
}
