//! Unique internal names for the result columns of a statement whose select lists name two
//! columns alike. MySQL allows that (`SELECT id, id FROM t`); DataFusion's projections need
//! distinct names. The names the client sees are taken from the statement as written before
//! planning, so these aliases never reach it.

use basalt_sql::ast::{
    visit_expressions, visit_expressions_mut, Expr, Ident, OrderByKind, Query, SelectItem, SetExpr,
    Statement,
};
use std::ops::ControlFlow;

/// The aliases given are this followed by the item's position.
pub(crate) const INTERNAL_ALIAS_PREFIX: &str = "__basalt_column_";

/// The select-list position an internal alias stands for (`None` for any other name).
pub(crate) fn internal_alias_position(name: &str) -> Option<usize> {
    name.strip_prefix(INTERNAL_ALIAS_PREFIX)?.parse().ok()
}

/// True if DataFusion refused a plan for result columns named alike: two of one name, or a
/// qualified `l.k` beside an unqualified `k`.
pub(crate) fn names_collide(message: &str) -> bool {
    message.contains("unique expression names")
        || (message.contains("Schema contains qualified field name")
            && message.contains("would be ambiguous"))
}

/// True for a planning error of result columns named alike, as Basalt reports it (MySQL's
/// 1060, which DataFusion's "unique expression names" refusal becomes).
pub(crate) fn duplicate_result_names(e: &basalt_common::BasaltError) -> bool {
    matches!(e, basalt_common::BasaltError::DuplicateColumn(_))
        || e.to_string().contains("unique expression names")
}

/// The name written for the result column at `at` of `count`, of a select list whose `items`
/// hold wildcards (`None`): the items before the first wildcard and after the last one are
/// the result's first and last columns; those between are the plan's to name.
pub(crate) fn item_name_beside_wildcards(
    items: &[Option<String>],
    at: usize,
    count: usize,
) -> Option<String> {
    let first = items.iter().position(Option::is_none)?;
    let last = items.iter().rposition(Option::is_none)?;
    let after = items.len() - 1 - last;
    if at < first {
        return items[at].clone();
    }
    let from_end = count.checked_sub(at)?;
    match from_end <= after {
        true => items[items.len() - from_end].clone(),
        false => None,
    }
}

/// The names of a select list's items by position: those `written` before its first wildcard
/// (positions the rewrites keep), then those of the list as `rewritten` (where wildcards that
/// merge USING columns are spelled out column by column).
pub(crate) fn past_first_wildcard(
    written: Vec<Option<String>>,
    rewritten: Vec<Option<String>>,
) -> Vec<Option<String>> {
    let kept = written.iter().take_while(|n| n.is_some()).count();
    let mut names: Vec<_> = written.into_iter().take(kept).collect();
    names.extend(rewritten.into_iter().skip(kept));
    names
}

/// Gives every unaliased expression in the select lists of the statement's outermost query
/// (each arm of a UNION, the source of INSERT .. SELECT, and the statement EXPLAIN shows), and
/// every alias an earlier item of its list has too, an alias of its own position.
pub(crate) fn alias_select_items(stmt: &mut Statement) {
    match stmt {
        Statement::Query(q) => alias_query(q),
        Statement::Explain { statement, .. } => alias_select_items(statement),
        Statement::Insert(insert) => {
            if let Some(q) = insert.source.as_mut() {
                alias_query(q);
            }
        }
        _ => {}
    }
}

