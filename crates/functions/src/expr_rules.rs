//! The walk shared by Basalt's expression-rewriting analyzer rules: every expression of a plan
//! node (bottom up, subqueries too) goes through a rewrite, keeping the names the node's
//! expressions had (each expression of a grouping set keeps its own), and a changed node gets
//! its schema recomputed.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Expr, LogicalPlan};

/// Rewrites each expression of `node` bottom up with `rewrite`, which sees the node's input
/// schema. Table scans are left alone.
pub(crate) fn rewrite_node_expressions(
    node: LogicalPlan,
    rewrite: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    if matches!(node, LogicalPlan::TableScan(_)) {
        return Ok(Transformed::no(node));
    }
    let schema = merge_schema(&node.inputs());
    let preserver = NamePreserver::new(&node);
    let keeping_name = |e: Expr| {
        let saved = preserver.save(&e);
        let new = e.transform_up(|e| rewrite(e, &schema))?;
        Ok(if new.transformed {
            new.update_data(|e| saved.restore(e))
        } else {
            new
        })
    };
    let rewritten = node.map_expressions(|e| match e {
        // ROLLUP / CUBE / GROUPING SETS: each grouped expression keeps its name (the grouping
        // set has none of its own; the columns above refer to its expressions').
        Expr::GroupingSet(_) => e.map_children(keeping_name),
        e => keeping_name(e),
    })?;
    if rewritten.transformed {
        rewritten.map_data(|p| p.recompute_schema())
    } else {
        Ok(rewritten)
    }
}
