//! Scalar subqueries without tables, `(SELECT value)`, replaced by their value.
//!
//! Such a subquery has one row, its value; its column names can only name the outer queries'
//! columns. MySQL reads it so, also where DataFusion cannot plan it:
//! - `SELECT (SELECT SUM(t1.a)) FROM t1`: an aggregate of outer columns belongs to the outer
//!   query (MySQL's rule), which DataFusion would aggregate over the subquery's one row and
//!   then fail to find; in place the aggregate is the outer query's own. That holds in the
//!   select list and HAVING, where the outer query may aggregate; elsewhere (WHERE, GROUP BY)
//!   a subquery with an aggregate stays as it is;
//! - `SELECT (SELECT t1.a) aa FROM t1 GROUP BY aa`: grouped by the value it stands for;
//! - `SELECT 1 AS a, (SELECT a)`: in a select list without tables a name can only be an
//!   earlier item's alias, replaced by that item's value.
//!
//! A subquery whose value aggregates without naming a column (`(SELECT COUNT(*))`) counts its
//! own row and stays. The select item keeps the subquery's text as its name.

use crate::quantified_comparisons::QuantifiedOperands;
use basalt_sql::ast::{
    Expr, FunctionArguments, Ident, Query, Select, SelectItem, SetExpr, Statement, VisitMut,
    VisitorMut,
};
use std::ops::ControlFlow;

/// Replaces the table-less scalar subqueries of `stmt` by their values (innermost first).
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Tableless {
        values: Inliner::default(),
    });
}

struct Tableless {
    values: Inliner,
}

/// Replaces table-less subqueries, except the operand of `x op ANY|ALL (subquery)` (a
/// subquery there is a set of rows, not a value).
#[derive(Default)]
struct Inliner {
    /// Aggregates of outer columns may move out (a select list or HAVING).
    aggregates: bool,
    quantified: QuantifiedOperands,
}

impl VisitorMut for Inliner {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        self.quantified.note(expr);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if self.quantified.holds(expr) {
            return ControlFlow::Continue(());
        }
        if let Some(value) = value_of(expr, self.aggregates) {
            *expr = value;
        }
        ControlFlow::Continue(())
    }
}

impl VisitorMut for Tableless {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        name_items(select);
        if select.from.is_empty() {
            resolve_aliases(select);
        }
        ControlFlow::Continue(())
    }

    fn post_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        // Where this query may aggregate, a subquery's aggregate of outer columns is its own.
        for item in &mut select.projection {
            if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                inline_within(e, true);
            }
        }
        if let Some(having) = &mut select.having {
            inline_within(having, true);
        }
        ControlFlow::Continue(())
    }

    // Everywhere, subqueries without aggregates (select lists and HAVING take the others in
    // post_visit_select).
    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        self.values.pre_visit_expr(expr)
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        self.values.post_visit_expr(expr)
    }
}

/// Gives a select item that is a scalar subquery its text as name (MySQL's), so that a
/// table-less one keeps it once replaced by its value; not when another item has that text.
fn name_items(select: &mut Select) {
    let texts: Vec<String> = select
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => e.to_string(),
            SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            other => other.to_string(),
        })
        .collect();
    for (i, item) in select.projection.iter_mut().enumerate() {
        let SelectItem::UnnamedExpr(e) = item else {
            continue;
        };
        // Every scalar subquery: DataFusion would name it by its column (`a`), which clashes
        // with an outer column `a` beside it.
        if !matches!(e, Expr::Subquery(_)) {
            continue;
        }
        let text = &texts[i];
        let unique = texts
            .iter()
            .enumerate()
            .all(|(j, other)| j == i || !other.eq_ignore_ascii_case(text));
        if unique {
            *item = SelectItem::ExprWithAlias {
                expr: e.clone(),
                alias: Ident::with_quote('`', text.clone()),
            };
        }
    }
}

