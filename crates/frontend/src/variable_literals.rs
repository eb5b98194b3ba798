//! Variables in a query (`@x`, `@@sql_mode`) replaced by their values before anything else
//! reads the plan. DataFusion would look them up when it builds the physical plan; by then a
//! pushed-down filter holding one has left for a cluster backend, which knows no session.
//! A statement reads each variable once, at its start, as MySQL's do.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::var_provider::VarProvider;
use datafusion::logical_expr::{lit, Expr, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

/// Replaces every variable with a literal of its value.
#[derive(Debug)]
pub(crate) struct VariableLiterals {
    pub(crate) system: Arc<dyn VarProvider + Send + Sync>,
    pub(crate) user: Arc<dyn VarProvider + Send + Sync>,
}

impl AnalyzerRule for VariableLiterals {
    fn name(&self) -> &str {
        "variable_literals"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            // Output names stay those of the query (`SELECT @a` has a column `@a`).
            let names = NamePreserver::new(&node);
            node.map_expressions(|e| {
                let name = names.save(&e);
                let replaced = e.transform_up(|e| self.literal(e))?;
                Ok(if replaced.transformed {
                    replaced.update_data(|e| name.restore(e))
                } else {
                    replaced
                })
            })
        })
        .map(|t| t.data)
    }
}

impl VariableLiterals {
    fn literal(&self, e: Expr) -> Result<Transformed<Expr>> {
        let Expr::ScalarVariable(field, names) = &e else {
            return Ok(Transformed::no(e));
        };
        let system = names.first().is_some_and(|n| n.starts_with("@@"));
        let provider = if system { &self.system } else { &self.user };
        let value = provider.get_value(names.clone())?;
        // The type the query was planned with (the same lookup, a moment earlier).
        let value = if value.data_type() == *field.data_type() {
            value
        } else {
            value.cast_to(field.data_type())?
        };
        Ok(Transformed::yes(lit(value)))
    }
}
