//! DELETE and UPDATE on Unique-key tables (DELETE on the other key models is a rewrite of the
//! table without the matching rows: `delete_rewrite`; UPDATE on Duplicate tables a rewrite of
//! the tablets holding matching rows: `update_rewrite`). The rows a statement touches are
//! found by an ordinary query over the table's current snapshot; they are then written back
//! as one merge-on-write load (tombstones for DELETE, replacement rows for UPDATE) that
//! publishes atomically, so the primary-key index, delete bitmaps and row cache move in the
//! same step as any other load.
//!
//! DELETE and UPDATE statements on one table run one at a time (`StatementLocks`), so
//! `UPDATE t SET n = n + 1` from two sessions adds 2. Loads and INSERTs are blind upserts and do
//! not wait for them; a row a load replaces while an UPDATE runs may be overwritten by the
//! UPDATE's older copy (last publish wins), as in Doris without a sequence column.
//!
//! The statement is checked and turned into a query over the table (built as the parser would
//! build it, never as text), which runs like any other query. Statements over several tables
//! (`DELETE t1 FROM t1 JOIN t2 ..`, `UPDATE t1, t2 SET ..`) are `multi_table_plan`'s.

use crate::catalog_provider::Services;
use crate::engine::split_name;
use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::statement::ddl::database_of;
use basalt_catalog::{KeysModel, TableId, TableMeta};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{self, Expr, FromTable, Ident, SelectItem, TableFactor, TableWithJoins};
use parking_lot::Mutex;
use std::collections::HashMap;
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

/// A checked DELETE or UPDATE: the table it changes and the statement that produces its rows.
pub(crate) struct DmlPlan {
    pub table: Arc<TableMeta>,
    /// DELETE: a SELECT of every column of the rows to delete. UPDATE: an
    /// `INSERT INTO t SELECT ...` of the new rows (same keys, so they replace the old ones).
    pub statement: ast::Statement,
}

