//! The digits a quotient keeps inside an expression, as MySQL keeps them. MySQL shows `a / b`
//! with `div_precision_increment` (4) more decimals than the dividend, but computes it with
//! more: whole groups of nine decimals (`9 * ceil((frac(a) + frac(b) + 4) / 9)`, each side's
//! decimals counted in groups of nine too). Arithmetic on the quotient, FLOOR, CEIL, TRUNCATE
//! and ROUND see those digits (the last one cut, not rounded); only the final value is rounded
//! to the decimals shown. So `2 / 3 * 100` is 66.6667 (not 66.6700), `FLOOR(23900 / 293 *
//! 100)` 8156 (not 8157), `TRUNCATE(23900 / 293, 2)` 81.56 (not 81.57) and `FLOOR(2 / 3 * 3)`
//! 1, as in MySQL (TRUNCATE in Doris alike).
//!
//! The analyzer rule [`DivisionDigits`] runs after [`crate::ExactDivision`] and before type
//! coercion. In each arithmetic expression (`+`, `-`, `*`, `/`, unary minus) holding a quotient
//! that is not alone, and in the argument of FLOOR / CEIL / TRUNCATE / ROUND, every quotient
//! keeps MySQL's digits; an arithmetic expression's value is then cast to the type it had
//! before (the decimals MySQL shows, rounded half away from zero), so result types do not
//! change. A lone quotient is as before. SUM and AVG still add the shown quotients (MySQL adds
//! the kept digits: `SUM(a / b)` may differ in the last decimal).

use crate::exact_division::{as_decimal, ExactDivide, MySqlOptions, DIVIDE};
use crate::expr_rules::rewrite_node_expression_trees;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result};
use datafusion::logical_expr::expr::{Cast, ScalarFunction};
use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;

/// Functions whose first argument is read with all its digits.
const READ_WHOLE: [&str; 4] = ["mysql_floor", "mysql_ceil", "mysql_truncate", "mysql_round"];

/// The analyzer rule (see the module doc); after `ExactDivision`, before type coercion.
#[derive(Debug, Default)]
pub struct DivisionDigits;

impl AnalyzerRule for DivisionDigits {
    fn name(&self) -> &str {
        "mysql_division_digits"
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> Result<LogicalPlan> {
        let increment = config
            .extensions
            .get::<MySqlOptions>()
            .map_or(4, |o| o.div_precision_increment.min(30));
        let walk = Walk { increment };
        plan.transform_up_with_subqueries(|node| {
            rewrite_node_expression_trees(node, |e, schema| walk.expression(e, schema, false))
        })
        .map(|t| t.data)
    }
}

struct Walk {
    increment: u8,
}

fn is_division(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.name() == DIVIDE && f.args.len() == 2)
}

fn is_arithmetic(e: &Expr) -> bool {
    match e {
        Expr::BinaryExpr(b) => {
            matches!(b.op, Operator::Plus | Operator::Minus | Operator::Multiply)
        }
        Expr::Negative(_) => true,
        e => is_division(e),
    }
}

/// The operands of an arithmetic expression.
fn operands(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::BinaryExpr(b) => vec![&b.left, &b.right],
        Expr::Negative(x) => vec![x],
        Expr::ScalarFunction(f) => f.args.iter().collect(),
        _ => vec![],
    }
}

/// True when the arithmetic expression `e` holds a quotient among its arithmetic operands.
fn holds_division(e: &Expr) -> bool {
    is_division(e)
        || operands(e)
            .into_iter()
            .any(|o| is_arithmetic(o) && holds_division(o))
}

impl Walk {
    /// `e` with its quotients keeping their digits where something reads them (`whole`: `e`
    /// itself is read with all its digits).
    fn expression(&self, e: Expr, schema: &DFSchema, whole: bool) -> Result<Transformed<Expr>> {
        if is_arithmetic(&e) && holds_division(&e) {
            let alone = is_division(&e)
                && operands(&e)
                    .into_iter()
                    .all(|o| !(is_arithmetic(o) && holds_division(o)));
            // An expression whose types cannot be had yet is left to type coercion as it is.
            let typed = (whole || !alone)
                .then(|| {
                    e.get_type(schema)
                        .ok()
                        .zip(self.kept(e.clone(), schema).ok())
                })
                .flatten();
            if let Some((shown, kept)) = typed {
                if whole || !matches!(shown, DataType::Decimal128(..) | DataType::Decimal256(..)) {
                    return Ok(Transformed::yes(kept));
                }
                return Ok(Transformed::yes(Expr::Cast(Cast::new(
                    Box::new(kept),
                    shown,
                ))));
            }
        }
        match e {
            Expr::ScalarFunction(mut f) if READ_WHOLE.contains(&f.name()) && !f.args.is_empty() => {
                let mut changed = false;
                let args = std::mem::take(&mut f.args);
                for (i, a) in args.into_iter().enumerate() {
                    let a = self.expression(a, schema, i == 0)?;
                    changed |= a.transformed;
                    f.args.push(a.data);
                }
                let e = Expr::ScalarFunction(f);
                Ok(if changed {
                    Transformed::yes(e)
                } else {
                    Transformed::no(e)
                })
            }
            e => e.map_children(|c| self.expression(c, schema, false)),
        }
    }

    /// The arithmetic expression `e` with each of its quotients keeping MySQL's digits.
    fn kept(&self, e: Expr, schema: &DFSchema) -> Result<Expr> {
        let operand = |o: Expr| -> Result<Expr> {
            if is_arithmetic(&o) {
                self.kept(o, schema)
            } else {
                Ok(self.expression(o, schema, false)?.data)
            }
        };
        Ok(match e {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => Expr::BinaryExpr(BinaryExpr::new(
                Box::new(operand(*left)?),
                op,
                Box::new(operand(*right)?),
            )),
            Expr::Negative(x) => Expr::Negative(Box::new(operand(*x)?)),
            Expr::ScalarFunction(ScalarFunction { func, args })
                if func.name() == DIVIDE && args.len() == 2 =>
            {
                let [l, r]: [Expr; 2] = args.try_into().map_err(|_| {
                    datafusion::error::DataFusionError::Internal("a division of two".into())
                })?;
                let (l, r) = (operand(l)?, operand(r)?);
                let increment = self.kept_increment(&l.get_type(schema)?, &r.get_type(schema)?);
                ExactDivide::kept(increment).call(vec![l, r])
            }
            other => other,
        })
    }

    /// The decimals past the dividend's that MySQL computes `l / r` with: its scale is
    /// `9 * ceil((9 * ceil(frac(l) / 9) + 9 * ceil(frac(r) / 9) + increment) / 9)`, as far as
    /// the quotient's precision allows (at least `increment`).
    fn kept_increment(&self, l: &DataType, r: &DataType) -> u8 {
        let (Some((lp, ls)), Some((_, rs))) = (as_decimal(l), as_decimal(r)) else {
            return self.increment;
        };
        let groups = |digits: i32| (digits + 8) / 9 * 9;
        let (ls, rs) = (i32::from(ls.max(0)), i32::from(rs.max(0)));
        let scale = groups(groups(ls) + groups(rs) + i32::from(self.increment));
        let wide = [l, r].iter().any(|t| matches!(t, DataType::Decimal256(..)));
        let max = if wide { 76 } else { 38 };
        // The quotient's precision is lp - ls + rs + (ls + increment): it must fit `max`.
        let room = max - i32::from(lp) - rs;
        let kept = (scale - ls).min(room);
        u8::try_from(kept.max(i32::from(self.increment))).unwrap_or(self.increment)
    }
}
