//! The storage engine handle: the data directory, the catalog it publishes to, load creation,
//! reading a tablet with its key model applied, and removal of files nothing references.

use crate::column_cache::ColumnCache;
use crate::compaction::policy::CompactionPolicy;
use crate::compaction::scheduler::CompactionScheduler;
use crate::delete_bitmap;
use crate::files::{list_files, remove_empty_dirs};
use crate::merge::{sort_and_merge, MergeSpec};
use crate::pk_index::PrimaryKeyIndex;
use crate::read_tracker::{ReadGuard, ReadTracker};
use crate::row_cache::RowCache;
use crate::row_store::RowStoreFiles;
use crate::segment::{read_segment, read_segment_where};
use crate::segment_store::SegmentStore;
use crate::storage_err;
use crate::writer::LoadWriter;

/// See [`StorageEngine::rewrite_gate`].
pub type RewriteGate = tokio::sync::RwLock<()>;
use arrow::array::ArrayRef;
use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use basalt_catalog::{
    BackendId, KeysModel, LoadJobRecord, NewRowset, PartitionMeta, SegmentMeta, TableId, TableMeta,
    TabletCatalog, TabletId, TabletMeta,
};
use basalt_common::{BasaltError, Result};
use parking_lot::{Mutex, RwLock};
use roaring::RoaringBitmap;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Selects rows of a batch by its key columns (see [`StorageEngine::read_tablet_merged_where`]).
pub type KeyFilter = dyn Fn(&RecordBatch) -> Result<arrow::array::BooleanArray> + Send + Sync;

/// When a load's writer turns its buffered rows into segments: as soon as one tablet has
/// `rows_per_tablet` rows buffered, or all its tablets together hold `bytes` of Arrow data.
/// Larger segments mean fewer files per scan and longer runs of sorted keys.
#[derive(Debug, Clone, Copy)]
pub struct WriteBufferLimits {
    pub rows_per_tablet: usize,
    pub bytes: usize,
}

pub struct StorageEngine {
    data_dir: PathBuf,
    /// The segment files, as readers outside storage reach them.
    segments: Arc<SegmentStore>,
    catalog: Arc<dyn TabletCatalog>,
    write_buffer: WriteBufferLimits,
    /// Decoded row groups of segments, shared by all scans.
    pub(crate) column_cache: Arc<ColumnCache>,
    /// Primary-key indexes of Unique-key tablets, built on first use. A publish takes a tablet's
    /// index out while it updates it (holding the table lock); lookups that find it missing
    /// wait for that lock.
    /// Looked up by every point query: hashed with foldhash, not SipHash.
    pub(crate) pk_indexes: RwLock<foldhash::HashMap<TabletId, PrimaryKeyIndex>>,
    /// Encoded rows of row-store tables, for point lookups.
    pub(crate) row_cache: Arc<RowCache>,
    /// Open row-store files.
    pub(crate) row_files: RowStoreFiles,
    /// Defers deleting files that running queries may still read.
    pub(crate) reads: Arc<ReadTracker>,
    /// The rowsets recent compactions made, and of what.
    pub(crate) lineage: Arc<crate::compaction_lineage::CompactionLineage>,
    /// Serializes the publish step of merge-on-write loads (and Unique compactions) per table.
    table_locks: Mutex<HashMap<TableId, Arc<Mutex<()>>>>,
    rewrite_gates: Mutex<HashMap<TableId, Arc<RewriteGate>>>,
    /// The background compaction threads, once started.
    compaction: OnceLock<CompactionScheduler>,
    /// Scale-out frontend: the backends that hold the tablets' segment files.
    remote: OnceLock<Arc<dyn crate::remote::RemoteSegments>>,
    /// Whether new segments (loads and compactions on this node) hold JSON as binary documents;
    /// text until queries read the binary form directly. Readers take both forms.
    binary_json: std::sync::atomic::AtomicBool,
}

/// One tablet's part of a merge-on-write load: its new segments and their key columns.
pub struct UniqueTabletWrite {
    pub tablet_id: TabletId,
    pub segments: Vec<SegmentMeta>,
    /// Scale-out: the tablet's replicas that do not hold the segments (marked stale).
    pub missing_replicas: Vec<BackendId>,
    /// Scale-out: the tablet's replicas when the load began (see `NewRowset::seen_replicas`).
    pub seen_replicas: Vec<BackendId>,
    pub keys: Vec<Vec<ArrayRef>>,
    /// Rows of each segment that delete their key: hidden at once, and forgotten by the index.
    pub tombstones: Vec<Vec<u32>>,
}

