//! MySQL's and Doris's grouping forms as DataFusion plans them. `GROUP BY a, b WITH ROLLUP`
//! (MySQL) is `GROUP BY ROLLUP(a, b)`, and `WITH CUBE` is `CUBE(a, b)`; `GROUPING SETS`,
//! `ROLLUP(..)` and `CUBE(..)` parse as they are. Doris's `GROUPING_ID(a, b)` is the bitmask
//! that `GROUPING(a, b)` already gives (MySQL's multi-argument GROUPING). A modifier DataFusion
//! would ignore (ClickHouse's `WITH TOTALS`) is refused rather than dropped. `ORDER BY 2` of a
//! grouped SELECT sorts by the second select item as written (DataFusion would look for it
//! among the grouped columns), and `SELECT DISTINCT a + 1 .. ORDER BY a + 1` by that item. A
//! grouping set that repeats an expression groups by it once. Inside ROLLUP / CUBE / GROUPING
//! SETS a position names its select item, and GROUPING() of a select alias the sets group by
//! names the aliased expression.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    visit_expressions_mut, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr,
    GroupByWithModifier, Ident, OrderByKind, Query, Select, SelectItem, SetExpr, Statement, Value,
    VisitMut, VisitorMut,
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

/// Without ONLY_FULL_GROUP_BY in `sql_mode`, MySQL lets a grouped SELECT show a column it does
/// not group by, with one of the group's values: each such select item (a plain column, maybe
/// aliased) becomes `first_value(column)` under the column's name. Items grouped by name,
/// alias or position stay as they are. An ORDER BY column neither grouped nor shown sorts by
/// one of the group's values the same way.
pub fn show_ungrouped_columns(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Ungrouped);
}

struct Ungrouped;

/// What a plain GROUP BY (no modifiers) groups by.
struct Grouped {
    /// Select items named by position.
    positions: Vec<usize>,
    /// Each expression's text, lowercase.
    texts: Vec<String>,
    /// The column names of qualified columns (`t.a` gives `a`), lowercase.
    last_parts: Vec<String>,
    /// Unqualified columns, lowercase.
    plain: Vec<String>,
}

impl Grouped {
    /// Whether `expr` is grouped by: its text, or the column it names where the GROUP BY
    /// leaves the table open (`GROUP BY a` groups `t1.a`; `GROUP BY t2.a` groups `a` but not
    /// `t1.a`).
    fn contains(&self, expr: &Expr) -> bool {
        let lower = |s: &str| s.to_lowercase();
        match expr {
            Expr::Identifier(c) => {
                let c = lower(&c.value);
                self.texts.contains(&c) || self.last_parts.contains(&c)
            }
            Expr::CompoundIdentifier(parts) => {
                self.texts.contains(&lower(&expr.to_string()))
                    || parts
                        .last()
                        .is_some_and(|c| self.plain.contains(&lower(&c.value)))
            }
            other => self.texts.contains(&lower(&other.to_string())),
        }
    }
}

/// What `select`'s plain GROUP BY groups by; None when it has none (or modifiers).
fn grouped_by(select: &Select) -> Option<Grouped> {
    let GroupByExpr::Expressions(exprs, modifiers) = &select.group_by else {
        return None;
    };
    if exprs.is_empty() || !modifiers.is_empty() {
        return None;
    }
    let mut grouped = Grouped {
        positions: Vec::new(),
        texts: Vec::new(),
        last_parts: Vec::new(),
        plain: Vec::new(),
    };
    for e in exprs {
        match e {
            Expr::Value(v) => {
                if let Value::Number(n, _) = &v.value {
                    grouped.positions.extend(n.parse::<usize>().ok());
                }
            }
            Expr::CompoundIdentifier(parts) => {
                grouped.texts.push(e.to_string().to_lowercase());
                let last = parts.last().map(|p| p.value.to_lowercase());
                grouped.last_parts.extend(last);
            }
            Expr::Identifier(i) => {
                grouped.texts.push(i.value.to_lowercase());
                grouped.plain.push(i.value.to_lowercase());
            }
            other => grouped.texts.push(other.to_string().to_lowercase()),
        }
    }
    Some(grouped)
}

/// The column a plain (maybe qualified) column reference names; None for anything else.
fn column_name(e: &Expr) -> Option<Ident> {
    match e {
        Expr::Identifier(i) => Some(i.clone()),
        Expr::CompoundIdentifier(parts) if !parts[0].value.starts_with('@') => {
            parts.last().cloned()
        }
        _ => None,
    }
}

impl VisitorMut for Ungrouped {
    type Break = ();

