//! The Basalt tables a logical plan scans, each under the name the plan reads its columns by
//! (the table's name, or the alias written right on it): what the analyzer rules that need a
//! column's catalog definition (its inverted index, its ENUM members) look up.

use basalt_catalog::TableMeta;
use datafusion::catalog::default_table_source::source_as_provider;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::Result;
use datafusion::logical_expr::{LogicalPlan, TableScan};
use std::sync::Arc;

/// `(relation name, table)` for every Basalt table scan of `plan`, subqueries included.
pub(crate) fn scanned_tables(plan: &LogicalPlan) -> Result<Vec<(String, Arc<TableMeta>)>> {
    let mut found = Vec::new();
    plan.apply_with_subqueries(|node| {
        let scanned = match node {
            LogicalPlan::TableScan(scan) => Some((scan, scan.table_name.table())),
            LogicalPlan::SubqueryAlias(alias) => match alias.input.as_ref() {
                LogicalPlan::TableScan(scan) => Some((scan, alias.alias.table())),
                _ => None,
            },
            _ => None,
        };
        if let Some((scan, relation)) = scanned {
            if let Some(meta) = table_of(scan) {
                found.push((relation.to_string(), meta));
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(found)
}

fn table_of(scan: &TableScan) -> Option<Arc<TableMeta>> {
    let provider = source_as_provider(&scan.source).ok()?;
    let table = provider.downcast_ref::<crate::BasaltTable>()?;
    Some(table.meta.clone())
}
