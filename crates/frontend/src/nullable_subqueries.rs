//! A scalar subquery's value may be NULL (it has no rows), whatever its select item.
//!
//! DataFusion types `(SELECT 1 FROM t WHERE ..)` by its item, which is never NULL, so
//! `(SELECT 1 FROM DUAL WHERE 1 = 0) IS NULL` was simplified to false and `SELECT (SELECT 1
//! WHERE 1 = 0)` failed ("declared as non-nullable but contains null values"). The item of each
//! scalar subquery that may have no rows goes through `__basalt_nullable`, the identity typed as
//! NULL-able. A table-less subquery without conditions (one row) is left, and so is a
//! quantified comparison's (`x > ALL (..)`: rows, not a value).

use crate::quantified_comparisons::QuantifiedOperands;
use basalt_functions::nullable_value;
use basalt_sql::ast::{Expr, Query, SelectItem, SetExpr, Statement, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Marks the items of the scalar subqueries of `stmt` that may have no rows.
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Mark::default());
}

#[derive(Default)]
struct Mark {
    quantified: QuantifiedOperands,
}

impl VisitorMut for Mark {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        self.quantified.note(expr);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if self.quantified.holds(expr) {
            return ControlFlow::Continue(());
        }
        if let Expr::Subquery(query) = expr {
            mark(query);
        }
        ControlFlow::Continue(())
    }
}

/// Passes the item of `query` through `__basalt_nullable` when `query` may have no rows.
fn mark(query: &mut Query) {
    let may_be_empty = query.limit_clause.is_some() || query.fetch.is_some();
    let SetExpr::Select(select) = query.body.as_mut() else {
        return;
    };
    if select.from.is_empty()
        && select.selection.is_none()
        && select.having.is_none()
        && !may_be_empty
    {
        return;
    }
    let [SelectItem::UnnamedExpr(item) | SelectItem::ExprWithAlias { expr: item, .. }] =
        select.projection.as_mut_slice()
    else {
        return;
    };
    if is_marked(item) {
        return;
    }
    *item = crate::mysql_compat::call(nullable_value::NAME, vec![item.clone()]);
}

fn is_marked(item: &Expr) -> bool {
    matches!(item, Expr::Function(f) if f.name.to_string() == nullable_value::NAME)
}
