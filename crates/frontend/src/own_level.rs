//! The expressions of one query level: a walk over an expression tree that changes its
//! expressions but not those inside its subqueries (a subquery's names and aggregates are its
//! own).

use basalt_sql::ast::{Expr, Query, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Calls `change` on every expression of `expr` outside its subqueries, innermost first.
pub(crate) fn rewrite_own_level(expr: &mut Expr, change: impl FnMut(&mut Expr)) {
    let _ = expr.visit(&mut OwnLevel { depth: 0, change });
}

struct OwnLevel<F> {
    /// How many queries the walk is inside.
    depth: usize,
    change: F,
}

impl<F: FnMut(&mut Expr)> VisitorMut for OwnLevel<F> {
    type Break = ();

    fn pre_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            (self.change)(expr);
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subqueries_are_left_as_they_are() {
        let basalt_sql::Statement::Standard(stmt) =
            basalt_sql::parse_one("SELECT a + (SELECT a FROM t) FROM t").expect("parses")
        else {
            panic!("a standard statement");
        };
        let basalt_sql::ast::Statement::Query(query) = *stmt else {
            panic!("a query");
        };
        let basalt_sql::ast::SetExpr::Select(select) = *query.body else {
            panic!("a select");
        };
        let basalt_sql::ast::SelectItem::UnnamedExpr(mut expr) = select.projection[0].clone()
        else {
            panic!("an expression");
        };
        rewrite_own_level(&mut expr, |e| {
            if let Expr::Identifier(i) = e {
                i.value = "b".into();
            }
        });
        assert_eq!(expr.to_string(), "b + (SELECT a FROM t)");
    }
}
