//! A multiple-table UPDATE or DELETE whose target table is joined by an outer join changes
//! only the target's rows that exist. The joined row of a missing match has every column of
//! the target NULL; read as a row of the target it was a row to write (`UPDATE t2 LEFT JOIN
//! t1 ON .. SET t1.d = t2.d` inserted `(NULL, d)` into a Unique table) or to match (an
//! all-NULL row of a Duplicate table). When the statement has an outer join, the target is
//! read through `(SELECT *, 1 AS __basalt_present FROM t) AS <its name>` and only rows where
//! the marker is not NULL are its rows.

use basalt_sql::ast::{
    Expr, Ident, JoinOperator, ObjectName, Query, TableAlias, TableFactor, TableWithJoins,
};

const PRESENT: &str = "__basalt_present";

/// Whether `tables` join anything by an outer join.
pub(super) fn has_outer_join(tables: &[TableWithJoins]) -> bool {
    fn factor(f: &TableFactor) -> bool {
        matches!(f, TableFactor::NestedJoin { table_with_joins, .. } if twj(table_with_joins))
    }
    fn twj(t: &TableWithJoins) -> bool {
        factor(&t.relation)
            || t.joins.iter().any(|j| {
                factor(&j.relation)
                    || matches!(
                        j.join_operator,
                        JoinOperator::Left(_)
                            | JoinOperator::LeftOuter(_)
                            | JoinOperator::Right(_)
                            | JoinOperator::RightOuter(_)
                            | JoinOperator::FullOuter(_)
                    )
            })
    }
    tables.iter().any(twj)
}

/// `tables` with the first factor `is_target` accepts read through the marked derived table
/// named `name`, and the condition that keeps the target's existing rows; `None` when no
/// factor was accepted.
pub(super) fn marked(
    tables: &[TableWithJoins],
    is_target: &dyn Fn(&TableFactor) -> bool,
    name: &Ident,
) -> Option<(Vec<TableWithJoins>, Expr)> {
    let mut tables = tables.to_vec();
    let mut done = false;
    for t in tables.iter_mut() {
        mark(&mut t.relation, is_target, name, &mut done);
        for j in t.joins.iter_mut() {
            mark(&mut j.relation, is_target, name, &mut done);
        }
    }
    if !done {
        return None;
    }
    let present = Expr::IsNotNull(Box::new(Expr::CompoundIdentifier(vec![
        name.clone(),
        Ident::new(PRESENT),
    ])));
    Some((tables, present))
}

fn mark(
    factor: &mut TableFactor,
    is_target: &dyn Fn(&TableFactor) -> bool,
    name: &Ident,
    done: &mut bool,
) {
    if *done {
        return;
    }
    if let TableFactor::NestedJoin {
        table_with_joins, ..
    } = factor
    {
        mark(&mut table_with_joins.relation, is_target, name, done);
        for j in table_with_joins.joins.iter_mut() {
            mark(&mut j.relation, is_target, name, done);
        }
        return;
    }
    if !is_target(factor) {
        return;
    }
    let TableFactor::Table { name: table, .. } = factor else {
        return;
    };
    let Some(subquery) = marked_rows(table) else {
        return;
    };
    *factor = TableFactor::Derived {
        lateral: false,
        subquery: Box::new(subquery),
        alias: Some(TableAlias {
            explicit: true,
            name: name.clone(),
            columns: vec![],
            at: None,
        }),
        sample: None,
    };
    *done = true;
}

/// `SELECT *, 1 AS __basalt_present FROM table`.
fn marked_rows(table: &ObjectName) -> Option<Query> {
    crate::mysql_compat::parsed_query(&format!("SELECT *, 1 AS {PRESENT} FROM {table}"))
}
