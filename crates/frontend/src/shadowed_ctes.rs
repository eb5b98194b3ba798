//! A WITH inside a query that names a common table expression again (`WITH t AS (..)
//! SELECT a FROM (WITH t AS (..) SELECT a FROM t) x`): MySQL lets the inner one hide the outer
//! one within its query; DataFusion refuses the name ("specified more than once"). Each such
//! inner CTE gets a name of its own, and the tables of its query that name it (outside queries
//! that name it yet again, and outside its own definition, where the name still means the
//! outer one, unless the WITH is RECURSIVE) read the new name under the old one as alias, so
//! qualified columns keep working.
use basalt_sql::ast::{
    Ident, ObjectName, ObjectNamePart, Query, Statement, TableAlias, TableFactor, VisitMut,
    VisitorMut,
};
use std::ops::ControlFlow;

/// Renames every CTE of `stmt` that hides one of an enclosing query.
pub(crate) fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Scopes::default());
}

/// The CTE names visible in the enclosing queries (lower case), one list per query.
#[derive(Default)]
struct Scopes {
    visible: Vec<Vec<String>>,
    renamed: usize,
}

fn cte_names(query: &Query) -> Vec<String> {
    query
        .with
        .iter()
        .flat_map(|w| &w.cte_tables)
        .map(|c| c.alias.name.value.to_lowercase())
        .collect()
}

impl VisitorMut for Scopes {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let outer: Vec<&String> = self.visible.iter().flatten().collect();
        let hidden: Vec<usize> = query
            .with
            .iter()
            .flat_map(|w| w.cte_tables.iter().enumerate())
            .filter(|(_, c)| outer.contains(&&c.alias.name.value.to_lowercase()))
            .map(|(i, _)| i)
            .collect();
        for i in hidden {
            self.renamed += 1;
            let Some(with) = query.with.as_mut() else {
                break;
            };
            let old = with.cte_tables[i].alias.name.value.clone();
            let new = format!("{old}__basalt_cte_{}", self.renamed);
            with.cte_tables[i].alias.name = Ident::new(&new);
            let mut rename = Rename {
                old: old.to_lowercase(),
                new,
                hidden_depth: 0,
            };
            // The later CTEs of the same WITH and the query's own body read the new name;
            // under WITH RECURSIVE every CTE of the WITH does, its own definition included
            // (its recursive reference is to itself, not to the outer one).
            let first_reader = if with.recursive { 0 } else { i + 1 };
            for reader in with.cte_tables.iter_mut().skip(first_reader) {
                let _ = reader.query.visit(&mut rename);
            }
            let _ = query.body.visit(&mut rename);
            if let Some(order_by) = query.order_by.as_mut() {
                let _ = order_by.visit(&mut rename);
            }
        }
        self.visible.push(cte_names(query));
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.visible.pop();
        ControlFlow::Continue(())
    }
}

/// In `query`, the tables named `old` (one part, any case) read `new` under the alias `old`,
/// except inside queries that define `old` again.
pub(crate) fn rename_tables(query: &mut Query, old: &str, new: &str) {
    let _ = query.visit(&mut Rename {
        old: old.to_lowercase(),
        new: new.to_string(),
        hidden_depth: 0,
    });
}

/// Tables named `old` read `new` (aliased `old`), except inside queries that define `old`.
struct Rename {
    old: String,
    new: String,
    hidden_depth: usize,
}

impl VisitorMut for Rename {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if cte_names(query).contains(&self.old) || self.hidden_depth > 0 {
            self.hidden_depth += 1;
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.hidden_depth = self.hidden_depth.saturating_sub(1);
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        if self.hidden_depth > 0 {
            return ControlFlow::Continue(());
        }
        if let TableFactor::Table { name, alias, .. } = factor {
            let single = match name.0.as_slice() {
                [ObjectNamePart::Identifier(i)] => i.value.to_lowercase() == self.old,
                _ => false,
            };
            if single {
                let shown = name.0[0]
                    .as_ident()
                    .cloned()
                    .unwrap_or_else(|| Ident::new(&self.old));
                *name = ObjectName::from(vec![Ident::new(&self.new)]);
                if alias.is_none() {
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: shown,
                        columns: vec![],
                        at: None,
                    });
                }
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
    fn an_inner_cte_of_an_outer_name_gets_its_own() {
        assert_eq!(
            rewritten("WITH t AS (SELECT 1 AS a) SELECT * FROM t, (WITH t AS (SELECT a + 1 AS a FROM t) SELECT t.a FROM t) x"),
            "WITH t AS (SELECT 1 AS a) SELECT * FROM t, (WITH t__basalt_cte_1 AS (SELECT a + 1 AS a FROM t) SELECT t.a FROM t__basalt_cte_1 AS t) x"
        );
        // A recursive inner CTE reads itself, not the outer one.
        assert_eq!(
            rewritten("WITH RECURSIVE x AS (SELECT 1 AS a UNION SELECT a + 1 FROM x WHERE a < 3) SELECT * FROM x WHERE a IN (WITH RECURSIVE x AS (SELECT 5 AS a UNION SELECT a + 2 FROM x AS r WHERE a < 9) SELECT a FROM x)"),
            "WITH RECURSIVE x AS (SELECT 1 AS a UNION SELECT a + 1 FROM x WHERE a < 3) SELECT * FROM x WHERE a IN (WITH RECURSIVE x__basalt_cte_1 AS (SELECT 5 AS a UNION SELECT a + 2 FROM x__basalt_cte_1 AS r WHERE a < 9) SELECT a FROM x__basalt_cte_1 AS x)"
        );
        let kept = "WITH t AS (SELECT 1) SELECT * FROM (WITH u AS (SELECT 2) SELECT * FROM u) x, t";
        assert_eq!(rewritten(kept), kept);
    }
}
