//! Joins that merge columns by name (`USING (c)`, `NATURAL`) as MySQL shows them. The merged
//! column `c` is one column with the value of the side that is never NULL: the left table's in
//! a left (or inner) join, the right table's in a right join, the first non-NULL in a full
//! join. DataFusion keeps one of the two `c` columns by the sort order of the table names, so
//! `SELECT * FROM orders LEFT JOIN customers USING (id)` showed `customers.id`, NULL on every
//! order without a customer.
//! - `A RIGHT JOIN B USING (c)` (and `NATURAL RIGHT JOIN`) becomes `B LEFT JOIN A USING (c)`:
//!   an unqualified `c` then reads B's, as MySQL's does.
//!
//! `merged_columns` then shows the merged columns as MySQL does (`SELECT *`'s order, unqualified
//! names). A join ON a condition names its columns and is left as written.

use basalt_sql::ast::{
    Join, JoinConstraint, JoinOperator, Select, Statement, TableFactor, TableWithJoins, VisitMut,
    VisitorMut,
};
use std::ops::ControlFlow;

/// Rewrites every USING or NATURAL right join in `stmt`.
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut SwapRightJoins);
}

struct SwapRightJoins;

impl VisitorMut for SwapRightJoins {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        select.from.iter_mut().for_each(swap_in);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            swap_in(table_with_joins);
        }
        ControlFlow::Continue(())
    }
}

/// The constraint of a right join that merges columns by name, if `operator` is one.
fn merging_right_join(operator: &JoinOperator) -> Option<JoinConstraint> {
    match operator {
        JoinOperator::Right(c) | JoinOperator::RightOuter(c)
            if matches!(c, JoinConstraint::Using(_) | JoinConstraint::Natural) =>
        {
            Some(c.clone())
        }
        _ => None,
    }
}

/// Swaps the sides of each merging right join of one FROM item, left to right: everything
/// joined before it becomes the (nested) right side of a left join.
fn swap_in(from: &mut TableWithJoins) {
    while let Some(at) = from
        .joins
        .iter()
        .position(|j| merging_right_join(&j.join_operator).is_some())
    {
        let mut rest = from.joins.split_off(at);
        let right_join = rest.remove(0);
        let Some(constraint) = merging_right_join(&right_join.join_operator) else {
            return;
        };
        let before = std::mem::take(&mut from.joins);
        let left = if before.is_empty() {
            from.relation.clone()
        } else {
            TableFactor::NestedJoin {
                table_with_joins: Box::new(TableWithJoins {
                    relation: from.relation.clone(),
                    joins: before,
                }),
                alias: None,
            }
        };
        from.relation = right_join.relation;
        from.joins = std::iter::once(Join {
            relation: left,
            global: right_join.global,
            join_operator: JoinOperator::LeftOuter(constraint),
        })
        .chain(rest)
        .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let mut stmt = basalt_sql::parse_one(sql).unwrap();
        let basalt_sql::Statement::Standard(inner) = &mut stmt else {
            panic!("not a query: {sql}");
        };
        rewrite(inner);
        inner.to_string()
    }

    #[test]
    fn swaps_using_and_natural_right_joins() {
        assert_eq!(
            rewritten("SELECT a.x FROM a RIGHT JOIN b USING (k)"),
            "SELECT a.x FROM b LEFT OUTER JOIN a USING(k)"
        );
        assert_eq!(
            rewritten(
                "SELECT * FROM x JOIN a ON x.i = a.i NATURAL RIGHT JOIN b JOIN c ON c.k = b.k"
            ),
            "SELECT * FROM b NATURAL LEFT OUTER JOIN (x JOIN a ON x.i = a.i) JOIN c ON c.k = b.k"
        );
        assert_eq!(
            rewritten("SELECT * FROM a RIGHT JOIN b ON a.k = b.k"),
            "SELECT * FROM a RIGHT JOIN b ON a.k = b.k"
        );
    }
}