    /// `ORDER BY c` of a column the query neither groups by nor shows sorts by one of the
    /// group's values too (MySQL 5.7's `GROUP BY a ORDER BY b`).
    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let SetExpr::Select(select) = query.body.as_ref() else {
            return ControlFlow::Continue(());
        };
        let Some(grouped) = grouped_by(select) else {
            return ControlFlow::Continue(());
        };
        let shown: Vec<String> = select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
                SelectItem::UnnamedExpr(e) => column_name(e).map(|c| c.value.to_lowercase()),
                _ => None,
            })
            .collect();
        let Some(order_by) = query.order_by.as_mut() else {
            return ControlFlow::Continue(());
        };
        let OrderByKind::Expressions(keys) = &mut order_by.kind else {
            return ControlFlow::Continue(());
        };
        for key in keys {
            let Some(column) = column_name(&key.expr) else {
                continue;
            };
            let names_an_item = matches!(key.expr, Expr::Identifier(_))
                && shown.contains(&column.value.to_lowercase());
            if names_an_item || grouped.contains(&key.expr) {
                continue;
            }
            key.expr = any_value(key.expr.clone());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        let Some(grouped) = grouped_by(select) else {
            return ControlFlow::Continue(());
        };
        for (i, item) in select.projection.iter_mut().enumerate() {
            if grouped.positions.contains(&(i + 1)) {
                continue;
            }
            let (expr, alias) = match item {
                SelectItem::UnnamedExpr(e) => match column_name(e) {
                    Some(name) => (e.clone(), name),
                    None => continue,
                },
                SelectItem::ExprWithAlias { expr, alias } if column_name(expr).is_some() => {
                    (expr.clone(), alias.clone())
                }
                _ => continue,
            };
            if grouped.contains(&expr) || grouped.texts.contains(&alias.value.to_lowercase()) {
                continue;
            }
            *item = SelectItem::ExprWithAlias {
                expr: any_value(expr),
                alias,
            };
        }
        ControlFlow::Continue(())
    }
}

/// `first_value(e)`: one of the group's values.
fn any_value(e: Expr) -> Expr {
    crate::mysql_compat::call("first_value", vec![e])
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
        if result.is_ok() {
            grouped_items_in_sets(select);
        }
        match result {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// The grouping sets' elements and GROUPING() arguments that name a select item: a position
/// inside ROLLUP / CUBE / GROUPING SETS (`GROUP BY 1 WITH ROLLUP`) becomes the item's
/// expression, as a plain `GROUP BY 1` does; so does a select alias that GROUPING() or
/// GROUPING_ID() names where the sets group by it (`SELECT a + 1 AS b, GROUPING(b) .. GROUP BY
/// b WITH ROLLUP`; the sets' own aliases are resolved by the planner, GROUPING()'s are not).
fn grouped_items_in_sets(select: &mut Select) {
    let GroupByExpr::Expressions(exprs, _) = &mut select.group_by else {
        return;
    };
    let items: Vec<Option<(Expr, Option<String>)>> = {
        let mut past_wildcard = false;
        select
            .projection
            .iter()
            .map(|item| match item {
                SelectItem::UnnamedExpr(e) if !past_wildcard => Some((e.clone(), None)),
                SelectItem::ExprWithAlias { expr, alias } if !past_wildcard => {
                    Some((expr.clone(), Some(alias.value.to_lowercase())))
                }
                _ => {
                    past_wildcard = true;
                    None
                }
            })
            .collect()
    };
    let mut set_names = Vec::new();
    let mut any_set = false;
    for e in exprs.iter_mut() {
        let sets: Vec<&mut Vec<Expr>> = match e {
            Expr::Rollup(sets) | Expr::Cube(sets) | Expr::GroupingSets(sets) => {
                sets.iter_mut().collect()
            }
            _ => continue,
        };
        any_set = true;
        for element in sets.into_iter().flatten() {
            if let Some((expr, _)) = position(element).and_then(|p| items.get(p).cloned().flatten())
            {
                *element = expr;
            }
            if let Expr::Identifier(name) = element {
                set_names.push(name.value.to_lowercase());
            }
        }
    }
    if !any_set {
        return;
    }
    let aliased = |name: &str| {
        items.iter().flatten().find_map(|(expr, alias)| {
            let plain_column =
                matches!(expr, Expr::Identifier(i) if i.value.eq_ignore_ascii_case(name));
            (alias.as_deref() == Some(name) && !plain_column).then(|| expr.clone())
        })
    };
    let resolve = |e: &mut Expr| {
        let Expr::Function(f) = e else {
            return ControlFlow::<()>::Continue(());
        };
        let name = f.name.to_string().to_lowercase();
        if name != "grouping" && name != "grouping_id" {
            return ControlFlow::Continue(());
        }
        if let FunctionArguments::List(list) = &mut f.args {
            for arg in &mut list.args {
                if let FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) = arg {
                    let alias = match arg {
                        Expr::Identifier(i) => i.value.to_lowercase(),
                        _ => continue,
                    };
                    if let (true, Some(expr)) = (set_names.contains(&alias), aliased(&alias)) {
                        *arg = expr;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    };
    for item in &mut select.projection {
        let _ = visit_expressions_mut(item, resolve);
    }
    if let Some(having) = &mut select.having {
        let _ = visit_expressions_mut(having, resolve);
    }
}

/// The 0-based select item a number literal names.
fn position(e: &Expr) -> Option<usize> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<usize>().ok()?.checked_sub(1),
            _ => None,
        },
        _ => None,
    }
}

fn apply(exprs: &mut Vec<Expr>, modifiers: Vec<GroupByWithModifier>) -> Result<()> {
    // A grouping set naming an expression twice groups by it once (DataFusion refuses the
    // repeat).
    for e in exprs.iter_mut() {
        if let Expr::GroupingSets(sets) = e {
            for set in sets.iter_mut() {
                let mut seen: Vec<Expr> = Vec::with_capacity(set.len());
                set.retain(|e| {
                    let new = !seen.contains(e);
                    if new {
                        seen.push(e.clone());
                    }
                    new
                });
            }
        }
    }
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
