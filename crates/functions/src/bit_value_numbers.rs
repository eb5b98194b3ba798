//! Bit-value and hex literals (`b'101'`, `x'05'`) in numeric context, as MySQL reads them:
//! the unsigned number their bytes spell, big-endian (`b'101' + 0` is 5, `b'101' | 1` is 5,
//! `WHERE bit_col = b'101'` compares with 5). Elsewhere they stay binary strings
//! (`SELECT b'01000001'` shows `A`, `CONCAT(b'01000001', 'x')` is `Ax`).
//!
//! Numeric context is an arithmetic or bitwise operator (whatever the other operand), a
//! comparison, BETWEEN or IN list beside a number (BIT columns are stored as UInt64), a CAST
//! to a number (`CAST(0xFF AS UNSIGNED)` is 255; to SIGNED the 64 bits are two's complement,
//! `CAST(0xFFFFFFFFFFFFFFFE AS SIGNED)` is -2) and the codes of CHAR (`CHAR(0x414243)` is
//! `ABC`). [`BitValueNumbersPlanner`] converts binary operators as the SQL is planned
//! (DataFusion refuses `Binary + Int64` there); [`BitValueNumbers`], an analyzer rule running
//! before type coercion, converts BETWEEN, IN lists, casts and CHAR's arguments. A literal of more than 8 significant bytes is left
//! as it is (the query fails rather than answering with a truncated number).

use crate::expr_rules::rewrite_node_expressions;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{InList, TryCast};
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Between, Cast, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;

/// The number a binary literal's bytes spell, or None for other expressions and for more than
/// 8 significant bytes.
fn literal_number(e: &Expr) -> Option<u64> {
    let Expr::Literal(ScalarValue::Binary(Some(bytes)), _) = e else {
        return None;
    };
    let significant = &bytes[bytes.iter().take_while(|b| **b == 0).count()..];
    (significant.len() <= 8).then(|| {
        significant
            .iter()
            .fold(0u64, |n, b| (n << 8) | u64::from(*b))
    })
}

/// `e` as its number when it is a binary literal that spells one.
fn as_number(e: Expr) -> Expr {
    match literal_number(&e) {
        Some(n) => Expr::Literal(ScalarValue::UInt64(Some(n)), None),
        None => e,
    }
}

fn is_numeric(e: &Expr, schema: &DFSchema) -> bool {
    literal_number(e).is_none()
        && e.get_type(schema)
            .is_ok_and(|t| t.is_numeric() || t == DataType::Boolean)
}

fn is_number_type(t: &DataType) -> bool {
    t.is_numeric()
}

/// The number a binary literal spells, as the operand of a cast to `target`: a signed
/// 64-bit target takes its bits as two's complement (MySQL's CAST(.. AS SIGNED)).
fn cast_operand(e: Expr, target: &DataType) -> Expr {
    match (literal_number(&e), target) {
        (Some(n), DataType::Int64) => Expr::Literal(ScalarValue::Int64(Some(n as i64)), None),
        _ => as_number(e),
    }
}

/// Converts binary literals in arithmetic, bitwise operators and comparisons with numbers.
#[derive(Debug, Default)]
pub struct BitValueNumbersPlanner;

impl ExprPlanner for BitValueNumbersPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use datafusion::sql::sqlparser::ast::BinaryOperator as Sql;
        if literal_number(&expr.left).is_none() && literal_number(&expr.right).is_none() {
            return Ok(PlannerResult::Original(expr));
        }
        let numeric_operator = matches!(
            expr.op,
            Sql::Plus
                | Sql::Minus
                | Sql::Multiply
                | Sql::Divide
                | Sql::Modulo
                | Sql::MyIntegerDivide
                | Sql::BitwiseAnd
                | Sql::BitwiseOr
                | Sql::BitwiseXor
                | Sql::PGBitwiseXor
                | Sql::PGBitwiseShiftLeft
                | Sql::PGBitwiseShiftRight
        );
        let comparison = matches!(
            expr.op,
            Sql::Eq | Sql::NotEq | Sql::Lt | Sql::LtEq | Sql::Gt | Sql::GtEq | Sql::Spaceship
        );
        let beside_number = || is_numeric(&expr.left, schema) || is_numeric(&expr.right, schema);
        if !(numeric_operator || comparison && beside_number()) {
            return Ok(PlannerResult::Original(expr));
        }
        Ok(PlannerResult::Original(RawBinaryExpr {
            op: expr.op,
            left: as_number(expr.left),
            right: as_number(expr.right),
        }))
    }
}

