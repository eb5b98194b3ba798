//! `SELECT .. FROM t PARTITION (p1, p2)` (MySQL; Doris also writes `PARTITIONS (p1, p2)` and
//! `PARTITION p1`, which the lexer reads as the first form): the scan reads only the rows of
//! the named partitions. Before planning, [`rewrite`] moves the partition list into the table's
//! name (`t PARTITION (p1,p2)`, aliased as `t` so its columns keep their qualifier); the
//! catalog provider reads it back with [`split`] and gives the planner the table with only
//! those partitions ([`select`]), so pruning, the server's scans and a cluster's tablet tasks
//! all see just them. A name the table has no partition of is MySQL's error 1735.

use basalt_catalog::TableMeta;
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::{
    Ident, ObjectNamePart, Statement, TableAlias, TableFactor, VisitMut, VisitorMut,
};
use std::ops::ControlFlow;
use std::sync::Arc;

/// What joins a table's name and its partition list in the rewritten name.
const MARK: &str = " PARTITION (";

/// Moves each table's `PARTITION (..)` list into its name (see the module doc).
pub fn rewrite(stmt: &mut Statement) {
    let _ = stmt.visit(&mut Selections);
}

struct Selections;

impl VisitorMut for Selections {
    type Break = ();

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table {
            name,
            alias,
            partitions,
            ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        if partitions.is_empty() {
            return ControlFlow::Continue(());
        }
        let Some(ObjectNamePart::Identifier(table)) = name.0.last_mut() else {
            return ControlFlow::Continue(());
        };
        if alias.is_none() {
            *alias = Some(TableAlias {
                explicit: true,
                name: table.clone(),
                columns: vec![],
                at: None,
            });
        }
        let names: Vec<String> = partitions.drain(..).map(|p| p.value).collect();
        *table = Ident::with_quote('`', format!("{}{MARK}{})", table.value, names.join(",")));
        ControlFlow::Continue(())
    }
}

/// A table name as [`rewrite`] left it: the table's own name and the partitions it selects
/// (None for a name without a selection).
pub fn split(name: &str) -> (&str, Option<Vec<&str>>) {
    match name
        .split_once(MARK)
        .and_then(|(table, rest)| Some((table, rest.strip_suffix(')')?)))
    {
        Some((table, list)) => (table, Some(list.split(',').collect())),
        None => (name, None),
    }
}

/// `meta` with only the partitions `names` names (without regard to case, as MySQL matches
/// partition names); MySQL's error 1735 for a name it has no partition of. Names marked as
/// temporary (Doris's `TEMPORARY PARTITION (..)`, see [`basalt_sql::temporary_partition`])
/// select temporary partitions, which the scan then reads as the table's partitions.
pub fn select(meta: Arc<TableMeta>, names: &[&str]) -> Result<Arc<TableMeta>> {
    let temporary: Vec<&str> = names
        .iter()
        .filter_map(|n| basalt_sql::temporary_partition(n))
        .collect();
    let (pool, names) = if temporary.is_empty() {
        (&meta.partitions, names.to_vec())
    } else if temporary.len() == names.len() {
        (&meta.temporary_partitions, temporary)
    } else {
        return Err(BasaltError::NotSupported(
            "reading formal and temporary partitions in one partition list".into(),
        ));
    };
    if let Some(unknown) = names
        .iter()
        .find(|n| !pool.iter().any(|p| p.name.eq_ignore_ascii_case(n)))
    {
        return Err(BasaltError::UnknownPartition(format!(
            "{unknown}' in table '{}",
            meta.name
        )));
    }
    let mut selected = (*meta).clone();
    selected.partitions = pool
        .iter()
        .filter(|p| names.iter().any(|n| p.name.eq_ignore_ascii_case(n)))
        .cloned()
        .collect();
    selected.temporary_partitions.clear();
    Ok(Arc::new(selected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_travels_in_the_table_name() {
        let Ok(basalt_sql::Statement::Standard(mut stmt)) =
            basalt_sql::parse_one("SELECT tp.k FROM db.tp PARTITION (p1, P3) WHERE k > 1")
        else {
            panic!("not parsed");
        };
        rewrite(&mut stmt);
        assert_eq!(
            stmt.to_string(),
            "SELECT tp.k FROM db.`tp PARTITION (p1,P3)` AS tp WHERE k > 1"
        );
        assert_eq!(
            split("tp PARTITION (p1,P3)"),
            ("tp", Some(vec!["p1", "P3"]))
        );
        assert_eq!(split("tp"), ("tp", None));
    }
}