fn alias_query(query: &mut Query) {
    // Iterative: a UNION may have a thousand arms.
    let mut pending = vec![query.body.as_mut()];
    while let Some(body) = pending.pop() {
        match body {
            SetExpr::Select(select) => {
                // Aliases written twice (`SELECT a AS x, b AS x`): the later ones renamed.
                let mut aliases: Vec<String> = vec![];
                for (i, item) in select.projection.iter_mut().enumerate() {
                    let internal = || Ident::new(format!("{INTERNAL_ALIAS_PREFIX}{i}"));
                    match item {
                        SelectItem::UnnamedExpr(e) => {
                            *item = SelectItem::ExprWithAlias {
                                expr: e.clone(),
                                alias: internal(),
                            };
                        }
                        SelectItem::ExprWithAlias { alias, .. } => {
                            let name = alias.value.to_lowercase();
                            if aliases.contains(&name) {
                                *alias = internal();
                            } else {
                                aliases.push(name);
                            }
                        }
                        _ => {}
                    }
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                pending.push(left.as_mut());
                pending.push(right.as_mut());
            }
            SetExpr::Query(q) => pending.push(q.body.as_mut()),
            _ => {}
        }
    }
}

/// `SELECT a AS b FROM t ORDER BY t.b`: DataFusion adds the sort's `t.b` beside the result
/// column `b` and finds the two names ambiguous; MySQL orders by the table's column. In the
/// outermost SELECT of `stmt`, each alias that is the name of a qualified column its ORDER BY
/// reads becomes internal (the client sees the name taken before planning), and the ORDER BY's
/// plain references to the alias follow it. True if an alias changed.
pub(crate) fn unshadow_order_columns(stmt: &mut Statement) -> bool {
    let query = match stmt {
        Statement::Query(q) => q,
        Statement::Explain { statement, .. } => return unshadow_order_columns(statement),
        _ => return false,
    };
    let Some(OrderByKind::Expressions(order)) = query.order_by.as_mut().map(|o| &mut o.kind) else {
        return false;
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return false;
    };
    // The names of the qualified columns the ORDER BY reads.
    let mut qualified: Vec<String> = vec![];
    for item in order.iter() {
        let _ = visit_expressions(&item.expr, |e| {
            if let Expr::CompoundIdentifier(parts) = e {
                if let Some(last) = parts.last() {
                    qualified.push(last.value.to_lowercase());
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    rename_aliases(select, order, |name| qualified.iter().any(|q| q == name))
}

/// `l.k` beside `COALESCE(l.k, r.k) AS k` (a USING join's merged column spelled out), which
/// DataFusion finds ambiguous even once the unaliased items have internal names: every alias
/// of the outermost SELECT becomes internal too, and the ORDER BY's references to the aliases
/// follow them. True if an alias changed.
pub(crate) fn alias_every_item(stmt: &mut Statement) -> bool {
    let query = match stmt {
        Statement::Query(q) => q,
        Statement::Explain { statement, .. } => return alias_every_item(statement),
        _ => return false,
    };
    let mut no_order = vec![];
    let order = match query.order_by.as_mut().map(|o| &mut o.kind) {
        Some(OrderByKind::Expressions(order)) => order,
        _ => &mut no_order,
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return false;
    };
    rename_aliases(select, order, |name| {
        !name.starts_with(INTERNAL_ALIAS_PREFIX)
    })
}

/// Gives the aliases of `select` that `rename` picks (by lower-case name) their position's
/// internal name, and points the plain references of `order` to them there. True if an alias
/// changed.
fn rename_aliases(
    select: &mut basalt_sql::ast::Select,
    order: &mut [basalt_sql::ast::OrderByExpr],
    rename: impl Fn(&str) -> bool,
) -> bool {
    let mut renamed: Vec<(String, Ident)> = vec![];
    for (i, item) in select.projection.iter_mut().enumerate() {
        if let SelectItem::ExprWithAlias { alias, .. } = item {
            let name = alias.value.to_lowercase();
            if rename(&name) {
                let internal = Ident::new(format!("{INTERNAL_ALIAS_PREFIX}{i}"));
                if !renamed.iter().any(|(n, _)| *n == name) {
                    renamed.push((name, internal.clone()));
                }
                *alias = internal;
            }
        }
    }
    for item in order.iter_mut() {
        let _ = visit_expressions_mut(&mut item.expr, |e| {
            if let Expr::Identifier(id) = e {
                let name = id.value.to_lowercase();
                if let Some((_, internal)) = renamed.iter().find(|(n, _)| *n == name) {
                    *id = internal.clone();
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    !renamed.is_empty()
}
