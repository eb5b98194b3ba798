//! A scalar subquery of more than one row is MySQL's error 1242, also where it is read as a
//! join.
//!
//! On one server DataFusion runs an uncorrelated scalar subquery on its own
//! (`ScalarSubqueryExec`), which checks the row count. A cluster's planner cannot ship that
//! node, so there every scalar subquery becomes a left join with the subquery's rows, and a
//! subquery of three rows gave each outer row three times. Where that is so, this rule makes
//! each uncorrelated scalar subquery that may give more than one row one row: its rows are
//! counted and its value taken with an aggregate (NULL when there are none), and
//! `__basalt_single_row` raises the error when the count passes 1.

use basalt_functions::single_row;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::functions_aggregate::expr_fn::{count, first_value};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{lit, Expr, LogicalPlan, LogicalPlanBuilder, Subquery};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

/// Analyzer rule: uncorrelated scalar subqueries checked for one row, where they are joined.
#[derive(Debug, Default)]
pub struct SingleRowScalarSubqueries;

impl AnalyzerRule for SingleRowScalarSubqueries {
    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        if config
            .optimizer
            .enable_physical_uncorrelated_scalar_subquery
        {
            // Run on their own, they check their rows.
            return Ok(plan);
        }
        plan.transform_up_with_subqueries(|node| {
            node.map_expressions(|e| {
                e.transform_up(|e| match e {
                    Expr::ScalarSubquery(sq)
                        if sq.outer_ref_columns.is_empty() && !at_most_one_row(&sq.subquery) =>
                    {
                        Ok(Transformed::yes(Expr::ScalarSubquery(single_row(sq)?)))
                    }
                    other => Ok(Transformed::no(other)),
                })
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "single_row_scalar_subqueries"
    }
}

/// True when `plan` gives one row at most: an aggregate without groups, a LIMIT of 0 or 1,
/// one empty row, under projections, aliases and sorts.
fn at_most_one_row(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Aggregate(a) => a.group_expr.is_empty(),
        LogicalPlan::EmptyRelation(_) => true,
        LogicalPlan::Values(v) => v.values.len() <= 1,
        LogicalPlan::Limit(limit) => {
            matches!(
                limit.get_fetch_type(),
                Ok(datafusion::logical_expr::logical_plan::FetchType::Literal(Some(n))) if n <= 1
            ) || at_most_one_row(&limit.input)
        }
        LogicalPlan::Projection(p) => at_most_one_row(&p.input),
        LogicalPlan::SubqueryAlias(a) => at_most_one_row(&a.input),
        LogicalPlan::Sort(s) => at_most_one_row(&s.input),
        LogicalPlan::Filter(f) => at_most_one_row(&f.input),
        _ => false,
    }
}

/// `sq` as `SELECT __basalt_single_row(COUNT(*), FIRST_VALUE(v)) FROM (sq)`, its one column
/// named as before.
fn single_row(sq: Subquery) -> Result<Subquery> {
    let plan = Arc::unwrap_or_clone(sq.subquery);
    let Some((qualifier, field)) = plan
        .schema()
        .iter()
        .next()
        .map(|(q, f)| (q.cloned(), f.clone()))
    else {
        return Ok(Subquery {
            subquery: Arc::new(plan),
            ..sq
        });
    };
    let value = Expr::Column(datafusion::common::Column::new(
        qualifier.clone(),
        field.name(),
    ));
    let rows = count(lit(1i64)).alias("__basalt_rows");
    let first = first_value(value, vec![]).alias("__basalt_value");
    let checked = Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(single_row::function()),
        vec![
            Expr::Column(datafusion::common::Column::from_name("__basalt_rows")),
            Expr::Column(datafusion::common::Column::from_name("__basalt_value")),
        ],
    ));
    let checked = match qualifier {
        Some(q) => checked.alias_qualified(Some(q), field.name()),
        None => checked.alias(field.name()),
    };
    let plan = LogicalPlanBuilder::from(plan)
        .aggregate(Vec::<Expr>::new(), vec![rows, first])?
        .project(vec![checked])?
        .build()?;
    Ok(Subquery {
        subquery: Arc::new(plan),
        ..sq
    })
}
