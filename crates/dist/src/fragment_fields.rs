//! Restores what a plan fragment loses on its way to a backend: DataFusion's protobuf form of a
//! function call keeps its result's name and type but not the field's metadata, and Basalt
//! marks values with it (JSON results carry the `arrow.json` extension, DATETIME results their
//! fraction digits). Without it, `json_array(doc->'$.a')` on a backend would quote the JSON
//! object as a string. The backend asks each call's function for its result field again and
//! keeps the metadata where the type agrees with what travelled.

use datafusion::arrow::datatypes::Schema;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::Result;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

/// `expr` (over `schema`) with every function call's result field asked of its function.
fn restore(
    expr: Arc<dyn PhysicalExpr>,
    schema: &Schema,
) -> Result<Transformed<Arc<dyn PhysicalExpr>>> {
    expr.transform_up(|e| {
        let Some(call) = e.downcast_ref::<ScalarFunctionExpr>() else {
            return Ok(Transformed::no(e));
        };
        let travelled = call.return_field(schema)?;
        let Ok(asked) = ScalarFunctionExpr::try_new(
            Arc::new(call.fun().clone()),
            call.args().to_vec(),
            schema,
            Arc::new(call.config_options().clone()),
        ) else {
            return Ok(Transformed::no(e));
        };
        let field = asked.return_field(schema)?;
        if field.metadata().is_empty()
            || field.metadata() == travelled.metadata()
            || field.data_type() != travelled.data_type()
        {
            return Ok(Transformed::no(e));
        }
        let rebuilt = ScalarFunctionExpr::new(
            call.name(),
            Arc::new(call.fun().clone()),
            call.args().to_vec(),
            Arc::new(
                travelled
                    .as_ref()
                    .clone()
                    .with_metadata(field.metadata().clone()),
            ),
            Arc::new(call.config_options().clone()),
        )
        .with_nullable(call.nullable());
        Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn PhysicalExpr>))
    })
}

/// The fragment with its projections' and filters' function results restored.
pub fn restore_result_fields(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
            let schema = projection.input().schema();
            let mut changed = false;
            let mut exprs = Vec::with_capacity(projection.expr().len());
            for e in projection.expr() {
                let restored = restore(e.expr.clone(), &schema)?;
                changed |= restored.transformed;
                exprs.push(ProjectionExpr {
                    expr: restored.data,
                    alias: e.alias.clone(),
                });
            }
            if !changed {
                return Ok(Transformed::no(node));
            }
            let rebuilt = ProjectionExec::try_new(exprs, projection.input().clone())?;
            return Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn ExecutionPlan>));
        }
        if let Some(filter) = node.downcast_ref::<FilterExec>() {
            let schema = filter.input().schema();
            let restored = restore(filter.predicate().clone(), &schema)?;
            if !restored.transformed {
                return Ok(Transformed::no(node));
            }
            let rebuilt = FilterExecBuilder::from(filter)
                .with_predicate(restored.data)
                .build()?;
            return Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn ExecutionPlan>));
        }
        Ok(Transformed::no(node))
    })
    .data()
}
