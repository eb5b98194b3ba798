//! The tables as one open transaction sees them: the versions of its read view (the
//! transaction's [`ReadSnapshot`]; the newest published ones for tables it does not hold),
//! except that each table the transaction wrote is its own copy — the version it first wrote
//! on (`base`, from the read view) plus the rowsets and delete bitmaps its statements staged. Storage publishes to this view
//! (through the transaction's own storage engine), so every write path stages instead of
//! publishing, and the session's reads of these tables see its own writes.

use crate::read_snapshot::ReadSnapshot;
use basalt_catalog::{
    Catalog, CompactedRowset, DatabaseMeta, LoadJobRecord, NewRowset, RowsetMeta, TableId,
    TableMeta, TabletCatalog, TabletId, TabletMeta,
};
use basalt_common::clock::now_ms;
use basalt_common::{BasaltError, Result};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// One table the transaction wrote.
#[derive(Debug, Clone)]
pub(crate) struct StagedTable {
    /// The published version the transaction's first write to the table was based on.
    pub base: Arc<TableMeta>,
    /// `base` with the transaction's changes.
    pub current: Arc<TableMeta>,
}

impl StagedTable {
    /// The rowsets the transaction wrote that are still part of the table, with their tablets.
    pub fn staged_rowsets(&self) -> Vec<Arc<RowsetMeta>> {
        let published = rowset_ids(&self.base);
        self.current
            .tablets()
            .flat_map(|(_, t)| t.rowsets.iter())
            .filter(|r| !published.contains(&r.id))
            .cloned()
            .collect()
    }
}

/// Every rowset id of a table.
pub(crate) fn rowset_ids(table: &TableMeta) -> HashSet<u64> {
    table
        .tablets()
        .flat_map(|(_, t)| t.rowsets.iter().map(|r| r.id))
        .collect()
}

/// The catalog as the transaction's writes and reads see it.
pub(crate) struct Overlay {
    catalog: Arc<dyn Catalog>,
    /// The transaction's read view.
    snapshot: Arc<ReadSnapshot>,
    /// By table id, in the order of first write.
    tables: Mutex<BTreeMap<TableId, StagedTable>>,
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("tables", &self.tables.lock().len())
            .finish()
    }
}

impl Overlay {
    pub fn new(catalog: Arc<dyn Catalog>, snapshot: Arc<ReadSnapshot>) -> Overlay {
        Overlay {
            catalog,
            snapshot,
            tables: Mutex::new(BTreeMap::new()),
        }
    }

    /// The tables written so far.
    pub fn staged(&self) -> Vec<StagedTable> {
        self.tables.lock().values().cloned().collect()
    }

    /// Forgets every staged table (after COMMIT or ROLLBACK), returning them.
    pub fn take(&self) -> Vec<StagedTable> {
        std::mem::take(&mut *self.tables.lock())
            .into_values()
            .collect()
    }

    /// A table as the transaction sees it: its staged copy, else its version in the read
    /// view, else `newest`.
    fn visible(&self, newest: Arc<TableMeta>) -> Arc<TableMeta> {
        if let Some(staged) = self.tables.lock().get(&newest.id) {
            return staged.current.clone();
        }
        self.snapshot.table_by_id(newest.id).unwrap_or(newest)
    }

    /// The table's staged entry, created from the published version on first write.
    fn entry<'a>(
        &self,
        tables: &'a mut BTreeMap<TableId, StagedTable>,
        table_id: TableId,
    ) -> Result<&'a mut StagedTable> {
        match tables.entry(table_id) {
            std::collections::btree_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::btree_map::Entry::Vacant(e) => {
                let base = self
                    .snapshot
                    .table_by_id(table_id)
                    .or_else(|| self.catalog.table_by_id(table_id))
                    .ok_or_else(|| {
                        BasaltError::UnknownTable(format!(
                            "table id {table_id} (dropped during the write)"
                        ))
                    })?;
                Ok(e.insert(StagedTable {
                    base: base.clone(),
                    current: base,
                }))
            }
        }
    }
}

fn find_tablet(table: &mut TableMeta, id: TabletId) -> Result<&mut TabletMeta> {
    table
        .tablets_mut()
        .find(|t| t.id == id)
        .ok_or_else(|| BasaltError::Storage(format!("tablet {id} was dropped during the write")))
}

impl TabletCatalog for Overlay {
    fn databases(&self) -> Vec<DatabaseMeta> {
        self.catalog.databases()
    }

    fn tables(&self, database: &str) -> Result<Vec<Arc<TableMeta>>> {
        Ok(self
            .catalog
            .tables(database)?
            .into_iter()
            .map(|t| self.visible(t))
            .collect())
    }

    fn table(&self, database: &str, name: &str) -> Result<Arc<TableMeta>> {
        if let Some((pinned, _)) = self.snapshot.table(database, name) {
            return Ok(self.visible(pinned));
        }
        Ok(self.visible(self.catalog.table(database, name)?))
    }

    fn table_by_id(&self, id: TableId) -> Option<Arc<TableMeta>> {
        if let Some(staged) = self.tables.lock().get(&id) {
            return Some(staged.current.clone());
        }
        self.snapshot
            .table_by_id(id)
            .or_else(|| self.catalog.table_by_id(id))
    }

    fn allocate_id(&self) -> u64 {
        self.catalog.allocate_id()
    }