impl std::fmt::Debug for StorageEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageEngine")
            .field("data_dir", &self.data_dir)
            .finish()
    }
}

impl StorageEngine {
    /// Opens the engine and deletes files that no published rowset references (left by loads
    /// that were interrupted before they published).
    pub fn open(
        data_dir: &Path,
        catalog: Arc<dyn TabletCatalog>,
        write_buffer: WriteBufferLimits,
        column_cache_bytes: usize,
        row_cache_bytes: usize,
    ) -> Result<Arc<StorageEngine>> {
        let engine = Self::open_files(
            data_dir,
            catalog,
            write_buffer,
            column_cache_bytes,
            row_cache_bytes,
        )?;
        let removed = engine.collect_garbage()?;
        if removed > 0 {
            tracing::info!("removed {removed} unreferenced segment files");
        }
        Ok(engine)
    }

    /// Opens a backend's engine: the segment files of the tablets it holds, which the
    /// frontend's catalog (not this node's) references, so nothing is collected here.
    pub fn open_backend(
        data_dir: &Path,
        catalog: Arc<dyn TabletCatalog>,
        column_cache_bytes: usize,
        row_cache_bytes: usize,
    ) -> Result<Arc<StorageEngine>> {
        let write_buffer = WriteBufferLimits {
            rows_per_tablet: 1,
            bytes: 1,
        };
        Self::open_files(
            data_dir,
            catalog,
            write_buffer,
            column_cache_bytes,
            row_cache_bytes,
        )
    }

    fn open_files(
        data_dir: &Path,
        catalog: Arc<dyn TabletCatalog>,
        write_buffer: WriteBufferLimits,
        column_cache_bytes: usize,
        row_cache_bytes: usize,
    ) -> Result<Arc<StorageEngine>> {
        std::fs::create_dir_all(data_dir.join("data"))?;
        let engine = Arc::new(StorageEngine {
            data_dir: data_dir.to_path_buf(),
            segments: Arc::new(SegmentStore::open(data_dir)?),
            catalog,
            write_buffer: WriteBufferLimits {
                rows_per_tablet: write_buffer.rows_per_tablet.max(1),
                bytes: write_buffer.bytes.max(1),
            },
            column_cache: Arc::new(ColumnCache::new(column_cache_bytes)),
            pk_indexes: RwLock::new(foldhash::HashMap::default()),
            row_cache: Arc::new(RowCache::new(row_cache_bytes)),
            row_files: RowStoreFiles::default(),
            table_locks: Mutex::new(HashMap::new()),
            rewrite_gates: Mutex::new(HashMap::new()),
            reads: Arc::new(ReadTracker::default()),
            lineage: Default::default(),
            compaction: OnceLock::new(),
            remote: OnceLock::new(),
            binary_json: Default::default(),
        });
        Ok(engine)
    }

    /// An engine for one SQL transaction's writes: the same files, caches and readers, but
    /// publishing to `catalog` (the transaction's staging view of the tables) and keeping its
    /// own primary-key indexes, table locks and rewrite gates, so what it stages never leaks
    /// into the shared engine's state. It runs no compaction.
    pub fn staging(&self, catalog: Arc<dyn TabletCatalog>) -> Arc<StorageEngine> {
        let engine = StorageEngine {
            data_dir: self.data_dir.clone(),
            segments: self.segments.clone(),
            catalog,
            write_buffer: self.write_buffer,
            column_cache: self.column_cache.clone(),
            pk_indexes: RwLock::new(foldhash::HashMap::default()),
            row_cache: self.row_cache.clone(),
            row_files: RowStoreFiles::default(),
            table_locks: Mutex::new(HashMap::new()),
            rewrite_gates: Mutex::new(HashMap::new()),
            reads: self.reads.clone(),
            lineage: self.lineage.clone(),
            compaction: OnceLock::new(),
            remote: OnceLock::new(),
            binary_json: std::sync::atomic::AtomicBool::new(
                self.json_form() == crate::json_columns::JsonForm::Binary,
            ),
        };
        if let Some(remote) = self.remote() {
            let _ = engine.remote.set(remote.clone());
        }
        Arc::new(engine)
    }

