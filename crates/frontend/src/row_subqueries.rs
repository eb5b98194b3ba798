//! Row subqueries: `(a, b) [NOT] IN (SELECT x, y ..)`, `(a, b) = (SELECT x, y ..)`,
//! `(SELECT x, y ..) < ROW(1, 2)`, `(SELECT ..) IN (SELECT ..)` of several columns, with
//! MySQL's NULL rules.
//!
//! DataFusion's SQL planner takes only subqueries of one column, so a row subquery is
//! rewritten on the parsed statement into one-column forms. The subquery `q` is read as the
//! derived table `(q) AS __basalt_row(c1, .., cN)` (its unnamed columns are named apart
//! first: `SELECT 1, 1` has two columns of one name), N being the other operand's width:
//! - a row IN standing as a conjunct of a WHERE, where NULL and false both drop the row, is
//!   `EXISTS (SELECT 1 FROM .. WHERE c1 = a AND c2 = b ..)`: DataFusion's semi join;
//! - any other row IN is three-valued as SQL's IN is: true when a row is equal (EXISTS),
//!   else NULL when one might be (no column differs, a comparison is NULL), else false
//!   (NOT IN the opposite);
//! - a row compared with a subquery's row takes each column of it as a scalar subquery
//!   (still an error when it has more than one row, NULLs when it has none) and compares
//!   column by column: `=` when all are equal, `<>` when not, `<=>` null-safe, `<` `<=` `>`
//!   `>=` by the first column that differs. Two rows (`(a, b) = (1, NULL)`) compare so too.

use crate::mysql_compat::{binary, number};
use basalt_sql::ast::helpers::attached_token::AttachedToken;
use basalt_sql::ast::{
    BinaryOperator, Expr, FunctionArguments, Ident, Query, SelectItem, SetExpr, Statement,
    TableFactor, UnaryOperator, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// The derived table a row subquery is read as.
const ROWS: &str = "__basalt_row";

/// Rewrites every row subquery of `stmt` (innermost first).
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut RowSubqueries);
}

struct RowSubqueries;

impl VisitorMut for RowSubqueries {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut basalt_sql::ast::Select) -> ControlFlow<()> {
        if let Some(condition) = &mut select.selection {
            filter_conjuncts(condition);
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        let replacement = match expr {
            Expr::InSubquery {
                expr: tested,
                subquery,
                negated,
            } => row_in(tested, subquery, *negated),
            Expr::BinaryOp { left, op, right } => row_comparison(left, op, right),
            _ => None,
        };
        if let Some(replacement) = replacement {
            *expr = replacement;
        }
        ControlFlow::Continue(())
    }
}

/// Rewrites the row INs that are conjuncts of a WHERE `condition` as EXISTS.
fn filter_conjuncts(condition: &mut Expr) {
    match condition {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            filter_conjuncts(left);
            filter_conjuncts(right);
        }
        Expr::Nested(inner) => filter_conjuncts(inner),
        Expr::InSubquery {
            expr,
            subquery,
            negated: false,
        } => {
            let Some(width) = in_width(expr, subquery) else {
                return;
            };
            let Some(tested) = operand_items(expr, width) else {
                return;
            };
            let matched = all_equal(&tested);
            let Some(found) = over_rows(subquery, width, number(1), Some(matched)) else {
                return;
            };
            *condition = Expr::Exists {
                subquery: Box::new(found),
                negated: false,
            };
        }
        _ => {}
    }
}

/// `tested [NOT] IN (q)` of rows, three-valued (None: not a row IN).
fn row_in(tested: &Expr, q: &Query, negated: bool) -> Option<Expr> {
    let width = in_width(tested, q)?;
    let tested = operand_items(tested, width)?;
    let matched = all_equal(&tested);
    // True when a row is equal; else NULL when one may be (a comparison is NULL, none
    // false); else false.
    let exists = |condition: Expr| {
        Some(Expr::Exists {
            subquery: Box::new(over_rows(q, width, number(1), Some(condition))?),
            negated: false,
        })
    };
    let truth = |b: bool| Expr::value(Value::Boolean(b));
    Some(Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![
            basalt_sql::ast::CaseWhen {
                condition: exists(matched.clone())?,
                result: truth(!negated),
            },
            basalt_sql::ast::CaseWhen {
                condition: exists(Expr::IsNull(Box::new(matched)))?,
                result: Expr::value(Value::Null),
            },
        ],
        else_result: Some(Box::new(truth(negated))),
    })
}