    fn check_versions(&self, tablet: &TabletMeta) -> Result<()> {
        self.catalog.check_versions(tablet)
    }

    fn reserve_auto_increment(&self, table_id: TableId, count: u64, at_least: u64) -> Result<u64> {
        self.catalog
            .reserve_auto_increment(table_id, count, at_least)
    }

    /// Stages a statement's rowsets: they join the transaction's copy of the table. A label
    /// (`job`) is not recorded: the transaction, not the statement, publishes.
    fn publish_load(
        &self,
        table_id: TableId,
        rowsets: Vec<NewRowset>,
        _job: Option<LoadJobRecord>,
    ) -> Result<Arc<TableMeta>> {
        let mut tables = self.tables.lock();
        let staged = self.entry(&mut tables, table_id)?;
        let mut new = (*staged.current).clone();
        let created = now_ms();
        for nr in rowsets {
            if nr.schema_version != new.schema_version {
                return Err(BasaltError::ConcurrentDdl(format!(
                    "table {} was altered during the write; nothing was written",
                    new.name
                )));
            }
            let id = self.catalog.allocate_id();
            let tablet = find_tablet(&mut new, nr.tablet_id)?;
            self.catalog.check_versions(tablet)?;
            tablet.mark_stale(nr.missing_replicas);
            let version = tablet.version() + 1;
            tablet.rowsets.push(Arc::new(RowsetMeta {
                id,
                tablet_id: tablet.id,
                start_version: version,
                version,
                segments_overlap: nr.segments.len() > 1,
                segments: nr.segments,
                created_ms: created,
            }));
            tablet.delete_bitmaps.extend(nr.delete_bitmaps);
        }
        let new = Arc::new(new);
        staged.current = new.clone();
        Ok(new)
    }

    fn replace_rowsets(
        &self,
        _table_id: TableId,
        _compacted: CompactedRowset,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)> {
        Err(BasaltError::Internal(
            "a transaction's storage does not compact".into(),
        ))
    }

    /// Stages a rewrite (DELETE or UPDATE on a Duplicate table): the copy becomes `new`.
    /// Returns only rowsets the transaction itself staged: the published ones stay until COMMIT.
    fn alter_table(
        &self,
        based_on: &TableMeta,
        new: TableMeta,
    ) -> Result<(Arc<TableMeta>, Vec<Arc<RowsetMeta>>)> {
        let mut tables = self.tables.lock();
        let staged = self.entry(&mut tables, based_on.id)?;
        let ids = |t: &TableMeta| -> Vec<(TabletId, Vec<u64>)> {
            t.tablets()
                .map(|(_, t)| (t.id, t.rowsets.iter().map(|r| r.id).collect()))
                .collect()
        };
        let current = &staged.current;
        if current.schema_version != based_on.schema_version
            || current.schema_version != new.schema_version
            || current.name != new.name
            || ids(current) != ids(based_on)
        {
            return Err(BasaltError::ConcurrentDdl(format!(
                "table {} changed while it was being rewritten",
                current.name
            )));
        }
        let kept = rowset_ids(&new);
        let published = rowset_ids(&staged.base);
        let removed = current
            .tablets()
            .flat_map(|(_, t)| t.rowsets.iter())
            .filter(|r| !kept.contains(&r.id) && !published.contains(&r.id))
            .cloned()
            .collect();
        let new = Arc::new(new);
        staged.current = new.clone();
        Ok((new, removed))
    }

    fn referenced_segments(&self) -> HashSet<String> {
        self.catalog.referenced_segments()
    }

    /// AUTO PARTITION inside a transaction: the partitions are created in the catalog at
    /// once (empty, as a failed load leaves them in Doris too) and join the transaction's copy
    /// of the table, and the version it is based on, so COMMIT finds the published table as
    /// the transaction last saw it.
    fn add_auto_partitions(
        &self,
        table_id: TableId,
        partitions: Vec<(String, basalt_catalog::PartitionBound)>,
    ) -> Result<Arc<TableMeta>> {
        let published = self.catalog.add_auto_partitions(table_id, partitions)?;
        let mut tables = self.tables.lock();
        let staged = self.entry(&mut tables, table_id)?;
        if published.schema_version != staged.current.schema_version {
            return Err(BasaltError::ConcurrentDdl(format!(
                "table {} was altered during the write; nothing was written",
                published.name
            )));
        }
        staged.base = Arc::new(with_new_partitions(&staged.base, &published));
        staged.current = Arc::new(with_new_partitions(&staged.current, &published));
        Ok(staged.current.clone())
    }
}

/// `mine` with the partitions `published` has and it lacks, in `published`'s order.
fn with_new_partitions(mine: &TableMeta, published: &TableMeta) -> TableMeta {
    let mut table = mine.clone();
    let mut partitions = Vec::with_capacity(published.partitions.len());
    for p in &published.partitions {
        match mine.partitions.iter().find(|m| m.id == p.id) {
            Some(m) => partitions.push(m.clone()),
            None => partitions.push(p.clone()),
        }
    }
    // Partitions dropped meanwhile stay in the copy: COMMIT finds the conflict.
    for m in &mine.partitions {
        if !published.partitions.iter().any(|p| p.id == m.id) {
            partitions.push(m.clone());
        }
    }
    table.partitions = partitions;
    table
}
