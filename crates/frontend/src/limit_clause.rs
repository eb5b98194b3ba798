//! MySQL's LIMIT clause: `LIMIT [offset,] count` and `LIMIT count OFFSET offset` take
//! non-negative integer constants or `?` placeholders (a stored program's variables too); an
//! expression there (`LIMIT 1 + 1`) is a syntax error, as in MySQL and Doris. A count of
//! 2^64-1 (`LIMIT 5, 18446744073709551615`, MySQL's documented way to read from an offset to
//! the end) or any count past the largest BIGINT means no limit; an offset that large skips
//! every row.

use basalt_common::{BasaltError, Result};
use basalt_sql::ast::Spanned;
use basalt_sql::ast::{
    Expr, LimitClause, Offset, OffsetRows, Query, Statement, Value, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Checks every LIMIT of `stmt` and writes counts past BIGINT as no limit.
pub fn rewrite(stmt: &mut Statement) -> Result<()> {
    let mut visitor = Limits;
    match stmt.visit(&mut visitor) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Limits;

impl VisitorMut for Limits {
    type Break = BasaltError;

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<BasaltError> {
        let Some(clause) = query.limit_clause.take() else {
            return ControlFlow::Continue(());
        };
        match normalized(clause) {
            Ok(clause) => {
                query.limit_clause = clause;
                ControlFlow::Continue(())
            }
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// A LIMIT value as written (a constant up to the largest BIGINT, a placeholder or a
/// variable), or `None` for a constant past the largest BIGINT.
fn bound(e: Expr) -> Result<Option<Expr>> {
    match &e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) if n.bytes().all(|b| b.is_ascii_digit()) => {
                match n.parse::<i64>() {
                    Ok(_) => Ok(Some(e)),
                    Err(_) => Ok(None),
                }
            }
            Value::Placeholder(_) => Ok(Some(e)),
            _ => Err(not_a_count(&e)),
        },
        Expr::Identifier(_) => Ok(Some(e)),
        _ => Err(not_a_count(&e)),
    }
}

fn not_a_count(e: &Expr) -> BasaltError {
    BasaltError::Syntax {
        message: "LIMIT and OFFSET take non-negative integer constants or placeholders".into(),
        near: e.to_string(),
        line: e.span().start.line.max(1),
    }
}

/// `clause` with its values checked and endless counts dropped.
fn normalized(clause: LimitClause) -> Result<Option<LimitClause>> {
    let (limit, offset, limit_by) = match clause {
        LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        } => (limit, offset.map(|o| (o.value, o.rows)), limit_by),
        LimitClause::OffsetCommaLimit { offset, limit } => {
            (Some(limit), Some((offset, OffsetRows::None)), vec![])
        }
    };
    let limit = limit.map(bound).transpose()?.flatten();
    let offset = match offset {
        Some((value, rows)) => Some(Offset {
            value: bound(value)?
                .unwrap_or_else(|| Expr::value(Value::Number(i64::MAX.to_string(), false))),
            rows,
        }),
        None => None,
    };
    if limit.is_none() && offset.is_none() && limit_by.is_empty() {
        return Ok(None);
    }
    Ok(Some(LimitClause::LimitOffset {
        limit,
        offset,
        limit_by,
    }))
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    fn rewritten(sql: &str) -> Result<String, String> {
        let mut stmts = basalt_sql::parse_statements(sql).map_err(|e| e.to_string())?;
        let Some(basalt_sql::Statement::Standard(stmt)) = stmts.first_mut() else {
            return Err("not a query".into());
        };
        rewrite(stmt).map_err(|e| e.to_string())?;
        Ok(stmt.to_string())
    }

    #[test]
    fn endless_counts_are_no_limit() {
        assert_eq!(
            rewritten("SELECT a FROM t LIMIT 2, 18446744073709551615").unwrap(),
            "SELECT a FROM t OFFSET 2"
        );
        assert_eq!(
            rewritten("SELECT a FROM t LIMIT 18446744073709551615").unwrap(),
            "SELECT a FROM t"
        );
        assert_eq!(
            rewritten("SELECT a FROM t LIMIT 3 OFFSET 1").unwrap(),
            "SELECT a FROM t LIMIT 3 OFFSET 1"
        );
        assert_eq!(
            rewritten("SELECT a FROM t LIMIT ?, ?").unwrap(),
            "SELECT a FROM t LIMIT ? OFFSET ?"
        );
    }

    #[test]
    fn expressions_are_syntax_errors() {
        for sql in [
            "SELECT a FROM t LIMIT 1 + 1",
            "SELECT a FROM t LIMIT 2 OFFSET 1 + 1",
            "SELECT a FROM t LIMIT -1",
            "SELECT a FROM t LIMIT 1.5",
        ] {
            let e = rewritten(sql).unwrap_err();
            assert!(e.contains("SQL syntax"), "{sql}: {e}");
        }
    }
}
