//! Doris's `COUNT(DISTINCT b)` over a BITMAP counts the distinct members of the bitmaps, as
//! `bitmap_union_count(b)` does; DataFusion counted distinct bitmap values (two different
//! bitmaps were 2 whatever they held). A BITMAP is Arrow `Binary` like VARBINARY, so the
//! argument is recognised by what makes it: a BITMAP column (marked in its field metadata), a
//! bitmap function, or a CASE/COALESCE of those (`CASE WHEN d = 1 THEN b1 ELSE b2 END`).

use crate::expr_rules::rewrite_node_expressions;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, ExprSchema, Result};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::{AggregateUDF, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;

/// Rewrites COUNT(DISTINCT <bitmap>) to `bitmap_union_count(<bitmap>)`.
#[derive(Debug)]
pub struct BitmapCountDistinct {
    union_count: Arc<AggregateUDF>,
}

impl Default for BitmapCountDistinct {
    fn default() -> Self {
        let union_count = crate::bitmap_agg::functions()
            .into_iter()
            .find(|f| f.name() == "bitmap_union_count")
            .map(Arc::new)
            .expect("bitmap_agg defines bitmap_union_count");
        BitmapCountDistinct { union_count }
    }
}

impl AnalyzerRule for BitmapCountDistinct {
    fn name(&self) -> &str {
        "doris_bitmap_count_distinct"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            if !matches!(node, LogicalPlan::Aggregate(_)) {
                return Ok(Transformed::no(node));
            }
            rewrite_node_expressions(node, |e, schema| self.rewrite(e, schema))
        })
        .map(|t| t.data)
    }
}

impl BitmapCountDistinct {
    fn rewrite(&self, e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
        let Expr::AggregateFunction(f) = &e else {
            return Ok(Transformed::no(e));
        };
        let p = &f.params;
        let is_count_distinct = f.func.name().eq_ignore_ascii_case("count")
            && p.distinct
            && p.args.len() == 1
            && p.filter.is_none()
            && p.order_by.is_empty();
        if !is_count_distinct || !is_bitmap(&p.args[0], schema) {
            return Ok(Transformed::no(e));
        }
        Ok(Transformed::yes(Expr::AggregateFunction(
            AggregateFunction::new_udf(
                Arc::clone(&self.union_count),
                p.args.clone(),
                false,
                None,
                vec![],
                None,
            ),
        )))
    }
}

/// The functions whose result is a BITMAP.
const BITMAP_FUNCTIONS: &[&str] = &[
    "to_bitmap",
    "bitmap_from_string",
    "bitmap_hash",
    "bitmap_hash64",
    "bitmap_empty",
    "bitmap_and",
    "bitmap_or",
    "bitmap_xor",
    "bitmap_not",
    "bitmap_and_not",
    "bitmap_andnot",
    "bitmap_remove",
];

/// True for an expression whose value is a BITMAP: a BITMAP column (marked in its field
/// metadata), a function that makes one, or a CASE / COALESCE / NULLIF whose results are.
fn is_bitmap(e: &Expr, schema: &DFSchema) -> bool {
    let binary = e
        .get_type(schema)
        .is_ok_and(|t| matches!(t, datafusion::arrow::datatypes::DataType::Binary));
    binary && bitmap_value(e, schema) == Some(true)
}

/// Some(true): a bitmap; Some(false): something else; None: a NULL, which is either.
fn bitmap_value(e: &Expr, schema: &DFSchema) -> Option<bool> {
    let all = |values: Vec<&Expr>| {
        let kinds: Vec<Option<bool>> = values.iter().map(|v| bitmap_value(v, schema)).collect();
        if kinds.contains(&Some(false)) {
            Some(false)
        } else if kinds.contains(&Some(true)) {
            Some(true)
        } else {
            None
        }
    };
    match e {
        Expr::Column(c) => Some(
            schema
                .field_from_column(c)
                .is_ok_and(|f| basalt_common::sketch_kind(f) == Some("bitmap")),
        ),
        Expr::Literal(v, _) if v.is_null() => None,
        Expr::Alias(a) => bitmap_value(&a.expr, schema),
        Expr::Case(case) => all(case
            .when_then_expr
            .iter()
            .map(|(_, then)| then.as_ref())
            .chain(case.else_expr.as_deref())
            .collect()),
        Expr::ScalarFunction(f) => {
            let name = f.name().to_ascii_lowercase();
            if BITMAP_FUNCTIONS.contains(&name.as_str()) {
                Some(true)
            } else if matches!(name.as_str(), "coalesce" | "nvl" | "ifnull" | "nullif") {
                all(f.args.iter().collect())
            } else {
                Some(false)
            }
        }
        _ => Some(false),
    }
}
