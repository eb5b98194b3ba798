//! `WITH RECURSIVE` as MySQL reads it, on the parsed statement, where DataFusion differs:
//!
//! - **Order.** MySQL lets a common table expression read one defined after it (`WITH
//!   RECURSIVE s AS (SELECT a + 10 FROM t), t AS (SELECT a FROM t1) ..`); DataFusion knows a
//!   CTE only after its definition (1146). The CTEs are put in an order where each comes
//!   after the ones it reads; CTEs that read each other (mutual recursion, which DataFusion
//!   cannot run) keep their order.
//! - **LIMIT and OFFSET** on a recursive CTE (`WITH RECURSIVE s AS (SELECT 1 AS n UNION ALL
//!   SELECT n + 1 FROM s LIMIT 5)`): MySQL stops the recursion once the CTE has given that many
//!   rows. DataFusion dropped the clause, so the recursion ran on to its depth limit and the
//!   query answered with every row. Such a CTE becomes two: the recursion, under a name of its
//!   own that carries the LIMIT to the physical plan (`basalt_query::limited_recursion_name`;
//!   its recursive references read that name), and, under the old name, a plain reader of its
//!   rows. A LIMIT of anything but literal numbers is left as it was. A CTE of a WITH
//!   RECURSIVE that does not recurse lost its LIMIT in DataFusion too: its query moves into a
//!   derived table.

use basalt_sql::ast::{
    Cte, Expr, Ident, LimitClause, ObjectName, ObjectNamePart, Query, SetExpr, SetOperator,
    Statement, TableAlias, TableFactor, Value, Visit, VisitMut, Visitor, VisitorMut, With,
};
use std::ops::ControlFlow;

/// Rewrites every WITH RECURSIVE of `stmt` as above.
pub(crate) fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut RecursiveWith);
}

struct RecursiveWith;

impl VisitorMut for RecursiveWith {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let Some(with) = query.with.as_mut().filter(|w| w.recursive) {
            order_by_reads(with);
            split_limits(with);
        }
        ControlFlow::Continue(())
    }
}

/// Puts the CTEs of `with` after the ones they read.
fn order_by_reads(with: &mut With) {
    if with.cte_tables.len() < 2 {
        return;
    }
    let names: Vec<String> = with
        .cte_tables
        .iter()
        .map(|c| c.alias.name.value.to_lowercase())
        .collect();
    // reads[i]: the other CTEs of this WITH that CTE i reads.
    let reads: Vec<Vec<usize>> = with
        .cte_tables
        .iter()
        .enumerate()
        .map(|(i, cte)| {
            let mut tables = Tables::default();
            let _ = cte.query.visit(&mut tables);
            (0..names.len())
                .filter(|&j| j != i && tables.names.contains(&names[j]))
                .collect()
        })
        .collect();
    if let Some(order) = dependency_order(&reads) {
        if order.iter().enumerate().any(|(k, &i)| k != i) {
            let mut taken: Vec<_> = with.cte_tables.drain(..).map(Some).collect();
            with.cte_tables = order.iter().filter_map(|&i| taken[i].take()).collect();
        }
    }
}

/// Splits each recursive CTE of `with` that has a LIMIT; keeps the LIMIT of the others.
fn split_limits(with: &mut With) {
    let mut i = 0;
    while i < with.cte_tables.len() {
        if let Some(reader) = split(&mut with.cte_tables[i]) {
            with.cte_tables.insert(i + 1, reader);
            i += 1;
        } else {
            keep_limit(&mut with.cte_tables[i]);
        }
        i += 1;
    }
}

/// Renames a recursive CTE with a LIMIT and returns the CTE that reads it under its name.
/// Only a UNION that reads itself is a recursion; any other CTE keeps its LIMIT.
fn split(cte: &mut Cte) -> Option<Cte> {
    let SetExpr::SetOperation {
        op: SetOperator::Union,
        right,
        ..
    } = cte.query.body.as_ref()
    else {
        return None;
    };
    let old = cte.alias.name.clone();
    if !reads_table(right.as_ref(), &old.value) {
        return None;
    }
    let (skip, fetch) = literal_limit(cte.query.limit_clause.as_ref()?)?;
    let recursion = basalt_query::limited_recursion_name(&old.value, skip, fetch);
    let mut reader_query = crate::mysql_compat::parsed_query("SELECT * FROM recursion")?;
    if let SetExpr::Select(select) = reader_query.body.as_mut() {
        if let Some(TableFactor::Table { name, .. }) =
            select.from.first_mut().map(|f| &mut f.relation)
        {
            *name = ObjectName::from(vec![Ident::new(&recursion)]);
        }
    }
    cte.query.limit_clause = None;
    crate::shadowed_ctes::rename_tables(&mut cte.query, &old.value, &recursion);
    let mut reader = cte.clone();
    cte.alias.name = Ident::new(&recursion);
    reader.alias = TableAlias {
        explicit: cte.alias.explicit,
        name: old,
        columns: Vec::new(),
        at: None,
    };
    reader.query = Box::new(reader_query);
    Some(reader)
}

