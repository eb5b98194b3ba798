//! `WHERE c NOT IN (SELECT y ..)` with a `c` of no columns (a literal, `1 + 1`, `@v`).
//!
//! DataFusion plans NOT IN as a null-aware anti join on `c = y`; with a constant `c` there is
//! no join key, so the comparison moves into the subquery as the filter `y = c`, which drops
//! the subquery's NULLs, and `1 NOT IN (SELECT x ..)` over {2, NULL} kept its rows although
//! the answer is NULL (no row). Such a condition (a conjunct of WHERE or HAVING, where NULL and
//! false both reject the row) becomes `NOT EXISTS (SELECT 1 FROM (subquery) AS s(v) WHERE
//! v = c OR v IS NULL OR c IS NULL)`: false when some `y` equals `c`, is NULL, or `c` is NULL
//! (and the subquery has rows), true otherwise, as NOT IN filters.

use basalt_sql::ast::{
    BinaryOperator, Expr, Select, Statement, Visit, VisitMut, Visitor, VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites the constant NOT IN conditions of every SELECT in `stmt`.
pub fn rewrite(stmt: &mut Statement) {
    let _ = VisitMut::visit(stmt, &mut ConstantNotIn);
}

struct ConstantNotIn;

impl VisitorMut for ConstantNotIn {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        for condition in [select.selection.as_mut(), select.having.as_mut()]
            .into_iter()
            .flatten()
        {
            rewrite_conjuncts(condition);
        }
        ControlFlow::Continue(())
    }
}

fn rewrite_conjuncts(e: &mut Expr) {
    match e {
        Expr::Nested(inner) => rewrite_conjuncts(inner),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            rewrite_conjuncts(left);
            rewrite_conjuncts(right);
        }
        Expr::InSubquery {
            expr,
            subquery,
            negated: true,
        } if column_free(expr) => {
            if let Some(exists) = not_exists(expr, subquery) {
                *e = exists;
            }
        }
        _ => {}
    }
}

/// Whether `e` names no column and holds no subquery.
fn column_free(e: &Expr) -> bool {
    let mut names = Names(false);
    let _ = Visit::visit(e, &mut names);
    !names.0
}

struct Names(bool);

impl Visitor for Names {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if matches!(
            e,
            Expr::Identifier(_)
                | Expr::CompoundIdentifier(_)
                | Expr::Subquery(_)
                | Expr::InSubquery { .. }
                | Expr::Exists { .. }
        ) {
            self.0 = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

fn not_exists(value: &Expr, subquery: &basalt_sql::ast::Query) -> Option<Expr> {
    let sql = format!(
        "SELECT NOT EXISTS (SELECT 1 FROM ({subquery}) AS __basalt_not_in(v) \
         WHERE v = ({value}) OR v IS NULL OR ({value}) IS NULL)"
    );
    let basalt_sql::Statement::Standard(stmt) = basalt_sql::parse_one(&sql).ok()? else {
        return None;
    };
    let Statement::Query(query) = *stmt else {
        return None;
    };
    let basalt_sql::ast::SetExpr::Select(select) = *query.body else {
        return None;
    };
    match select.projection.into_iter().next()? {
        basalt_sql::ast::SelectItem::UnnamedExpr(e) => Some(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let mut stmt = crate::mysql_compat::parsed(sql);
        rewrite(&mut stmt);
        stmt.to_string()
    }

    #[test]
    fn only_a_constant_left_side_changes() {
        assert_eq!(
            rewritten("SELECT * FROM t WHERE a > 1 AND 1 NOT IN (SELECT x FROM u)"),
            "SELECT * FROM t WHERE a > 1 AND NOT EXISTS (SELECT 1 FROM (SELECT x FROM u) AS __basalt_not_in (v) WHERE v = (1) OR v IS NULL OR (1) IS NULL)"
        );
        let kept = "SELECT * FROM t WHERE a NOT IN (SELECT x FROM u)";
        assert_eq!(rewritten(kept), kept);
        let kept = "SELECT * FROM t WHERE 1 IN (SELECT x FROM u)";
        assert_eq!(rewritten(kept), kept);
        let kept = "SELECT * FROM t WHERE a = 1 OR 1 NOT IN (SELECT x FROM u)";
        assert_eq!(rewritten(kept), kept);
    }
}
