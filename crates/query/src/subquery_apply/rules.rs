//! The two rules that move subqueries into a [`SubqueryApply`]: one at the end of the analyzer
//! for the subqueries DataFusion's plan checks reject (or would answer wrongly), one right after
//! DataFusion's decorrelation rules for those they left in place.

use super::node::{AppliedSubquery, SubqueryApply, SubqueryKind};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::logical_expr::expr::{Exists, InSubquery};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    check_subquery_expr, Expr, ExprSchemable, Extension, LogicalPlan, LogicalPlanBuilder, Subquery,
};
use datafusion::optimizer::optimizer::ApplyOrder;
use datafusion::optimizer::{AnalyzerRule, OptimizerConfig, OptimizerRule};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Analyzer rule: subqueries whose shape DataFusion's checks refuse (a correlated scalar
/// subquery without an aggregate, outer references under an outer join, ..), and IN
/// subqueries its decorrelation would answer wrongly, and subqueries in join conditions, are
/// evaluated per row instead.
#[derive(Debug, Default)]
pub struct ApplyRefusedSubqueries;

impl AnalyzerRule for ApplyRefusedSubqueries {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        // IN operands that are subqueries are computed first, below their IN.
        let plan = plan
            .transform_up_with_subqueries(super::in_operands::computed_in_operands)?
            .data;
        plan.transform_up_with_subqueries(|node| {
            let misjudged = match &node {
                LogicalPlan::Filter(f) => misjudged_in_subqueries(&f.predicate, f.input.schema())?,
                _ => vec![],
            };
            let applied = apply_subqueries(node, |node, expr, subquery| {
                // DataFusion's filter push-down moves a join condition's subquery to the side
                // its (outer-reference-blind) columns say, even when it reads the other side.
                matches!(node, LogicalPlan::Join(_))
                    || misjudged.contains(expr)
                    // An aggregate of the outer row's values (OuterAggregates left it here).
                    || crate::aggregates_outer_values(&subquery.subquery)
                    || check_subquery_expr(node, &subquery.subquery, expr).is_err()
            })?;
            // One that reads both sides of the join cannot be left to that push-down.
            if let LogicalPlan::Join(join) = &applied.data {
                let has_subquery = |e: &Expr| {
                    e.exists(
                        |x| Ok(subquery_of(x).is_some() || matches!(x, Expr::SetComparison(_))),
                    )
                    .unwrap_or(true)
                };
                if join.filter.as_ref().is_some_and(has_subquery) {
                    return datafusion::common::not_impl_err!(
                        "a subquery in a join condition that reads both sides of the join"
                    );
                }
            }
            Ok(applied)
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "apply_refused_subqueries"
    }
}

/// Optimizer rule: the subqueries DataFusion's decorrelation rules could not turn into joins
/// are evaluated per row.
#[derive(Debug, Default)]
pub struct ApplyRemainingSubqueries;

impl OptimizerRule for ApplyRemainingSubqueries {
    fn name(&self) -> &str {
        "apply_remaining_subqueries"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        // DataFusion's physical planner runs an uncorrelated scalar subquery once itself.
        apply_subqueries(plan, |_, expr, subquery| {
            !matches!(expr, Expr::ScalarSubquery(_)) || is_correlated(subquery)
        })
    }
}

/// Names of the added columns, unique within any plan.
static NEXT_COLUMN: AtomicU64 = AtomicU64::new(0);

/// The subquery in `expr` itself (not in its children), with what it stands for.
fn subquery_of(expr: &Expr) -> Option<(SubqueryKind, &Subquery, Option<&Expr>)> {
    match expr {
        Expr::ScalarSubquery(s) => Some((SubqueryKind::Scalar, s, None)),
        Expr::Exists(Exists { subquery, negated }) => {
            Some((SubqueryKind::Exists { negated: *negated }, subquery, None))
        }
        Expr::InSubquery(InSubquery {
            expr,
            subquery,
            negated,
        }) => Some((
            SubqueryKind::In { negated: *negated },
            subquery,
            Some(expr.as_ref()),
        )),
        _ => None,
    }
}

/// Every outer reference in `plan`, its nested subqueries included.
fn outer_references(plan: &LogicalPlan) -> Result<Vec<Column>> {
    let mut found: Vec<Column> = vec![];
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            e.apply(|x| {
                if let Expr::OuterReferenceColumn(_, column) = x {
                    if !found.contains(column) {
                        found.push(column.clone());
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })?;
    Ok(found)
}

/// True when `subquery` has outer references (in itself or its nested subqueries).
fn is_correlated(subquery: &Subquery) -> bool {
    outer_references(&subquery.subquery).map_or(true, |refs| !refs.is_empty())
}

/// True when a row of `input` holds everything the subquery needs: all its outer references,
/// and the IN operand without subqueries or outer references of its own.
fn evaluable_over(input: &DFSchema, subquery: &Subquery, tested: Option<&Expr>) -> Result<bool> {
    let refs_resolve = outer_references(&subquery.subquery)?
        .iter()
        .all(|c| input.has_column(c));
    let tested_plain = match tested {
        None => true,
        Some(t) => {
            !t.exists(|x| {
                Ok(subquery_of(x).is_some()
                    || matches!(x, Expr::OuterReferenceColumn(..) | Expr::SetComparison(_)))
            })? && t.column_refs().iter().all(|c| input.has_column(c))
        }
    };
    Ok(refs_resolve && tested_plain)
}

/// Moves the subqueries `pick` selects from `plan`'s own expressions into a [`SubqueryApply`]
/// over the input that holds their outer references; the expressions read the added columns,
/// and the output keeps its schema.
fn apply_subqueries(
    plan: LogicalPlan,
    pick: impl Fn(&LogicalPlan, &Expr, &Subquery) -> bool,
) -> Result<Transformed<LogicalPlan>> {
    let preserve_names = match &plan {
        LogicalPlan::Projection(_) | LogicalPlan::Aggregate(_) | LogicalPlan::Window(_) => true,
        LogicalPlan::Filter(_) | LogicalPlan::Sort(_) | LogicalPlan::Join(_) => false,
        _ => return Ok(Transformed::no(plan)),
    };
    let inputs: Vec<Arc<LogicalPlan>> = plan
        .inputs()
        .into_iter()
        .map(|i| Arc::new(i.clone()))
        .collect();
    // Per input: the subqueries evaluated over its rows.
    let mut chosen: Vec<Vec<AppliedSubquery>> = vec![vec![]; inputs.len()];
    let preserver = NamePreserver::new(&plan);
    let mut exprs = Vec::new();
    for expr in plan.expressions() {
        let saved = preserve_names.then(|| preserver.save(&expr));
        let rewritten = expr.transform_up(|x| {
            let Some((kind, subquery, tested)) = subquery_of(&x) else {
                return Ok(Transformed::no(x));
            };
            if !pick(&plan, &x, subquery) {
                return Ok(Transformed::no(x));
            }
            let mut side = None;
            for (i, input) in inputs.iter().enumerate() {
                if evaluable_over(input.schema(), subquery, tested)? {
                    side = Some(i);
                    break;
                }
            }
            let Some(side) = side else {
                return Ok(Transformed::no(x));
            };
            let outer_refs = outer_references(&subquery.subquery)?;
            let name = format!("__subquery_{}", NEXT_COLUMN.fetch_add(1, Ordering::Relaxed));
            chosen[side].push(AppliedSubquery {
                kind,
                subquery: subquery.clone(),
                outer_values: outer_refs.iter().cloned().map(Expr::Column).collect(),
                outer_refs,
                tested: tested.cloned(),
                name: name.clone(),
            });
            Ok(Transformed::yes(Expr::Column(Column::from_name(name))))
        })?;
        exprs.push(match saved {
            Some(saved) if rewritten.transformed => saved.restore(rewritten.data),
            _ => rewritten.data,
        });
    }
    if chosen.iter().all(|c| c.is_empty()) {
        return Ok(Transformed::no(plan));
    }
    let new_inputs = inputs
        .into_iter()
        .zip(chosen)
        .map(|(input, subqueries)| {
            if subqueries.is_empty() {
                return Ok(Arc::unwrap_or_clone(input));
            }
            Ok(LogicalPlan::Extension(Extension {
                node: Arc::new(SubqueryApply::try_new(input, subqueries)?),
            }))
        })
        .collect::<Result<Vec<_>>>()?;
    let rewritten = plan.with_new_exprs(exprs, new_inputs)?;
    if rewritten.schema().fields().len() == plan.schema().fields().len() {
        return Ok(Transformed::yes(rewritten));
    }
    // A filter, sort, window or join passes its inputs' columns through: drop the added ones.
    let original = plan.schema().columns().into_iter().map(Expr::Column);
    let restored = LogicalPlanBuilder::from(rewritten)
        .project(original)?
        .build()?;
    Ok(Transformed::yes(restored))
}

/// The IN subqueries of a filter's `predicate` that DataFusion's decorrelation would answer
/// wrongly when NULLs meet: its mark join says false where SQL's IN says NULL, which changes
/// the answer under NOT, a comparison, CASE or IS; and its NOT IN anti join knows NULLs only
/// for an uncorrelated subquery standing alone. Those that cannot meet a NULL are left to it.
fn misjudged_in_subqueries(predicate: &Expr, input: &DFSchema) -> Result<Vec<Expr>> {
    fn walk(
        expr: &Expr,
        input: &DFSchema,
        positive: bool,
        conjunct: bool,
        found: &mut Vec<Expr>,
    ) -> Result<()> {
        match expr {
            Expr::BinaryExpr(b) if b.op == datafusion::logical_expr::Operator::And => {
                walk(&b.left, input, positive, conjunct, found)?;
                walk(&b.right, input, positive, conjunct, found)
            }
            Expr::BinaryExpr(b) if b.op == datafusion::logical_expr::Operator::Or => {
                walk(&b.left, input, positive, false, found)?;
                walk(&b.right, input, positive, false, found)
            }
            Expr::InSubquery(InSubquery {
                expr: tested,
                subquery,
                negated,
            }) => {
                let answered =
                    positive && (!negated || (conjunct && subquery.outer_ref_columns.is_empty()));
                let may_be_null = tested.nullable(input)?
                    || subquery
                        .subquery
                        .schema()
                        .fields()
                        .first()
                        .is_none_or(|f| f.is_nullable());
                if !answered && may_be_null {
                    found.push(expr.clone());
                }
                Ok(())
            }
            other => {
                other.apply_children(|child| {
                    walk(child, input, false, false, found)?;
                    Ok(TreeNodeRecursion::Continue)
                })?;
                Ok(())
            }
        }
    }
    let mut found = vec![];
    walk(predicate, input, true, true, &mut found)?;
    Ok(found)
}
