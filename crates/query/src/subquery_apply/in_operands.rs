//! IN operands that hold subqueries: `(SELECT MAX(a) FROM t) IN (SELECT b FROM t2)`,
//! `(SELECT a FROM t LIMIT 1) NOT IN (..)`. Neither DataFusion's decorrelation nor the
//! per-row evaluation of [`super::SubqueryApply`] takes an IN whose tested value is itself a
//! subquery (the physical planner then failed: "does not support logical expression
//! InSubquery"). Each such operand is computed first, as a column of a projection under the
//! node that tests it; the IN then tests that column, as any other IN.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::expr::InSubquery;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{Expr, Filter, LogicalPlan, Projection};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Names of the computed operands, unique within any plan.
static NEXT_OPERAND: AtomicU64 = AtomicU64::new(0);

fn has_subquery(e: &Expr) -> bool {
    e.exists(|x| {
        Ok(matches!(
            x,
            Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)
        ))
    })
    .unwrap_or(false)
}

/// `node` (a projection or filter) with the IN operands of its expressions that hold
/// subqueries computed by a projection below it; its output unchanged.
pub(crate) fn computed_in_operands(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let (input, is_filter) = match &node {
        LogicalPlan::Projection(p) => (Arc::clone(&p.input), false),
        LogicalPlan::Filter(f) => (Arc::clone(&f.input), true),
        _ => return Ok(Transformed::no(node)),
    };
    let wanted = node.expressions().iter().any(|e| {
        e.exists(|x| Ok(matches!(x, Expr::InSubquery(i) if has_subquery(&i.expr))))
            .unwrap_or(false)
    });
    if !wanted {
        return Ok(Transformed::no(node));
    }
    let mut operands: Vec<Expr> = vec![];
    let preserver = NamePreserver::new(&node);
    let mut exprs = vec![];
    for e in node.expressions() {
        let saved = preserver.save(&e);
        let rewritten = e.transform_up(|x| match x {
            Expr::InSubquery(InSubquery {
                expr,
                subquery,
                negated,
            }) if has_subquery(&expr) => {
                let name = format!(
                    "__in_operand_{}",
                    NEXT_OPERAND.fetch_add(1, Ordering::Relaxed)
                );
                operands.push(expr.alias(name.clone()));
                Ok(Transformed::yes(Expr::InSubquery(InSubquery {
                    expr: Box::new(Expr::Column(Column::from_name(name))),
                    subquery,
                    negated,
                })))
            }
            other => Ok(Transformed::no(other)),
        })?;
        exprs.push(if is_filter {
            rewritten.data
        } else {
            saved.restore(rewritten.data)
        });
    }
    let mut below: Vec<Expr> = input
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    below.extend(operands);
    let below = Arc::new(LogicalPlan::Projection(Projection::try_new(below, input)?));
    if !is_filter {
        let projection = Projection::try_new(exprs, below)?;
        return Ok(Transformed::yes(LogicalPlan::Projection(projection)));
    }
    let original: Vec<Expr> = node
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    let predicate = exprs.into_iter().next().unwrap_or(Expr::Literal(
        datafusion::common::ScalarValue::Boolean(Some(true)),
        None,
    ));
    let filter = LogicalPlan::Filter(Filter::try_new(predicate, below)?);
    let projection = Projection::try_new(original, Arc::new(filter))?;
    Ok(Transformed::yes(LogicalPlan::Projection(projection)))
}
