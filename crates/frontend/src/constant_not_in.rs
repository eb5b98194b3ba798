//! `WHERE c NOT IN (SELECT y ..)` with a `c` of no columns (a literal, `1 + 1`, `@v`).
//!
//! DataFusion plans NOT IN as a null-aware anti join on `c = y`; with a constant `c` there is
//! no join key, so the comparison moves into the subquery as the filter `y = c`, which drops
//! the subquery's NULLs, and `1 NOT IN (SELECT x ..)` over {2, NULL} kept its rows although
//! the answer is NULL (no row). Such a condition (a conjunct of WHERE or HAVING, where NULL and
//! false both reject the row) becomes `NOT EXISTS (SELECT 1 FROM .. WHERE (..) AND (y = c OR
//! y IS NULL OR c IS NULL))`: false when some `y` equals `c`, is NULL, or `c` is NULL (and the
//! subquery has rows), true otherwise, as NOT IN filters; the test goes in HAVING where the
//! item is computed over groups. A subquery with windows, LIMIT or set operations is read as a
//! derived table instead: `NOT EXISTS (SELECT 1 FROM (subquery) AS s(v) WHERE v = c OR ..)`
//! (which cannot read the outer row).

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
    filtered_not_exists(value, subquery).or_else(|| derived_not_exists(value, subquery))
}

/// For a subquery of one SELECT without windows or LIMIT: `NOT EXISTS (SELECT 1 FROM .. WHERE
/// (..) AND (y = c OR y IS NULL OR c IS NULL))`, or with the test in HAVING where the item is
/// computed over groups (`SELECT MAX(x) ..`, GROUP BY). A correlated subquery's outer
/// references stay where DataFusion decorrelates them (a derived table cannot read the outer
/// row).
fn filtered_not_exists(value: &Expr, subquery: &basalt_sql::ast::Query) -> Option<Expr> {
    use basalt_sql::ast::{Distinct, GroupByExpr, SelectItem, SetExpr};
    let SetExpr::Select(select) = subquery.body.as_ref() else {
        return None;
    };
    let grouped = match &select.group_by {
        GroupByExpr::Expressions(exprs, modifiers) => !exprs.is_empty() || !modifiers.is_empty(),
        GroupByExpr::All(_) => true,
    };
    let item = match select.projection.as_slice() {
        [SelectItem::UnnamedExpr(e)] | [SelectItem::ExprWithAlias { expr: e, .. }] => e,
        _ => return None,
    };
    if subquery.with.is_some()
        || subquery.limit_clause.is_some()
        || subquery.fetch.is_some()
        || matches!(select.distinct, Some(Distinct::On(_)))
        || !select.named_window.is_empty()
        || calls(item, |f| f.over.is_some())
    {
        return None;
    }
    let over_groups = grouped
        || select.having.is_some()
        || calls(item, |f| {
            crate::tableless_subqueries::is_aggregate(&f.name.to_string().to_lowercase())
        });
    let matched = first_item(&format!(
        "SELECT ({item}) = ({value}) OR ({item}) IS NULL OR ({value}) IS NULL"
    ))?;
    let mut select = select.clone();
    select.projection = vec![SelectItem::UnnamedExpr(Expr::value(
        basalt_sql::ast::Value::Number("1".into(), false),
    ))];
    let test = match over_groups {
        true => &mut select.having,
        false => &mut select.selection,
    };
    *test = Some(match test.take() {
        Some(filter) => Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(filter))),
            op: BinaryOperator::And,
            right: Box::new(Expr::Nested(Box::new(matched))),
        },
        None => matched,
    });
    let mut exists = subquery.clone();
    exists.order_by = None;
    exists.body = Box::new(SetExpr::Select(select));
    Some(Expr::Exists {
        subquery: Box::new(exists),
        negated: true,
    })
}

/// Whether `e` calls a function `pick` picks.
fn calls(e: &Expr, pick: impl Fn(&basalt_sql::ast::Function) -> bool) -> bool {
    basalt_sql::ast::visit_expressions(e, |e| match e {
        Expr::Function(f) if pick(f) => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// The first select item of the one-SELECT statement `sql`.
fn first_item(sql: &str) -> Option<Expr> {
    let basalt_sql::Statement::Standard(stmt) = basalt_sql::parse_one(sql).ok()? else {
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

/// Any other subquery: read as a derived table (see the module doc).
fn derived_not_exists(value: &Expr, subquery: &basalt_sql::ast::Query) -> Option<Expr> {
    let sql = format!(
        "SELECT NOT EXISTS (SELECT 1 FROM ({subquery}) AS __basalt_not_in(v) \
         WHERE v = ({value}) OR v IS NULL OR ({value}) IS NULL)"
    );
    first_item(&sql)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        crate::mysql_compat::rewritten_by(sql, rewrite)
    }

    #[test]
    fn only_a_constant_left_side_changes() {
        assert_eq!(
            rewritten("SELECT * FROM t WHERE a > 1 AND 1 NOT IN (SELECT x FROM u)"),
            "SELECT * FROM t WHERE a > 1 AND NOT EXISTS (SELECT 1 FROM u WHERE (x) = (1) OR (x) IS NULL OR (1) IS NULL)"
        );
        // A correlated filter stays where DataFusion decorrelates it.
        assert_eq!(
            rewritten("SELECT * FROM t WHERE 12 NOT IN (SELECT u.y FROM u WHERE u.k = t.k)"),
            "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE (u.k = t.k) AND ((u.y) = (12) OR (u.y) IS NULL OR (12) IS NULL))"
        );
        assert_eq!(
            rewritten("SELECT * FROM t WHERE 1 NOT IN (SELECT MAX(x) FROM u WHERE u.k = t.k)"),
            "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k = t.k HAVING (MAX(x)) = (1) OR (MAX(x)) IS NULL OR (1) IS NULL)"
        );
        assert_eq!(
            rewritten("SELECT * FROM t WHERE 1 NOT IN (SELECT x FROM u LIMIT 2)"),
            "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM (SELECT x FROM u LIMIT 2) AS __basalt_not_in (v) WHERE v = (1) OR v IS NULL OR (1) IS NULL)"
        );
        let kept = "SELECT * FROM t WHERE a NOT IN (SELECT x FROM u)";
        assert_eq!(rewritten(kept), kept);
        let kept = "SELECT * FROM t WHERE 1 IN (SELECT x FROM u)";
        assert_eq!(rewritten(kept), kept);
        let kept = "SELECT * FROM t WHERE a = 1 OR 1 NOT IN (SELECT x FROM u)";
        assert_eq!(rewritten(kept), kept);
    }
}
