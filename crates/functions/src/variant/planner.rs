//! Plans `v['a']['b']` on a VARIANT value as one `variant_element(v, 'a', 'b')` call: a string
//! subscript of a VARIANT column (or of any value marked VARIANT) starts a call, a string
//! subscript of such a call adds its key, an integer one (`v['arr'][0]`) an array index. Other subscripts are left to DataFusion's planner
//! (struct fields, map keys, list indexes). A VARIANT compared with a number is read as a
//! DOUBLE (Doris casts it to the number's side; DataFusion would cast the text to the number's
//! own type and fail on `2.5` against an integer).

use super::element;
use basalt_common::variant::is_variant_field;
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::planner::{
    ExprPlanner, PlannerResult, RawBinaryExpr, RawFieldAccessExpr,
};
use datafusion::logical_expr::{lit, Expr, ExprSchemable, GetFieldAccess};
use datafusion::sql::sqlparser::ast::BinaryOperator;

/// The planner of subscripts on VARIANT values.
#[derive(Debug, Default)]
pub struct VariantSubscriptPlanner;

impl ExprPlanner for VariantSubscriptPlanner {
    fn plan_binary_op(
        &self,
        expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawBinaryExpr>> {
        use BinaryOperator as Op;
        if !matches!(
            expr.op,
            Op::Eq | Op::NotEq | Op::Lt | Op::LtEq | Op::Gt | Op::GtEq | Op::Spaceship
        ) {
            return Ok(PlannerResult::Original(expr));
        }
        let is_number = |e: &Expr| e.get_type(schema).is_ok_and(|t| t.is_numeric());
        let (left, right) = match (&expr.left, &expr.right) {
            (l, r) if is_variant(l, schema) && is_number(r) => (as_double(expr.left), expr.right),
            (l, r) if is_number(l) && is_variant(r, schema) => (expr.left, as_double(expr.right)),
            _ => (expr.left, expr.right),
        };
        Ok(PlannerResult::Original(RawBinaryExpr {
            op: expr.op,
            left,
            right,
        }))
    }

    fn plan_field_access(
        &self,
        access: RawFieldAccessExpr,
        schema: &DFSchema,
    ) -> Result<PlannerResult<RawFieldAccessExpr>> {
        let key = match &access.field_access {
            GetFieldAccess::NamedStructField {
                name: ScalarValue::Utf8(Some(key)),
            } => lit(key.clone()),
            // An array's item: `v['arr'][0]` (zero-based, negative from the end, as Doris).
            GetFieldAccess::ListIndex { key }
                if key.get_type(schema).is_ok_and(|t| t.is_integer()) =>
            {
                key.as_ref().clone()
            }
            _ => return Ok(PlannerResult::Original(access)),
        };
        match access.expr {
            Expr::ScalarFunction(ScalarFunction { func, mut args })
                if func.name() == element::NAME =>
            {
                args.push(key);
                Ok(PlannerResult::Planned(Expr::ScalarFunction(
                    ScalarFunction { func, args },
                )))
            }
            base if is_variant(&base, schema) => {
                Ok(PlannerResult::Planned(element::call(base, vec![key])))
            }
            base => Ok(PlannerResult::Original(RawFieldAccessExpr {
                field_access: access.field_access,
                expr: base,
            })),
        }
    }
}

/// A VARIANT value read as a DOUBLE (NULL where it is no number).
fn as_double(e: Expr) -> Expr {
    crate::implicit_casts::string_to_double().call(vec![e])
}

fn is_variant(e: &Expr, schema: &DFSchema) -> bool {
    e.to_field(schema)
        .is_ok_and(|(_, field)| is_variant_field(&field))
}
