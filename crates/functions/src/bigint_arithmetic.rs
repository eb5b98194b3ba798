//! Integer `+`, `-`, `*` and unary `-` computed in BIGINT, as MySQL computes them: two INT
//! columns multiply to a BIGINT, and `TINYINT 100 + TINYINT 100` is 200. DataFusion keeps the
//! operands' narrower type, so such results failed as out of range (or, unchecked, wrapped).
//! An analyzer rule before type coercion casts both operands of an integer operation that
//! are narrower than 64 bits to BIGINT, or to BIGINT UNSIGNED when both are unsigned (MySQL's
//! unsigned arithmetic); [`crate::CheckedIntegerArithmetic`] then checks the 64-bit result.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::{cast, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

use crate::expr_rules::rewrite_node_expressions;

/// The analyzer rule; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct BigintArithmetic;

impl AnalyzerRule for BigintArithmetic {
    fn name(&self) -> &str {
        "mysql_bigint_arithmetic"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, widened))
            .map(|t| t.data)
    }
}

/// `l op r` and `-x` of integers narrower than 64 bits with their operands cast to 64 bits;
/// anything else unchanged.
fn widened(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) =>
        {
            let wide = match (left.get_type(schema), right.get_type(schema)) {
                (Ok(lt), Ok(rt)) => bigint_of(&lt, &rt),
                _ => None,
            };
            Ok(match wide {
                Some(wide) => Transformed::yes(Expr::BinaryExpr(BinaryExpr {
                    left: Box::new(cast(*left, wide.clone())),
                    op,
                    right: Box::new(cast(*right, wide)),
                })),
                None => Transformed::no(Expr::BinaryExpr(BinaryExpr { left, op, right })),
            })
        }
        Expr::Negative(inner) => match inner.get_type(schema) {
            Ok(t) if is_narrow_integer(&t) => Ok(Transformed::yes(Expr::Negative(Box::new(cast(
                *inner,
                DataType::Int64,
            ))))),
            _ => Ok(Transformed::no(Expr::Negative(inner))),
        },
        e => Ok(Transformed::no(e)),
    }
}

/// The 64-bit type two integer operands are computed in when DataFusion would keep a narrower
/// one: BIGINT UNSIGNED for two unsigned operands, BIGINT otherwise. None when either operand
/// is no integer or already 64 bits wide (DataFusion's coercion then gives 64 bits itself).
fn bigint_of(left: &DataType, right: &DataType) -> Option<DataType> {
    if !(is_narrow_integer(left) && is_narrow_integer(right)) {
        return None;
    }
    Some(
        if left.is_unsigned_integer() && right.is_unsigned_integer() {
            DataType::UInt64
        } else {
            DataType::Int64
        },
    )
}

fn is_narrow_integer(t: &DataType) -> bool {
    t.is_integer() && !matches!(t, DataType::Int64 | DataType::UInt64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_integers_compute_in_64_bits() {
        assert_eq!(
            bigint_of(&DataType::Int8, &DataType::Int8),
            Some(DataType::Int64)
        );
        assert_eq!(
            bigint_of(&DataType::Int32, &DataType::UInt16),
            Some(DataType::Int64)
        );
        assert_eq!(
            bigint_of(&DataType::UInt8, &DataType::UInt32),
            Some(DataType::UInt64)
        );
        assert_eq!(bigint_of(&DataType::Int32, &DataType::Int64), None);
        assert_eq!(bigint_of(&DataType::Int32, &DataType::Float64), None);
        assert_eq!(bigint_of(&DataType::Utf8, &DataType::Int32), None);
    }
}
