//! Stored-function calls on a cluster. A call runs its body through the frontend session's own
//! statement path, so it cannot go to a backend inside a plan fragment. Before such a plan is
//! made physical, each input of the operators that call stored functions (a maximal subplan
//! with no call in it) is run on its own, distributed as any query, and its rows collected on
//! the frontend; the operators with calls (and everything above them) then run on the frontend
//! over those rows. The result is the same as on one node; the inputs' rows all travel to the
//! frontend, as MySQL's per-row calls need them there anyway. The inputs run in the
//! statement's workload group, under its limits; the rows they collect are held outside its
//! memory pool (as a result set being sent is).

use super::functions::CALL_NAME;
use basalt_common::df_error::from_df;
use basalt_common::Result;
use basalt_query::{subquery_of, subquery_of_mut};
use datafusion::catalog::MemTable;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Column;
use datafusion::datasource::provider_as_source;
use datafusion::execution::{SessionState, TaskContext};
use datafusion::logical_expr::{col, Expr, LogicalPlan, LogicalPlanBuilder};
use std::sync::Arc;

/// The name the collected rows of input `n` are scanned under.
fn input_name(n: usize) -> String {
    format!("__stored_function_input_{n}")
}

/// True if `expr` calls a stored function (also inside a subquery).
fn calls(expr: &Expr) -> bool {
    expr.exists(|e| {
        Ok(
            matches!(e, Expr::ScalarFunction(f) if f.func.name() == CALL_NAME)
                || subquery_of(e).is_some_and(|s| plan_calls(&s.subquery)),
        )
    })
    .unwrap_or(true)
}

/// True if `plan` (any node, or a subquery of one) calls a stored function.
pub(crate) fn plan_calls(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply(|node| {
        found = node.expressions().iter().any(calls);
        Ok(match found {
            true => TreeNodeRecursion::Stop,
            false => TreeNodeRecursion::Continue,
        })
    });
    found
}

/// True if `plan` reads a table (what a backend would run).
fn scans_tables(plan: &LogicalPlan) -> bool {
    plan.exists(|node| Ok(matches!(node, LogicalPlan::TableScan(_))))
        .unwrap_or(true)
}

/// `plan` with the inputs of its calling operators replaced by their collected rows (see the
/// module doc); `plan` itself when nothing in it calls a stored function.
pub(crate) async fn run_inputs(
    state: &SessionState,
    task: &Arc<TaskContext>,
    plan: LogicalPlan,
) -> Result<LogicalPlan> {
    if !plan_calls(&plan) {
        return Ok(plan);
    }
    let mut collected = 0;
    Box::pin(replace_inputs(state, task, plan, &mut collected)).await
}

/// `plan`, which calls a stored function somewhere, with each input that calls none collected.
async fn replace_inputs(
    state: &SessionState,
    task: &Arc<TaskContext>,
    plan: LogicalPlan,
    collected: &mut usize,
) -> Result<LogicalPlan> {
    let children: Vec<LogicalPlan> = plan.inputs().into_iter().cloned().collect();
    if children.is_empty() {
        return Ok(plan);
    }
    let mut replaced = Vec::with_capacity(children.len());
    for child in children {
        replaced.push(match (plan_calls(&child), scans_tables(&child)) {
            (true, _) => Box::pin(replace_inputs(state, task, child, collected)).await?,
            // Rows made here (VALUES, no FROM) need no backend.
            (false, false) => child,
            (false, true) => {
                *collected += 1;
                collect(state, task, child, *collected).await?
            }
        });
    }
    let mut exprs = Vec::new();
    for expr in plan.expressions() {
        exprs.push(replace_in_subqueries(state, task, expr, collected).await?);
    }
    plan.with_new_exprs(exprs, replaced).map_err(from_df)
}

/// `expr` with the subqueries that call stored functions given collected inputs too.
async fn replace_in_subqueries(
    state: &SessionState,
    task: &Arc<TaskContext>,
    expr: Expr,
    collected: &mut usize,
) -> Result<Expr> {
    let mut calling: Vec<Arc<LogicalPlan>> = Vec::new();
    let _ = expr.apply(|e| {
        if let Some(s) = subquery_of(e).filter(|s| plan_calls(&s.subquery)) {
            calling.push(s.subquery.clone());
        }
        Ok(TreeNodeRecursion::Continue)
    });
    if calling.is_empty() {
        return Ok(expr);
    }
    let mut replaced = Vec::with_capacity(calling.len());
    for plan in calling {
        let new = Box::pin(replace_inputs(
            state,
            task,
            plan.as_ref().clone(),
            collected,
        ))
        .await?;
        replaced.push((plan, Arc::new(new)));
    }
    expr.transform(|mut e| {
        let Some(s) = subquery_of_mut(&mut e) else {
            return Ok(Transformed::no(e));
        };
        if let Some((_, new)) = replaced
            .iter()
            .find(|(old, _)| Arc::ptr_eq(old, &s.subquery))
        {
            s.subquery = new.clone();
        }
        Ok(Transformed::yes(e))
    })
    .map(|t| t.data)
    .map_err(from_df)
}

/// The rows of `input`, run now, as a scan of them giving the columns `input` gives (same
/// qualifiers and names, so the operator above reads them unchanged).
async fn collect(
    state: &SessionState,
    task: &Arc<TaskContext>,
    input: LogicalPlan,
    n: usize,
) -> Result<LogicalPlan> {
    let schema = input.schema().clone();
    let physical = state.create_physical_plan(&input).await.map_err(from_df)?;
    let batches = datafusion::physical_plan::collect(physical, task.clone())
        .await
        .map_err(from_df)?;
    // Stored under plain names (two inputs' columns may share a name), then given back their
    // qualified ones.
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| f.as_ref().clone().with_name(format!("c{i}")))
        .collect();
    let stored = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
    let batches = batches
        .into_iter()
        .map(|b| {
            datafusion::arrow::array::RecordBatch::try_new(stored.clone(), b.columns().to_vec())
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| basalt_common::BasaltError::Internal(e.to_string()))?;
    let table = MemTable::try_new(stored, vec![batches]).map_err(from_df)?;
    let name = input_name(n);
    let exprs: Vec<Expr> = schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| {
            let stored = col(Column::new(Some(name.clone()), format!("c{i}")));
            stored.alias_qualified(qualifier.cloned(), field.name())
        })
        .collect();
    LogicalPlanBuilder::scan(name, provider_as_source(Arc::new(table)), None)
        .and_then(|b| b.project(exprs))
        .and_then(|b| b.build())
        .map_err(from_df)
}
