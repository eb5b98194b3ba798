//! A load in progress: rows are routed to tablets and buffered; full buffers are sorted, merged by
//! the key model and written as segments; `commit` writes the rest and publishes every tablet's
//! new rowset in one catalog transaction. A load dropped before commit deletes what it wrote.

use crate::engine::{StorageEngine, UniqueTabletWrite};
use crate::files::tablet_dir;
use crate::merge::{sort_and_merge, MergeSpec};
use crate::routing::{partition_value_at, route_batch, PartitionLocator};
use crate::{segment, storage_err};
use arrow::array::{ArrayRef, AsArray, BooleanArray, RecordBatch, UInt32Array};
use arrow::compute::{concat_batches, take_record_batch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use basalt_catalog::{KeysModel, LoadJobRecord, NewRowset, SegmentMeta, TableMeta, TabletId};
use basalt_common::{bitmap_value, hll_value, BasaltError, Result, SqlType};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// Name of the hidden column that flags delete rows of Unique-key loads while they are buffered.
const DELETE_FLAG: &str = "__basalt_delete_sign";

/// One tablet's buffered rows and the segment path they go to.
type FlushJob = (TabletId, Vec<RecordBatch>, PathBuf);

/// One tablet's segment written by a flush.
struct FlushedSegment {
    tablet: TabletId,
    meta: SegmentMeta,
    /// On a cluster: the replicas that hold it.
    replicas: Option<Vec<basalt_catalog::BackendId>>,
    /// Unique keys: the segment's key columns and its tombstone rows.
    unique: Option<(Vec<ArrayRef>, Vec<u32>)>,
}

/// What a committed load did.
#[derive(Debug, Clone)]
pub struct LoadSummary {
    pub rows_loaded: u64,
    pub tablets_written: usize,
    pub segments_written: usize,
    pub bytes_written: u64,
}

pub struct LoadWriter {
    engine: Arc<StorageEngine>,
    table: Arc<TableMeta>,
    locator: PartitionLocator,
    merge: MergeSpec,
    bloom_filter_columns: Vec<String>,
    load_id: u64,
    buffers: HashMap<TabletId, Vec<RecordBatch>>,
    /// Rows buffered per tablet, and the Arrow bytes buffered in all.
    buffered_rows: HashMap<TabletId, usize>,
    buffered_bytes: usize,
    segments: BTreeMap<TabletId, Vec<SegmentMeta>>,
    /// On a cluster: per tablet, the replicas that hold every segment written so far.
    holders: BTreeMap<TabletId, Option<Vec<basalt_catalog::BackendId>>>,
    /// Unique keys: the key columns of each written segment (for the primary-key index).
    segment_keys: BTreeMap<TabletId, Vec<Vec<ArrayRef>>>,
    /// Unique keys: rows of each written segment that delete their key (tombstones).
    segment_tombstones: BTreeMap<TabletId, Vec<Vec<u32>>>,
    /// Every segment this load started writing (tablet, catalog path), removed if it aborts.
    files: Vec<(TabletId, PathBuf)>,
    rows_loaded: u64,
    round_robin: u64,
    /// Rows go only to partitions a statement named (no AUTO PARTITION then).
    restricted: bool,
    committed: bool,
    /// Keeps rewrites of the table out until the load is committed or dropped.
    _gate: tokio::sync::OwnedRwLockReadGuard<()>,
}

impl LoadWriter {
    pub(crate) fn new(
        engine: Arc<StorageEngine>,
        table: Arc<TableMeta>,
        load_id: u64,
        gate: tokio::sync::OwnedRwLockReadGuard<()>,
    ) -> LoadWriter {
        let bloom_filter_columns = segment::bloom_filter_columns(&table);
        LoadWriter {
            locator: PartitionLocator::new(&table),
            merge: MergeSpec::for_table(&table),
            bloom_filter_columns,
            engine,
            table,
            load_id,
            buffers: HashMap::new(),
            buffered_rows: HashMap::new(),
            buffered_bytes: 0,
            segments: BTreeMap::new(),
            holders: BTreeMap::new(),
            segment_keys: BTreeMap::new(),
            segment_tombstones: BTreeMap::new(),
            files: Vec::new(),
            rows_loaded: 0,
            round_robin: load_id,
            restricted: false,
            committed: false,
            _gate: gate,
        }
    }

    pub fn table(&self) -> &Arc<TableMeta> {
        &self.table
    }

    /// The load's id (its transaction id in reports).
    pub fn load_id(&self) -> u64 {
        self.load_id
    }

    /// The catalog the load publishes to.
    pub fn catalog(&self) -> &Arc<dyn basalt_catalog::TabletCatalog> {
        self.engine.catalog()
    }

    /// Accept rows only for the named partitions; rows of other partitions are returned by
    /// [`LoadWriter::write`] as rows in no partition.
    pub fn restrict_partitions(&mut self, names: &[String]) -> Result<()> {
        let mut allowed = vec![false; self.table.partitions.len()];
        for name in names {
            let i = self
                .table
                .partitions
                .iter()
                .position(|p| p.name.eq_ignore_ascii_case(name.trim()))
                .ok_or_else(|| BasaltError::UnknownPartition(name.trim().to_string()))?;
            allowed[i] = true;
        }
        self.locator.restrict(allowed);
        self.restricted = true;
        Ok(())
    }

    /// Doris's `TEMPORARY PARTITION (..)`: rows go only to the named temporary partitions (a row
    /// of none of them is returned by [`LoadWriter::write`] as a row in no partition).
    pub fn restrict_temporary_partitions(&mut self, names: &[String]) -> Result<()> {
        let mut view = (*self.table).clone();
        view.partitions = names
            .iter()
            .map(|name| {
                self.table
                    .temporary_partition_by_name(name.trim())
                    .cloned()
                    .ok_or_else(|| BasaltError::UnknownPartition(name.trim().to_string()))
            })
            .collect::<Result<_>>()?;
        view.temporary_partitions.clear();
        // Routing reads the view; the publish finds the tablets among the table's own.
        self.table = Arc::new(view);
        self.locator = PartitionLocator::new(&self.table);
        self.restricted = true;
        Ok(())
    }

    /// Adds a batch (in the table's schema). Rows that fall in no partition are not written;
    /// they are returned as (row index, partition value) for the caller to reject or count.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<Vec<(usize, String)>> {
        self.write_with_deletes(batch, None)
    }

    /// Like [`LoadWriter::write`]; for Unique keys, rows flagged in `deletes` delete their key
    /// (the newest row of a key in the load decides whether it is upserted or deleted).
    pub fn write_with_deletes(
        &mut self,
        batch: &RecordBatch,
        deletes: Option<&BooleanArray>,
    ) -> Result<Vec<(usize, String)>> {
        if batch.num_rows() == 0 {
            return Ok(Vec::new());
        }
        check_sketch_columns(&self.table, batch)?;
        if deletes.is_some_and(|d| d.true_count() > 0) && self.table.keys_model != KeysModel::Unique
        {
            return Err(BasaltError::NotSupported(
                "deleting rows from a table without UNIQUE KEY".into(),
            ));
        }
        // Unique keys carry a hidden delete flag through sorting and merging.
        let with_flag;
        let batch = if self.table.keys_model == KeysModel::Unique {
            let flag: ArrayRef = match deletes {
                Some(d) => Arc::new(d.clone()),
                None => Arc::new(BooleanArray::from(vec![false; batch.num_rows()])),
            };
            let mut cols = batch.columns().to_vec();
            cols.push(flag);
            with_flag = RecordBatch::try_new(self.buffer_schema(), cols).map_err(storage_err)?;
            &with_flag
        } else {
            batch
        };
        let mut routed = route_batch(&self.table, &self.locator, batch, &mut self.round_robin)?;
        if !routed.unrouted.is_empty() && self.table.auto_partition.is_some() && !self.restricted {
            self.add_auto_partitions(batch, &routed.unrouted)?;
            routed = route_batch(&self.table, &self.locator, batch, &mut self.round_robin)?;
        }
        let limits = self.engine.write_buffer();
        let mut full_tablet = false;
        for (tablet, rows) in routed.by_tablet {
            let part = if rows.len() == batch.num_rows() {
                batch.clone()
            } else {
                take_record_batch(batch, &UInt32Array::from(rows)).map_err(storage_err)?
            };
            let tablet_rows = self.buffered_rows.entry(tablet).or_default();
            *tablet_rows += part.num_rows();
            full_tablet |= *tablet_rows >= limits.rows_per_tablet;
            self.buffered_bytes += part.get_array_memory_size();
            self.rows_loaded += part.num_rows() as u64;
            self.buffers.entry(tablet).or_default().push(part);
        }
        if full_tablet || self.buffered_bytes >= limits.bytes {
            self.flush_all()?;
        }
        Ok(routed.unrouted)
    }

    /// AUTO PARTITION: creates the partitions the `unrouted` rows of `batch` need, and
    /// routes by the table as it then is. A table whose columns changed meanwhile fails the
    /// load (its rows were shaped for the old columns).
    fn add_auto_partitions(
        &mut self,
        batch: &RecordBatch,
        unrouted: &[(usize, String)],
    ) -> Result<()> {
        let Some(column) = self.table.partition_column else {
            return Ok(());
        };
        let values = batch.column(column);
        let mut wanted: Vec<(String, basalt_catalog::PartitionBound)> = Vec::new();
        for (row, _) in unrouted {
            let value = partition_value_at(values, *row)?;
            let (name, bound) = basalt_catalog::auto_partition_for(&self.table, value.as_ref())?;
            if !wanted.iter().any(|(n, _)| *n == name) {
                wanted.push((name, bound));
            }
        }
        let table = self
            .engine
            .catalog()
            .add_auto_partitions(self.table.id, wanted)?;
        if table.schema_version != self.table.schema_version {
            return Err(BasaltError::ConcurrentDdl(format!(
                "table {} changed while a load was creating its partitions",
                table.name
            )));
        }
        self.locator = PartitionLocator::new(&table);
        self.table = table;
        Ok(())
    }

    /// Rows accepted so far.
    pub fn rows_loaded(&self) -> u64 {
        self.rows_loaded
    }

    /// The schema of buffered batches: the table's, plus the delete flag for Unique keys.
    fn buffer_schema(&self) -> SchemaRef {
        let schema = self.table.arrow_schema();
        if self.table.keys_model != KeysModel::Unique {
            return schema;
        }
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new(DELETE_FLAG, DataType::Boolean, false));
        Arc::new(Schema::new(fields))
    }

    /// Writes every buffered tablet as a new segment; tablets are sorted and encoded in
    /// parallel (one thread per core), so a large load keeps every core busy.
    fn flush_all(&mut self) -> Result<()> {
        let mut jobs: Vec<FlushJob> = Vec::new();
        for (tablet, batches) in std::mem::take(&mut self.buffers) {
            let seq = self.segments.get(&tablet).map(|s| s.len()).unwrap_or(0);
            let rel =
                tablet_dir(self.table.id, tablet).join(format!("{}_{}.parquet", self.load_id, seq));
            // Recorded before writing, so an abort removes partly written files too.
            self.files.push((tablet, rel.clone()));
            jobs.push((tablet, batches, rel));
        }
        self.buffered_rows.clear();
        self.buffered_bytes = 0;
        if jobs.is_empty() {
            return Ok(());
        }
        jobs.sort_by_key(|j| j.0);
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(jobs.len());
        let queue: Vec<parking_lot::Mutex<Option<FlushJob>>> = jobs
            .into_iter()
            .map(|j| parking_lot::Mutex::new(Some(j)))
            .collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let this = &*self;
        let mut results: Vec<(usize, Result<FlushedSegment>)> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(slot) = queue.get(i) else { break };
                            let Some((tablet, batches, rel)) = slot.lock().take() else {
                                continue;
                            };
                            done.push((i, this.flush_tablet(tablet, batches, &rel)));
                        }
                        done
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| {
                    w.join().unwrap_or_else(|_| {
                        vec![(
                            usize::MAX,
                            Err(BasaltError::Internal("a segment writer panicked".into())),
                        )]
                    })
                })
                .collect()
        });
        results.sort_by_key(|r| r.0);
        for (_, r) in results {
            let f = r?;
            if let Some(replicas) = &f.replicas {
                crate::remote::keep_common(self.holders.entry(f.tablet).or_default(), replicas);
            }
            self.segments.entry(f.tablet).or_default().push(f.meta);
            if let Some((keys, tombstones)) = f.unique {
                self.segment_keys.entry(f.tablet).or_default().push(keys);
                self.segment_tombstones
                    .entry(f.tablet)
                    .or_default()
                    .push(tombstones);
            }
        }
        Ok(())
    }

    /// Sorts and merges one tablet's buffered rows and writes them as segment `rel`.
    fn flush_tablet(
        &self,
        tablet: TabletId,
        batches: Vec<RecordBatch>,
        rel: &std::path::Path,
    ) -> Result<FlushedSegment> {
        let schema = self.table.arrow_schema();
        let all = concat_batches(&self.buffer_schema(), &batches).map_err(storage_err)?;
        drop(batches);
        let mut merged = sort_and_merge(&all, &self.merge)?;
        drop(all);
        let mut tombstones = Vec::new();
        if self.table.keys_model == KeysModel::Unique {
            let flag = merged.num_columns() - 1;
            if let Some(d) = merged.column(flag).as_any().downcast_ref::<BooleanArray>() {
                tombstones = (0..d.len() as u32)
                    .filter(|i| d.value(*i as usize))
                    .collect();
            }
            merged.remove_column(flag);
            merged = RecordBatch::try_new(schema.clone(), merged.columns().to_vec())
                .map_err(storage_err)?;
        }
        let (meta, replicas) = match self.engine.remote() {
            None => (
                segment::write_segment_as(
                    self.engine.data_dir(),
                    rel,
                    &schema,
                    std::slice::from_ref(&merged),
                    &self.bloom_filter_columns,
                    self.table.stores_rows(),
                    self.engine.json_form(),
                )?,
                None,
            ),
            Some(remote) => {
                let written = remote.write(
                    &self.table,
                    self.tablet_meta(tablet)?,
                    rel,
                    &schema,
                    std::slice::from_ref(&merged),
                )?;
                (written.meta, Some(written.replicas))
            }
        };
        let unique = (self.table.keys_model == KeysModel::Unique).then(|| {
            (
                merged.columns()[..self.table.num_key_columns].to_vec(),
                tombstones,
            )
        });
        Ok(FlushedSegment {
            tablet,
            meta,
            replicas,
            unique,
        })
    }

    fn tablet_meta(&self, tablet: TabletId) -> Result<&basalt_catalog::TabletMeta> {
        self.table
            .tablets()
            .map(|(_, t)| t)
            .find(|t| t.id == tablet)
            .ok_or_else(|| {
                BasaltError::Internal(format!("load routed rows to unknown tablet {tablet}"))
            })
    }

    /// The tablet's replicas as this load's snapshot of the table has them.
    fn seen_replicas(&self, tablet: TabletId) -> Vec<basalt_catalog::BackendId> {
        self.tablet_meta(tablet)
            .map(|t| t.replicas.clone())
            .unwrap_or_default()
    }

    /// Writes what is buffered and publishes the load. Nothing is visible before this returns Ok.
    pub fn commit(self) -> Result<LoadSummary> {
        self.commit_with_label(None)
    }

    /// Like [`LoadWriter::commit`], recording `job` (the load's label) in the same catalog
    /// transaction; fails without publishing anything if the label is already taken.
    pub fn commit_with_label(mut self, job: Option<LoadJobRecord>) -> Result<LoadSummary> {
        self.check_versions()?;
        self.flush_all()?;
        let segments = std::mem::take(&mut self.segments);
        // On a cluster: a majority of each tablet's replicas must hold all of its segments;
        // the others are marked stale by the publish.
        let mut missing: BTreeMap<TabletId, Vec<basalt_catalog::BackendId>> = BTreeMap::new();
        if self.engine.remote().is_some() {
            for tablet in segments.keys() {
                let holders = self
                    .holders
                    .get(tablet)
                    .cloned()
                    .flatten()
                    .unwrap_or_default();
                let meta = self.tablet_meta(*tablet)?;
                missing.insert(
                    *tablet,
                    crate::remote::missing_replicas(&self.table, meta, &holders)?,
                );
            }
        }
        let summary = LoadSummary {
            rows_loaded: self.rows_loaded,
            tablets_written: segments.len(),
            segments_written: segments.values().map(|s| s.len()).sum(),
            bytes_written: segments.values().flatten().map(|s| s.size_bytes).sum(),
        };
        if segments.is_empty() && job.is_none() {
            // Nothing was written: nothing to publish.
        } else if self.table.keys_model == KeysModel::Unique {
            let mut keys = std::mem::take(&mut self.segment_keys);
            let mut tombstones = std::mem::take(&mut self.segment_tombstones);
            let writes = segments
                .into_iter()
                .map(|(tablet_id, segments)| UniqueTabletWrite {
                    tablet_id,
                    missing_replicas: missing.remove(&tablet_id).unwrap_or_default(),
                    seen_replicas: self.seen_replicas(tablet_id),
                    segments,
                    keys: keys.remove(&tablet_id).unwrap_or_default(),
                    tombstones: tombstones.remove(&tablet_id).unwrap_or_default(),
                })
                .collect();
            self.engine
                .publish_unique(self.table.id, self.table.schema_version, writes, job)?;
        } else {
            let rowsets = segments
                .into_iter()
                .map(|(tablet_id, segments)| NewRowset {
                    tablet_id,
                    segments,
                    delete_bitmaps: Vec::new(),
                    schema_version: self.table.schema_version,
                    missing_replicas: missing.remove(&tablet_id).unwrap_or_default(),
                    seen_replicas: self.seen_replicas(tablet_id),
                })
                .collect();
            self.engine
                .catalog()
                .publish_load(self.table.id, rowsets, job)?;
        }
        self.committed = true;
        self.engine.notify_compaction();
        Ok(summary)
    }

    /// Fails fast, before writing what is buffered, if a tablet this load touches already has
    /// as many rowsets as allowed (the publish checks again, atomically).
    fn check_versions(&self) -> Result<()> {
        let Some(current) = self.engine.catalog().table_by_id(self.table.id) else {
            return Ok(()); // the publish reports the dropped table
        };
        for (_, tablet) in current.tablets() {
            if self.buffers.contains_key(&tablet.id) || self.segments.contains_key(&tablet.id) {
                self.engine.catalog().check_versions(tablet)?;
            }
        }
        Ok(())
    }
}

