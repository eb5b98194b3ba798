//! `x op ANY (subquery)`, `x op SOME (..)` and `x op ALL (..)` planned as MySQL plans them: by
//! the subquery's MIN, MAX and row counts, with MySQL's NULL rules.
//!
//! DataFusion's own rewrite (into EXISTS subqueries joined back with a non-equality filter) gave
//! wrong rows when the subquery reads the outer query's table under the same name (the filter
//! `t1.a <= t1.a` ended up comparing the subquery's column with itself), and it costs a nested
//! loop join. Here:
//! - `x = ANY (q)` is `x IN (q)` and `x <> ALL (q)` is `x NOT IN (q)` (the same NULL rules);
//! - `x < ANY (q)` is true when `x < MAX(q)`, `x > ANY (q)` when `x > MIN(q)` (`<=`, `>=`
//!   alike); `x <> ANY (q)` when x differs from MIN or MAX; none of them on an empty q; when
//!   not true, NULL if q holds a NULL (or x is NULL), else false;
//! - `x < ALL (q)` is false when `x < MIN(q)` is false (`>`: MAX), `x = ALL (q)` when x is not
//!   both MIN and MAX; true on an empty q; when not false, NULL if q holds a NULL, else the
//!   comparison's truth.
//!
//! A subquery that is one plain SELECT of one value (no grouping, DISTINCT, aggregate, ORDER BY
//! or LIMIT) has its value aggregated in place, so a correlated one stays an ordinary
//! correlated aggregate; any other is read as a derived table, unless it names an outer
//! query's table (a derived table cannot be correlated): that one is left to DataFusion. The
//! rewrite goes through SQL text; a prepared statement's placeholders travel as marker calls.

use crate::mysql_compat::call;
use basalt_sql::ast::{
    BinaryOperator, Expr, Query, SelectItem, SetExpr, Statement, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites every quantified comparison of `stmt` (innermost first).
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Quantified);
}

struct Quantified;

impl VisitorMut for Quantified {
    type Break = ();

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        let replacement = match expr {
            Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => match right.as_ref() {
                Expr::Subquery(q) => planned(left, compare_op, q, false),
                _ => None,
            },
            Expr::AllOp {
                left,
                compare_op,
                right,
            } => match right.as_ref() {
                Expr::Subquery(q) => planned(left, compare_op, q, true),
                _ => None,
            },
            _ => None,
        };
        if let Some(replacement) = replacement {
            *expr = replacement;
        }
        ControlFlow::Continue(())
    }
}

/// The expression `left op ANY|ALL (q)` is planned as (None: left as it is).
fn planned(left: &Expr, op: &BinaryOperator, q: &Query, all: bool) -> Option<Expr> {
    use BinaryOperator as B;
    let membership = match (op, all) {
        (B::Eq, false) => Some(false),
        (B::NotEq, true) => Some(true),
        _ => None,
    };
    if let Some(negated) = membership {
        return Some(Expr::InSubquery {
            expr: Box::new(left.clone()),
            subquery: Box::new(q.clone()),
            negated,
        });
    }
    // The rewrite goes through SQL text, which would not keep a prepared statement's
    // placeholders: they travel as marker calls and come back after parsing.
    let mut placeholders = Vec::new();
    let mut left = left.clone();
    let mut q = q.clone();
    mark_placeholders(&mut left, &mut placeholders);
    mark_placeholders(&mut q, &mut placeholders);
    let (left, q) = (&left, &q);
    if plain_value(q).is_none() && names_outer_tables(q) {
        // A correlated subquery cannot be read as a derived table: DataFusion's rewrite keeps
        // it (right as long as its tables are named apart from the outer query's).
        return None;
    }
    let x = format!("({left})");
    let min = aggregate_of(q, "MIN")?;
    let max = aggregate_of(q, "MAX")?;
    let rows = aggregate_of(q, "COUNT(*)")?;
    let values = aggregate_of(q, "COUNT")?;
    let compare = |op: &str, bound: &str| format!("({x} {op} {bound})");
    let holds = match (op, all) {
        (B::Lt, false) => compare("<", &max),
        (B::LtEq, false) => compare("<=", &max),
        (B::Gt, false) => compare(">", &min),
        (B::GtEq, false) => compare(">=", &min),
        (B::NotEq, false) => format!("({} OR {})", compare("<>", &min), compare("<>", &max)),
        (B::Lt, true) => compare("<", &min),
        (B::LtEq, true) => compare("<=", &min),
        (B::Gt, true) => compare(">", &max),
        (B::GtEq, true) => compare(">=", &max),
        (B::Eq, true) => format!("({} AND {})", compare("=", &min), compare("=", &max)),
        _ => return None,
    };
    let text = if all {
        format!(
            "CASE WHEN {rows} = 0 THEN TRUE WHEN NOT {holds} THEN FALSE \
             WHEN {rows} > {values} THEN NULL ELSE {holds} END"
        )
    } else {
        format!(
            "CASE WHEN {rows} = 0 THEN FALSE WHEN {holds} THEN TRUE \
             WHEN {rows} > {values} THEN NULL ELSE {holds} END"
        )
    };
    let mut planned = parse_expression(&text)?;
    restore_placeholders(&mut planned, &placeholders);
    Some(planned)
}

/// The marker call a placeholder travels as through SQL text.
const PLACEHOLDER_MARK: &str = "__basalt_placeholder_";

