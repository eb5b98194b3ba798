//! A transaction's consistent read view (InnoDB's REPEATABLE READ): every table's published
//! version as it was at one moment — pinned, and its files kept from deletion — which the
//! session reads (and its writes build on) until the transaction ends. The transaction takes it
//! at its first statement that reads or writes tables, or at once with `START TRANSACTION WITH
//! CONSISTENT SNAPSHOT` (what `mysqldump --single-transaction` sends): a dump during loads thus
//! sees all of its tables at one point, each load in every table it touched or in none.

use crate::catalog_provider::Services;
use basalt_catalog::{TableId, TableMeta};
use basalt_storage::ReadGuard;
use std::collections::HashMap;
use std::sync::Arc;

/// The tables a session reads while its snapshot lasts.
#[derive(Debug)]
pub struct ReadSnapshot {
    /// By the catalog's keys of their database and name (`lower_case_table_names`).
    tables: HashMap<(String, String), Arc<TableMeta>>,
    by_id: HashMap<TableId, Arc<TableMeta>>,
    name_case: basalt_common::TableNameCase,
    /// Keeps the pinned versions' files until the snapshot ends.
    guard: Arc<ReadGuard>,
}

impl ReadSnapshot {
    /// Every table of every database, as published now.
    pub fn take(services: &Services) -> ReadSnapshot {
        // Registered as a reader first, so that nothing published before is deleted.
        let guard = Arc::new(services.storage.begin_read());
        let catalog = &services.catalog;
        let name_case = catalog.table_name_case();
        let all: Vec<Arc<TableMeta>> = catalog
            .databases()
            .into_iter()
            .flat_map(|db| catalog.tables(&db.name).unwrap_or_default())
            .collect();
        let by_id = all.iter().map(|t| (t.id, t.clone())).collect();
        let tables = all
            .into_iter()
            .map(|t| ((name_case.key(&t.database), name_case.key(&t.name)), t))
            .collect();
        ReadSnapshot {
            tables,
            by_id,
            name_case,
            guard,
        }
    }

    /// The pinned version of a table (None for one created after the snapshot).
    pub fn table(&self, database: &str, name: &str) -> Option<(Arc<TableMeta>, Arc<ReadGuard>)> {
        self.tables
            .get(&(self.name_case.key(database), self.name_case.key(name)))
            .map(|t| (t.clone(), self.guard.clone()))
    }

    /// The pinned version of a table by id (None for one created after the snapshot).
    pub fn table_by_id(&self, id: TableId) -> Option<Arc<TableMeta>> {
        self.by_id.get(&id).cloned()
    }
}
