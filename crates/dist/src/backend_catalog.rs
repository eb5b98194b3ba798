//! A backend holds no catalog: the frontend's catalog says which rowsets are visible and sends
//! them with every scan. Storage still asks for a [`TabletCatalog`]; this one holds nothing,
//! and the publishing calls (which only a frontend makes) fail.

use basalt_catalog::{
    CompactedRowset, DatabaseMeta, LoadJobRecord, NewRowset, RowsetMeta, TableId, TableMeta,
    TabletCatalog, TabletMeta,
};
use basalt_common::{BasaltError, Result};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct BackendCatalog {
    next_id: AtomicU64,
}

fn frontend_only(what: &str) -> BasaltError {
    BasaltError::Internal(format!("{what} is the frontend's work; this is a backend"))
}

impl TabletCatalog for BackendCatalog {
    fn databases(&self) -> Vec<DatabaseMeta> {
        Vec::new()
    }

    fn tables(&self, database: &str) -> Result<Vec<Arc<TableMeta>>> {
        Err(BasaltError::UnknownDatabase(database.to_string()))
    }

    fn table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>> {
        Err(BasaltError::UnknownTable(format!("{database}.{name}")))
    }

    fn table_by_id(&self, _id: TableId) -> Option<Arc<TableMeta>> {
        None
    }

    fn allocate_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn check_versions(&self, _tablet: &TabletMeta) -> Result<()> {
        Ok(())
    }

    fn reserve_auto_increment(&self, _table: TableId, _count: u64, _at_least: u64) -> Result<u64> {
        Err(frontend_only("AUTO_INCREMENT"))
    }

    fn publish_load(
        &self,
        _table_id: TableId,
        _rowsets: Vec<NewRowset>,
        _job: Option<LoadJobRecord>,
    ) -> Result<Arc<TableMeta>> {
        Err(frontend_only("publishing a load"))
    }

    fn replace_rowsets(
        &self,
        _table_id: TableId,
        _compacted: CompactedRowset,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)> {
        Err(frontend_only("publishing a compaction"))
    }

    fn alter_table(
        &self,
        _based_on: &TableMeta,
        _new: TableMeta,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)> {
        Err(frontend_only("ALTER TABLE"))
    }

    fn referenced_segments(&self) -> HashSet<String> {
        HashSet::new()
    }
}