    /// Whether tablet `current` differs from `base` (an older version of it) only by the
    /// compactions of this process (see `compaction_lineage`).
    pub fn only_compacted(&self, base: &TabletMeta, current: &TabletMeta) -> bool {
        self.lineage.only_compacted(base, current)
    }

    /// Starts background compaction with `threads` threads (0: none), waking after every publish
    /// and every `interval`. Later calls do nothing.
    pub fn start_compaction(
        self: &Arc<Self>,
        threads: usize,
        interval: Duration,
        policy: CompactionPolicy,
    ) -> Result<()> {
        if self.compaction.get().is_some() {
            return Ok(());
        }
        let scheduler = CompactionScheduler::start(self, threads, interval, policy)?;
        // Set first, then notify so the threads look at tablets loaded before the start.
        let _ = self.compaction.set(scheduler);
        self.notify_compaction();
        Ok(())
    }

    /// Tells background compaction that a tablet got a new rowset.
    pub fn notify_compaction(&self) {
        if let Some(s) = self.compaction.get() {
            s.notify();
        }
    }

    /// Stops background compaction (after the compaction in progress).
    pub fn stop_compaction(&self) {
        if let Some(s) = self.compaction.get() {
            s.stop();
        }
    }

    /// Makes this a scale-out frontend's engine: segments are written to and removed from the
    /// backends through `remote`. Set once, at startup, before any load.
    pub fn set_remote(&self, remote: Arc<dyn crate::remote::RemoteSegments>) {
        let _ = self.remote.set(remote);
    }

    /// The backends' segment files, on a scale-out frontend.
    pub fn remote(&self) -> Option<&Arc<dyn crate::remote::RemoteSegments>> {
        self.remote.get()
    }

