//! Window functions that DataFusion evaluates over a reversed order travel as their plain
//! equivalents. To share one sort between windows of opposite orders, DataFusion's optimizer
//! evaluates `LAG(x) OVER (ORDER BY k)` over rows sorted by `k DESC`, with the function marked
//! reversed. The protobuf form of a plan fragment drops that mark (DataFusion 55), so a backend
//! computed the lag in the wrong direction: a silent wrong answer. A reversed LAG is an
//! unmarked LEAD of the same arguments over the same rows, and a reversed LEAD an unmarked LAG;
//! FIRST_VALUE and LAST_VALUE are swapped for each other when reversed and do not read the
//! mark. Any other reversed function (NTH_VALUE, counted from the other end) cannot travel, so
//! the query fails with a clear error instead.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{not_impl_err, Result};
use datafusion::config::ConfigOptions;
use datafusion::functions_window::lead_lag::{lag_udwf, lead_udwf};
use datafusion::physical_expr::window::{
    StandardWindowExpr, StandardWindowFunctionExpr, WindowExpr,
};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::windows::{
    create_udwf_window_expr, BoundedWindowAggExec, WindowAggExec, WindowUDFExpr,
};
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct PlainWindowFunctions;

impl PhysicalOptimizerRule for PlainWindowFunctions {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            if let Some(window) = node.downcast_ref::<BoundedWindowAggExec>() {
                let input = window.input();
                let Some(exprs) = plain(window.window_expr(), input)? else {
                    return Ok(Transformed::no(node));
                };
                let can_repartition = !window.partition_keys().is_empty();
                let mode = window.input_order_mode.clone();
                let rebuilt =
                    BoundedWindowAggExec::try_new(exprs, input.clone(), mode, can_repartition)?;
                return Ok(Transformed::yes(Arc::new(rebuilt)));
            }
            if let Some(window) = node.downcast_ref::<WindowAggExec>() {
                let input = window.input();
                let Some(exprs) = plain(window.window_expr(), input)? else {
                    return Ok(Transformed::no(node));
                };
                let can_repartition = !window.partition_keys().is_empty();
                let rebuilt = WindowAggExec::try_new(exprs, input.clone(), can_repartition)?;
                return Ok(Transformed::yes(Arc::new(rebuilt)));
            }
            Ok(Transformed::no(node))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "basalt_plain_window_functions"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `exprs` with each reversed LAG/LEAD replaced by its plain equivalent; `None` when none is
/// reversed.
fn plain(
    exprs: &[Arc<dyn WindowExpr>],
    input: &Arc<dyn ExecutionPlan>,
) -> Result<Option<Vec<Arc<dyn WindowExpr>>>> {
    let mut changed = false;
    let mut out = Vec::with_capacity(exprs.len());
    for expr in exprs {
        let standard = expr.as_any().downcast_ref::<StandardWindowExpr>();
        let function = standard.and_then(|s| {
            s.get_standard_func_expr()
                .as_any()
                .downcast_ref::<WindowUDFExpr>()
        });
        let (Some(_), Some(function)) = (standard, function) else {
            out.push(expr.clone());
            continue;
        };
        // DataFusion keeps the mark private; its Debug form is the one place that shows it.
        let shown = format!("{function:?}");
        if !shown.contains("is_reversed: true") {
            out.push(expr.clone());
            continue;
        }
        let opposite = match function.fun().name() {
            "lag" => lead_udwf(),
            "lead" => lag_udwf(),
            "first_value" | "last_value" => {
                out.push(expr.clone());
                continue;
            }
            other => {
                return not_impl_err!(
                    "{other}() over this window order on a cluster (it is evaluated over the \
                     rows in reverse order, which plan fragments cannot carry yet)"
                )
            }
        };
        let replacement = create_udwf_window_expr(
            &opposite,
            function.args(),
            &input.schema(),
            function.name().to_string(),
            shown.contains("ignore_nulls: true"),
        )?;
        out.push(Arc::new(StandardWindowExpr::new(
            replacement,
            expr.partition_by(),
            expr.order_by(),
            expr.get_window_frame().clone(),
        )));
        changed = true;
    }
    Ok(changed.then_some(out))
}
