//! Doris's `REVERSE(array)`: the elements in reverse order (`REVERSE([1, 2, 3])` is
//! `[3, 2, 1]`). DataFusion's `reverse` takes text only, so type coercion made the array its
//! text and reversed the characters (`]3 ,2 ,1[`), a silently wrong value. An analyzer rule
//! before type coercion sends a `reverse` of a list to `array_reverse`.

use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct ListReverse;

impl AnalyzerRule for ListReverse {
    fn name(&self) -> &str {
        "doris_list_reverse"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, list_reverse))
            .map(|t| t.data)
    }
}

fn list_reverse(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(f) = &e else {
        return Ok(Transformed::no(e));
    };
    let is_list = |e: &Expr| {
        e.get_type(schema).is_ok_and(|t| {
            matches!(
                t,
                DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
            )
        })
    };
    if f.name() != "reverse" || f.args.len() != 1 || !is_list(&f.args[0]) {
        return Ok(Transformed::no(e));
    }
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(
            datafusion::functions_nested::reverse::array_reverse_udf(),
            f.args.clone(),
        ),
    )))
}
