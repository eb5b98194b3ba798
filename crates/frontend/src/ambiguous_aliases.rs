//! An ORDER BY naming an alias that its SELECT list gives to two different expressions
//! (`SELECT x AS a, y AS a FROM t ORDER BY a`) is MySQL's error 1052 "Column 'a' in order
//! clause is ambiguous". DataFusion would sort by the first one, silently. The same alias on
//! the same expression twice (`SELECT x AS a, x AS a`) names one value and is fine.

use basalt_common::BasaltError;
use basalt_sql::ast::{Expr, OrderByKind, Query, SelectItem, SetExpr, Statement, Visit, Visitor};
use std::collections::HashMap;
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

/// The aliases (lower-cased) the list gives to expressions that differ.
fn ambiguous_aliases(items: &[SelectItem]) -> Vec<String> {
    let mut first: HashMap<String, String> = HashMap::new();
    let mut ambiguous = vec![];
    for item in items {
        let SelectItem::ExprWithAlias { expr, alias } = item else {
            continue;
        };
        let name = alias.value.to_lowercase();
        let text = expr.to_string().to_lowercase();
        match first.get(&name) {
            Some(earlier) if *earlier != text && !ambiguous.contains(&name) => ambiguous.push(name),
            Some(_) => {}
            None => {
                first.insert(name, text);
            }
        }
    }
    ambiguous
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
        ] {
            assert!(checked(sql).is_ok(), "{sql}");
        }
    }
}
