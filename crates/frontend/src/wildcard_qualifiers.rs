//! `t.*` over a table named with its database: `SELECT j1.*, j2.* FROM w.j1, j2` is MySQL, as
//! `SELECT j1.a FROM w.j1` is. DataFusion resolves a bare qualifier against `w.j1` for columns
//! but not for wildcards ("Invalid qualifier j1"), so a wildcard's bare qualifier naming a
//! table of its SELECT's FROM (one without an alias, named with its database) is spelled out.

use basalt_sql::ast::{
    ObjectName, Select, SelectItem, SelectItemQualifiedWildcardKind, Statement, TableFactor,
    VisitMut, VisitorMut,
};
use std::ops::ControlFlow;

/// Qualifies the bare wildcard qualifiers of every SELECT in `stmt`.
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut QualifyWildcards);
}

struct QualifyWildcards;

impl VisitorMut for QualifyWildcards {
    type Break = ();

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<()> {
        let tables = database_named_tables(select);
        if tables.is_empty() {
            return ControlFlow::Continue(());
        }
        for item in &mut select.projection {
            let SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(q), _) =
                item
            else {
                continue;
            };
            let [part] = q.0.as_slice() else { continue };
            let Some(bare) = part.as_ident() else {
                continue;
            };
            let mut matching = tables.iter().filter(|name| {
                name.0
                    .last()
                    .and_then(|p| p.as_ident())
                    .is_some_and(|t| t.value == bare.value)
            });
            if let (Some(full), None) = (matching.next(), matching.next()) {
                *q = full.clone();
            }
        }
        ControlFlow::Continue(())
    }
}

/// The tables of `select`'s FROM without an alias and named with more than their name.
fn database_named_tables(select: &Select) -> Vec<ObjectName> {
    let factors = select
        .from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)));
    factors
        .filter_map(|f| match f {
            TableFactor::Table {
                name, alias: None, ..
            } if name.0.len() > 1 => Some(name.clone()),
            _ => None,
        })
        .collect()
}
