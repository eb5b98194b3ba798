//! Shapes of parsed queries that the statement rewrites look for: a query that is one plain
//! SELECT (no WITH, ORDER BY, LIMIT, locking, grouping, DISTINCT or HAVING) and its one value.

use basalt_sql::ast::{Expr, GroupByExpr, Query, Select, SelectItem, SetExpr};

/// The SELECT `q` is, when `q` is one SELECT that neither groups, orders, limits, locks nor
/// removes duplicates: each of its rows comes from one row of its FROM.
pub(crate) fn plain_select(q: &Query) -> Option<&Select> {
    if q.with.is_some()
        || q.order_by.is_some()
        || q.limit_clause.is_some()
        || q.fetch.is_some()
        || !q.locks.is_empty()
    {
        return None;
    }
    let SetExpr::Select(select) = q.body.as_ref() else {
        return None;
    };
    let grouped = match &select.group_by {
        GroupByExpr::Expressions(e, m) => !e.is_empty() || !m.is_empty(),
        GroupByExpr::All(_) => true,
    };
    if grouped || select.distinct.is_some() || select.having.is_some() {
        return None;
    }
    Some(select)
}

/// The expression of a select list of exactly one item (aliased or not).
pub(crate) fn single_item(select: &Select) -> Option<&Expr> {
    match select.projection.as_slice() {
        [SelectItem::UnnamedExpr(e)] | [SelectItem::ExprWithAlias { expr: e, .. }] => Some(e),
        _ => None,
    }
}
