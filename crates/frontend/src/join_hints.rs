//! MySQL's join-order hint `A STRAIGHT_JOIN B [ON ..]`: an inner join that reads A before B.
//! Basalt's planner chooses the join order itself, so the hint is dropped and the join is the
//! inner join it names (`SELECT STRAIGHT_JOIN ..`, the hint for a whole FROM clause, needs no
//! rewrite: the planner ignores it).

use basalt_sql::ast::{
    FromTable, JoinOperator, Select, Statement, TableFactor, TableWithJoins, UpdateTableFromKind,
    VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Makes every STRAIGHT_JOIN in `stmt` (queries, and the tables of UPDATE and DELETE) an
/// inner join.
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut InnerJoins);
}

struct InnerJoins;

impl VisitorMut for InnerJoins {
    type Break = ();

    fn pre_visit_statement(&mut self, stmt: &mut Statement) -> ControlFlow<()> {
        match stmt {
            Statement::Update(update) => {
                plain(&mut update.table);
                if let Some(
                    UpdateTableFromKind::BeforeSet(from) | UpdateTableFromKind::AfterSet(from),
                ) = &mut update.from
                {
                    from.iter_mut().for_each(plain);
                }
            }
            Statement::Delete(delete) => {
                let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) =
                    &mut delete.from;
                from.iter_mut().for_each(plain);
                if let Some(using) = &mut delete.using {
                    using.iter_mut().for_each(plain);
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        select.from.iter_mut().for_each(plain);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = factor
        {
            plain(table_with_joins);
        }
        ControlFlow::Continue(())
    }
}

/// The STRAIGHT_JOINs of one FROM item as inner joins (with the same condition, or none).
fn plain(from: &mut TableWithJoins) {
    for join in &mut from.joins {
        if let JoinOperator::StraightJoin(constraint) = &join.join_operator {
            join.join_operator = JoinOperator::Inner(constraint.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        let mut stmt = basalt_sql::parse_one(sql).unwrap();
        let basalt_sql::Statement::Standard(inner) = &mut stmt else {
            panic!("not a standard statement: {sql}");
        };
        rewrite(inner);
        inner.to_string()
    }

    #[test]
    fn straight_join_becomes_an_inner_join() {
        assert_eq!(
            rewritten("SELECT * FROM t1 STRAIGHT_JOIN t2 ON t1.a = t2.a"),
            "SELECT * FROM t1 INNER JOIN t2 ON t1.a = t2.a"
        );
        assert_eq!(
            rewritten("SELECT * FROM (t1 STRAIGHT_JOIN t2) JOIN t3 ON t1.a = t3.a"),
            "SELECT * FROM (t1 INNER JOIN t2) JOIN t3 ON t1.a = t3.a"
        );
        assert_eq!(
            rewritten("SELECT (SELECT 1 FROM t1 STRAIGHT_JOIN t2) FROM t3"),
            "SELECT (SELECT 1 FROM t1 INNER JOIN t2) FROM t3"
        );
    }

    #[test]
    fn update_and_delete_tables() {
        assert_eq!(
            rewritten("UPDATE t1 STRAIGHT_JOIN t2 ON t1.a = t2.a SET t1.b = 1"),
            "UPDATE t1 INNER JOIN t2 ON t1.a = t2.a SET t1.b = 1"
        );
        assert_eq!(
            rewritten("DELETE t1 FROM t1 STRAIGHT_JOIN t2 ON t1.a = t2.a"),
            "DELETE t1 FROM t1 INNER JOIN t2 ON t1.a = t2.a"
        );
    }
}