/// `DELETE FROM t [WHERE ..] [ORDER BY ..] [LIMIT n]`.
pub(crate) fn plan_delete(
    services: &Services,
    session: &Session,
    delete: &ast::Delete,
) -> Result<DmlPlan> {
    if super::multi_table_plan::is_multi_delete(delete) {
        return Err(BasaltError::Internal(
            "a multiple-table DELETE planned as a single-table one".into(),
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
    let columns = table
        .columns
        .iter()
        .map(|c| SelectItem::UnnamedExpr(Expr::Identifier(quoted(&c.name))))
        .collect();
    // Other key models take their WHERE from it and pick ORDER BY .. LIMIT's rows apart
    // (`delete_rewrite`).
    let query = match table.keys_model {
        KeysModel::Unique => row_query(
            columns,
            target.clone(),
            delete.selection.clone(),
            &delete.order_by,
            delete.limit.clone(),
        ),
        _ => row_query(columns, target.clone(), delete.selection.clone(), &[], None),
    };
    Ok(DmlPlan {
        table,
        statement: ast::Statement::Query(Box::new(query)),
    })
}

/// `UPDATE t SET c = expr, .. [WHERE ..] [ORDER BY ..] [LIMIT n]`: the new rows. A row whose
/// key columns are assigned moves to its new key (`key_updates`, which also deletes the old).
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
    let mut values = super::update_assignments::assigned_values(&table, update)?;
    super::on_update_timestamp::assign_touched(&table, &mut values, |i| {
        Expr::Identifier(quoted(&table.columns[i].name))
    });
    let projection = table
        .columns
        .iter()
        .zip(&values)
        .map(|(column, value)| match value {
            Some(expr) => SelectItem::ExprWithAlias {
                expr: Expr::Nested(Box::new(expr.clone())),
                alias: quoted(&column.name),
            },
            None => SelectItem::UnnamedExpr(Expr::Identifier(quoted(&column.name))),
        })
        .collect();
    let rows = row_query(
        projection,
        update.table.clone(),
        update.selection.clone(),
        &update.order_by,
        update.limit.clone(),
    );
    let insert = super::update_rewrite::insert_into(&table, rows);
    Ok(DmlPlan {
        table,
        statement: ast::Statement::Insert(insert),
    })
}

/// The one table a DELETE/UPDATE changes.
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
    // Inside a transaction: the table with what it staged.
    crate::transaction::storage(services, session)
        .catalog()
        .table(&db, &table)
}

/// `SELECT projection FROM from [WHERE ..] [ORDER BY ..] [LIMIT n]`, as the parser makes it.
pub(crate) fn row_query(
    projection: Vec<SelectItem>,
    from: TableWithJoins,
    selection: Option<Expr>,
    order_by: &[ast::OrderByExpr],
    limit: Option<Expr>,
) -> ast::Query {
    let select = ast::Select {
        select_token: AttachedToken::empty(),
        optimizer_hints: vec![],
        distinct: None,
        select_modifiers: None,
        top: None,
        top_before_distinct: false,
        projection,
        exclude: None,
        into: None,
        from: vec![from],
        lateral_views: vec![],
        prewhere: None,
        selection,
        connect_by: vec![],
        group_by: ast::GroupByExpr::Expressions(vec![], vec![]),
        cluster_by: vec![],
        distribute_by: vec![],
        sort_by: vec![],
        having: None,
        named_window: vec![],
        qualify: None,
        window_before_qualify: false,
        value_table_mode: None,
        flavor: ast::SelectFlavor::Standard,
    };
    ast::Query {
        with: None,
        body: Box::new(ast::SetExpr::Select(Box::new(select))),
        order_by: (!order_by.is_empty()).then(|| ast::OrderBy {
            kind: ast::OrderByKind::Expressions(order_by.to_vec()),
            interpolate: None,
        }),
        limit_clause: limit.map(|limit| ast::LimitClause::LimitOffset {
            limit: Some(limit),
            offset: None,
            limit_by: vec![],
        }),
        fetch: None,
        locks: vec![],
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: vec![],
    }
}

/// `db.t`, the table of `table`, as the parser makes it.
pub(super) fn table_factor(table: &TableMeta) -> TableFactor {
    TableFactor::Table {
        name: ast::ObjectName::from(vec![quoted(&table.database), quoted(&table.name)]),
        alias: None,
        args: None,
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
        sample: None,
        index_hints: vec![],
    }
}

/// A name quoted with backticks, as written in MySQL.
pub(super) fn quoted(name: &str) -> Ident {
    Ident::with_quote('`', name)
}

impl QueryEngine {
    /// `DELETE FROM t WHERE ..` on a Unique table: the matching rows become tombstones in one
    /// atomic load.
    pub(super) async fn delete(&self, session: &Session, delete: &ast::Delete) -> Result<Output> {
        if super::multi_table_plan::is_multi_delete(delete) {
            return self.multi_delete(session, delete).await;
        }
        let plan = crate::statement::dml::plan_delete(&self.services, session, delete)?;
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        if plan.table.keys_model != KeysModel::Unique {
            return self.delete_by_rewrite(session, plan, delete).await;
        }
        let rows = match self.run_datafusion(session, plan.statement, false).await? {
            Output::Rows { stream, .. } => stream,
            _ => {
                return Err(BasaltError::Internal(
                    "DELETE's row query gave no rows".into(),
                ))
            }
        };
        // The table as of now (not as planned): a load may have published meanwhile.
        let storage = crate::transaction::storage(&self.services, session);
        let table = storage
            .catalog()
            .table_by_id(plan.table.id)
            .ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", plan.table.database, plan.table.name))
            })?;
        let deleted = basalt_query::delete_rows(&storage, table, rows).await?;
        Ok(Output::Ok {
            affected_rows: deleted,
            last_insert_id: 0,
            info: String::new(),
        })
    }

    /// `UPDATE t SET .. WHERE ..` on a Unique table: the new rows replace the old ones in one
    /// atomic load (an `INSERT INTO t SELECT ..` over the current rows).
    /// Other key models rewrite the tablets holding matching rows (`update_rewrite`).
    pub(super) async fn update(&self, session: &Session, update: &ast::Update) -> Result<Output> {
        if super::multi_table_plan::is_planned_here(update) {
            return self.multi_update(session, update).await;
        }
        let table = target_table(&self.services, session, &update.table, "UPDATE")?;
        let update = &super::insert_defaults::update_defaults(&table, update)?;
        super::generated_values::check_assignments(&table, &update.assignments)?;
        if table.keys_model != KeysModel::Unique && !table.generated_columns().is_empty() {
            // The rewrite keeps stored values as they are; only a Unique table's UPDATE
            // writes its rows again through the path that computes generated columns.
            return Err(BasaltError::NotSupported(format!(
                "UPDATE of {}, a {} KEY table with generated columns",
                table.name,
                table.keys_model.sql_name()
            )));
        }
        if table.keys_model != KeysModel::Unique {
            let _serialized = self.dml_locks.lock(table.id).await;
            return self.update_by_rewrite(session, update, table).await;
        }
        let plan = crate::statement::dml::plan_update(&self.services, session, update)?;
        let _serialized = self.dml_locks.lock(plan.table.id).await;
        if super::key_updates::assigns_key(&plan.table, update) {
            return self.update_keys(session, update, plan.table).await;
        }
        match self.run_datafusion(session, plan.statement, false).await? {
            Output::Ok {
                affected_rows,
                last_insert_id,
                ..
            } => Ok(Output::Ok {
                affected_rows,
                last_insert_id,
                info: format!(
                    "Rows matched: {affected_rows}  Changed: {affected_rows}  Warnings: {}",
                    session.info.warnings.count()
                ),
            }),
            _ => Err(BasaltError::Internal("UPDATE's write gave no count".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_queries_are_the_statements_parts() {
        let Ok(basalt_sql::Statement::Standard(stmt)) = basalt_sql::parse_one(
            "DELETE FROM d.t WHERE k > 1 AND v <> 'x' ORDER BY k DESC LIMIT 2",
        ) else {
            panic!("not parsed");
        };
        let ast::Statement::Delete(delete) = *stmt else {
            panic!("not a DELETE");
        };
        let FromTable::WithFromKeyword(from) = &delete.from else {
            panic!("no FROM");
        };
        let query = row_query(
            vec![SelectItem::UnnamedExpr(Expr::Identifier(quoted("k")))],
            from[0].clone(),
            delete.selection.clone(),
            &delete.order_by,
            delete.limit.clone(),
        );
        assert_eq!(
            query.to_string(),
            "SELECT `k` FROM d.t WHERE k > 1 AND v <> 'x' ORDER BY k DESC LIMIT 2"
        );
    }
}
