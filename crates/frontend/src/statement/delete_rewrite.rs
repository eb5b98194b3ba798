//! `DELETE FROM t WHERE ..` on Duplicate and Aggregate tables (Doris's delete predicate). Their
//! rows have no identity a tombstone could name, so the table is rewritten without the rows
//! the predicate selects, in one atomic publish ([`basalt_storage::StorageEngine::rewrite_table`]).
//!
//! The predicate is planned as the WHERE of `SELECT * FROM t WHERE ..` (views, MySQL's casts
//! and functions as in any query), then evaluated over each tablet's merged rows: a row goes
//! when the predicate is true, stays when it is false or NULL. Uncorrelated subqueries run
//! once first and their results take their place (`a IN (SELECT ..)` becomes a list of
//! values, as MariaDB reads the table before the DELETE). With a correlated subquery, the
//! rows to delete are those `SELECT * FROM t WHERE ..` gives, picked by value. With LIMIT (and ORDER BY), only the rows
//! `SELECT * FROM t WHERE .. ORDER BY .. LIMIT n` gives go (`picked_rows`: by their values,
//! the rows having no identity); ORDER BY alone changes nothing. The cost is a rewrite of the
//! table's tablets.

use crate::engine::QueryEngine;
use crate::output::Output;
use crate::session::Session;
use crate::statement::dml::DmlPlan;
use crate::statement::picked_rows::Picking;
use basalt_common::df_error::from_df;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast;
use basalt_storage::{RewriteRows, RewriteScope};
use datafusion::arrow::array::{Array, BooleanArray, RecordBatch};
use datafusion::arrow::compute::{cast, filter_record_batch, not};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::physical_expr::PhysicalExpr;
use std::sync::Arc;

/// Attempts before giving up on a table that compactions keep changing.
const ATTEMPTS: usize = 3;

impl QueryEngine {
    /// Deletes the rows of `plan.statement`'s WHERE from a Duplicate or Aggregate table, as
    /// many as `delete`'s ORDER BY .. LIMIT picks.
    pub(super) async fn delete_by_rewrite(
        &self,
        session: &Session,
        plan: DmlPlan,
        delete: &ast::Delete,
    ) -> Result<Output> {
        let pick = match (&plan.statement, &delete.limit) {
            (ast::Statement::Query(query), Some(limit)) => {
                let mut query = query.as_ref().clone();
                query.order_by = (!delete.order_by.is_empty()).then(|| ast::OrderBy {
                    kind: ast::OrderByKind::Expressions(delete.order_by.clone()),
                    interpolate: None,
                });
                query.limit_clause = Some(ast::LimitClause::LimitOffset {
                    limit: Some(limit.clone()),
                    offset: None,
                    limit_by: vec![],
                });
                Some(query)
            }
            _ => None,
        };
        let whole_query = match &plan.statement {
            ast::Statement::Query(query) => Some(query.as_ref().clone()),
            _ => None,
        };
        let stmt = plan.statement;
        let (state, logical) = self.plan_checked(session, stmt).await?;
        let analyzed = state
            .analyzer()
            .execute_and_check(logical, state.config_options(), |_, _| {})
            .map_err(from_df)?;
        let mut pick = pick;
        let predicate = match delete_predicate(&analyzed)? {
            // A correlated subquery: the rows the WHERE holds for are found by the query
            // (which decorrelates it) and picked by their values, as LIMIT picks them.
            Some((expr, _)) if has_correlated_subquery(&expr)? => {
                if pick.is_none() {
                    pick = whole_query;
                }
                None
            }
            Some((expr, schema)) => {
                let expr = super::update_rewrite::inline_subqueries(
                    &state,
                    expr,
                    &schema,
                    "a DELETE on a DUPLICATE or AGGREGATE KEY table",
                )
                .await?;
                let physical = state.create_physical_expr(expr, &schema).map_err(from_df)?;
                Some((physical, Arc::new(schema.as_arrow().clone())))
            }
            None => None,
        };
        let predicate = Arc::new(predicate);
        // Running loads finish first; loads that start meanwhile wait for the DELETE.
        // Inside a transaction: staged, through its storage.
        let storage = crate::transaction::storage(&self.services, session);
        let _gate = storage.rewrite_gate(plan.table.id).write_owned().await;
        // LIMIT: the rows to delete, picked with loads held back by the gate.
        let picked = match pick {
            Some(query) => Some(Arc::new(self.pick_rows(session, query).await?)),
            None => None,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let table = storage
                .catalog()
                .table_by_id(plan.table.id)
                .ok_or_else(|| {
                    BasaltError::UnknownTable(format!(
                        "{}.{}",
                        plan.table.database, plan.table.name
                    ))
                })?;
            if table.schema_version != plan.table.schema_version {
                return Err(BasaltError::ConcurrentDdl(format!(
                    "table {} was altered during the DELETE; nothing was deleted",
                    table.name
                )));
            }
            let storage = storage.clone();
            let predicate = predicate.clone();
            let picked = picked.clone();
            let done = tokio::task::spawn_blocking(move || {
                // The picked rows, found afresh on each attempt.
                let picking = picked.as_ref().map(|p| p.picking());
                let transform =
                    |batch: RecordBatch| remove_matching(&predicate, picking.as_ref(), batch);
                storage.rewrite_table(
                    &table,
                    (*table).clone(),
                    RewriteRows::Merged,
                    RewriteScope::FormalPartitions,
                    &transform,
                )
            })
            .await
            .map_err(|e| BasaltError::Internal(format!("DELETE task failed: {e}")))?;
            match done {
                Err(BasaltError::ConcurrentDdl(_)) if attempt < ATTEMPTS => continue,
                Err(e) => return Err(e),
                Ok(stats) => {
                    return Ok(Output::Ok {
                        affected_rows: stats.rows_before.saturating_sub(stats.rows_after),
                        last_insert_id: 0,
                        info: String::new(),
                    })
                }
            }
        }
    }
}

