//! A common table expression with a column list names its columns there, so its select
//! list may repeat a name (`WITH RECURSIVE fib (n, a, b) AS (SELECT 1, 0, 1 UNION ALL ..)`
//! is valid MySQL). DataFusion plans the select list before it applies the column list and
//! refuses the repeated name (`Int64(1)` twice). Such a select list gets the column list's
//! names as aliases of its unnamed items. Only select lists whose unnamed items do repeat a
//! name are touched (and none under an ORDER BY, which could read the names), so every query
//! that planned before plans the same way.

use basalt_sql::ast::{Cte, Ident, Query, SelectItem, SetExpr, Statement, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Aliases the repeated select items of every CTE of `stmt` that has a column list.
pub(crate) fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut ColumnLists);
}

struct ColumnLists;

impl VisitorMut for ColumnLists {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let Some(with) = &mut query.with {
            for cte in &mut with.cte_tables {
                name_from_column_list(cte);
            }
        }
        ControlFlow::Continue(())
    }
}

fn name_from_column_list(cte: &mut Cte) {
    let names: Vec<Ident> = cte.alias.columns.iter().map(|c| c.name.clone()).collect();
    if names.is_empty() || cte.query.order_by.is_some() {
        return;
    }
    alias_branches(&mut cte.query.body, &names);
}

/// Each SELECT of a set operation (UNION's branches) whose unnamed items repeat a name.
fn alias_branches(body: &mut SetExpr, names: &[Ident]) {
    match body {
        SetExpr::Select(select)
            if select.projection.len() == names.len() && repeats_unnamed(&select.projection) =>
        {
            for (item, name) in select.projection.iter_mut().zip(names) {
                if let SelectItem::UnnamedExpr(expr) = item {
                    *item = SelectItem::ExprWithAlias {
                        expr: expr.clone(),
                        alias: name.clone(),
                    };
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            alias_branches(left, names);
            alias_branches(right, names);
        }
        SetExpr::Query(inner) if inner.order_by.is_none() => alias_branches(&mut inner.body, names),
        _ => {}
    }
}

/// Whether two unnamed items would get the same name (the same text, as `1` and `1`).
fn repeats_unnamed(items: &[SelectItem]) -> bool {
    let mut seen = std::collections::HashSet::new();
    items.iter().any(|item| match item {
        SelectItem::UnnamedExpr(e) => !seen.insert(e.to_string().to_lowercase()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        crate::mysql_compat::rewritten_by(sql, rewrite)
    }

    #[test]
    fn repeated_items_take_the_column_names() {
        assert_eq!(
            rewritten("WITH RECURSIVE f (n, a, b) AS (SELECT 1, 0, 1 UNION ALL SELECT n + 1, b, a + b FROM f WHERE n < 5) SELECT * FROM f"),
            "WITH RECURSIVE f (n, a, b) AS (SELECT 1 AS n, 0 AS a, 1 AS b UNION ALL SELECT n + 1, b, a + b FROM f WHERE n < 5) SELECT * FROM f"
        );
        // Nothing repeats, or no column list: untouched.
        let kept = "WITH f (n, m) AS (SELECT 1, 2) SELECT * FROM f";
        assert_eq!(rewritten(kept), kept);
        let kept = "WITH f AS (SELECT 1, 1) SELECT * FROM f";
        assert_eq!(rewritten(kept), kept);
    }
}
