//! Unique internal names for the result columns of a statement whose select lists name two
//! columns alike. MySQL allows that (`SELECT id, id FROM t`); DataFusion's projections need
//! distinct names. The names the client sees are taken from the statement as written before
//! planning, so these aliases never reach it.

use basalt_sql::ast::{Ident, Query, SelectItem, SetExpr, Statement};

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