/// The WHERE of an analyzed `SELECT cols FROM t WHERE ..` and the schema it reads (the table's
/// columns in order); `None` without WHERE.
fn delete_predicate(plan: &LogicalPlan) -> Result<Option<(Expr, datafusion::common::DFSchema)>> {
    let refused = || {
        BasaltError::NotSupported(
            "this WHERE in a DELETE on a DUPLICATE or AGGREGATE KEY table".into(),
        )
    };
    let node = match plan {
        LogicalPlan::Projection(p) => p.input.as_ref(),
        other => other,
    };
    let reads_table = |p: &LogicalPlan| match p {
        LogicalPlan::TableScan(_) => true,
        LogicalPlan::SubqueryAlias(a) => matches!(a.input.as_ref(), LogicalPlan::TableScan(_)),
        _ => false,
    };
    match node {
        LogicalPlan::Filter(f) if reads_table(&f.input) => Ok(Some((
            f.predicate.clone(),
            f.input.schema().as_ref().clone(),
        ))),
        n if reads_table(n) => Ok(None),
        _ => Err(refused()),
    }
}

/// Whether `expr` has a subquery reading the outer row.
pub(super) fn has_correlated_subquery(expr: &Expr) -> Result<bool> {
    use datafusion::common::tree_node::TreeNode;
    expr.exists(|e| {
        Ok(match e {
            Expr::ScalarSubquery(s) => !s.outer_ref_columns.is_empty(),
            Expr::InSubquery(i) => !i.subquery.outer_ref_columns.is_empty(),
            Expr::Exists(x) => !x.subquery.outer_ref_columns.is_empty(),
            _ => false,
        })
    })
    .map_err(from_df)
}

/// `batch` without the rows `predicate` holds for (all of them without a predicate), only
/// those `picking` picks with a LIMIT.
fn remove_matching(
    predicate: &Option<(Arc<dyn PhysicalExpr>, SchemaRef)>,
    picking: Option<&Picking<'_>>,
    batch: RecordBatch,
) -> Result<RecordBatch> {
    let Some((predicate, schema)) = predicate else {
        return match picking {
            Some(picking) => {
                let all = BooleanArray::from(vec![true; batch.num_rows()]);
                let picked = picking.take(&batch, &all)?;
                filter_record_batch(&batch, &not(&picked).map_err(internal)?).map_err(internal)
            }
            None => Ok(batch.slice(0, 0)),
        };
    };
    if schema.fields().len() != batch.num_columns() {
        return Err(BasaltError::Internal(
            "DELETE's predicate reads another shape of row".into(),
        ));
    }
    // Scans show strings as views; the predicate was planned for what scans show.
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                cast(c, f.data_type())
            }
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| BasaltError::Internal(e.to_string()))?;
    let probe = RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| BasaltError::Internal(e.to_string()))?;
    let matched = predicate
        .evaluate(&probe)
        .and_then(|v| v.into_array(probe.num_rows()))
        .map_err(from_df)?;
    let matched = matched
        .as_any()
        .downcast_ref::<BooleanArray>()
        .ok_or_else(|| BasaltError::Internal("DELETE's predicate is not boolean".into()))?;
    let matched: BooleanArray = (0..matched.len())
        .map(|i| Some(matched.is_valid(i) && matched.value(i)))
        .collect();
    let matched = match picking {
        Some(picking) => picking.take(&probe, &matched)?,
        None => matched,
    };
    filter_record_batch(&batch, &not(&matched).map_err(internal)?).map_err(internal)
}

fn internal(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::Internal(e.to_string())
}
