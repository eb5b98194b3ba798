//! MySQL's HAVING on a SELECT that neither groups nor aggregates: a filter on its rows that may
//! name the select list's aliases (`SELECT a + 1 AS b FROM t HAVING b > 2`). DataFusion wants
//! such a HAVING to reference grouped columns; with no grouping it means the same as WHERE, so
//! it becomes part of the WHERE clause, each alias replaced by the expression it names.
//!
//! In a grouped or aggregating SELECT, a name in HAVING (outside aggregate calls) that is a
//! select-list alias and not a grouped column names the alias, as in MySQL and Doris:
//! `SELECT id, SUM(v) v FROM t GROUP BY id HAVING v > 1` filters on `SUM(v)`, where DataFusion
//! took the table's ungrouped `v` and refused the query. A name that is grouped stays the column
//! (`GROUP BY id, v1 HAVING v1 <> 2` with `SUM(v1) v1` in the list means the grouped `v1`).

use basalt_sql::ast::{
    BinaryOperator, Expr, Function, GroupByExpr, Select, SelectItem, Statement, Visit, VisitMut,
    Visitor, VisitorMut,
};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Moves the HAVING of every SELECT in `stmt` without GROUP BY and without aggregate or window
/// functions (`is_aggregate` tells the registered aggregates by lower-case name) into WHERE.
pub fn rewrite(stmt: &mut Statement, is_aggregate: &dyn Fn(&str) -> bool) {
    let _ = VisitMut::visit(stmt, &mut HavingToWhere { is_aggregate });
}

struct HavingToWhere<'a> {
    is_aggregate: &'a dyn Fn(&str) -> bool,
}

impl VisitorMut for HavingToWhere<'_> {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        let Some(having) = &select.having else {
            return ControlFlow::Continue(());
        };
        let ungrouped = matches!(&select.group_by,
            GroupByExpr::Expressions(exprs, modifiers) if exprs.is_empty() && modifiers.is_empty());
        if !ungrouped || aggregates(select, self.is_aggregate) {
            grouped_having_aliases(select, self.is_aggregate);
            return ControlFlow::Continue(());
        }
        let aliases: HashMap<String, Expr> = select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::ExprWithAlias { expr, alias } => {
                    Some((alias.value.to_lowercase(), expr.clone()))
                }
                _ => None,
            })
            .collect();
        let mut condition = having.clone();
        crate::own_level::rewrite_own_level(&mut condition, |e| {
            if let Expr::Identifier(ident) = e {
                if let Some(aliased) = aliases.get(&ident.value.to_lowercase()) {
                    *e = Expr::Nested(Box::new(aliased.clone()));
                }
            }
        });
        let condition = Expr::Nested(Box::new(condition));
        select.selection = Some(match select.selection.take() {
            Some(filter) => Expr::BinaryOp {
                left: Box::new(Expr::Nested(Box::new(filter))),
                op: BinaryOperator::And,
                right: Box::new(condition),
            },
            None => condition,
        });
        select.having = None;
        ControlFlow::Continue(())
    }
}

/// Replaces the names in a grouped SELECT's HAVING that are select-list aliases and not
/// grouped columns by the expressions they name (see the module doc).
fn grouped_having_aliases(select: &mut Select, is_aggregate: &dyn Fn(&str) -> bool) {
    let grouped: Vec<String> = match &select.group_by {
        GroupByExpr::Expressions(exprs, _) => exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Identifier(ident) => Some(ident.value.to_lowercase()),
                Expr::CompoundIdentifier(parts) => parts.last().map(|p| p.value.to_lowercase()),
                _ => None,
            })
            .collect(),
        GroupByExpr::All(_) => return,
    };
    let aliases: HashMap<String, Expr> = select
        .projection
        .iter()
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { expr, alias } => {
                let name = alias.value.to_lowercase();
                let windowed = windowed(expr);
                (!grouped.contains(&name) && !windowed).then(|| (name, expr.clone()))
            }
            _ => None,
        })
        .collect();
    if aliases.is_empty() {
        return;
    }
    if let Some(having) = select.having.as_mut() {
        let _ = VisitMut::visit(
            having,
            &mut AliasNames {
                aliases: &aliases,
                is_aggregate,
                queries: 0,
                aggregates: 0,
            },
        );
    }
}

fn windowed(e: &Expr) -> bool {
    let mut found = false;
    let _ = Visit::visit(e, &mut WindowCalls { found: &mut found });
    found
}

struct WindowCalls<'a> {
    found: &'a mut bool,
}

impl Visitor for WindowCalls<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if matches!(e, Expr::Function(f) if f.over.is_some()) {
            *self.found = true;
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// The walk of [`grouped_having_aliases`]: names outside subqueries and aggregate calls.
struct AliasNames<'a> {
    aliases: &'a HashMap<String, Expr>,
    is_aggregate: &'a dyn Fn(&str) -> bool,
    queries: usize,
    aggregates: usize,
}

impl AliasNames<'_> {
    fn is_aggregate_call(&self, e: &Expr) -> bool {
        matches!(e, Expr::Function(f) if (self.is_aggregate)(&function_name(f)))
    }
}

impl VisitorMut for AliasNames<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _query: &mut basalt_sql::ast::Query) -> ControlFlow<()> {
        self.queries += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut basalt_sql::ast::Query) -> ControlFlow<()> {
        self.queries -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.is_aggregate_call(e) {
            self.aggregates += 1;
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.is_aggregate_call(e) {
            self.aggregates -= 1;
            return ControlFlow::Continue(());
        }
        if self.queries > 0 || self.aggregates > 0 {
            return ControlFlow::Continue(());
        }
        if let Expr::Identifier(ident) = e {
            if let Some(aliased) = self.aliases.get(&ident.value.to_lowercase()) {
                *e = Expr::Nested(Box::new(aliased.clone()));
            }
        }
        ControlFlow::Continue(())
    }
}

/// Whether the select list or HAVING calls an aggregate or window function (anywhere, also in
/// subqueries: then the SELECT is left as written).
fn aggregates(select: &Select, is_aggregate: &dyn Fn(&str) -> bool) -> bool {
    let mut finder = AggregateCalls {
        is_aggregate,
        found: false,
    };
    let _ = Visit::visit(&select.projection, &mut finder);
    let _ = Visit::visit(&select.having, &mut finder);
    finder.found
}

struct AggregateCalls<'a> {
    is_aggregate: &'a dyn Fn(&str) -> bool,
    found: bool,
}

impl Visitor for AggregateCalls<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = e {
            if f.over.is_some() || (self.is_aggregate)(&function_name(f)) {
                self.found = true;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

fn function_name(f: &Function) -> String {
    f.name
        .0
        .last()
        .and_then(|part| part.as_ident())
        .map(|ident| ident.value.to_lowercase())
        .unwrap_or_default()
}