/// `left op right` where one side is a subquery of several columns, or both are rows (None:
/// neither). Rows compare column by column with MySQL's NULLs (`(1, NULL) = (1, NULL)` is
/// NULL; DataFusion's struct comparison found it true).
fn row_comparison(left: &Expr, op: &BinaryOperator, right: &Expr) -> Option<Expr> {
    use BinaryOperator as B;
    if !matches!(
        op,
        B::Eq | B::NotEq | B::Spaceship | B::Lt | B::LtEq | B::Gt | B::GtEq
    ) {
        return None;
    }
    let rows = row_items(left).is_some() && row_items(right).is_some();
    if !rows && !matches!(left, Expr::Subquery(_)) && !matches!(right, Expr::Subquery(_)) {
        return None;
    }
    let width = width(left).or_else(|| width(right))?;
    if width < 2 {
        return None;
    }
    let left = operand_items(left, width)?;
    let right = operand_items(right, width)?;
    let pairs: Vec<(Expr, Expr)> = left.into_iter().zip(right).collect();
    Some(match op {
        B::Eq | B::Spaceship => conjunction(
            pairs
                .into_iter()
                .map(|(l, r)| binary(l, op.clone(), r))
                .collect(),
        ),
        B::NotEq => Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: Box::new(conjunction(
                pairs
                    .into_iter()
                    .map(|(l, r)| binary(l, B::Eq, r))
                    .collect(),
            )),
        },
        _ => ordered(pairs, op),
    })
}

/// `(l1, l2, ..) op (r1, r2, ..)` for `<`, `<=`, `>`, `>=`: decided by the first pair that
/// differs, `op` itself for the last pair.
fn ordered(mut pairs: Vec<(Expr, Expr)>, op: &BinaryOperator) -> Expr {
    use BinaryOperator as B;
    let strict = match op {
        B::LtEq => B::Lt,
        B::GtEq => B::Gt,
        other => other.clone(),
    };
    let Some((l, r)) = pairs.pop() else {
        return Expr::value(Value::Null);
    };
    let mut decided = binary(l, op.clone(), r);
    while let Some((l, r)) = pairs.pop() {
        let equal_then = binary(binary(l.clone(), B::Eq, r.clone()), B::And, decided);
        decided = binary(binary(l, strict.clone(), r), B::Or, equal_then);
    }
    decided
}

/// The width of `tested IN (q)` when it compares rows of two or more columns.
fn in_width(tested: &Expr, q: &Query) -> Option<usize> {
    let width = width(tested).or_else(|| query_width(q))?;
    (width >= 2).then_some(width)
}

/// The items of `(a, b, ..)` or `ROW(a, b, ..)`.
fn row_items(e: &Expr) -> Option<Vec<Expr>> {
    match e {
        Expr::Tuple(items) => Some(items.clone()),
        Expr::Nested(inner) => row_items(inner),
        Expr::Function(f)
            if f.name.0.len() == 1
                && f.name
                    .0
                    .first()
                    .and_then(|p| p.as_ident())
                    .is_some_and(|i| i.value.eq_ignore_ascii_case("row")) =>
        {
            let FunctionArguments::List(list) = &f.args else {
                return None;
            };
            crate::mysql_compat::unnamed_args(list)
        }
        _ => None,
    }
}

/// How many columns `e` has, when it is a row or a subquery whose columns can be counted.
fn width(e: &Expr) -> Option<usize> {
    match e {
        Expr::Subquery(q) => query_width(q),
        other => row_items(other).map(|items| items.len()),
    }
}

/// How many columns `q` gives, unless its first SELECT has a `*`.
fn query_width(q: &Query) -> Option<usize> {
    fn of(body: &SetExpr) -> Option<usize> {
        match body {
            SetExpr::Select(select) => {
                let wildcard = select.projection.iter().any(|item| {
                    matches!(
                        item,
                        SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
                    )
                });
                (!wildcard).then_some(select.projection.len())
            }
            SetExpr::SetOperation { left, .. } => of(left),
            SetExpr::Query(q) => of(&q.body),
            _ => None,
        }
    }
    of(&q.body)
}

/// The `width` values of operand `e`: a row's items, or each column of a subquery as a scalar
/// subquery.
fn operand_items(e: &Expr, width: usize) -> Option<Vec<Expr>> {
    if let Some(items) = row_items(e) {
        return (items.len() == width).then_some(items);
    }
    let Expr::Subquery(q) = e else {
        return None;
    };
    if query_width(q).is_some_and(|w| w != width) {
        return None;
    }
    (1..=width)
        .map(|i| {
            Some(Expr::Subquery(Box::new(over_rows(
                q,
                width,
                column(i),
                None,
            )?)))
        })
        .collect()
}

