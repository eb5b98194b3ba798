//! DELETE and UPDATE on Unique-key tables. The rows a statement touches are found by an ordinary
//! query over the table's current snapshot; they are then written back as one merge-on-write
//! load (tombstones for DELETE, replacement rows for UPDATE) that publishes atomically, so the
//! primary-key index, delete bitmaps and row cache move in the same step as any other load.
//!
//! DELETE and UPDATE statements on one table run one at a time (`StatementLocks`), so
//! `UPDATE t SET n = n + 1` from two sessions adds 2. Loads and INSERTs are blind upserts and do
//! not wait for them; a row a load replaces while an UPDATE runs may be overwritten by the
//! UPDATE's older copy (last publish wins), as in Doris without a sequence column.
//!
//! The statement is checked and written as query text, which runs like any other query.

use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::{KeysModel, TableId, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{self, AssignmentTarget, FromTable, TableFactor, TableWithJoins};
use basalt_sql::Statement;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// One lock per table that DELETE and UPDATE hold from reading their rows to publishing.
#[derive(Debug, Default)]
pub(crate) struct StatementLocks {
    tables: Mutex<HashMap<TableId, Arc<tokio::sync::Mutex<()>>>>,
}

impl StatementLocks {
    pub async fn lock(&self, table: TableId) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = self.tables.lock().entry(table).or_default().clone();
        lock.lock_owned().await
    }
}

/// A checked DELETE or UPDATE: the table it changes and the SQL that produces its rows.
pub(crate) struct DmlPlan {
    pub table: Arc<TableMeta>,
    /// DELETE: a SELECT of every column of the rows to delete. UPDATE: an
    /// `INSERT INTO t SELECT ...` of the new rows (same keys, so they replace the old ones).
    pub sql: String,
}

/// `DELETE FROM t [WHERE ..] [ORDER BY ..] [LIMIT n]`.
pub(crate) fn plan_delete(
    services: &Services,
    session: &Session,
    delete: &ast::Delete,
) -> Result<DmlPlan> {
    if !delete.tables.is_empty() || delete.using.is_some() {
        return Err(BasaltError::NotSupported(
            "multi-table DELETE (DELETE t1 FROM ... / USING)".into(),
        ));
    }
    if delete.returning.is_some() || delete.output.is_some() {
        return Err(BasaltError::NotSupported("DELETE ... RETURNING".into()));
    }
    let from = match &delete.from {
        FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => f,
    };
    let [target] = from.as_slice() else {
        return Err(BasaltError::NotSupported(
            "DELETE from more than one table".into(),
        ));
    };
    let table = target_table(services, session, target, "DELETE")?;
    let columns: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
    let mut sql = format!("SELECT {} FROM {}", columns.join(", "), target.relation);
    append_tail(&mut sql, &delete.selection, &delete.order_by, &delete.limit);
    Ok(DmlPlan { table, sql })
}

/// `UPDATE t SET c = expr, .. [WHERE ..] [ORDER BY ..] [LIMIT n]` (value columns only: the key
/// decides where a row lives, as in Doris).
pub(crate) fn plan_update(
    services: &Services,
    session: &Session,
    update: &ast::Update,
) -> Result<DmlPlan> {
    if update.from.is_some() {
        return Err(BasaltError::NotSupported("UPDATE ... FROM".into()));
    }
    if update.returning.is_some() || update.output.is_some() || update.or.is_some() {
        return Err(BasaltError::NotSupported(
            "UPDATE with RETURNING/OUTPUT/OR".into(),
        ));
    }
    let table = target_table(services, session, &update.table, "UPDATE")?;
    let mut values: Vec<Option<&ast::Expr>> = vec![None; table.columns.len()];
    for assignment in &update.assignments {
        let AssignmentTarget::ColumnName(name) = &assignment.target else {
            return Err(BasaltError::NotSupported("UPDATE of a column tuple".into()));
        };
        let column = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.clone())
            .unwrap_or_default();
        let index = table
            .columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&column))
            .ok_or_else(|| BasaltError::UnknownColumn {
                column: column.clone(),
                context: "field list".into(),
            })?;
        if index < table.num_key_columns {
            return Err(BasaltError::NotSupported(format!(
                "updating key column '{}' of Unique-key table {}: only value columns can be updated",
                table.columns[index].name, table.name
            )));
        }
        if values[index].replace(&assignment.value).is_some() {
            return Err(BasaltError::NotSupported(format!(
                "column '{}' assigned twice in one UPDATE",
                table.columns[index].name
            )));
        }
    }
    let names: Vec<String> = table.columns.iter().map(|c| quote(&c.name)).collect();
    let projection: Vec<String> = names
        .iter()
        .zip(&values)
        .map(|(name, value)| match value {
            Some(expr) => format!("({expr}) AS {name}"),
            None => name.clone(),
        })
        .collect();
    let mut sql = format!(
        "INSERT INTO {}.{} ({}) SELECT {} FROM {}",
        quote(&table.database),
        quote(&table.name),
        names.join(", "),
        projection.join(", "),
        update.table.relation
    );
    append_tail(&mut sql, &update.selection, &update.order_by, &update.limit);
    Ok(DmlPlan { table, sql })
}

