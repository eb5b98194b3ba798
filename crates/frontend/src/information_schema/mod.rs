//! `information_schema`, computed from the catalog, the grants, the workload groups and the
//! session when queried, with MySQL 8.0's table and column names: the catalog's objects
//! (`catalog_tables`), their indexes and constraints (`key_tables`), the server's fixed facts and live state (`server_tables`), privileges
//! (`privilege_tables`), stored procedures (`routine_tables`), the objects Basalt does not
//! have (`empty_tables`, so tools find the tables they probe, empty), and Basalt's own workload
//! and process tables.

mod catalog_tables;
mod empty_tables;
mod key_tables;
mod privilege_tables;
mod routine_tables;
mod server_tables;

pub(crate) use privilege_tables::privilege_names;
pub(crate) use server_tables::{status_rows, CHARACTER_SETS, COLLATIONS};

use crate::catalog_provider::Services;
use crate::session::SessionInfo;
use crate::show::{Col, ResultBuilder};
use async_trait::async_trait;
use datafusion::catalog::{MemTable, SchemaProvider, TableProvider};
use datafusion::common::Result;
use std::sync::Arc;

/// The kind of an information_schema column: text or integer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Text,
    Int,
}

const T: Kind = Kind::Text;
const I: Kind = Kind::Int;

/// An information_schema table's name (lower case) and its columns as MySQL spells them.
pub(crate) struct TableSpec {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
}

impl TableSpec {
    /// An empty result with this table's columns.
    pub fn builder(&self) -> ResultBuilder {
        let cols: Vec<Col> = self
            .columns
            .iter()
            .map(|(name, kind)| match kind {
                Kind::Text => Col::str(name),
                Kind::Int => Col::int(name),
            })
            .collect();
        ResultBuilder::new(&cols)
    }
}

/// Basalt's own tables, whose columns their modules define.
const BASALT_TABLES: &[&str] = &[
    "workload_groups",
    "workload_group_resource_usage",
    "workload_policy",
    "active_queries",
];

/// Every table, in lower case, as SHOW TABLES FROM information_schema lists them.
pub(crate) fn table_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = [
        catalog_tables::SPECS,
        key_tables::SPECS,
        server_tables::SPECS,
        privilege_tables::SPECS,
        routine_tables::SPECS,
        empty_tables::SPECS,
    ]
    .iter()
    .flat_map(|specs| specs.iter().map(|s| s.name))
    .chain(BASALT_TABLES.iter().copied())
    .collect();
    names.sort_unstable();
    names
}

/// The columns of a table with MySQL's columns, spelled as MySQL spells them (upper case).
pub(crate) fn column_spellings(table: &str) -> &'static [(&'static str, Kind)] {
    let table = table.to_lowercase();
    [
        catalog_tables::SPECS,
        key_tables::SPECS,
        server_tables::SPECS,
        privilege_tables::SPECS,
        routine_tables::SPECS,
        empty_tables::SPECS,
    ]
    .iter()
    .flat_map(|specs| specs.iter())
    .find(|s| s.name == table)
    .map_or(&[], |s| s.columns)
}

/// A computed system table as DataFusion reads it (column names in lower case, as unquoted
/// identifiers resolve).
pub(crate) fn in_memory(rows: ResultBuilder) -> Result<Arc<dyn TableProvider>> {
    let (schema, batch) = rows.lowercase_names().finish();
    Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
}

pub struct InformationSchema {
    services: Services,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for InformationSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InformationSchema")
    }
}

impl InformationSchema {
    pub fn new(services: Services, session: Arc<SessionInfo>) -> Self {
        InformationSchema { services, session }
    }

    fn access(&self) -> crate::access::Access {
        crate::access::access(self.services.catalog.as_ref(), &self.session)
    }

    fn build(&self, name: &str) -> Option<ResultBuilder> {
        if let Some(b) = catalog_tables::build(self, name) {
            return Some(b);
        }
        if let Some(b) = key_tables::build(self, name) {
            return Some(b);
        }
        if let Some(b) = server_tables::build(self, name) {
            return Some(b);
        }
        if let Some(b) = privilege_tables::build(self, name) {
            return Some(b);
        }
        if let Some(b) = routine_tables::build(self, name) {
            return Some(b);
        }
        if let Some(spec) = empty_tables::SPECS.iter().find(|s| s.name == name) {
            return Some(spec.builder());
        }
        Some(match name {
            "workload_groups" => crate::workload_groups::rows(&self.services.workload, None),
            "workload_group_resource_usage" => {
                crate::workload_groups::resource_usage(&self.services)
            }
            "workload_policy" => crate::workload_policies::rows(&self.services.workload),
            "active_queries" => crate::process_admin::active_queries(
                &self.services,
                self.access().viewer().as_deref(),
            ),
            _ => return None,
        })
    }
}

#[async_trait]
impl SchemaProvider for InformationSchema {
    fn table_names(&self) -> Vec<String> {
        table_names().into_iter().map(str::to_string).collect()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        self.build(&name.to_lowercase()).map(in_memory).transpose()
    }

    fn table_exist(&self, name: &str) -> bool {
        table_names().contains(&name.to_lowercase().as_str())
    }
}
