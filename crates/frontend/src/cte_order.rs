//! Under `WITH RECURSIVE`, MySQL lets a common table expression read one defined after it
//! (`WITH RECURSIVE s AS (SELECT a + 10 FROM t), t AS (SELECT a FROM t1) ..`); DataFusion
//! knows a CTE only after its definition (1146, table 's' doesn't exist). The CTEs of such a
//! WITH are put in an order where each comes after the ones it reads; CTEs that read each
//! other (mutual recursion, which DataFusion cannot run) keep their order.

use basalt_sql::ast::{
    ObjectNamePart, Query, Statement, TableFactor, Visit, VisitMut, Visitor, VisitorMut,
};
use std::ops::ControlFlow;

/// Orders the CTEs of every WITH RECURSIVE of `stmt` after the ones they read.
pub(crate) fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Order);
}

struct Order;

impl VisitorMut for Order {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let Some(with) = &mut query.with else {
            return ControlFlow::Continue(());
        };
        if !with.recursive || with.cte_tables.len() < 2 {
            return ControlFlow::Continue(());
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
        ControlFlow::Continue(())
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
pub(crate) fn reads_table<V: Visit>(node: &V, name: &str) -> bool {
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
        let mut stmt = crate::mysql_compat::parsed(sql);
        rewrite(&mut stmt);
        stmt.to_string()
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
