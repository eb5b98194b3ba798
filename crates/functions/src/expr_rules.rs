//! The walk shared by Basalt's expression-rewriting analyzer rules: every expression of a plan
//! node (bottom up, subqueries too) goes through a rewrite, keeping the names the node's
//! expressions had (each expression of a grouping set keeps its own), and a changed node gets
//! its schema recomputed.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::BinaryExpr;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::planner::{PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Expr, LogicalPlan, Operator};

/// Rewrites each expression of `node` bottom up with `rewrite`, which sees the node's input
/// schema. Table scans are left alone.
pub fn rewrite_node_expressions(
    node: LogicalPlan,
    rewrite: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<Transformed<LogicalPlan>> {
    rewrite_node_expression_trees(node, |e, schema| e.transform_up(|e| rewrite(e, schema)))
}

/// Rewrites each whole expression of `node` with `rewrite` (which walks it as it needs), as
/// [`rewrite_node_expressions`] does otherwise.
pub(crate) fn rewrite_node_expression_trees(
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
        let new = rewrite(e, &schema)?;
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

/// An `ExprPlanner`'s comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`) as `rewrite` leaves it while
/// the SQL is planned; other operators, and comparisons `rewrite` does not change, stay as
/// written.
pub(crate) fn plan_comparison(
    expr: RawBinaryExpr,
    schema: &DFSchema,
    rewrite: impl Fn(Expr, &DFSchema) -> Result<Transformed<Expr>>,
) -> Result<PlannerResult<RawBinaryExpr>> {
    use datafusion::sql::sqlparser::ast::BinaryOperator as Sql;
    let op = match expr.op {
        Sql::Eq => Operator::Eq,
        Sql::NotEq => Operator::NotEq,
        Sql::Lt => Operator::Lt,
        Sql::LtEq => Operator::LtEq,
        Sql::Gt => Operator::Gt,
        Sql::GtEq => Operator::GtEq,
        _ => return Ok(PlannerResult::Original(expr)),
    };
    let binary = Expr::BinaryExpr(BinaryExpr {
        left: Box::new(expr.left.clone()),
        op,
        right: Box::new(expr.right.clone()),
    });
    let converted = rewrite(binary, schema)?;
    Ok(if converted.transformed {
        PlannerResult::Planned(converted.data)
    } else {
        PlannerResult::Original(expr)
    })
}

/// True for the comparison operators MySQL's comparison rules retype: `=`, `<>`, `<`, `<=`,
/// `>`, `>=` and the NULL-safe (in)equalities.
pub fn is_comparison(op: &Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}
