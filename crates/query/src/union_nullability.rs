//! A UNION's columns may hold NULL whenever a branch's column may. DataFusion fixes a UNION's
//! schema when the UNION is planned; an optimizer rule that later makes a branch's column
//! nullable (an `x IN (SELECT ..)` decorrelated into a mark join: `SELECT 2 IN (SELECT 0 UNION
//! SELECT 2) UNION SELECT 1 < 2`) leaves the UNION claiming NOT NULL, and the physical planner
//! then refused the plan ("Physical input schema should be the same as the one converted from
//! logical input schema"). This rule, last of the logical optimizer, widens such a UNION's
//! columns and recomputes the schemas of the nodes above it.

use datafusion::common::tree_node::{Transformed, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::{LogicalPlan, Union};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct UnionNullability;

/// Whether a branch of `union` may give NULL in its column `i`.
fn branch_nullable(union: &Union, i: usize) -> bool {
    union.inputs.iter().any(|input| {
        input
            .schema()
            .fields()
            .get(i)
            .is_some_and(|f| f.is_nullable())
    })
}

/// Whether a branch of `union` may give NULL in a column the union says never is NULL.
fn stale(union: &Union) -> bool {
    let fields = union.schema.fields().iter().enumerate();
    fields
        .into_iter()
        .any(|(i, field)| !field.is_nullable() && branch_nullable(union, i))
}

/// `union` with each column nullable where a branch's is.
fn widened(union: Union) -> Result<Union> {
    let fields = union
        .schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| {
            let nullable = field.is_nullable() || branch_nullable(&union, i);
            let field = field.as_ref().clone().with_nullable(nullable);
            (qualifier.cloned(), Arc::new(field))
        })
        .collect();
    let schema = DFSchema::new_with_metadata(fields, union.schema.metadata().clone())?;
    Ok(Union {
        inputs: union.inputs,
        schema: Arc::new(schema),
    })
}

impl OptimizerRule for UnionNullability {
    fn name(&self) -> &str {
        "basalt_union_nullability"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let mut any = false;
        plan.apply_with_subqueries(|node| {
            any |= matches!(node, LogicalPlan::Union(u) if stale(u));
            Ok(if any {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })?;
        if !any {
            return Ok(Transformed::no(plan));
        }
        // Every node above a widened union takes its new schema (rare: only such plans pay).
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Union(union) if stale(&union) => {
                Ok(Transformed::yes(LogicalPlan::Union(widened(union)?)))
            }
            other => other.recompute_schema().map(Transformed::yes),
        })
    }
}