/// The one table a DELETE/UPDATE changes; it must have a UNIQUE KEY (merge-on-write).
fn target_table(
    services: &Services,
    session: &Session,
    target: &TableWithJoins,
    verb: &str,
) -> Result<Arc<TableMeta>> {
    if !target.joins.is_empty() {
        return Err(BasaltError::NotSupported(format!("{verb} with JOIN")));
    }
    let TableFactor::Table { name, .. } = &target.relation else {
        return Err(BasaltError::NotSupported(format!(
            "{verb} of something other than a table"
        )));
    };
    let (db, table) = split_name(name);
    let db = database_of(session, &db)?;
    let meta = services.catalog.table(&db, &table)?;
    if meta.keys_model != KeysModel::Unique {
        return Err(BasaltError::NotSupported(format!(
            "{verb} on {}.{}: a {:?}-key table; DELETE and UPDATE need a UNIQUE KEY table",
            meta.database, meta.name, meta.keys_model
        )));
    }
    Ok(meta)
}

fn append_tail(
    sql: &mut String,
    selection: &Option<ast::Expr>,
    order_by: &[ast::OrderByExpr],
    limit: &Option<ast::Expr>,
) {
    if let Some(cond) = selection {
        let _ = write!(sql, " WHERE {cond}");
    }
    if !order_by.is_empty() {
        let items: Vec<String> = order_by.iter().map(|o| o.to_string()).collect();
        let _ = write!(sql, " ORDER BY {}", items.join(", "));
    }
    if let Some(limit) = limit {
        let _ = write!(sql, " LIMIT {limit}");
    }
}

fn quote(ident: &str) -> String {
    format!("`{}`", ident.replace('`', "``"))
}

impl QueryEngine {
    /// `DELETE FROM t WHERE ..` on a Unique table: the matching rows become tombstones in one
    /// atomic load.
    pub(super) async fn delete(&self, session: &Session, delete: &ast::Delete) -> Result<Output> {
        let plan = crate::statement::dml::plan_delete(&self.services, session, delete)?;
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        let query = parse_generated(&plan.sql)?;
        let rows = match self.run_datafusion(session, query, false).await? {
            Output::Rows { stream, .. } => stream,
            _ => {
                return Err(BasaltError::Internal(
                    "DELETE's row query gave no rows".into(),
                ))
            }
        };
        // The table as of now (not as planned): a load may have published meanwhile.
        let table = self
            .services
            .catalog
            .table_by_id(plan.table.id)
            .ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", plan.table.database, plan.table.name))
            })?;
        let deleted = basalt_query::delete_rows(&self.services.storage, table, rows).await?;
        Ok(Output::Ok {
            affected_rows: deleted,
            last_insert_id: 0,
            info: String::new(),
        })
    }

    /// `UPDATE t SET .. WHERE ..` on a Unique table: the new rows replace the old ones in one
    /// atomic load (an `INSERT INTO t SELECT ..` over the current rows).
    pub(super) async fn update(&self, session: &Session, update: &ast::Update) -> Result<Output> {
        let plan = crate::statement::dml::plan_update(&self.services, session, update)?;
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        let insert = parse_generated(&plan.sql)?;
        match self.run_datafusion(session, insert, false).await? {
            Output::Ok {
                affected_rows,
                last_insert_id,
                ..
            } => Ok(Output::Ok {
                affected_rows,
                last_insert_id,
                info: format!(
                    "Rows matched: {affected_rows}  Changed: {affected_rows}  Warnings: 0"
                ),
            }),
            _ => Err(BasaltError::Internal("UPDATE's write gave no count".into())),
        }
    }
}

/// Parses SQL that Basalt wrote itself (from a checked statement's parts).
fn parse_generated(sql: &str) -> Result<ast::Statement> {
    match basalt_sql::parse_one(sql)? {
        Statement::Standard(stmt) => Ok(*stmt),
        _ => Err(BasaltError::Internal(format!(
            "unexpected generated statement: {sql}"
        ))),
    }
}
