//! Aggregates in a subquery's WHERE, kept for the outer query: MySQL aggregates
//! `MAX(b)` in `SELECT a FROM t1 GROUP BY a HAVING a IN (SELECT c FROM t2 WHERE MAX(b) > 20)`
//! over each group of `t1` (an aggregate cannot be computed by the WHERE it is written in, so
//! it belongs to the outer query whose columns it reads, or, reading none, to the nearest
//! outer one).
//!
//! DataFusion refuses any aggregate in WHERE while planning, before a rule could move it; so
//! each such call becomes `__outer_aggregate('max', distinct, args..)`, a scalar call whose
//! arguments plan as outer references, which `basalt_query::OuterAggregates` turns into the
//! outer query's aggregate, or into MySQL's error 1111 where no outer query may aggregate.
//! A call with a window, FILTER, ORDER BY or other clauses is left as written.

use crate::mysql_compat::call;
use crate::tableless_subqueries::is_aggregate;
use basalt_sql::ast::{
    DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Query,
    SetExpr, Statement, Value,
};
use std::ops::ControlFlow;

/// The marker function's name (`basalt_query::outer_aggregate_call`).
const MARKER: &str = "__outer_aggregate";

/// Marks the aggregates in the WHERE of every subquery of `stmt`.
pub fn rewrite(stmt: &mut Statement) {
    let _ = basalt_sql::ast::visit_expressions_mut(stmt, |e| {
        match e {
            Expr::Subquery(q) | Expr::Exists { subquery: q, .. } => mark_query(q),
            Expr::InSubquery { subquery, .. } => mark_query(subquery),
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Marks the aggregates in the WHERE of each SELECT of `q`'s body.
fn mark_query(q: &mut Query) {
    mark_body(&mut q.body);
}

fn mark_body(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            if let Some(condition) = &mut select.selection {
                mark_condition(condition);
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            mark_body(left);
            mark_body(right);
        }
        SetExpr::Query(q) => mark_query(q),
        _ => {}
    }
}

/// Replaces the aggregate calls of `condition`, not those of its subqueries (theirs are
/// their select lists', or marked as their own WHERE).
fn mark_condition(condition: &mut Expr) {
    crate::own_level::rewrite_own_level(condition, |expr| {
        if let Expr::Function(f) = expr {
            if let Some(marked) = marker(f) {
                *expr = marked;
            }
        }
    });
}

/// The marker call standing for the aggregate call `f` (None: `f` is no plain aggregate).
fn marker(f: &Function) -> Option<Expr> {
    let name = f.name.0.last()?.as_ident()?.value.to_lowercase();
    if !is_aggregate(&name)
        || f.over.is_some()
        || f.filter.is_some()
        || f.null_treatment.is_some()
        || !f.within_group.is_empty()
        || f.name.0.len() != 1
    {
        return None;
    }
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    if !list.clauses.is_empty() {
        return None;
    }
    let mut args = vec![
        Expr::value(Value::SingleQuotedString(name)),
        Expr::value(Value::Number(
            match list.duplicate_treatment {
                Some(DuplicateTreatment::Distinct) => "1",
                _ => "0",
            }
            .to_string(),
            false,
        )),
    ];
    for arg in &list.args {
        match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e.clone()),
            // COUNT(*): no argument.
            FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if list.args.len() == 1 => {}
            _ => return None,
        }
    }
    Some(call(MARKER, args))
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
    fn a_subquerys_where_aggregate_is_marked() {
        assert_eq!(
            rewritten(
                "SELECT a FROM t1 GROUP BY a HAVING a IN (SELECT c FROM t2 WHERE MAX(b) > 20)"
            ),
            "SELECT a FROM t1 GROUP BY a HAVING a IN \
             (SELECT c FROM t2 WHERE __outer_aggregate('max', 0, b) > 20)"
        );
        // Not the select list of a subquery within that WHERE.
        assert_eq!(
            rewritten("SELECT (SELECT c FROM t2 WHERE d >= ALL (SELECT MAX(e) FROM t3 WHERE MIN(b) = e)) FROM t1"),
            "SELECT (SELECT c FROM t2 WHERE d >= ALL(SELECT MAX(e) FROM t3 WHERE __outer_aggregate('min', 0, b) = e)) FROM t1"
        );
        assert_eq!(
            rewritten("SELECT (SELECT m FROM t2 WHERE m = COUNT(*)) FROM t1"),
            "SELECT (SELECT m FROM t2 WHERE m = __outer_aggregate('count', 0)) FROM t1"
        );
    }

    #[test]
    fn other_aggregates_stay() {
        // The top query's WHERE (DataFusion's error), a subquery's select list, a window.
        for sql in [
            "SELECT a FROM t1 WHERE MAX(b) > 1",
            "SELECT a FROM t1 WHERE a IN (SELECT MAX(c) FROM t2)",
            "SELECT (SELECT c FROM t2 WHERE c = SUM(b) OVER ()) FROM t1",
            "SELECT * FROM (SELECT a FROM t1 WHERE MAX(b) > 1) AS d",
        ] {
            assert_eq!(rewritten(sql), sql);
        }
    }
}
