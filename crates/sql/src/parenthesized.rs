//! An expression printed with every operation that is an operand of another in parentheses,
//! for SQL text that another parser reads back: DataFusion's own MySQL dialect (generated
//! columns, load column expressions, assignments evaluated row by row) groups operators
//! otherwise than MySQL and Basalt do (`a = b IN (0, 1)` is `a = (b IN (0, 1))` in MySQL,
//! `(a = b) IN (0, 1)` there). Printed as `a = (b IN (0, 1))`, every parser agrees.

use sqlparser::ast::{Expr, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// `expr` as SQL text whose grouping does not depend on operator precedence.
pub fn parenthesized(expr: &Expr) -> String {
    let mut expr = expr.clone();
    let _ = expr.visit(&mut Parenthesize);
    expr.to_string()
}

/// Whether `e` is an operation whose grouping its printed text leaves to precedence.
fn is_operation(e: &Expr) -> bool {
    matches!(
        e,
        Expr::BinaryOp { .. }
            | Expr::UnaryOp { .. }
            | Expr::InList { .. }
            | Expr::InSubquery { .. }
            | Expr::Between { .. }
            | Expr::Like { .. }
            | Expr::ILike { .. }
            | Expr::RLike { .. }
            | Expr::SimilarTo { .. }
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::IsTrue(_)
            | Expr::IsNotTrue(_)
            | Expr::IsFalse(_)
            | Expr::IsNotFalse(_)
            | Expr::IsUnknown(_)
            | Expr::IsNotUnknown(_)
            | Expr::IsDistinctFrom(..)
            | Expr::IsNotDistinctFrom(..)
    )
}

fn nest(e: &mut Expr) {
    if is_operation(e) {
        let inner = std::mem::replace(e, Expr::value(sqlparser::ast::Value::Null));
        *e = Expr::Nested(Box::new(inner));
    }
}

struct Parenthesize;

impl VisitorMut for Parenthesize {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        match expr {
            Expr::BinaryOp { left, right, .. }
            | Expr::IsDistinctFrom(left, right)
            | Expr::IsNotDistinctFrom(left, right) => {
                nest(left);
                nest(right);
            }
            Expr::UnaryOp { expr, .. }
            | Expr::IsNull(expr)
            | Expr::IsNotNull(expr)
            | Expr::IsTrue(expr)
            | Expr::IsNotTrue(expr)
            | Expr::IsFalse(expr)
            | Expr::IsNotFalse(expr)
            | Expr::IsUnknown(expr)
            | Expr::IsNotUnknown(expr)
            | Expr::InSubquery { expr, .. } => nest(expr),
            Expr::InList { expr, list, .. } => {
                nest(expr);
                list.iter_mut().for_each(nest);
            }
            Expr::Between {
                expr, low, high, ..
            } => {
                nest(expr);
                nest(low);
                nest(high);
            }
            Expr::Like { expr, pattern, .. }
            | Expr::ILike { expr, pattern, .. }
            | Expr::RLike { expr, pattern, .. }
            | Expr::SimilarTo { expr, pattern, .. } => {
                nest(expr);
                nest(pattern);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::parenthesized;
    use crate::{parse_one, Statement};
    use sqlparser::ast::{SelectItem, SetExpr};

    fn text(sql: &str) -> String {
        let Ok(Statement::Standard(stmt)) = parse_one(&format!("SELECT {sql}")) else {
            panic!("parses");
        };
        let sqlparser::ast::Statement::Query(q) = *stmt else {
            panic!("a query");
        };
        let SetExpr::Select(s) = *q.body else {
            panic!("a select");
        };
        match &s.projection[0] {
            SelectItem::UnnamedExpr(e) => parenthesized(e),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn operations_inside_operations_are_parenthesized() {
        assert_eq!(text("a = b IN (0, 1)"), "a = (b IN (0, 1))");
        assert_eq!(text("1 = 3 LIKE 3"), "1 = (3 LIKE 3)");
        assert_eq!(text("!x IS TRUE"), "(NOT x) IS TRUE");
        assert_eq!(
            text("2 BETWEEN 1 AND 3 IN (0)"),
            "2 BETWEEN 1 AND (3 IN (0))"
        );
        assert_eq!(text("f(a + 1, -2) * 3"), "f(a + 1, -2) * 3");
        assert_eq!(text("a + b * c"), "a + (b * c)");
    }
}
