//! An ORDER BY naming an alias that its SELECT list gives to two different expressions
//! (`SELECT x AS a, y AS a FROM t ORDER BY a`), or a name two of its columns have
//! (`SELECT t1.b, t2.b .. ORDER BY b`), is MySQL's error 1052 "Column 'a' in order clause is
//! ambiguous". DataFusion would sort by the first one, silently. The same alias on
//! the same expression twice (`SELECT x AS a, x AS a`) names one value and is fine.

use basalt_common::BasaltError;
use basalt_sql::ast::{Expr, OrderByKind, Query, SelectItem, SetExpr, Statement, Visit, Visitor};
use std::ops::ControlFlow;

/// Checks the ORDER BY of the statement's outermost query (also INSERT .. SELECT's source and
/// the statement EXPLAIN shows) against its SELECT list's aliases.
pub(crate) fn check(stmt: &Statement) -> Result<(), BasaltError> {
    match stmt {
        Statement::Query(q) => check_query(q),
        Statement::Explain { statement, .. } => check(statement),
        Statement::Insert(insert) => insert.source.as_deref().map_or(Ok(()), check_query),
        _ => Ok(()),
    }
}

fn check_query(query: &Query) -> Result<(), BasaltError> {
    // A UNION's ORDER BY names the union's columns, not one arm's aliases.
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Ok(());
    };
    let Some(OrderByKind::Expressions(order)) = query.order_by.as_ref().map(|o| &o.kind) else {
        return Ok(());
    };
    let ambiguous = ambiguous_aliases(&select.projection);
    if ambiguous.is_empty() {
        return Ok(());
    }
    for item in order {
        let mut finder = OuterNames {
            ambiguous: &ambiguous,
            depth: 0,
        };
        if let ControlFlow::Break(name) = item.expr.visit(&mut finder) {
            return Err(BasaltError::AmbiguousColumn {
                column: name,
                context: "order clause".into(),
            });
        }
    }
    Ok(())
}

/// The names (lower-cased) the list gives to expressions that differ: an alias given to two
/// different expressions, or a name two different columns have (`t1.b AS b, t2.b`, `a AS b, b`;
/// a computed value beside a column of its alias is not ambiguous, as in MySQL).
fn ambiguous_aliases(items: &[SelectItem]) -> Vec<String> {
    let mut named: Vec<(String, &Expr, bool)> = vec![];
    let mut ambiguous = vec![];
    for item in items {
        let (name, expr, aliased) = match item {
            SelectItem::ExprWithAlias { expr, alias } => (alias.value.to_lowercase(), expr, true),
            SelectItem::UnnamedExpr(expr @ Expr::Identifier(id)) => {
                (id.value.to_lowercase(), expr, false)
            }
            SelectItem::UnnamedExpr(expr @ Expr::CompoundIdentifier(parts)) => match parts.last() {
                Some(last) => (last.value.to_lowercase(), expr, false),
                None => continue,
            },
            _ => continue,
        };
        let clashes = named
            .iter()
            .any(|(earlier_name, earlier, earlier_aliased)| {
                *earlier_name == name
                    && match aliased && *earlier_aliased {
                        true => !same_text(earlier, expr),
                        false => surely_other_columns(earlier, expr),
                    }
            });
        if clashes && !ambiguous.contains(&name) {
            ambiguous.push(name.clone());
        }
        named.push((name, expr, aliased));
    }
    ambiguous
}

fn same_text(a: &Expr, b: &Expr) -> bool {
    a.to_string().eq_ignore_ascii_case(&b.to_string())
}

/// True when `a` and `b` are column references that cannot name one column (`t1.b` and `t2.b`,
/// `a` and `b`); `b` beside `t.b` may be one column.
fn surely_other_columns(a: &Expr, b: &Expr) -> bool {
    let last = |e: &Expr| match e {
        Expr::Identifier(id) => Some(id.value.to_lowercase()),
        Expr::CompoundIdentifier(parts) => parts.last().map(|p| p.value.to_lowercase()),
        _ => None,
    };
    let (Some(a_name), Some(b_name)) = (last(a), last(b)) else {
        return false;
    };
    match (a, b) {
        (Expr::Identifier(_), Expr::Identifier(_))
        | (Expr::CompoundIdentifier(_), Expr::CompoundIdentifier(_)) => !same_text(a, b),
        _ => a_name != b_name,
    }
}

/// Finds an unqualified name among `ambiguous` outside subqueries (a subquery's names are its
/// own FROM's first), breaking with the name as written.
struct OuterNames<'a> {
    ambiguous: &'a [String],
    depth: usize,
}

impl Visitor for OuterNames<'_> {
    type Break = String;

    fn pre_visit_query(&mut self, _query: &Query) -> ControlFlow<String> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<String> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<String> {
        match expr {
            Expr::Identifier(ident)
                if self.depth == 0 && self.ambiguous.contains(&ident.value.to_lowercase()) =>
            {
                ControlFlow::Break(ident.value.clone())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(sql: &str) -> Result<(), BasaltError> {
        let basalt_sql::Statement::Standard(stmt) = basalt_sql::parse_one(sql).expect("parses")
        else {
            panic!("{sql} is a standard statement");
        };
        check(&stmt)
    }

    #[test]
    fn an_alias_of_two_expressions_is_ambiguous_in_order_by() {
        for sql in [
            "SELECT x AS a, y AS a FROM t ORDER BY a",
            "SELECT x a, y A FROM t ORDER BY A DESC",
            "SELECT x AS a, y AS a FROM t ORDER BY a + 0",
            "INSERT INTO u SELECT x AS a, y AS a FROM t ORDER BY a",
            "SELECT t1.b AS b, t2.b FROM t1 JOIN t2 ORDER BY b",
            "SELECT t1.b, t2.b FROM t1 JOIN t2 ORDER BY b",
            "SELECT a AS b, b FROM t ORDER BY b",
        ] {
            let e = checked(sql).expect_err(sql);
            assert_eq!(e.mysql_code(), 1052, "{sql}");
            assert!(
                e.to_string().contains("in order clause is ambiguous"),
                "{e}"
            );
        }
    }

    #[test]
    fn one_expression_twice_or_other_names_are_not() {
        for sql in [
            "SELECT x AS a, x AS a FROM t ORDER BY a",
            "SELECT x AS a, y AS a FROM t ORDER BY x",
            "SELECT x AS a, y AS a FROM t ORDER BY 1",
            "SELECT x AS a, y AS a FROM t ORDER BY t.a",
            "SELECT x AS a, y AS a FROM t ORDER BY (SELECT a FROM u)",
            "SELECT x AS a FROM t UNION SELECT y AS a FROM t ORDER BY a",
            "SELECT t1.b, b FROM t1 ORDER BY b",
            "SELECT b AS b, t1.b FROM t1 ORDER BY b",
            "SELECT b + 1 AS b, t1.b FROM t1 ORDER BY b",
            "SELECT t1.b, t1.b FROM t1 ORDER BY b",
        ] {
            assert!(checked(sql).is_ok(), "{sql}");
        }
    }
}