impl Drop for LoadWriter {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        if let Some(remote) = self.engine.remote() {
            let files = std::mem::take(&mut self.files)
                .into_iter()
                .map(|(tablet, rel)| {
                    let replicas = self
                        .tablet_meta(tablet)
                        .map(|t| t.replicas.clone())
                        .unwrap_or_default();
                    (replicas, rel.to_string_lossy().into_owned())
                })
                .collect();
            remote.remove(files);
            return;
        }
        {
            for (_, rel) in &self.files {
                let f = &self.engine.data_dir().join(rel);
                if let Err(e) = crate::files::remove_segment_files(f) {
                    tracing::warn!(
                        "could not remove segment {} of an aborted load: {e}",
                        f.display()
                    );
                }
            }
        }
    }
}

impl std::fmt::Debug for LoadWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadWriter")
            .field("table", &self.table.name)
            .field("load_id", &self.load_id)
            .finish()
    }
}

/// Error for rows that fall in no partition (used by INSERT, which is all-or-nothing).
/// BITMAP, HLL and QUANTILE_STATE columns hold serialized sketches; a value that does not decode (raw text loaded
/// into a BITMAP column, say) would make the rows unreadable later, so the write fails instead.
fn check_sketch_columns(table: &TableMeta, batch: &RecordBatch) -> Result<()> {
    for (i, c) in table.columns.iter().enumerate() {
        if !c.ty.is_sketch() || i >= batch.num_columns() {
            continue;
        }
        let Some(values) = batch.column(i).as_binary_opt::<i32>() else {
            return Err(BasaltError::InvalidData(format!(
                "column '{}' is {} but the load produced {}",
                c.name,
                c.ty,
                batch.column(i).data_type()
            )));
        };
        for v in values.iter().flatten() {
            let decoded = match c.ty {
                SqlType::Bitmap => bitmap_value::BitmapValue::deserialize(v).map(|_| ()),
                SqlType::QuantileState => {
                    basalt_common::quantile_value::QuantileState::deserialize(v).map(|_| ())
                }
                _ => hll_value::HllValue::deserialize(v).map(|_| ()),
            };
            if let Err(e) = decoded {
                return Err(BasaltError::InvalidData(format!(
                    "column '{}' is {}: a value is not a serialized {} ({e}); build it with {}",
                    c.name,
                    c.ty,
                    c.ty,
                    match c.ty {
                        SqlType::Bitmap => {
                            "to_bitmap(..), bitmap_from_string(..) or bitmap_empty()"
                        }
                        SqlType::QuantileState => {
                            "to_quantile_state(..) or quantile_state_empty()"
                        }
                        _ => "hll_hash(..) or hll_empty()",
                    }
                )));
            }
        }
    }
    Ok(())
}

pub fn no_partition_error(table: &TableMeta, value: &str) -> BasaltError {
    BasaltError::NoPartition {
        column: table
            .partition_column_meta()
            .map(|c| c.name.clone())
            .unwrap_or_default(),
        value: value.to_string(),
    }
}
