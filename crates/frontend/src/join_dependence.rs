//! Columns a grouped SELECT may show under ONLY_FULL_GROUP_BY because an equality ties them to
//! a grouped column (MySQL 5.7's functional dependence): `SELECT t1.a, t2.a, COUNT(*) FROM t1
//! JOIN t2 ON t1.a = t2.a GROUP BY t1.a` shows `t2.a`, equal to `t1.a` in every row of a
//! group, and a column a WHERE fixes to a constant (`WHERE b = 5`) has one value in every
//! group. DataFusion's planner knows no such dependence (it refused with 1055).
//!
//! The equalities read are the top-level conjuncts of the WHERE and of the ON of inner joins
//! (those hold in every row the groups are made of; an outer join's ON does not); a column
//! equal to a grouped one, directly or through others, is grouped too. Each such column the
//! select list, HAVING or ORDER BY names is added to the GROUP BY: it splits no group.

use basalt_sql::ast::{
    visit_expressions, BinaryOperator, Expr, GroupByExpr, JoinConstraint, JoinOperator,
    OrderByKind, Query, Select, SelectItem, SetExpr, TableFactor, TableWithJoins, Value, VisitMut,
    VisitorMut,
};
use std::ops::ControlFlow;

/// Adds to each grouped SELECT of `stmt` the columns its equalities make grouped and it names.
pub fn rewrite(stmt: &mut basalt_sql::ast::Statement) {
    let _ = stmt.visit(&mut Dependence);
}

struct Dependence;

impl VisitorMut for Dependence {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let order: Vec<Expr> = match query.order_by.as_ref().map(|o| &o.kind) {
            Some(OrderByKind::Expressions(items)) => items.iter().map(|o| o.expr.clone()).collect(),
            _ => vec![],
        };
        if let SetExpr::Select(select) = query.body.as_mut() {
            add_dependent_columns(select, &order);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        add_dependent_columns(select, &[]);
        ControlFlow::Continue(())
    }
}

/// A column's name as written, lower case (`t1.a`, `a`).
fn column_key(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(i) => Some(i.value.to_lowercase()),
        Expr::CompoundIdentifier(parts) if !parts[0].value.starts_with('@') => Some(
            parts
                .iter()
                .map(|p| p.value.to_lowercase())
                .collect::<Vec<_>>()
                .join("."),
        ),
        Expr::Nested(inner) => column_key(inner),
        _ => None,
    }
}

fn is_constant(e: &Expr) -> bool {
    match e {
        Expr::Value(v) => !matches!(v.value, Value::Null | Value::Placeholder(_)),
        Expr::UnaryOp { expr, .. } | Expr::Nested(expr) => is_constant(expr),
        _ => false,
    }
}

/// What the equalities of a query tie: pairs of columns, and columns fixed to a constant.
#[derive(Default)]
struct Ties {
    pairs: Vec<(String, Expr, String, Expr)>,
    fixed: Vec<(String, Expr)>,
}

impl Ties {
    /// Reads the top-level conjuncts of `condition`.
    fn read(&mut self, condition: &Expr) {
        match condition {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::And,
                right,
            } => {
                self.read(left);
                self.read(right);
            }
            Expr::Nested(inner) => self.read(inner),
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Eq,
                right,
            } => match (column_key(left), column_key(right)) {
                (Some(l), Some(r)) => {
                    self.pairs.push((l, (**left).clone(), r, (**right).clone()));
                }
                (Some(l), None) if is_constant(right) => self.fixed.push((l, (**left).clone())),
                (None, Some(r)) if is_constant(left) => self.fixed.push((r, (**right).clone())),
                _ => {}
            },
            _ => {}
        }
    }

    /// Reads the ON conditions of the inner joins of `from`.
    fn read_joins(&mut self, from: &TableWithJoins) {
        self.read_factor(&from.relation);
        for join in &from.joins {
            self.read_factor(&join.relation);
            let constraint = match &join.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::StraightJoin(c)
                | JoinOperator::CrossJoin(c) => c,
                _ => continue,
            };
            if let JoinConstraint::On(condition) = constraint {
                self.read(condition);
            }
        }
    }

    fn read_factor(&mut self, factor: &TableFactor) {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            self.read_joins(table_with_joins);
        }
    }
}

/// Adds to `select`'s GROUP BY the columns its equalities tie to grouped columns (or fix) and
/// that its select list, HAVING or `order` name.
fn add_dependent_columns(select: &mut Select, order: &[Expr]) {
    let GroupByExpr::Expressions(group, modifiers) = &select.group_by else {
        return;
    };
    if group.is_empty() || !modifiers.is_empty() {
        return;
    }
    let mut ties = Ties::default();
    if let Some(condition) = &select.selection {
        ties.read(condition);
    }
    for from in &select.from {
        ties.read_joins(from);
    }
    if ties.pairs.is_empty() && ties.fixed.is_empty() {
        return;
    }
    // The grouped columns: named, by a select alias or by position.
    let item_expr = |e: &Expr| -> Option<Expr> {
        if let Expr::Value(v) = e {
            if let Value::Number(n, _) = &v.value {
                let i = n.parse::<usize>().ok()?.checked_sub(1)?;
                return match select.projection.get(i)? {
                    SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                        Some(e.clone())
                    }
                    _ => None,
                };
            }
        }
        if let Expr::Identifier(name) = e {
            for item in &select.projection {
                if let SelectItem::ExprWithAlias { expr, alias } = item {
                    if alias.value.eq_ignore_ascii_case(&name.value) {
                        return Some(expr.clone());
                    }
                }
            }
        }
        Some(e.clone())
    };
    let original: Vec<String> = group
        .iter()
        .filter_map(|e| item_expr(e).as_ref().and_then(column_key))
        .collect();
    let mut grouped = original.clone();
    let mut added: Vec<(String, Expr)> = vec![];
    for (key, e) in &ties.fixed {
        if !grouped.contains(key) {
            grouped.push(key.clone());
            added.push((key.clone(), e.clone()));
        }
    }
    loop {
        let mut more = false;
        for (l, le, r, re) in &ties.pairs {
            for (known, new, e) in [(l, r, re), (r, l, le)] {
                if grouped.contains(known) && !grouped.contains(new) {
                    grouped.push(new.clone());
                    added.push((new.clone(), e.clone()));
                    more = true;
                }
            }
        }
        if !more {
            break;
        }
    }
    if added.is_empty() {
        return;
    }
    let mut named: Vec<String> = vec![];
    let mut note = |e: &Expr| {
        let _ = visit_expressions(e, |x| {
            named.extend(column_key(x));
            ControlFlow::<()>::Continue(())
        });
    };
    for item in &select.projection {
        if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
            note(e);
        }
    }
    if let Some(having) = &select.having {
        note(having);
    }
    for e in order {
        note(e);
    }
    let GroupByExpr::Expressions(group, _) = &mut select.group_by else {
        return;
    };
    for (key, e) in added {
        if named.contains(&key) {
            group.push(e);
        }
    }
}
