//! Basalt's catalog as DataFusion sees it: one catalog `def` whose schemas are the databases (plus
//! `information_schema`), each table a [`BasaltTable`] over a snapshot of its tablets.

use crate::information_schema::InformationSchema;
use crate::session::SessionInfo;
use async_trait::async_trait;
use basalt_catalog::Catalog;
use basalt_common::df_error::to_df;
use basalt_load::LoadDir;
use basalt_query::BasaltTable;
use basalt_storage::StorageEngine;
use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider, TableProvider};
use datafusion::common::Result;
use std::sync::Arc;

pub const INFORMATION_SCHEMA: &str = "information_schema";

/// Everything a provider needs from the server.
#[derive(Clone)]
pub struct Services {
    pub catalog: Arc<dyn Catalog>,
    pub storage: Arc<StorageEngine>,
    /// Where `local(...)` may read files; None disables it.
    pub load_dir: Option<Arc<LoadDir>>,
    pub workload: Arc<basalt_workload::WorkloadManager>,
    pub processes: Arc<crate::processes::ProcessList>,
    pub profiles: Arc<crate::profile::ProfileStore>,
    /// Scale-out: the backends holding the tablets (None on a single node).
    pub cluster: Option<Arc<basalt_dist::Cluster>>,
}

#[derive(Debug)]
pub struct BasaltCatalogList {
    catalog: Arc<BasaltCatalogProvider>,
}

impl BasaltCatalogList {
    pub fn new(services: Services, session: Arc<SessionInfo>) -> BasaltCatalogList {
        BasaltCatalogList {
            catalog: Arc::new(BasaltCatalogProvider { services, session }),
        }
    }
}

impl CatalogProviderList for BasaltCatalogList {
    fn register_catalog(
        &self,
        _name: String,
        _catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        None
    }

    fn catalog_names(&self) -> Vec<String> {
        vec!["def".to_string()]
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        (name == "def").then(|| self.catalog.clone() as Arc<dyn CatalogProvider>)
    }
}

struct BasaltCatalogProvider {
    services: Services,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for BasaltCatalogProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BasaltCatalogProvider")
    }
}

impl CatalogProvider for BasaltCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .services
            .catalog
            .databases()
            .into_iter()
            .map(|d| d.name)
            .collect();
        names.push(INFORMATION_SCHEMA.to_string());
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if name.eq_ignore_ascii_case(INFORMATION_SCHEMA) {
            return Some(Arc::new(InformationSchema::new(
                self.services.clone(),
                self.session.clone(),
            )));
        }
        // The database as stored (the catalog matches `name` as `lower_case_table_names` says).
        let Some(database) = stored_database(self.services.catalog.as_ref(), name) else {
            let system = crate::system_databases::system_database(name)?;
            return Some(Arc::new(crate::system_databases::SystemDatabase::new(
                system,
                self.services.clone(),
                self.session.clone(),
            )));
        };
        Some(Arc::new(DatabaseSchema {
            services: self.services.clone(),
            database,
            session: self.session.clone(),
        }))
    }
}

/// The stored spelling of the database `name` names, if it exists.
pub(crate) fn stored_database(catalog: &dyn Catalog, name: &str) -> Option<String> {
    if !catalog.database_exists(name) {
        return None;
    }
    let case = catalog.table_name_case();
    Some(match case {
        basalt_common::TableNameCase::Insensitive => catalog
            .databases()
            .into_iter()
            .map(|d| d.name)
            .find(|d| case.same(d, name))
            .unwrap_or_else(|| name.to_string()),
        _ => case.stored(name),
    })
}

struct DatabaseSchema {
    services: Services,
    database: String,
    session: Arc<SessionInfo>,
}

impl std::fmt::Debug for DatabaseSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseSchema({})", self.database)
    }
}

#[async_trait]
impl SchemaProvider for DatabaseSchema {
    fn table_names(&self) -> Vec<String> {
        self.services
            .catalog
            .tables(&self.database)
            .map(|ts| {
                ts.iter()
                    .filter(|t| crate::temporary_tables::listed(&t.name))
                    .map(|t| t.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        // `t PARTITION (p1,p2)`: the table with only those partitions.
        let (name, selected) = crate::partition_selection::split(name);
        // Inside START TRANSACTION WITH CONSISTENT SNAPSHOT: the version pinned then.
        let pinned = self
            .session
            .snapshot
            .lock()
            .as_ref()
            .and_then(|s| s.table(&self.database, name));
        // Inside a transaction that wrote: its staged copies, written through its storage.
        let staged = self.session.transaction.staged_writes();
        let storage = match &staged {
            Some(writes) => writes.storage.clone(),
            None => self.services.storage.clone(),
        };
        let (found, guard) = match (pinned, staged) {
            (_, Some(writes)) => (
                writes.table(&self.database, name),
                Arc::new(self.services.storage.begin_read()),
            ),
            (Some((meta, guard)), None) => (Ok(meta), guard),
            (None, None) => {
                // Register as a reader before taking the snapshot, so its files outlive this
                // query.
                let guard = Arc::new(self.services.storage.begin_read());
                (self.services.catalog.table(&self.database, name), guard)
            }
        };
        let found = match selected {
            Some(partitions) => {
                found.and_then(|meta| crate::partition_selection::select(meta, &partitions))
            }
            None => found,
        };
        match found {
            Ok(meta) => Ok(Some(Arc::new(BasaltTable::new(
                meta,
                storage,
                guard,
                self.session.generated_ids.clone(),
                &self
                    .session
                    .vars
                    .read()
                    .get("time_zone")
                    .map(|v| v.as_text())
                    .unwrap_or_else(|_| "SYSTEM".into()),
            )))),
            Err(basalt_common::BasaltError::UnknownTable(_)) => Ok(None),
            Err(e) => Err(to_df(e)),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        let (name, _) = crate::partition_selection::split(name);
        self.services.catalog.table(&self.database, name).is_ok()
    }
}