/// Replaces the placeholders in `node` with marker calls, keeping them in `saved`.
fn mark_placeholders<V: VisitMut>(node: &mut V, saved: &mut Vec<String>) {
    let _ = basalt_sql::ast::visit_expressions_mut(node, |e| {
        if let Expr::Value(v) = e {
            if let basalt_sql::ast::Value::Placeholder(p) = &v.value {
                let mark = format!("{PLACEHOLDER_MARK}{}", saved.len());
                saved.push(p.clone());
                *e = call(&mark, vec![]);
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Puts the placeholders [`mark_placeholders`] kept back in place of their marker calls.
fn restore_placeholders(e: &mut Expr, saved: &[String]) {
    let _ = basalt_sql::ast::visit_expressions_mut(e, |e| {
        if let Expr::Function(f) = e {
            let index = f
                .name
                .to_string()
                .strip_prefix(PLACEHOLDER_MARK)
                .and_then(|i| i.parse::<usize>().ok());
            if let Some(p) = index.and_then(|i| saved.get(i)) {
                *e = Expr::value(basalt_sql::ast::Value::Placeholder(p.clone()));
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// `(SELECT f(value) ...)` over the subquery's one value as SQL text (`COUNT(*)` counts rows).
fn aggregate_of(q: &Query, function: &str) -> Option<String> {
    if let Some(value) = plain_value(q) {
        let aggregate = if function == "COUNT(*)" {
            parse_expression("COUNT(*)")?
        } else {
            call(function, vec![value.clone()])
        };
        let mut q = q.clone();
        if let SetExpr::Select(select) = q.body.as_mut() {
            select.projection = vec![SelectItem::UnnamedExpr(aggregate)];
        }
        return Some(format!("({q})"));
    }
    let aggregate = if function == "COUNT(*)" {
        "COUNT(*)".to_string()
    } else {
        format!("{function}(__quantified.v)")
    };
    Some(format!(
        "(SELECT {aggregate} FROM ({q}) AS __quantified(v))"
    ))
}

/// The one value a plain `SELECT value FROM .. WHERE ..` gives, when `q` is one.
fn plain_value(q: &Query) -> Option<&Expr> {
    let select = crate::query_shapes::plain_select(q)?;
    if select.from.is_empty() {
        return None;
    }
    let value = crate::query_shapes::single_item(select)?;
    (!has_function(value)).then_some(value)
}

/// True when `q` qualifies a column by a table it does not read itself (an outer query's).
fn names_outer_tables(q: &Query) -> bool {
    let mut names = Names::default();
    let _ = q.clone().visit(&mut names);
    names
        .qualifiers
        .iter()
        .any(|qualifier| !names.tables.contains(qualifier))
}

/// The tables (by name and alias) a query reads and the qualifiers its columns use, lower-cased.
#[derive(Default)]
struct Names {
    tables: std::collections::HashSet<String>,
    qualifiers: Vec<String>,
}

impl VisitorMut for Names {
    type Break = ();

    fn pre_visit_table_factor(
        &mut self,
        factor: &mut basalt_sql::ast::TableFactor,
    ) -> ControlFlow<()> {
        use basalt_sql::ast::TableFactor;
        let alias = match factor {
            TableFactor::Table { name, alias, .. } => {
                if let Some(last) = name.0.last().and_then(|p| p.as_ident()) {
                    self.tables.insert(last.value.to_lowercase());
                }
                alias
            }
            TableFactor::Derived { alias, .. }
            | TableFactor::TableFunction { alias, .. }
            | TableFactor::Function { alias, .. }
            | TableFactor::UNNEST { alias, .. }
            | TableFactor::NestedJoin { alias, .. } => alias,
            _ => return ControlFlow::Continue(()),
        };
        if let Some(alias) = alias {
            self.tables.insert(alias.name.value.to_lowercase());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::CompoundIdentifier(parts) = expr {
            if parts.len() >= 2 {
                self.qualifiers
                    .push(parts[parts.len() - 2].value.to_lowercase());
            }
        }
        ControlFlow::Continue(())
    }
}

/// True when `e` calls a function (it may be an aggregate or a window, which cannot be
/// aggregated again).
fn has_function(e: &Expr) -> bool {
    let mut found = false;
    let mut e = e.clone();
    let _ = basalt_sql::ast::visit_expressions_mut(&mut e, |inner| {
        if matches!(inner, Expr::Function(_) | Expr::Subquery(_)) {
            found = true;
        }
        ControlFlow::<()>::Continue(())
    });
    found
}

/// `text` parsed as one expression.
fn parse_expression(text: &str) -> Option<Expr> {
    let statement = basalt_sql::parse_one(&format!("SELECT {text}")).ok()?;
    let basalt_sql::Statement::Standard(standard) = statement else {
        return None;
    };
    let Statement::Query(q) = *standard else {
        return None;
    };
    let SetExpr::Select(select) = *q.body else {
        return None;
    };
    match select.projection.into_iter().next()? {
        SelectItem::UnnamedExpr(e) => Some(e),
        _ => None,
    }
}

/// The subqueries met as operands of `x op ANY|ALL (subquery)` during one AST walk: a set of
/// rows there, not a value, which the rewrites of scalar subqueries must leave alone. Noted
/// before the walk enters an expression's children, asked after it leaves them.
#[derive(Default)]
pub(crate) struct QuantifiedOperands {
    addresses: std::collections::HashSet<usize>,
}

impl QuantifiedOperands {
    /// Notes the operand of `expr` when `expr` is a quantified comparison (a pre-visit).
    pub(crate) fn note(&mut self, expr: &Expr) {
        if let Expr::AnyOp { right, .. } | Expr::AllOp { right, .. } = expr {
            self.addresses.insert(&**right as *const Expr as usize);
        }
    }

    /// Whether `expr` is a noted operand.
    pub(crate) fn holds(&self, expr: &Expr) -> bool {
        self.addresses.contains(&(expr as *const Expr as usize))
    }
}