/// The analyzer rule for BETWEEN and IN lists; it must run before DataFusion's type coercion.
#[derive(Debug, Default)]
pub struct BitValueNumbers;

impl AnalyzerRule for BitValueNumbers {
    fn name(&self) -> &str {
        "mysql_bit_value_numbers"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| rewrite_node_expressions(node, lists))
            .map(|t| t.data)
    }
}

fn lists(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    Ok(match e {
        Expr::Cast(Cast { expr, field })
            if literal_number(&expr).is_some() && is_number_type(field.data_type()) =>
        {
            Transformed::yes(Expr::Cast(Cast {
                expr: Box::new(cast_operand(*expr, field.data_type())),
                field,
            }))
        }
        Expr::TryCast(TryCast { expr, field })
            if literal_number(&expr).is_some() && is_number_type(field.data_type()) =>
        {
            Transformed::yes(Expr::TryCast(TryCast {
                expr: Box::new(cast_operand(*expr, field.data_type())),
                field,
            }))
        }
        Expr::ScalarFunction(mut call)
            if call.name().eq_ignore_ascii_case("char")
                && call.args.iter().any(|a| literal_number(a).is_some()) =>
        {
            call.args = call.args.into_iter().map(as_number).collect();
            Transformed::yes(Expr::ScalarFunction(call))
        }
        Expr::InList(list)
            if literal_number(&list.expr).is_some()
                && list.list.iter().any(|v| is_numeric(v, schema)) =>
        {
            Transformed::yes(Expr::InList(InList {
                expr: Box::new(as_number(*list.expr)),
                list: list.list,
                negated: list.negated,
            }))
        }
        Expr::InList(list)
            if is_numeric(&list.expr, schema)
                && list.list.iter().any(|v| literal_number(v).is_some()) =>
        {
            Transformed::yes(Expr::InList(InList {
                expr: list.expr,
                list: list.list.into_iter().map(as_number).collect(),
                negated: list.negated,
            }))
        }
        Expr::Between(between)
            if is_numeric(&between.expr, schema)
                && (literal_number(&between.low).is_some()
                    || literal_number(&between.high).is_some()) =>
        {
            Transformed::yes(Expr::Between(Between {
                expr: between.expr,
                negated: between.negated,
                low: Box::new(as_number(*between.low)),
                high: Box::new(as_number(*between.high)),
            }))
        }
        other => Transformed::no(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(bytes: &[u8]) -> Expr {
        Expr::Literal(ScalarValue::Binary(Some(bytes.to_vec())), None)
    }

    #[test]
    fn bytes_spell_big_endian_unsigned_numbers() {
        assert_eq!(literal_number(&binary(&[5])), Some(5));
        assert_eq!(literal_number(&binary(&[1, 2])), Some(258));
        assert_eq!(literal_number(&binary(&[])), Some(0));
        assert_eq!(literal_number(&binary(&[0xFF; 8])), Some(u64::MAX));
        assert_eq!(
            literal_number(&binary(&[
                0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
            ])),
            Some(u64::MAX)
        );
        assert_eq!(literal_number(&binary(&[1, 0, 0, 0, 0, 0, 0, 0, 0])), None);
        assert_eq!(
            literal_number(&Expr::Literal(ScalarValue::Binary(None), None)),
            None
        );
        assert_eq!(
            literal_number(&Expr::Literal(ScalarValue::Utf8(Some("5".into())), None)),
            None
        );
    }
}