/// `SELECT projection FROM (q) AS __basalt_row(c1, .., c<width>) [WHERE selection]`.
fn over_rows(q: &Query, width: usize, projection: Expr, selection: Option<Expr>) -> Option<Query> {
    let columns: Vec<String> = (1..=width).map(|i| format!("c{i}")).collect();
    let text = format!("SELECT 1 FROM (SELECT 1) AS {ROWS}({})", columns.join(", "));
    let basalt_sql::Statement::Standard(standard) = basalt_sql::parse_one(&text).ok()? else {
        return None;
    };
    let Statement::Query(outer) = *standard else {
        return None;
    };
    let mut outer = *outer;
    let mut inner = q.clone();
    name_columns_apart(&mut inner.body, &mut 0);
    if let SetExpr::Select(select) = outer.body.as_mut() {
        select.projection = vec![SelectItem::UnnamedExpr(projection)];
        select.selection = selection;
        if let Some(TableFactor::Derived { subquery, .. }) =
            select.from.first_mut().map(|from| &mut from.relation)
        {
            **subquery = inner;
        }
    }
    Some(outer)
}

/// Names the unnamed columns of every SELECT of `body` (`SELECT 1, 1` would have two columns
/// of one name, which DataFusion refuses in a derived table).
fn name_columns_apart(body: &mut SetExpr, next: &mut usize) {
    match body {
        SetExpr::Select(select) => {
            // A column keeps its name (an ORDER BY may use it) unless it came before.
            let mut seen = std::collections::HashSet::new();
            for item in &mut select.projection {
                if let SelectItem::UnnamedExpr(e) = item {
                    let column = matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_));
                    let again = !seen.insert(e.to_string().to_lowercase());
                    if !column || again {
                        *next += 1;
                        *item = SelectItem::ExprWithAlias {
                            expr: e.clone(),
                            alias: Ident::new(format!("__basalt_c{next}")),
                        };
                    }
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            name_columns_apart(left, next);
            name_columns_apart(right, next);
        }
        _ => {}
    }
}

/// Column `i` (from 1) of the derived table.
fn column(i: usize) -> Expr {
    Expr::CompoundIdentifier(vec![Ident::new(ROWS), Ident::new(format!("c{i}"))])
}

/// `c1 = tested[0] AND c2 = tested[1] AND ..`.
fn all_equal(tested: &[Expr]) -> Expr {
    conjunction(
        tested
            .iter()
            .enumerate()
            .map(|(i, t)| binary(column(i + 1), BinaryOperator::Eq, t.clone()))
            .collect(),
    )
}

/// `a AND b AND ..` of `terms` (at least one).
fn conjunction(terms: Vec<Expr>) -> Expr {
    let mut terms = terms.into_iter();
    let Some(first) = terms.next() else {
        return Expr::value(Value::Boolean(true));
    };
    terms.fold(first, |all, t| binary(all, BinaryOperator::And, t))
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
    fn a_row_in_of_a_where_is_an_exists() {
        let sql = rewritten("SELECT * FROM t1 WHERE b > 0 AND (a, b) IN (SELECT x, 1 FROM t2)");
        assert!(sql.contains("EXISTS (SELECT 1 FROM (SELECT x, 1 AS __basalt_c1 FROM t2) AS __basalt_row (c1, c2) WHERE ((__basalt_row.c1 = a) AND (__basalt_row.c2 = b)))"), "{sql}");
    }

    #[test]
    fn a_row_in_elsewhere_is_three_valued() {
        let sql = rewritten("SELECT ROW(a, b) NOT IN (SELECT * FROM t2) FROM t1");
        assert!(sql.contains("CASE WHEN EXISTS (SELECT 1 FROM (SELECT * FROM t2) AS __basalt_row (c1, c2) WHERE ((__basalt_row.c1 = a) AND (__basalt_row.c2 = b))) THEN false"), "{sql}");
        assert!(sql.contains("WHERE ((__basalt_row.c1 = a) AND (__basalt_row.c2 = b)) IS NULL) THEN NULL ELSE true END"), "{sql}");
    }

    #[test]
    fn a_row_compared_with_a_subquery_compares_column_by_column() {
        let sql = rewritten("SELECT (SELECT a, b FROM t) < ROW(1, 2)");
        assert!(
            sql.contains("((SELECT __basalt_row.c1 FROM (SELECT a, b FROM t) AS __basalt_row (c1, c2)) < 1) OR"),
            "{sql}"
        );
        // One column compared with a value is no row comparison.
        let sql = rewritten("SELECT (SELECT a FROM t) = 1");
        assert_eq!(sql, "SELECT (SELECT a FROM t) = 1");
    }
}
