//! Doris's ASOF JOIN: `l ASOF [LEFT | INNER] JOIN r MATCH_CONDITION(l.ts >= r.ts) ON l.k = r.k`
//! joins each left row to the one right row nearest to it in the condition's direction among
//! those with equal keys (`>=`/`>`: the latest `r.ts` not after `l.ts`; `<=`/`<`: the earliest
//! not before). `ASOF JOIN` is `ASOF LEFT JOIN` (a left row without a match gets NULLs); `ASOF
//! INNER JOIN` drops it.
//!
//! Here the parsed ASOF join becomes a left (or inner) join `ON <keys> AND
//! basalt_asof_match(<condition>)`; the analyzer rule `AsofJoins` (functions crate) then keeps
//! only the nearest match of each left row. `USING (c)` is `ON l.c = r.c` (both columns stay in
//! the result) where both sides are named tables; elsewhere, and for NATURAL, it stays an ASOF
//! join, which the planner refuses ("unsupported join operator").

use basalt_sql::ast::{
    BinaryOperator, Expr, Ident, Join, JoinConstraint, JoinOperator, ObjectName, Select, Statement,
    TableFactor, TableWithJoins, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites every ASOF join in `stmt` (see the module doc).
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut AsofJoins);
}

struct AsofJoins;

impl VisitorMut for AsofJoins {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        for from in &mut select.from {
            plain_joins(from);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            plain_joins(table_with_joins);
        }
        ControlFlow::Continue(())
    }
}

/// The ASOF joins of one FROM item as plain joins. `USING (c, ..)` is read as `ON l.c = r.c AND
/// ..` when the join's left side is one named table (or derived table) and its right side too.
fn plain_joins(from: &mut TableWithJoins) {
    let first_left = factor_name(&from.relation);
    for (i, join) in from.joins.iter_mut().enumerate() {
        let left = if i == 0 { first_left.clone() } else { None };
        plain_join(join, left);
    }
}

/// The name a factor's columns are qualified with, if it has one.
fn factor_name(factor: &TableFactor) -> Option<ObjectName> {
    match factor {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => {
            Some(ObjectName::from(vec![a.name.clone()]))
        }
        TableFactor::Table { name, .. } => Some(name.clone()),
        _ => None,
    }
}

/// `ON left.c = right.c AND ..` for `USING (c, ..)` between factors named `left` and `right`.
fn using_keys(columns: &[ObjectName], left: &ObjectName, right: &ObjectName) -> Option<Expr> {
    let column = |table: &ObjectName, c: &ObjectName| {
        let mut parts: Vec<Ident> = table
            .0
            .iter()
            .filter_map(|p| p.as_ident().cloned())
            .collect();
        parts.extend(c.0.iter().filter_map(|p| p.as_ident().cloned()));
        Expr::CompoundIdentifier(parts)
    };
    columns
        .iter()
        .map(|c| Expr::BinaryOp {
            left: Box::new(column(left, c)),
            op: BinaryOperator::Eq,
            right: Box::new(column(right, c)),
        })
        .reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::And,
            right: Box::new(b),
        })
}

/// `join` as the left or inner join with the marked match condition, if it is an ASOF join
/// with ON (or no) keys, or USING keys between named factors (`left` names the left side).
fn plain_join(join: &mut Join, left: Option<ObjectName>) {
    let JoinOperator::AsOf {
        match_condition,
        constraint,
    } = &join.join_operator
    else {
        return;
    };
    let (condition, inner) = match match_condition {
        Expr::Function(f)
            if f.name
                .to_string()
                .eq_ignore_ascii_case(basalt_sql::ASOF_INNER_MARK) =>
        {
            match crate::mysql_compat::plain_args(f).as_deref() {
                Some([only]) => (only.clone(), true),
                _ => return,
            }
        }
        other => (other.clone(), false),
    };
    let matched = crate::mysql_compat::call(basalt_functions::ASOF_MATCH, vec![condition]);
    let on = match constraint {
        JoinConstraint::On(keys) => Expr::BinaryOp {
            left: Box::new(Expr::Nested(Box::new(keys.clone()))),
            op: BinaryOperator::And,
            right: Box::new(matched),
        },
        JoinConstraint::None => matched,
        JoinConstraint::Using(columns) => {
            let keys = left
                .zip(factor_name(&join.relation))
                .and_then(|(left, right)| using_keys(columns, &left, &right));
            let Some(keys) = keys else { return };
            Expr::BinaryOp {
                left: Box::new(keys),
                op: BinaryOperator::And,
                right: Box::new(matched),
            }
        }
        JoinConstraint::Natural => return,
    };
    let on = JoinConstraint::On(on);
    join.join_operator = if inner {
        JoinOperator::Inner(on)
    } else {
        JoinOperator::Left(on)
    };
}
