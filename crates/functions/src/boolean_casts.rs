//! Casts to and from BOOLEAN that Arrow cannot perform, as Doris performs them: a DECIMAL is
//! true when it is not zero (`CAST(0.001 AS BOOLEAN)` is true, `CAST(0.000 AS BOOLEAN)` false),
//! and a BOOLEAN cast to a DATE or DATETIME is its number (0 or 1) read as a date, which is no
//! date: NULL. A BOOLEAN as a DECIMAL is 1 or 0 (`SELECT 1.5 UNION SELECT 1 = 1`), as text
//! `1` or `0` (`CAST(1 = 1 AS CHAR)`, `(2 LIKE 2) LIKE 1`, `length(a < b)`), where Arrow writes
//! `true`. The analyzer rule routes them through a DOUBLE and a BIGINT, whose casts the other
//! rules already give MySQL's and Doris's meaning; it runs before type coercion and again after
//! it, for the casts coercion adds.

use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::TryCast;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it must run before DataFusion's type coercion and the rules that give
/// number-to-date casts their meaning, and again after type coercion.
#[derive(Debug, Default)]
pub struct BooleanCasts;

impl AnalyzerRule for BooleanCasts {
    fn name(&self) -> &str {
        "doris_boolean_casts"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, boolean_casts))
            .map(|t| t.data)
    }
}

/// The type a cast from `source` to `target` goes through first, if it needs one.
fn step(source: &DataType, target: &DataType) -> Option<DataType> {
    let decimal = matches!(
        source,
        DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    );
    let date = matches!(
        target,
        DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
    );
    let to_decimal = matches!(
        target,
        DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    );
    match (source, target) {
        (_, DataType::Boolean) if decimal => Some(DataType::Float64),
        (DataType::Boolean, _) if date || to_decimal => Some(DataType::Int64),
        (DataType::Boolean, DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8) => {
            Some(DataType::Int64)
        }
        _ => None,
    }
}

fn boolean_casts(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let source = |e: &Expr| e.get_type(schema).ok();
    Ok(match e {
        Expr::Cast(Cast { expr, field }) => {
            match source(&expr).and_then(|s| step(&s, field.data_type())) {
                Some(via) => Transformed::yes(Expr::Cast(Cast {
                    expr: Box::new(Expr::Cast(Cast::new(expr, via))),
                    field,
                })),
                None => Transformed::no(Expr::Cast(Cast { expr, field })),
            }
        }
        Expr::TryCast(TryCast { expr, field }) => {
            match source(&expr).and_then(|s| step(&s, field.data_type())) {
                Some(via) => Transformed::yes(Expr::TryCast(TryCast {
                    expr: Box::new(Expr::Cast(Cast::new(expr, via))),
                    field,
                })),
                None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
            }
        }
        other => Transformed::no(other),
    })
}