/// A CTE of a WITH RECURSIVE that does not read itself: DataFusion dropped its LIMIT too
/// (`WITH RECURSIVE s AS (SELECT 1 UNION ALL SELECT 2 LIMIT 1)` gave two rows). Its query
/// moves into a derived table, which keeps the LIMIT.
fn keep_limit(cte: &mut Cte) {
    if cte.query.limit_clause.is_none() || reads_table(&cte.query, &cte.alias.name.value) {
        return;
    }
    let Some(mut outer) =
        crate::mysql_compat::parsed_query("SELECT * FROM (SELECT 1) AS __basalt_limited")
    else {
        return;
    };
    if let SetExpr::Select(select) = outer.body.as_mut() {
        if let Some(TableFactor::Derived { subquery, .. }) =
            select.from.first_mut().map(|f| &mut f.relation)
        {
            *subquery = cte.query.clone();
            *cte.query = outer;
        }
    }
}

/// `(skip, fetch)` of a LIMIT written with literal numbers.
fn literal_limit(limit: &LimitClause) -> Option<(usize, usize)> {
    let number = |e: &Expr| match e {
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => n.parse::<usize>().ok(),
            _ => None,
        },
        _ => None,
    };
    match limit {
        LimitClause::LimitOffset {
            limit: Some(limit),
            offset,
            limit_by,
        } if limit_by.is_empty() => {
            let skip = match offset {
                Some(offset) => number(&offset.value)?,
                None => 0,
            };
            Some((skip, number(limit)?))
        }
        LimitClause::OffsetCommaLimit { offset, limit } => Some((number(offset)?, number(limit)?)),
        _ => None,
    }
}

/// An order of the CTEs where each comes after those it reads (stable: a CTE moves only to
/// follow what it reads), or `None` when two read each other.
fn dependency_order(reads: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut placed = vec![false; reads.len()];
    let mut order = Vec::with_capacity(reads.len());
    while order.len() < reads.len() {
        let next = (0..reads.len()).find(|&i| !placed[i] && reads[i].iter().all(|&j| placed[j]))?;
        placed[next] = true;
        order.push(next);
    }
    Some(order)
}

/// Whether `node` (a query or a part of one) reads a table named `name` (one part, any case).
fn reads_table<V: Visit>(node: &V, name: &str) -> bool {
    let mut tables = Tables::default();
    let _ = node.visit(&mut tables);
    tables.names.contains(&name.to_lowercase())
}

/// The one-part table names a query reads (lower case).
#[derive(Default)]
struct Tables {
    names: Vec<String>,
}

impl Visitor for Tables {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, .. } = factor {
            if let [ObjectNamePart::Identifier(ident)] = name.0.as_slice() {
                self.names.push(ident.value.to_lowercase());
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        crate::mysql_compat::rewritten_by(sql, rewrite)
    }

    #[test]
    fn the_limit_reads_the_recursion() {
        assert_eq!(
            rewritten("WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s LIMIT 2, 5) SELECT * FROM s"),
            "WITH RECURSIVE s__basalt_limit_2_5 (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s__basalt_limit_2_5 AS s), \
             s AS (SELECT * FROM s__basalt_limit_2_5) SELECT * FROM s"
        );
        // No recursion: without RECURSIVE the LIMIT stays; with it, in a derived table.
        let kept = "WITH s AS (SELECT 1 UNION ALL SELECT 2 LIMIT 1) SELECT * FROM s";
        assert_eq!(rewritten(kept), kept);
        assert_eq!(
            rewritten("WITH RECURSIVE s AS (SELECT a FROM t EXCEPT SELECT a FROM u LIMIT 1) SELECT * FROM s"),
            "WITH RECURSIVE s AS (SELECT * FROM (SELECT a FROM t EXCEPT SELECT a FROM u LIMIT 1) AS __basalt_limited) SELECT * FROM s"
        );
        assert!(rewritten("WITH RECURSIVE s AS (SELECT 1 UNION ALL SELECT 2 FROM s LIMIT 1 OFFSET 2) SELECT * FROM s")
            .contains("s__basalt_limit_2_1"));
    }

    #[test]
    fn a_cte_follows_the_ones_it_reads() {
        assert_eq!(
            rewritten("WITH RECURSIVE s (a) AS (SELECT t.a + 10 FROM t), t (a) AS (SELECT a FROM t1) SELECT * FROM s"),
            "WITH RECURSIVE t (a) AS (SELECT a FROM t1), s (a) AS (SELECT t.a + 10 FROM t) SELECT * FROM s"
        );
        // Without RECURSIVE, or when two read each other: as written.
        let kept = "WITH s AS (SELECT * FROM t), t AS (SELECT 1) SELECT * FROM s";
        assert_eq!(rewritten(kept), kept);
        let kept = "WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT * FROM a) SELECT * FROM a";
        assert_eq!(rewritten(kept), kept);
    }
}
