//! A derived table (or CTE) written `((SELECT .. ORDER BY a LIMIT 2) ORDER BY b)` keeps its
//! inner ORDER BY. DataFusion drops a sort without a LIMIT from a derived table (MySQL ignores
//! such an ORDER BY too), but when that sort lay right over the inner query's LIMIT it dropped
//! the inner sort as well, so the LIMIT took any two rows: a silent wrong answer
//! (`optimize_subquery_sort` does not look at the node it put in the outer sort's place). The
//! outer ORDER BY of each such parenthesized layer, meaningless there, is dropped before
//! planning instead.

use basalt_sql::ast::{Query, SetExpr, Statement, TableFactor, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Drops the ORDER BY without LIMIT of the parenthesized layers of `stmt`'s derived tables
/// and CTEs.
pub(crate) fn rewrite(stmt: &mut Statement) {
    struct Layers;
    impl VisitorMut for Layers {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
            if let TableFactor::Derived { subquery, .. } = factor {
                drop_layer_orders(subquery);
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
            if let Some(with) = q.with.as_mut() {
                for cte in with.cte_tables.iter_mut() {
                    drop_layer_orders(&mut cte.query);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = stmt.visit(&mut Layers);
}

/// `q`'s ORDER BY, and those of the parenthesized queries it wraps, down to the first layer
/// with a LIMIT or FETCH: those sorts order rows nobody reads in order.
fn drop_layer_orders(q: &mut Query) {
    let mut layer = q;
    loop {
        if layer.limit_clause.is_some() || layer.fetch.is_some() {
            return;
        }
        if !matches!(layer.body.as_ref(), SetExpr::Query(_)) {
            return;
        }
        layer.order_by = None;
        let SetExpr::Query(inner) = layer.body.as_mut() else {
            return;
        };
        layer = inner;
    }
}
