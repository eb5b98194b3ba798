//! ORDER BY positions past the end of the select list, as Doris reads them. Doris binds `ORDER
//! BY n` to the n-th result column only when there is one; a larger `n` stays the constant `n`,
//! which orders nothing (`SELECT * FROM t ORDER BY 1, 2, 3` over two columns sorts by the two).
//! DataFusion refuses it ("Order by column out of bounds, specified: 3, max: 2"); the statement
//! is then planned again without the positions past the end of the query that names the
//! refused one.

use basalt_sql::ast::{Expr, OrderByKind, Query, Statement, Value, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// The position DataFusion refused and the number of result columns, from its error text.
pub(crate) fn refused_position(message: &str) -> Option<(u64, u64)> {
    let rest = message
        .split("Order by column out of bounds, specified: ")
        .nth(1)?;
    let (specified, rest) = rest.split_once(", max: ")?;
    let max: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((specified.trim().parse().ok()?, max.parse().ok()?))
}

/// Drops the ORDER BY positions past `max` of each query of `stmt` whose ORDER BY has the
/// position `specified` (past `max`); true if one was dropped.
pub(crate) fn drop_positions_past(stmt: &mut Statement, specified: u64, max: u64) -> bool {
    let mut dropper = Dropper {
        specified,
        max,
        dropped: false,
    };
    let _ = stmt.visit(&mut dropper);
    dropper.dropped
}

struct Dropper {
    specified: u64,
    max: u64,
    dropped: bool,
}

fn position(e: &Expr) -> Option<u64> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

impl VisitorMut for Dropper {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let Some(order_by) = query.order_by.as_mut() else {
            return ControlFlow::Continue(());
        };
        let OrderByKind::Expressions(items) = &mut order_by.kind else {
            return ControlFlow::Continue(());
        };
        if self.specified <= self.max
            || !items
                .iter()
                .any(|o| position(&o.expr) == Some(self.specified))
        {
            return ControlFlow::Continue(());
        }
        let before = items.len();
        items.retain(|o| position(&o.expr).is_none_or(|p| p <= self.max));
        self.dropped |= items.len() < before;
        if items.is_empty() {
            query.order_by = None;
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_refused_position() {
        assert_eq!(
            refused_position(
                "Error during planning: Order by column out of bounds, specified: 6, max: 5"
            ),
            Some((6, 5))
        );
        assert_eq!(refused_position("Order by column out of range"), None);
    }

    #[test]
    fn drops_only_the_positions_of_the_refusing_query() {
        let mut stmt = crate::mysql_compat::parsed(
            "SELECT * FROM (SELECT a, b, c FROM t ORDER BY 3) x ORDER BY 1, b, 3, 4",
        );
        assert!(drop_positions_past(&mut stmt, 4, 2));
        assert_eq!(
            stmt.to_string(),
            "SELECT * FROM (SELECT a, b, c FROM t ORDER BY 3) x ORDER BY 1, b"
        );
        assert!(!drop_positions_past(&mut stmt, 4, 2));
    }
}
