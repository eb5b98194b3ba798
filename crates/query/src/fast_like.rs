//! Swaps DataFusion's LIKE expressions for Basalt's LIKE kernel (`basalt_functions::like`)
//! in the physical plan's filters and projections, after every other optimizer rule. In a
//! filter, the conjuncts with a LIKE run last, on the rows the others keep
//! ([`LazyConjunction`]).
//!
//! The logical plan keeps the plain LIKE, so pruning (a prefix pattern against zone maps) sees
//! it as before. [`FastLikeExpr`] falls back to Arrow's kernels for what the kernel leaves
//! alone (`_`, escapes, ILIKE over non-ASCII text), so answers never depend on which ran.

use crate::lazy_conjunction::LazyConjunction;
use basalt_functions::like::LikeMatcher;
use datafusion::arrow::datatypes::{DataType, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Result, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::{ColumnarValue, Operator};
use datafusion::physical_expr::expressions::{LikeExpr, Literal};
use datafusion::physical_expr::{conjunction, split_conjunction, PhysicalExpr};
use datafusion::physical_expr_common::datum::apply_cmp;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};
use datafusion::physical_plan::ExecutionPlan;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The physical optimizer rule.
#[derive(Debug, Default)]
pub struct FastLikeRule;

impl PhysicalOptimizerRule for FastLikeRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            if let Some(filter) = node.downcast_ref::<FilterExec>() {
                let Some(predicate) = rewrite_filter(filter.predicate())? else {
                    return Ok(Transformed::no(node));
                };
                let rebuilt = FilterExecBuilder::from(filter)
                    .with_predicate(predicate)
                    .build()?;
                return Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn ExecutionPlan>));
            }
            if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
                let mut changed = false;
                let mut exprs = Vec::with_capacity(projection.expr().len());
                for e in projection.expr() {
                    let rewritten = rewrite_expr(e.expr.clone())?;
                    changed |= rewritten.transformed;
                    exprs.push(ProjectionExpr {
                        expr: rewritten.data,
                        alias: e.alias.clone(),
                    });
                }
                if !changed {
                    return Ok(Transformed::no(node));
                }
                let rebuilt = ProjectionExec::try_new(exprs, projection.input().clone())?;
                return Ok(Transformed::yes(Arc::new(rebuilt) as Arc<dyn ExecutionPlan>));
            }
            Ok(Transformed::no(node))
        })
        .data()
    }

    fn name(&self) -> &str {
        "basalt_fast_like"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// A filter predicate with LIKE in it: the kernel for each LIKE, and the conjuncts with one
/// evaluated last, on the rows the others keep. `None` when it has no LIKE.
fn rewrite_filter(predicate: &Arc<dyn PhysicalExpr>) -> Result<Option<Arc<dyn PhysicalExpr>>> {
    let (mut cheap, mut costly) = (Vec::new(), Vec::new());
    for conjunct in split_conjunction(predicate) {
        let has_like = conjunct.exists(|e| Ok(e.downcast_ref::<LikeExpr>().is_some()))?;
        if has_like {
            costly.push(rewrite_expr(conjunct.clone())?.data);
        } else {
            cheap.push(conjunct.clone());
        }
    }
    if costly.is_empty() {
        return Ok(None);
    }
    if cheap.is_empty() && costly.len() == 1 {
        return Ok(costly.pop());
    }
    let first = if cheap.is_empty() {
        costly.remove(0)
    } else {
        conjunction(cheap)
    };
    Ok(Some(Arc::new(LazyConjunction::new(first, costly)?)))
}

/// Every `x [NOT] [I]LIKE 'constant'` inside `expr` whose pattern the kernel takes.
fn rewrite_expr(expr: Arc<dyn PhysicalExpr>) -> Result<Transformed<Arc<dyn PhysicalExpr>>> {
    expr.transform_up(|e| {
        let Some(like) = e.downcast_ref::<LikeExpr>() else {
            return Ok(Transformed::no(e));
        };
        let Some(literal) = like.pattern().downcast_ref::<Literal>() else {
            return Ok(Transformed::no(e));
        };
        let (ScalarValue::Utf8(Some(p))
        | ScalarValue::Utf8View(Some(p))
        | ScalarValue::LargeUtf8(Some(p))) = literal.value()
        else {
            return Ok(Transformed::no(e));
        };
        let Some(matcher) = LikeMatcher::new(p, like.negated(), like.case_insensitive()) else {
            return Ok(Transformed::no(e));
        };
        Ok(Transformed::yes(Arc::new(FastLikeExpr {
            matcher: Arc::new(matcher),
            pattern: like.pattern().clone(),
            expr: like.expr().clone(),
            negated: like.negated(),
            case_insensitive: like.case_insensitive(),
        }) as Arc<dyn PhysicalExpr>))
    })
}

/// `expr [NOT] [I]LIKE 'pattern'` on Basalt's kernel.
#[derive(Debug)]
pub(crate) struct FastLikeExpr {
    matcher: Arc<LikeMatcher>,
    /// The pattern literal, in the type DataFusion coerced it to (for the fallback).
    pattern: Arc<dyn PhysicalExpr>,
    expr: Arc<dyn PhysicalExpr>,
    negated: bool,
    case_insensitive: bool,
}

impl FastLikeExpr {
    fn op_name(&self) -> &'static str {
        match (self.negated, self.case_insensitive) {
            (false, false) => "LIKE",
            (true, false) => "NOT LIKE",
            (false, true) => "ILIKE",
            (true, true) => "NOT ILIKE",
        }
    }

    fn operator(&self) -> Operator {
        match (self.negated, self.case_insensitive) {
            (false, false) => Operator::LikeMatch,
            (true, false) => Operator::NotLikeMatch,
            (false, true) => Operator::ILikeMatch,
            (true, true) => Operator::NotILikeMatch,
        }
    }
}

impl PartialEq for FastLikeExpr {
    fn eq(&self, other: &Self) -> bool {
        self.pattern.eq(&other.pattern)
            && self.negated == other.negated
            && self.case_insensitive == other.case_insensitive
            && self.expr.eq(&other.expr)
    }
}

impl Eq for FastLikeExpr {}

impl Hash for FastLikeExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.pattern.hash(state);
        self.negated.hash(state);
        self.case_insensitive.hash(state);
        self.expr.hash(state);
    }
}

impl fmt::Display for FastLikeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.expr, self.op_name(), self.pattern)
    }
}

impl PhysicalExpr for FastLikeExpr {
    fn data_type(&self, _input_schema: &Schema) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn nullable(&self, input_schema: &Schema) -> Result<bool> {
        self.expr.nullable(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let text = self.expr.evaluate(batch)?;
        if let ColumnarValue::Array(array) = &text {
            if let Some(result) = self.matcher.evaluate(array.as_ref()) {
                return Ok(ColumnarValue::Array(Arc::new(result)));
            }
        }
        let pattern = self.pattern.evaluate(batch)?;
        apply_cmp(self.operator(), &text, &pattern)
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.expr]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        let [expr] = <[_; 1]>::try_from(children).map_err(|c| {
            datafusion::common::DataFusionError::Internal(format!(
                "LIKE takes one input, got {}",
                c.len()
            ))
        })?;
        Ok(Arc::new(FastLikeExpr {
            matcher: self.matcher.clone(),
            pattern: self.pattern.clone(),
            expr,
            negated: self.negated,
            case_insensitive: self.case_insensitive,
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.expr.fmt_sql(f)?;
        write!(f, " {} ", self.op_name())?;
        self.pattern.fmt_sql(f)
    }
}