    /// On a cluster's frontend: asks the backends to delete `files` (with the backends holding
    /// each) once no statement here that may still scan them is running.
    pub(crate) fn remove_remote_when_unread(&self, files: Vec<(Vec<BackendId>, String)>) {
        if let Some(remote) = self.remote().cloned() {
            if !files.is_empty() {
                self.reads.run_when_unread(move || remote.remove(files));
            }
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn catalog(&self) -> &Arc<dyn TabletCatalog> {
        &self.catalog
    }

    pub fn write_buffer(&self) -> WriteBufferLimits {
        self.write_buffer
    }

    /// The decoded column cache scans read segments through.
    pub fn row_cache(&self) -> &Arc<RowCache> {
        &self.row_cache
    }

    pub fn column_cache(&self) -> &Arc<ColumnCache> {
        &self.column_cache
    }

    /// Starts a load into `table` (a snapshot of its definition); nothing is visible until
    /// [`LoadWriter::commit`]. Waits while a rewrite of the table runs; fails with 1412 if the
    /// table's columns changed since the snapshot was taken.
    pub async fn begin_load(self: &Arc<Self>, table: Arc<TableMeta>) -> Result<LoadWriter> {
        let gate = self.rewrite_gate(table.id).read_owned().await;
        self.start_load(table, gate)
    }

    /// [`StorageEngine::begin_load`] for callers that cannot wait: fails with 1412 while a
    /// rewrite of the table runs.
    pub fn try_begin_load(self: &Arc<Self>, table: Arc<TableMeta>) -> Result<LoadWriter> {
        let gate = self.rewrite_gate(table.id).try_read_owned().map_err(|_| {
            BasaltError::ConcurrentDdl(format!("table {} is being altered", table.name))
        })?;
        self.start_load(table, gate)
    }

    fn start_load(
        self: &Arc<Self>,
        table: Arc<TableMeta>,
        gate: tokio::sync::OwnedRwLockReadGuard<()>,
    ) -> Result<LoadWriter> {
        let current = self.catalog.table_by_id(table.id).ok_or_else(|| {
            BasaltError::UnknownTable(format!("{}.{}", table.database, table.name))
        })?;
        if current.schema_version != table.schema_version {
            return Err(BasaltError::ConcurrentDdl(format!(
                "table {} was altered after the statement was planned",
                table.name
            )));
        }
        let load_id = self.catalog.allocate_id();
        Ok(LoadWriter::new(self.clone(), table, load_id, gate))
    }

    /// The gate between a table's writers (loads and compactions, which share it) and the
    /// statements that rewrite the whole table (ALTER TABLE, DELETE on Duplicate and Aggregate
    /// tables), which hold it alone: a rewrite waits for running loads, and loads that start
    /// meanwhile wait for the rewrite.
    pub fn rewrite_gate(&self, table_id: TableId) -> Arc<RewriteGate> {
        self.rewrite_gates
            .lock()
            .entry(table_id)
            .or_default()
            .clone()
    }

    /// The file of a segment recorded in the catalog (storage's own readers and writers).
    pub(crate) fn segment_path(&self, rel: &str) -> PathBuf {
        self.segments.file(rel)
    }

    /// Where readers outside storage find segments, by their catalog paths.
    pub fn segments(&self) -> &Arc<SegmentStore> {
        &self.segments
    }

    /// True when reading `tablet` needs the key model applied across segments: Aggregate keys
    /// with more than one non-empty rowset, or one rowset whose segments may overlap (a load
    /// that wrote several). A compaction's output is one merged run of disjoint segments, so a
    /// tablet compacted to one rowset reads without merging. (Unique keys are merged on write;
    /// reads skip deleted rows.)
    pub fn needs_merge(table: &TableMeta, tablet: &TabletMeta) -> bool {
        if table.keys_model != KeysModel::Aggregate {
            return false;
        }
        let mut non_empty = tablet.rowsets.iter().filter(|r| !r.segments.is_empty());
        match (non_empty.next(), non_empty.next()) {
            (None, _) => false,
            (Some(only), None) => !only.is_merged_run(),
            (Some(_), Some(_)) => true,
        }
    }

    /// Publishes a Unique-key load: finds the rows each new row replaces through the tablet's
    /// primary-key index, and publishes the new rowsets with the updated delete bitmaps in one
    /// catalog transaction.
    pub fn publish_unique(
        &self,
        table_id: TableId,
        schema_version: u64,
        writes: Vec<UniqueTabletWrite>,
        job: Option<LoadJobRecord>,
    ) -> Result<()> {
        let lock = self.table_lock(table_id);
        let _guard = lock.lock();
        let current = self.catalog.table_by_id(table_id).ok_or_else(|| {
            BasaltError::UnknownTable(format!("table id {table_id} (dropped during the load)"))
        })?;
        let mut rowsets = Vec::with_capacity(writes.len());
        let mut indexes = Vec::with_capacity(writes.len());
        for w in writes {
            let tablet = current
                .tablets()
                .map(|(_, t)| t)
                .find(|t| t.id == w.tablet_id)
                .ok_or_else(|| {
                    BasaltError::Storage(format!(
                        "tablet {} was dropped during the load",
                        w.tablet_id
                    ))
                })?;
            let mut index = self.take_pk_index(&current, tablet)?;
            let mut changed: BTreeMap<String, RoaringBitmap> = BTreeMap::new();
            let mut failure = None;
            for (seg, keys) in w.segments.iter().zip(&w.keys) {
                index.add_rows(
                    &seg.path,
                    keys,
                    0,
                    |_| false,
                    |old_seg, old_row| {
                        if !changed.contains_key(old_seg) {
                            let existing = match tablet.delete_bitmaps.get(old_seg) {
                                Some(b) => delete_bitmap::decode(b),
                                None => Ok(RoaringBitmap::new()),
                            };
                            match existing {
                                Ok(bm) => {
                                    changed.insert(old_seg.to_string(), bm);
                                }
                                Err(e) => failure = Some(e),
                            }
                        }
                        if let Some(bm) = changed.get_mut(old_seg) {
                            bm.insert(old_row);
                        }
                    },
                )?;
            }
            if let Some(e) = failure {
                return Err(e);
            }
            for ((seg, keys), dead) in w.segments.iter().zip(&w.keys).zip(&w.tombstones) {
                if dead.is_empty() {
                    continue;
                }
                index.forget_rows(&seg.path, keys, dead)?;
                changed
                    .entry(seg.path.clone())
                    .or_default()
                    .extend(dead.iter().copied());
            }
            let delete_bitmaps = changed
                .iter()
                .map(|(seg, bm)| Ok((seg.clone(), delete_bitmap::encode(bm)?)))
                .collect::<Result<Vec<_>>>()?;
            rowsets.push(NewRowset {
                tablet_id: w.tablet_id,
                segments: w.segments,
                delete_bitmaps,
                schema_version,
                missing_replicas: w.missing_replicas,
                seen_replicas: w.seen_replicas,
            });
            indexes.push((w.tablet_id, index));
        }
        let published = self.catalog.publish_load(table_id, rowsets, job)?;
        let mut cache = self.pk_indexes.write();
        for (tablet_id, mut index) in indexes {
            if let Some((_, t)) = published.tablets().find(|(_, t)| t.id == tablet_id) {
                index.version = t.version();
                cache.insert(tablet_id, index);
            }
        }
        Ok(())
    }

    /// The lock that serializes changes to one table's data: merge-on-write publishes, TRUNCATE and
    /// DROP PARTITION take it so delete bitmaps are always computed against the current rowsets.
    pub fn table_lock(&self, table_id: TableId) -> Arc<Mutex<()>> {
        self.table_locks.lock().entry(table_id).or_default().clone()
    }

    /// The form new segments written on this node hold JSON columns in.
    pub fn json_form(&self) -> crate::json_columns::JsonForm {
        if self.binary_json.load(std::sync::atomic::Ordering::Relaxed) {
            crate::json_columns::JsonForm::Binary
        } else {
            crate::json_columns::JsonForm::Text
        }
    }

    /// Sets the form new segments hold JSON columns in (see [`crate::json_columns`]).
    pub fn set_json_form(&self, form: crate::json_columns::JsonForm) {
        self.binary_json.store(
            form == crate::json_columns::JsonForm::Binary,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// Forgets the primary-key indexes of tablets whose data was removed.
    pub(crate) fn evict_indexes<'a>(&self, tablets: impl Iterator<Item = &'a TabletMeta>) {
        let mut cache = self.pk_indexes.write();
        for t in tablets {
            cache.remove(&t.id);
        }
    }

    /// Columns `columns` of segment `rel` of `tablet`: from this node's files, or on a
    /// cluster's frontend from a backend holding the tablet.
    pub(crate) fn read_segment_columns(
        &self,
        tablet: &TabletMeta,
        rel: &str,
        columns: &[usize],
    ) -> Result<Vec<arrow::array::RecordBatch>> {
        match self.remote() {
            Some(remote) => remote.read(tablet, rel, columns),
            None => crate::segment::read_segment(&self.segment_path(rel), columns),
        }
    }

    /// The tablet's primary-key index, current as of the tablet's version (built if needed).
    fn take_pk_index(&self, table: &TableMeta, tablet: &TabletMeta) -> Result<PrimaryKeyIndex> {
        if let Some(index) = self.pk_indexes.write().remove(&tablet.id) {
            if index.version == tablet.version() {
                return Ok(index);
            }
        }
        PrimaryKeyIndex::build(self, table, tablet)
    }

    /// Reads `columns` (sorted table column indexes, including all key columns) of every
    /// rowset of `tablet`, merged by the table's key model.
    pub fn read_tablet_merged(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        columns: &[usize],
    ) -> Result<RecordBatch> {
        self.read_tablet_merged_where(table, tablet, columns, None)
    }

    /// [`StorageEngine::read_tablet_merged`], keeping from each segment only the rows that
    /// `key_filter` selects before merging. The filter must look at key columns only (the
    /// first columns of `columns`): then it keeps or drops every row of a key alike, and the
    /// merge of the rows left is the merge of the whole key.
    pub fn read_tablet_merged_where(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        columns: &[usize],
        key_filter: Option<Arc<KeyFilter>>,
    ) -> Result<RecordBatch> {
        let full = table.arrow_schema();
        let schema = Arc::new(full.project(columns).map_err(storage_err)?);
        let mut batches = Vec::new();
        for rowset in &tablet.rowsets {
            for seg in &rowset.segments {
                let path = self.segment_path(&seg.path);
                match &key_filter {
                    Some(keep) => batches.extend(read_segment_where(
                        &path,
                        columns,
                        table.num_key_columns,
                        &schema,
                        keep.clone(),
                    )?),
                    None => batches.extend(read_segment(&path, columns)?),
                }
            }
        }
        let all = concat_batches(&schema, &batches).map_err(storage_err)?;
        sort_and_merge(&all, &MergeSpec::for_columns(table, columns))
    }

    /// Registers a reader: segment files it may see are not deleted until the guard drops. Take
    /// it before reading the catalog snapshot the query will scan.
    pub fn begin_read(&self) -> ReadGuard {
        self.reads.begin_read()
    }

    /// Deletes the files of a dropped table (after the catalog change committed) once no running
    /// query can read them.
    pub fn remove_table_files(&self, table: &TableMeta) {
        self.table_locks.lock().remove(&table.id);
        self.rewrite_gates.lock().remove(&table.id);
        self.remove_tablet_files(table.tablets().map(|(_, t)| t));
    }

    /// Deletes the segment files of tablets whose rowsets were removed (truncate, drop partition)
    /// once no running query can read them.
    pub fn remove_tablet_files<'a>(&self, tablets: impl Iterator<Item = &'a TabletMeta>) {
        let tablets: Vec<&TabletMeta> = tablets.collect();
        self.evict_indexes(tablets.iter().copied());
        let segments = || {
            tablets
                .iter()
                .flat_map(|t| t.rowsets.iter())
                .flat_map(|r| r.segments.iter())
        };
        if self.remote().is_some() {
            let files = tablets
                .iter()
                .flat_map(|t| {
                    t.rowsets
                        .iter()
                        .flat_map(|r| r.segments.iter())
                        .map(|s| (t.replicas.clone(), s.path.clone()))
                })
                .collect();
            self.remove_remote_when_unread(files);
            return;
        }
        self.forget_segment_caches(segments().map(|s| s.path.as_str()));
        let files = segments().map(|s| self.segment_path(&s.path)).collect();
        self.reads.delete_when_unread(files);
    }

    /// Drops what the caches hold of segments whose files are being deleted.
    pub(crate) fn forget_segment_caches<'a>(
        &self,
        segments: impl Iterator<Item = &'a str> + Clone,
    ) {
        self.column_cache.forget_segments(segments.clone());
        self.row_cache.forget_segments(segments.clone());
        let paths: Vec<PathBuf> = segments
            .map(|s| crate::row_store::row_store_path(&self.segment_path(s)))
            .collect();
        self.row_files.forget(&paths);
    }

    /// A backend's part of removing segments (catalog paths, checked by
    /// [`crate::files::check_segment_path`]): deleted once no running scan reads them.
    pub fn remove_segments(&self, segments: &[String]) {
        self.forget_segment_caches(segments.iter().map(|s| s.as_str()));
        let files = segments
            .iter()
            .flat_map(|s| {
                let file = self.segment_path(s);
                [crate::row_store::row_store_path(&file), file]
            })
            .collect();
        self.reads.delete_when_unread(files);
    }

    pub fn remove_partition_files(&self, partition: &PartitionMeta) {
        self.remove_tablet_files(partition.tablets.iter());
    }

    /// Removes every file under `data/` that the catalog does not reference. Only safe when no
    /// load is running (at startup).
    fn collect_garbage(&self) -> Result<usize> {
        let referenced = self.catalog.referenced_segments();
        self.remove_unreferenced(&referenced, None)
    }

    /// On a backend: removes the segment files (and their row stores) that `referenced` (the
    /// frontend's catalog, as it was when it started) does not name and whose load or
    /// compaction id is below `ids_below` (an id the catalog allocated at that start): what
    /// loads the frontend never published and compactions it never finished left behind.
    /// Every file written since has a larger id, and nothing unnamed then can be named later.
    /// (Ids, not file times: the frontend's and backends' clocks may disagree.)
    pub fn remove_orphans(
        &self,
        referenced: &std::collections::HashSet<String>,
        ids_below: u64,
    ) -> Result<usize> {
        self.remove_unreferenced(referenced, Some(ids_below))
    }

    fn remove_unreferenced(
        &self,
        referenced: &std::collections::HashSet<String>,
        ids_below: Option<u64>,
    ) -> Result<usize> {
        let mut removed = 0;
        for rel in list_files(&self.data_dir, &self.data_dir.join("data"))? {
            let path = self.data_dir.join(&rel);
            if let Some(bound) = ids_below {
                match crate::files::segment_file_id(&rel) {
                    Some(id) if id < bound => {}
                    _ => continue,
                }
            }
            // A row store belongs to the segment file of the same name.
            let owner = if rel.extension().is_some_and(|e| e == "rows") {
                rel.with_extension("parquet")
            } else {
                rel.clone()
            };
            if !referenced.contains(owner.to_string_lossy().as_ref()) {
                std::fs::remove_file(&path)?;
                removed += 1;
            }
        }
        remove_empty_dirs(&self.data_dir.join("data"))?;
        Ok(removed)
    }
}
