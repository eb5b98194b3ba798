//! MySQL's and Doris's grouping forms as DataFusion plans them. `GROUP BY a, b WITH ROLLUP`
//! (MySQL) is `GROUP BY ROLLUP(a, b)`, and `WITH CUBE` is `CUBE(a, b)`; `GROUPING SETS`,
//! `ROLLUP(..)` and `CUBE(..)` parse as they are. Doris's `GROUPING_ID(a, b)` is the bitmask
//! that `GROUPING(a, b)` already gives (MySQL's multi-argument GROUPING). A modifier DataFusion
//! would ignore (ClickHouse's `WITH TOTALS`) is refused rather than dropped. `ORDER BY 2` of a
//! grouped SELECT sorts by the second select item as written (DataFusion would look for it
//! among the grouped columns), and `SELECT DISTINCT a + 1 .. ORDER BY a + 1` by that item.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    Expr, GroupByExpr, GroupByWithModifier, OrderByKind, Query, Select, SelectItem, SetExpr,
    Statement, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites the grouping modifiers of every SELECT in `stmt` (`GROUPING_ID` is renamed with
/// MySQL's other function spellings in `mysql_compat`).
pub fn rewrite(stmt: &mut Statement) -> Result<()> {
    match stmt.visit(&mut Modifiers) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// Turns `WITH ROLLUP` / `WITH CUBE` into the grouping expression they stand for.
struct Modifiers;

impl VisitorMut for Modifiers {
    type Break = BasaltError;

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<BasaltError> {
        order_by_positions(query);
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<BasaltError> {
        let result = match &mut select.group_by {
            GroupByExpr::Expressions(exprs, modifiers) => apply(exprs, std::mem::take(modifiers)),
            GroupByExpr::All(_) => Err(BasaltError::NotSupported("GROUP BY ALL".into())),
        };
        match result {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

fn apply(exprs: &mut Vec<Expr>, modifiers: Vec<GroupByWithModifier>) -> Result<()> {
    match modifiers.as_slice() {
        [] => Ok(()),
        [GroupByWithModifier::Rollup] => {
            let columns = std::mem::take(exprs).into_iter().map(|e| vec![e]).collect();
            exprs.push(Expr::Rollup(columns));
            Ok(())
        }
        [GroupByWithModifier::Cube] => {
            let columns = std::mem::take(exprs).into_iter().map(|e| vec![e]).collect();
            exprs.push(Expr::Cube(columns));
            Ok(())
        }
        _ => Err(BasaltError::NotSupported(format!(
            "GROUP BY .. {}",
            modifiers
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        ))),
    }
}

/// `ORDER BY <n>` of a grouped SELECT: the n-th select item's expression (its alias when it has
/// one); positions past a wildcard are left as they are. `ORDER BY <expr>` of a DISTINCT SELECT
/// that lists `<expr>`: its position.
fn order_by_positions(query: &mut Query) {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return;
    };
    let grouped = match &select.group_by {
        GroupByExpr::Expressions(exprs, _) => !exprs.is_empty(),
        GroupByExpr::All(_) => true,
    };
    let distinct = select.distinct.is_some();
    if !grouped && !distinct {
        return;
    }
    let Some(OrderByKind::Expressions(order)) = query.order_by.as_mut().map(|o| &mut o.kind) else {
        return;
    };
    if !grouped {
        // DISTINCT: an ORDER BY expression written as a select item sorts by that item's
        // position (DataFusion looks for its columns among the distinct values).
        for item in order {
            let position = select
                .projection
                .iter()
                .position(|i| matches!(i, SelectItem::UnnamedExpr(e) if *e == item.expr));
            if let (Some(p), false) = (position, matches!(item.expr, Expr::Identifier(_))) {
                item.expr = Expr::value(Value::Number((p + 1).to_string(), false));
            }
        }
        return;
    }
    for item in order {
        let Expr::Value(v) = &item.expr else {
            continue;
        };
        let Value::Number(n, _) = &v.value else {
            continue;
        };
        let Some(position) = n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) else {
            continue;
        };
        let before = &select.projection[..position.min(select.projection.len())];
        if before.iter().any(|i| {
            matches!(
                i,
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
            )
        }) {
            continue;
        }
        match select.projection.get(position) {
            Some(SelectItem::UnnamedExpr(e)) => item.expr = e.clone(),
            Some(SelectItem::ExprWithAlias { alias, .. }) => {
                item.expr = Expr::Identifier(alias.clone())
            }
            _ => {}
        }
    }
}
