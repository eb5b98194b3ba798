//! `INTERSECT ALL` and `EXCEPT ALL` keep SQL's multiset counts. DataFusion plans them as a
//! left semi (anti) join on every column, so a row found m times on the left and n times on the
//! right came back m times from `INTERSECT ALL` (SQL: min(m, n)) and never from `EXCEPT ALL`
//! (SQL: max(m - n, 0)); apache/datafusion#12955. This analyzer rule numbers the copies of each
//! row on both sides (`row_number() OVER (PARTITION BY every column)`) and joins on the copy
//! number too: left copy k survives `INTERSECT ALL` when the right has a k-th copy, and
//! `EXCEPT ALL` when it has none.
//!
//! The rule runs among the first analyzer rules, when the only semi and anti joins on every
//! column, NULLs equal, without a filter, are those the set operations built (subqueries are
//! decorrelated later, by the optimizer). `INTERSECT` and `EXCEPT` without ALL join a DISTINCT
//! left side, whose rows are single copies already; they are left as they are.

use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, NullEquality, Result};
use datafusion::config::ConfigOptions;
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::{
    Expr, ExprFunctionExt, Join, JoinType, LogicalPlan, LogicalPlanBuilder,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct SetOperationMultiplicity;

/// The name of the copy number added on each side.
const LEFT_COPY: &str = "__basalt_left_copy";
const RIGHT_COPY: &str = "__basalt_right_copy";

/// The columns of `plan`'s output, in order.
fn columns(plan: &LogicalPlan) -> Vec<Column> {
    plan.schema().columns()
}

/// Whether `join` is the plan DataFusion builds for `INTERSECT ALL` or `EXCEPT ALL`: a semi or
/// anti join of a left side that is not DISTINCT, on each column of the left side equal (NULLs
/// too) to the same column of the right side, with no other condition.
fn is_all_set_operation(join: &Join) -> bool {
    if !matches!(join.join_type, JoinType::LeftSemi | JoinType::LeftAnti)
        || join.null_equality != NullEquality::NullEqualsNull
        || join.filter.is_some()
        || matches!(join.left.as_ref(), LogicalPlan::Distinct(_))
    {
        return false;
    }
    let left = columns(&join.left);
    let right = columns(&join.right);
    left.len() == join.on.len()
        && right.len() == join.on.len()
        && join
            .on
            .iter()
            .zip(left.iter().zip(&right))
            .all(|((l, r), (lc, rc))| {
                matches!(l, Expr::Column(c) if c == lc) && matches!(r, Expr::Column(c) if c == rc)
            })
}

/// `plan` with the number of each row among its copies, named `name`.
fn numbered(plan: LogicalPlan, name: &str) -> Result<LogicalPlan> {
    let every_column = columns(&plan).into_iter().map(Expr::Column).collect();
    let copy = row_number().partition_by(every_column).build()?.alias(name);
    LogicalPlanBuilder::from(plan).window(vec![copy])?.build()
}

/// The set operation `join` with each copy of a row matched to one copy on the right.
fn with_multiplicity(join: Join) -> Result<LogicalPlan> {
    let output = columns(&join.left);
    let (mut left_keys, mut right_keys): (Vec<Column>, Vec<Column>) =
        output.iter().cloned().zip(columns(&join.right)).unzip();
    left_keys.push(Column::from_name(LEFT_COPY));
    right_keys.push(Column::from_name(RIGHT_COPY));
    let left = numbered(Arc::unwrap_or_clone(join.left), LEFT_COPY)?;
    let right = numbered(Arc::unwrap_or_clone(join.right), RIGHT_COPY)?;
    LogicalPlanBuilder::from(left)
        .join_detailed(
            right,
            join.join_type,
            (left_keys, right_keys),
            None,
            NullEquality::NullEqualsNull,
        )?
        .project(output.into_iter().map(Expr::Column))?
        .build()
}

impl AnalyzerRule for SetOperationMultiplicity {
    fn name(&self) -> &str {
        "basalt_set_operation_multiplicity"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Join(join) if is_all_set_operation(&join) => {
                Ok(Transformed::yes(with_multiplicity(join)?))
            }
            other => Ok(Transformed::no(other)),
        })
        .map(|t| t.data)
    }
}
