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
    let mut renamed: Vec<(String, Ident)> = vec![];
    for (i, item) in select.projection.iter_mut().enumerate() {
        if let SelectItem::ExprWithAlias { alias, .. } = item {
            let name = alias.value.to_lowercase();
            if qualified.contains(&name) {
                let internal = Ident::new(format!("{INTERNAL_ALIAS_PREFIX}{i}"));
                renamed.push((name, internal.clone()));
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
