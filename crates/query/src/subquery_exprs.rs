//! The subquery an expression node holds: a scalar subquery, EXISTS, IN and a quantified
//! comparison (`x > ALL (..)`) each carry one.

use datafusion::logical_expr::expr::{Exists, InSubquery, SetComparison};
use datafusion::logical_expr::{Expr, Subquery};

/// The subquery in `expr` itself, not in its children.
pub fn subquery_of(expr: &Expr) -> Option<&Subquery> {
    match expr {
        Expr::ScalarSubquery(s) => Some(s),
        Expr::Exists(Exists { subquery, .. }) => Some(subquery),
        Expr::InSubquery(InSubquery { subquery, .. }) => Some(subquery),
        Expr::SetComparison(SetComparison { subquery, .. }) => Some(subquery),
        _ => None,
    }
}

/// [`subquery_of`], to change it.
pub fn subquery_of_mut(expr: &mut Expr) -> Option<&mut Subquery> {
    match expr {
        Expr::ScalarSubquery(s) => Some(s),
        Expr::Exists(Exists { subquery, .. }) => Some(subquery),
        Expr::InSubquery(InSubquery { subquery, .. }) => Some(subquery),
        Expr::SetComparison(SetComparison { subquery, .. }) => Some(subquery),
        _ => None,
    }
}
