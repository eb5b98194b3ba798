//! `VALUES ((SELECT ..), ..)`: rows of VALUES that hold scalar subqueries become one-row
//! projections (united), so the subqueries run when the plan runs.
//!
//! DataFusion turns a VALUES node into constant rows while it plans, evaluating each value
//! then, before any scalar subquery has run ("ScalarSubqueryExpr evaluated before the subquery
//! was executed"): `INSERT INTO t1 (x) VALUES ((SELECT MAX(x) FROM t1))` failed. A projection
//! over a one-row relation evaluates its expressions when it runs, after its subqueries.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::logical_expr::{
    EmptyRelation, Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, Values,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

/// Analyzer rule: VALUES with scalar subqueries as a UNION ALL of one-row projections.
#[derive(Debug, Default)]
pub struct ValuesWithSubqueries;

impl AnalyzerRule for ValuesWithSubqueries {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Values(values) if has_subquery(&values) => {
                Ok(Transformed::yes(projected(values)?))
            }
            other => Ok(Transformed::no(other)),
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "values_with_subqueries"
    }
}

/// True when a value of `values` holds a scalar subquery.
fn has_subquery(values: &Values) -> bool {
    values.values.iter().flatten().any(|e| {
        e.exists(|x| Ok(matches!(x, Expr::ScalarSubquery(_))))
            .unwrap_or(false)
    })
}

/// Each row of `values` as a projection over one empty row, typed and named as VALUES
/// types and names its columns, the rows united.
fn projected(values: Values) -> Result<LogicalPlan> {
    let schema = values.schema.clone();
    let one_row = || {
        LogicalPlan::EmptyRelation(EmptyRelation {
            produce_one_row: true,
            schema: Arc::new(datafusion::common::DFSchema::empty()),
        })
    };
    let mut united: Option<LogicalPlanBuilder> = None;
    for row in values.values {
        let exprs = row
            .into_iter()
            .zip(schema.fields())
            .map(|(e, field)| {
                let e = if e.get_type(&schema)? == *field.data_type() {
                    e
                } else {
                    e.cast_to(field.data_type(), &schema)?
                };
                Ok(e.alias(field.name()))
            })
            .collect::<Result<Vec<_>>>()?;
        let row = LogicalPlanBuilder::from(one_row())
            .project(exprs)?
            .build()?;
        united = Some(match united {
            None => LogicalPlanBuilder::from(row),
            Some(builder) => builder.union(row)?,
        });
    }
    match united {
        Some(builder) => builder.build(),
        None => Ok(LogicalPlan::Values(Values {
            schema,
            values: vec![],
        })),
    }
}
