//! Comparisons of a cast that maps many values to one (`CAST(d AS DECIMAL(10,0)) = 4`, and
//! `d DIV 1 = 4`, which is `CAST(d / 1 AS BIGINT)`), kept as written.
//!
//! DataFusion's simplifier moves a cast from a column to the literal it is compared with:
//! `CAST(x AS T) = lit` becomes `x = CAST(lit AS type of x)`. That is right only when the cast
//! loses nothing. A DECIMAL cast to fewer fractional digits or to an integer rounds or cuts
//! many values to one, so the rewrite dropped rows silently: `WHERE CAST(d AS DECIMAL(10,0)) =
//! 4` matched only 4.00 of 4.00, 4.30 (MySQL: both). Such a cast beside a comparison is passed
//! through `__basalt_nullable`, an identity the simplifier does not look through. (DataFusion
//! 55 checks only timestamp and date narrowing before unwrapping.)

use crate::expr_rules::{is_comparison, rewrite_node_expressions};
use crate::nullable_value;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Between, BinaryExpr, InList};
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan, TryCast};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule; it runs after type coercion, which adds most of the casts.
#[derive(Debug, Default)]
pub struct LossyCastComparisons;

impl AnalyzerRule for LossyCastComparisons {
    fn name(&self) -> &str {
        "lossy_cast_comparisons"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, fence))
            .map(|t| t.data)
    }
}

/// `e` with each lossy cast it compares fenced.
fn fence(mut e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let changed = match &mut e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(op) => {
            let l = fenced(left, schema);
            fenced(right, schema) || l
        }
        Expr::InList(InList { expr, .. }) | Expr::Between(Between { expr, .. }) => {
            fenced(expr, schema)
        }
        _ => false,
    };
    Ok(Transformed::new_transformed(e, changed))
}

/// Passes `operand` through the fence when it is a cast, or a chain of casts, one of which is
/// lossy (coercion casts `CAST(d AS DECIMAL(10,0))` once more to compare it with an integer,
/// and the simplifier unwraps one cast after another); true if it did.
fn fenced(operand: &mut Box<Expr>, schema: &DFSchema) -> bool {
    if !has_lossy_cast(operand, schema) {
        return false;
    }
    let cast = std::mem::replace(operand.as_mut(), Expr::Literal(ScalarValue::Null, None));
    **operand = nullable_value::function().call(vec![cast]);
    true
}

fn has_lossy_cast(e: &Expr, schema: &DFSchema) -> bool {
    let (Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field })) = e else {
        return false;
    };
    let lossy = expr
        .get_type(schema)
        .is_ok_and(|from| loses_values(&from, field.data_type()));
    lossy || has_lossy_cast(expr, schema)
}

/// Whether a cast from `from` to `to` maps distinct values to one (beyond overflow): a DECIMAL
/// to fewer fractional digits, or with a fraction to an integer.
fn loses_values(from: &DataType, to: &DataType) -> bool {
    let Some(scale) = decimal_scale(from) else {
        return false;
    };
    match decimal_scale(to) {
        Some(target) => target < scale,
        None => to.is_integer() && scale > 0,
    }
}

fn decimal_scale(t: &DataType) -> Option<i8> {
    match t {
        DataType::Decimal32(_, s)
        | DataType::Decimal64(_, s)
        | DataType::Decimal128(_, s)
        | DataType::Decimal256(_, s) => Some(*s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::loses_values;
    use datafusion::arrow::datatypes::DataType;

    #[test]
    fn fewer_fraction_digits_lose_values() {
        let d = DataType::Decimal128(10, 2);
        assert!(loses_values(&d, &DataType::Decimal128(10, 0)));
        assert!(loses_values(&d, &DataType::Int64));
        assert!(loses_values(&d, &DataType::UInt8));
        assert!(!loses_values(&d, &DataType::Decimal128(20, 4)));
        assert!(!loses_values(&d, &DataType::Decimal256(40, 2)));
        assert!(!loses_values(
            &DataType::Decimal128(10, 0),
            &DataType::Int64
        ));
        assert!(!loses_values(
            &DataType::Int64,
            &DataType::Decimal128(20, 0)
        ));
        assert!(!loses_values(&DataType::Float64, &DataType::Int64));
    }
}