/// In a select list without tables, the names in an item's table-less subqueries that are
/// earlier items' aliases become those items' values.
fn resolve_aliases(select: &mut Select) {
    let mut earlier: Vec<(String, Expr)> = Vec::new();
    for item in &mut select.projection {
        let (expr, alias) = match item {
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.clone())),
            _ => continue,
        };
        if !earlier.is_empty() {
            let _ = basalt_sql::ast::visit_expressions_mut(expr, |e| {
                if let Expr::Subquery(q) = e {
                    if let Some(value) = tableless_value_mut(q) {
                        replace_names(value, &earlier);
                    }
                }
                ControlFlow::<()>::Continue(())
            });
        }
        if let Some(alias) = alias {
            earlier.push((alias.to_lowercase(), expr.clone()));
        }
    }
}

/// Replaces in `e` each unqualified name that is one of `aliases` by its value (the latest
/// item of that alias).
fn replace_names(e: &mut Expr, aliases: &[(String, Expr)]) {
    let _ = basalt_sql::ast::visit_expressions_mut(e, |e| {
        if let Expr::Identifier(ident) = e {
            let name = ident.value.to_lowercase();
            if let Some((_, value)) = aliases.iter().rev().find(|(a, _)| *a == name) {
                *e = Expr::Nested(Box::new(value.clone()));
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Replaces the table-less subqueries within `e` (an item or HAVING of a query that may
/// aggregate) by their values, aggregates of outer columns included.
fn inline_within(e: &mut Expr, aggregates: bool) {
    let _ = e.visit(&mut Inliner {
        aggregates,
        ..Default::default()
    });
}

/// The value a table-less scalar subquery `e` stands for (None: `e` is no such subquery, or
/// its value may not move out: an aggregate of its own row, a window, or an aggregate of
/// outer columns where `aggregates` does not allow one).
fn value_of(e: &Expr, aggregates: bool) -> Option<Expr> {
    let Expr::Subquery(q) = e else {
        return None;
    };
    let value = tableless_value(q)?;
    movable(value, aggregates).then(|| Expr::Nested(Box::new(value.clone())))
}

/// The one value of `q` when it is `SELECT value` without tables, conditions, grouping,
/// order or limit.
fn tableless_value(q: &Query) -> Option<&Expr> {
    let select = crate::query_shapes::plain_select(q)?;
    if !select.from.is_empty()
        || select.selection.is_some()
        || select.top.is_some()
        || select.into.is_some()
        || select.qualify.is_some()
        || !select.named_window.is_empty()
        || !select.lateral_views.is_empty()
    {
        return None;
    }
    crate::query_shapes::single_item(select)
}

/// [`tableless_value`], to change.
fn tableless_value_mut(q: &mut Query) -> Option<&mut Expr> {
    tableless_value(q)?;
    let SetExpr::Select(select) = q.body.as_mut() else {
        return None;
    };
    match select.projection.as_mut_slice() {
        [SelectItem::UnnamedExpr(e)] | [SelectItem::ExprWithAlias { expr: e, .. }] => Some(e),
        _ => None,
    }
}

/// True when `value` may stand in the outer query: no window, and every aggregate names a
/// column (an outer one: the subquery has no table), allowed only where `aggregates`.
fn movable(value: &Expr, aggregates: bool) -> bool {
    let mut movable = true;
    let mut value = value.clone();
    let _ = basalt_sql::ast::visit_expressions_mut(&mut value, |e| {
        match e {
            Expr::Function(f) => {
                if f.over.is_some() {
                    movable = false;
                } else if is_aggregate(&f.name.to_string()) {
                    movable &= aggregates && names_column(&f.args);
                }
            }
            // Aggregates of deeper subqueries are theirs (or further out): not looked into.
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => {
                movable &= !has_aggregate(e)
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    movable
}

/// True when a deeper subquery in `e` calls an aggregate anywhere (it may be an outer one).
fn has_aggregate(e: &Expr) -> bool {
    let mut found = false;
    let mut e = e.clone();
    let _ = basalt_sql::ast::visit_expressions_mut(&mut e, |inner| {
        if let Expr::Function(f) = inner {
            found |= is_aggregate(&f.name.to_string());
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

/// True when the arguments name a column.
fn names_column(args: &FunctionArguments) -> bool {
    let mut found = false;
    let mut args = args.clone();
    let _ = basalt_sql::ast::visit_expressions_mut(&mut args, |e| {
        found |= matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_));
        ControlFlow::<()>::Continue(())
    });
    found
}

/// True for the names of MySQL's and Doris's aggregate functions.
pub(crate) fn is_aggregate(name: &str) -> bool {
    const AGGREGATES: &[&str] = &[
        "count",
        "sum",
        "avg",
        "min",
        "max",
        "group_concat",
        "bit_and",
        "bit_or",
        "bit_xor",
        "std",
        "stddev",
        "stddev_pop",
        "stddev_samp",
        "variance",
        "var_pop",
        "var_samp",
        "variance_pop",
        "variance_samp",
        "any_value",
        "any",
        "json_arrayagg",
        "json_objectagg",
        "approx_count_distinct",
        "ndv",
        "percentile",
        "percentile_approx",
        "percentile_array",
        "median",
        "collect_list",
        "collect_set",
        "array_agg",
        "string_agg",
        "count_by_enum",
        "max_by",
        "min_by",
        "topn",
        "topn_array",
        "topn_weighted",
        "histogram",
        "hist",
        "retention",
        "window_funnel",
        "sequence_match",
        "sequence_count",
        "corr",
        "covar",
        "covar_pop",
        "covar_samp",
        "avg_weighted",
        "sum0",
        "first_value",
        "last_value",
        "group_bitmap_xor",
        "group_bit_and",
        "group_bit_or",
        "group_bit_xor",
        "group_array_intersect",
        "map_agg",
        "kurt",
        "skew",
        "regr_slope",
        "regr_intercept",
    ];
    let name = name.to_ascii_lowercase();
    AGGREGATES.contains(&name.as_str())
        || name.ends_with("_union")
        || name.ends_with("_union_agg")
        || name.ends_with("_union_count")
        || name.ends_with("_intersect")
        || name.ends_with("_agg")
        || name.ends_with("_foreach")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let statement = basalt_sql::parse_one(sql).expect("parses");
        let basalt_sql::Statement::Standard(mut standard) = statement else {
            panic!("a standard statement");
        };
        rewrite(&mut standard);
        standard.to_string()
    }

    #[test]
    fn an_outer_aggregate_belongs_to_the_outer_query() {
        assert_eq!(
            rewritten("SELECT (SELECT SUM(t1.a)) FROM t1"),
            "SELECT (SUM(t1.a)) AS `(SELECT SUM(t1.a))` FROM t1"
        );
        assert_eq!(
            rewritten("SELECT a FROM t1 GROUP BY a HAVING (SELECT MAX(t1.b)) > 1"),
            "SELECT a FROM t1 GROUP BY a HAVING (MAX(t1.b)) > 1"
        );
        // Its own row counted, or an aggregate in WHERE: left as it is.
        assert_eq!(
            rewritten("SELECT (SELECT COUNT(*)) x FROM t1"),
            "SELECT (SELECT COUNT(*)) AS x FROM t1"
        );
        assert_eq!(
            rewritten("SELECT a FROM t1 WHERE (SELECT MIN(a) = 1)"),
            "SELECT a FROM t1 WHERE (SELECT MIN(a) = 1)"
        );
    }

    #[test]
    fn a_value_keeps_its_alias_and_nests() {
        assert_eq!(
            rewritten("SELECT (SELECT (SELECT t1.a)) aa FROM t1 GROUP BY aa"),
            "SELECT ((t1.a)) AS aa FROM t1 GROUP BY aa"
        );
        // A subquery with a table stays, and so does the operand of ANY / ALL.
        assert_eq!(
            rewritten("SELECT 1 WHERE 1 < ANY (SELECT 2) AND 2 > ALL (SELECT (SELECT 1))"),
            "SELECT 1 WHERE 1 < ANY(SELECT 2) AND 2 > ALL(SELECT (1) AS `(SELECT 1)`)"
        );
        assert_eq!(
            rewritten("SELECT (SELECT a FROM t2) FROM t1"),
            "SELECT (SELECT a FROM t2) AS `(SELECT a FROM t2)` FROM t1"
        );
    }

    #[test]
    fn a_name_without_tables_is_an_earlier_alias() {
        assert_eq!(
            rewritten("SELECT * FROM (SELECT 1 AS a, (SELECT a + 0)) AS d"),
            "SELECT * FROM (SELECT 1 AS a, ((1) + 0) AS `(SELECT a + 0)`) AS d"
        );
    }
}
