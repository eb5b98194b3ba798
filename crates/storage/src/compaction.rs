//! Compaction: merges a run of adjacent rowsets of one tablet into one rowset, applying the key
//! model (Aggregate: aggregate; Unique: drop deleted rows; Duplicate: sorted merge), and publishes
//! the result through [`Catalog::replace_rowsets`] in one transaction.
//!
//! - **What to merge** is [`policy`]'s choice; **when** is [`scheduler`]'s (background threads).
//! - **Output**: rows sorted by key, cut into segments of at most `output_segment_rows` rows, so
//!   the output rowset's segments hold disjoint, ordered key ranges (`segments_overlap = false`).
//!   Aggregate keys are unique after the merge, so a tablet compacted to one rowset is read
//!   without merge-on-read whatever its segment count.
//! - **Unique keys**: the publish step takes the table lock that merge-on-write loads hold while
//!   they compute delete bitmaps. Rows of the inputs that a load deleted after the compaction read
//!   them are carried over to the output through the row mapping (every output row remembers its
//!   input segment and row), so a compaction never has to be abandoned for a concurrent load. The
//!   tablet's cached primary-key index is then pointed at the output rows (or evicted).
//! - **Crash safety**: output files are fsynced before the catalog transaction; until it commits
//!   they are unreferenced and removed by the startup garbage collection. After it commits the
//!   catalog is the truth and the input files are unreferenced; they are deleted once no running
//!   query can still read them (the read tracker), or at the next startup.
//! - **Memory**: the inputs of one compaction are merged in memory; the policy bounds their size.

#[cfg(test)]
mod json_tests;
pub mod policy;
pub(crate) mod scheduler;
#[cfg(test)]
mod tests;

use crate::delete_bitmap;
use crate::engine::StorageEngine;
use crate::files::tablet_dir;
use crate::merge::{sort_and_merge, MergeSpec};
use crate::read_tracker::ReadGuard;
use crate::segment::{bloom_filter_columns, write_segment_as};
use crate::storage_err;
use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt64Array};
use arrow::compute::{concat_batches, filter_record_batch};
use arrow::datatypes::{DataType, Field, Schema};
use basalt_catalog::{
    CompactedRowset, DeleteBitmap, KeysModel, RowsetMeta, SegmentMeta, TableId, TableMeta,
    TabletId, TabletMeta,
};
pub(crate) use basalt_common::clock::now_ms;
use basalt_common::{BasaltError, Result};
use policy::{CompactionPolicy, Pick, Reason, RowsetStats};
use roaring::RoaringBitmap;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

/// One compaction to run: a tablet snapshot and the adjacent rowsets to merge.
pub struct CompactionJob {
    pub table: Arc<TableMeta>,
    pub tablet: TabletMeta,
    /// Indexes `start..end` of the input rowsets in `tablet.rowsets`.
    pub pick: Pick,
    /// Most rows in one output segment.
    pub segment_rows: usize,
    /// Keeps the input files readable until the compaction is done.
    _guard: ReadGuard,
    /// Keeps rewrites of the table (ALTER TABLE) out until the compaction is done.
    _gate: tokio::sync::OwnedRwLockReadGuard<()>,
}

/// What a finished compaction did.
#[derive(Debug, Clone)]
pub struct CompactionStats {
    pub table_id: TableId,
    pub tablet_id: TabletId,
    pub reason: Reason,
    pub input_rowsets: usize,
    pub input_rows: u64,
    pub output_rows: u64,
    pub output_segments: usize,
    pub start_version: u64,
    pub end_version: u64,
    /// Rows deleted by loads that published while the compaction ran, carried to the output.
    pub carried_deletes: u64,
}

/// The merged, written output before it is published.
pub(crate) struct Output {
    pub(crate) segments: Vec<SegmentMeta>,
    /// Each output segment's rows (kept for the primary-key index of Unique tablets).
    batches: Vec<RecordBatch>,
    /// Unique keys: for each output row in order, its input `(segment index << 32) | row`.
    origins: Option<UInt64Array>,
    files: Vec<PathBuf>,
    /// Rows per output segment (all but the last).
    segment_rows: usize,
    /// On a cluster's frontend: where the files were written (the backends holding the
    /// tablet); `files` are then catalog paths.
    remote: Option<(
        Arc<dyn crate::remote::RemoteSegments>,
        Vec<basalt_catalog::BackendId>,
    )>,
    /// On a cluster's frontend: the replicas that hold every output segment.
    pub(crate) holders: Option<Vec<basalt_catalog::BackendId>>,
}

impl Output {
    /// On a cluster's frontend: the replicas of `tablet` that lack the output (a majority must
    /// hold it, else the error); none elsewhere.
    pub(crate) fn missing_replicas(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
    ) -> Result<Vec<basalt_catalog::BackendId>> {
        if self.remote.is_none() || self.segments.is_empty() {
            return Ok(Vec::new());
        }
        let holders = self.holders.clone().unwrap_or_default();
        crate::remote::missing_replicas(table, tablet, &holders)
    }
}

impl Output {
    pub(crate) fn remove_files(&self) {
        if let Some((remote, replicas)) = &self.remote {
            remote.remove(
                self.files
                    .iter()
                    .map(|f| (replicas.clone(), f.to_string_lossy().into_owned()))
                    .collect(),
            );
            return;
        }
        for f in &self.files {
            if let Err(e) = crate::files::remove_segment_files(f) {
                tracing::warn!(
                    "could not remove unpublished compaction output {}: {e}",
                    f.display()
                );
            }
        }
    }
}

/// The delete bitmaps `tablet` holds on the segments at `paths`, for
/// [`CompactedRowset::input_deletes_seen`].
fn deletes_of<'a>(
    tablet: &TabletMeta,
    paths: impl Iterator<Item = &'a String>,
) -> Vec<(String, Option<DeleteBitmap>)> {
    paths
        .map(|p| (p.clone(), tablet.delete_bitmaps.get(p).cloned()))
        .collect()
}

/// What the policy sees of a tablet's rowsets.
pub fn rowset_stats(tablet: &TabletMeta) -> Vec<RowsetStats> {
    tablet
        .rowsets
        .iter()
        .map(|r| RowsetStats {
            bytes: r.size_bytes(),
            rows: r.num_rows(),
            deleted_rows: r
                .segments
                .iter()
                .filter_map(|s| tablet.delete_bitmaps.get(&s.path))
                .map(|b| b.deleted_rows)
                .sum(),
            created_ms: r.created_ms,
            overlapping_segments: if r.segments_overlap {
                r.segments.len()
            } else {
                0
            },
        })
        .collect()
}

/// Whether background compaction may pick the table's tablets: not when its property
/// `disable_auto_compaction` (Doris's) is "true". Compactions asked for by name still run.
fn auto_compaction(table: &TableMeta) -> bool {
    !table.properties.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("disable_auto_compaction") && v.eq_ignore_ascii_case("true")
    })
}

impl StorageEngine {
    /// The most urgent compaction over all tablets not in `skip` of tables that allow it
    /// ([`auto_compaction`]), per `policy`.
    pub fn pick_compaction(
        &self,
        policy: &CompactionPolicy,
        skip: &HashSet<TabletId>,
    ) -> Option<CompactionJob> {
        // Registered before the snapshot is read, so the input files outlive the job.
        let guard = self.begin_read();
        let now = now_ms();
        let mut best: Option<(Arc<TableMeta>, TabletMeta, Pick)> = None;
        for db in self.catalog().databases() {
            let Ok(tables) = self.catalog().tables(&db.name) else {
                continue;
            };
            for table in tables.into_iter().filter(|t| auto_compaction(t)) {
                for (_, tablet) in table.tablets() {
                    if tablet.rowsets.is_empty() || skip.contains(&tablet.id) {
                        continue;
                    }
                    let Some(pick) = policy.pick(&rowset_stats(tablet), now) else {
                        continue;
                    };
                    if best.as_ref().is_none_or(|(_, _, b)| pick.score > b.score) {
                        best = Some((table.clone(), tablet.clone(), pick));
                    }
                }
            }
        }
        let (table, tablet, pick) = best?;
        // A table being rewritten is left alone; the next pick sees its new rowsets.
        let gate = self.rewrite_gate(table.id).try_read_owned().ok()?;
        Some(CompactionJob {
            table,
            tablet,
            pick,
            segment_rows: policy.output_segment_rows.max(1),
            _guard: guard,
            _gate: gate,
        })
    }

    /// Picks per `policy` among the rowsets of one tablet, now, and compacts them. Returns
    /// `None` when the policy finds nothing to do.
    pub fn compact_tablet_now(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        policy: &CompactionPolicy,
    ) -> Result<Option<CompactionStats>> {
        let gate = self.rewrite_gate(table_id).try_read_owned().map_err(|_| {
            BasaltError::ConcurrentDdl(format!("table id {table_id} is being altered"))
        })?;
        let guard = self.begin_read();
        let table = self
            .catalog()
            .table_by_id(table_id)
            .ok_or_else(|| BasaltError::UnknownTable(format!("table id {table_id}")))?;
        let tablet = table
            .tablets()
            .map(|(_, t)| t)
            .find(|t| t.id == tablet_id)
            .cloned()
            .ok_or_else(|| BasaltError::Storage(format!("no tablet {tablet_id}")))?;
        let Some(pick) = policy.pick(&rowset_stats(&tablet), now_ms()) else {
            return Ok(None);
        };
        self.compact(CompactionJob {
            table,
            tablet,
            pick,
            segment_rows: policy.output_segment_rows.max(1),
            _guard: guard,
            _gate: gate,
        })
        .map(Some)
    }

    /// Runs one compaction: merge, write, publish, then schedule the input files for deletion.
    /// Fails, publishing nothing and leaving no files, if the tablet changed under it in a way
    /// it cannot follow (TRUNCATE, DROP).
    pub fn compact(&self, job: CompactionJob) -> Result<CompactionStats> {
        let table = &job.table;
        let tablet = &job.tablet;
        let inputs: Vec<Arc<RowsetMeta>> = tablet
            .rowsets
            .get(job.pick.start..job.pick.end)
            .ok_or_else(|| BasaltError::Internal("compaction pick out of range".into()))?
            .to_vec();
        let input_segments: Vec<&SegmentMeta> =
            inputs.iter().flat_map(|r| r.segments.iter()).collect();
        // On a cluster the backends merge Duplicate and Aggregate tablets themselves; a Unique
        // tablet's merge needs the frontend's key index, so its rows pass through the
        // frontend (read from a replica, written back to all).
        if let Some(remote) = self.remote() {
            if table.keys_model != KeysModel::Unique {
                return self.compact_on_backends(remote.as_ref(), &job, &inputs);
            }
        }
        let merged = self.merge_inputs(table, tablet, &input_segments)?;
        let output = self.write_output(table, tablet.id, merged, job.segment_rows)?;
        let missing_replicas = match output.missing_replicas(table, tablet) {
            Ok(missing) => missing,
            Err(e) => {
                output.remove_files();
                return Err(e);
            }
        };
        let compacted = CompactedRowset {
            tablet_id: tablet.id,
            output_id: self.record_compaction_output(tablet.id, &inputs),
            inputs: inputs.iter().map(|r| r.id).collect(),
            segments: output.segments.clone(),
            delete_bitmaps: Vec::new(),
            input_deletes_seen: deletes_of(tablet, input_segments.iter().map(|s| &s.path)),
            segments_overlap: false,
            missing_replicas,
            seen_replicas: tablet.replicas.clone(),
        };
        let published = if table.keys_model == KeysModel::Unique {
            self.publish_unique_compaction(table, tablet, &input_segments, &output, compacted)
        } else {
            self.catalog()
                .replace_rowsets(table.id, compacted)
                .map(|(_, removed)| (removed, 0))
        };
        let (removed, carried_deletes) = match published {
            Ok(r) => r,
            Err(e) => {
                output.remove_files();
                return Err(e);
            }
        };
        let segments = || removed.iter().flat_map(|r| r.segments.iter());
        if self.remote().is_some() {
            self.remove_remote_when_unread(
                segments()
                    .map(|s| (tablet.replicas.clone(), s.path.clone()))
                    .collect(),
            );
        } else {
            self.forget_segment_caches(segments().map(|s| s.path.as_str()));
            let files = segments().map(|s| self.segment_path(&s.path)).collect();
            self.reads.delete_when_unread(files);
        }
        Ok(CompactionStats {
            table_id: table.id,
            tablet_id: tablet.id,
            reason: job.pick.reason,
            input_rowsets: inputs.len(),
            input_rows: inputs.iter().map(|r| r.num_rows()).sum(),
            output_rows: output.segments.iter().map(|s| s.num_rows).sum(),
            output_segments: output.segments.len(),
            start_version: inputs.first().map(|r| r.start_version).unwrap_or(0),
            end_version: inputs.last().map(|r| r.version).unwrap_or(0),
            carried_deletes,
        })
    }

    /// A cluster frontend's compaction: every backend holding the tablet merges the inputs into
    /// the same output (files named by an id given here), the frontend publishes the swap, then
    /// the backends delete the inputs.
    fn compact_on_backends(
        &self,
        remote: &dyn crate::remote::RemoteSegments,
        job: &CompactionJob,
        inputs: &[Arc<RowsetMeta>],
    ) -> Result<CompactionStats> {
        let (table, tablet) = (&job.table, &job.tablet);
        if table.keys_model == KeysModel::Unique {
            return Err(BasaltError::NotSupported(
                "compacting Unique-key tablets on a cluster".into(),
            ));
        }
        let input_segments: Vec<SegmentMeta> = inputs
            .iter()
            .flat_map(|r| r.segments.iter().cloned())
            .collect();
        let id = self.catalog().allocate_id();
        let written = remote.compact(table, tablet, &input_segments, id, job.segment_rows)?;
        let segments = written.segments;
        // Replicas that were stale (they lack inputs) or failed: stale after the publish, so
        // they copy the output instead of serving rows they do not have.
        let missing_replicas = crate::remote::missing_replicas(table, tablet, &written.replicas)?;
        let compacted = CompactedRowset {
            tablet_id: tablet.id,
            output_id: self.record_compaction_output(tablet.id, inputs),
            inputs: inputs.iter().map(|r| r.id).collect(),
            segments: segments.clone(),
            delete_bitmaps: Vec::new(),
            input_deletes_seen: deletes_of(tablet, input_segments.iter().map(|s| &s.path)),
            segments_overlap: false,
            missing_replicas,
            seen_replicas: tablet.replicas.clone(),
        };
        let removed = match self.catalog().replace_rowsets(table.id, compacted) {
            Ok((_, removed)) => removed,
            Err(e) => {
                let outputs = segments
                    .iter()
                    .map(|s| (tablet.replicas.clone(), s.path.clone()))
                    .collect();
                remote.remove(outputs);
                return Err(e);
            }
        };
        self.remove_remote_when_unread(
            removed
                .iter()
                .flat_map(|r| r.segments.iter())
                .map(|s| (tablet.replicas.clone(), s.path.clone()))
                .collect(),
        );
        Ok(CompactionStats {
            table_id: table.id,
            tablet_id: tablet.id,
            reason: job.pick.reason,
            input_rowsets: inputs.len(),
            input_rows: inputs.iter().map(|r| r.num_rows()).sum(),
            output_rows: segments.iter().map(|s| s.num_rows).sum(),
            output_segments: segments.len(),
            start_version: inputs.first().map(|r| r.start_version).unwrap_or(0),
            end_version: inputs.last().map(|r| r.version).unwrap_or(0),
            carried_deletes: 0,
        })
    }

    /// A backend's part of a cluster compaction: merges `inputs` (segments of `tablet` held
    /// here, in version order) by the table's key model and writes the output as segments
    /// `c<output_id>_<n>` of at most `segment_rows` rows, durably. The frontend publishes them.
    pub fn compact_on_backend(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        inputs: &[SegmentMeta],
        output_id: u64,
        segment_rows: usize,
    ) -> Result<Vec<SegmentMeta>> {
        if table.keys_model == KeysModel::Unique {
            return Err(BasaltError::NotSupported(
                "compacting Unique-key tablets on a backend".into(),
            ));
        }
        let refs: Vec<&SegmentMeta> = inputs.iter().collect();
        let merged = self.merge_inputs(table, tablet, &refs)?;
        let output =
            self.write_output_as(table, tablet.id, merged, segment_rows.max(1), output_id)?;
        Ok(output.segments)
    }

    /// Reads the input segments in version order and merges them by the key model. For Unique
    /// keys, rows deleted in the snapshot are dropped and an origin column
    /// (`segment index << 32 | row`) is appended last.
    pub(crate) fn merge_inputs(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        segments: &[&SegmentMeta],
    ) -> Result<RecordBatch> {
        let all_rows = self.stored_rows(table, tablet, segments)?;
        // A SUM that adds up past its type fails here as it fails on read: the tablet keeps its
        // rowsets (the scheduler backs off) until the column is widened.
        sort_and_merge(&all_rows, &MergeSpec::for_table(table))
    }

    /// The input segments' rows in version order, unmerged (for Unique keys without the rows
    /// deleted in the snapshot, and with the origin column of [`Self::merge_inputs`]).
    pub(crate) fn stored_rows(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        segments: &[&SegmentMeta],
    ) -> Result<RecordBatch> {
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let unique = table.keys_model == KeysModel::Unique;
        let mut schema = table.arrow_schema();
        if unique {
            let mut fields: Vec<Field> = schema.fields().iter().map(|f| (**f).clone()).collect();
            fields.push(Field::new("__origin", DataType::UInt64, false));
            schema = Arc::new(Schema::new(fields));
        }
        let mut batches = Vec::new();
        for (seg_index, seg) in segments.iter().enumerate() {
            let deleted = match tablet.delete_bitmaps.get(&seg.path) {
                Some(b) if unique => delete_bitmap::decode(b)?,
                _ => RoaringBitmap::new(),
            };
            let mut first_row = 0u64;
            for batch in self.read_segment_columns(tablet, &seg.path, &all)? {
                let n = batch.num_rows() as u64;
                let rows = first_row..first_row + n;
                first_row += n;
                if !unique {
                    batches.push(batch);
                    continue;
                }
                let mut columns = batch.columns().to_vec();
                columns.push(Arc::new(UInt64Array::from_iter_values(
                    rows.clone().map(|r| ((seg_index as u64) << 32) | r),
                )) as ArrayRef);
                let with_origin =
                    RecordBatch::try_new(schema.clone(), columns).map_err(storage_err)?;
                if deleted.is_empty() {
                    batches.push(with_origin);
                } else {
                    let keep =
                        BooleanArray::from_iter(rows.map(|r| Some(!deleted.contains(r as u32))));
                    batches.push(filter_record_batch(&with_origin, &keep).map_err(storage_err)?);
                }
            }
        }
        concat_batches(&schema, &batches).map_err(storage_err)
    }

    /// Writes the merged rows as segments of at most `segment_rows` rows.
    pub(crate) fn write_output(
        &self,
        table: &TableMeta,
        tablet_id: TabletId,
        merged: RecordBatch,
        segment_rows: usize,
    ) -> Result<Output> {
        let id = self.catalog().allocate_id();
        self.write_output_as(table, tablet_id, merged, segment_rows, id)
    }

    /// [`StorageEngine::write_output`] with the output's id (its files are `c<id>_<n>`) given.
    fn write_output_as(
        &self,
        table: &TableMeta,
        tablet_id: TabletId,
        merged: RecordBatch,
        segment_rows: usize,
        id: u64,
    ) -> Result<Output> {
        let ncols = table.columns.len();
        let origins = if merged.num_columns() > ncols {
            merged
                .column(ncols)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .cloned()
        } else {
            None
        };
        let schema = table.arrow_schema();
        let data = RecordBatch::try_new(schema.clone(), merged.columns()[..ncols].to_vec())
            .map_err(storage_err)?;
        let blooms = bloom_filter_columns(table);
        // On a cluster's frontend (a rewrite): the segments go to the tablet's backends.
        let remote = match self.remote() {
            None => None,
            Some(remote) => {
                let tablet = table
                    .tablets()
                    .map(|(_, t)| t)
                    .find(|t| t.id == tablet_id)
                    .cloned()
                    .ok_or_else(|| BasaltError::Internal(format!("no tablet {tablet_id}")))?;
                Some((remote.clone(), tablet))
            }
        };
        let mut output = Output {
            segments: Vec::new(),
            batches: Vec::new(),
            origins,
            files: Vec::new(),
            segment_rows,
            remote: remote
                .as_ref()
                .map(|(r, t)| (r.clone(), t.replicas.clone())),
            holders: None,
        };
        let mut offset = 0;
        while offset < data.num_rows() {
            let len = segment_rows.min(data.num_rows() - offset);
            let part = data.slice(offset, len);
            let rel = tablet_dir(table.id, tablet_id)
                .join(format!("c{id}_{}.parquet", output.segments.len()));
            let written = match &remote {
                None => {
                    output.files.push(self.data_dir().join(&rel));
                    write_segment_as(
                        self.data_dir(),
                        &rel,
                        &schema,
                        std::slice::from_ref(&part),
                        &blooms,
                        table.stores_rows(),
                        self.json_form(),
                    )
                }
                Some((remote, tablet)) => {
                    output.files.push(rel.clone());
                    remote
                        .write(table, tablet, &rel, &schema, std::slice::from_ref(&part))
                        .map(|written| {
                            crate::remote::keep_common(&mut output.holders, &written.replicas);
                            written.meta
                        })
                }
            };
            match written {
                Ok(meta) => output.segments.push(meta),
                Err(e) => {
                    output.remove_files();
                    return Err(e);
                }
            }
            output.batches.push(part);
            offset += len;
        }
        Ok(output)
    }

    /// Publishes a Unique-key compaction under the table lock: rows of the inputs deleted since
    /// the compaction's snapshot are deleted in the output too, then the catalog swap, then the
    /// primary-key index follows the rows to their new place. Returns the replaced rowsets and
    /// the number of carried-over deletes.
    fn publish_unique_compaction(
        &self,
        table: &TableMeta,
        snapshot: &TabletMeta,
        input_segments: &[&SegmentMeta],
        output: &Output,
        mut compacted: CompactedRowset,
    ) -> Result<(Vec<Arc<RowsetMeta>>, u64)> {
        let lock = self.table_lock(table.id);
        let _guard = lock.lock();
        let current = self.catalog().table_by_id(table.id).ok_or_else(|| {
            BasaltError::Catalog(format!("table {} was dropped during compaction", table.id))
        })?;
        let tablet = current
            .tablets()
            .map(|(_, t)| t)
            .find(|t| t.id == snapshot.id)
            .ok_or_else(|| {
                BasaltError::Catalog(format!(
                    "tablet {} was dropped during compaction",
                    snapshot.id
                ))
            })?;
        // Rows deleted after the snapshot, per input segment index.
        let mut newly_deleted: Vec<Option<RoaringBitmap>> =
            Vec::with_capacity(input_segments.len());
        for seg in input_segments {
            let before = snapshot.delete_bitmaps.get(&seg.path);
            let now = tablet.delete_bitmaps.get(&seg.path);
            newly_deleted.push(match (before, now) {
                (_, None) => None,
                (Some(b), Some(n)) if b == n => None,
                (b, Some(n)) => {
                    let mut added = delete_bitmap::decode(n)?;
                    if let Some(b) = b {
                        added -= delete_bitmap::decode(b)?;
                    }
                    (!added.is_empty()).then_some(added)
                }
            });
        }
        let mut carried = 0u64;
        let mut output_deletes: Vec<RoaringBitmap> =
            vec![RoaringBitmap::new(); output.segments.len()];
        if newly_deleted.iter().any(Option::is_some) {
            let origins = output.origins.as_ref().ok_or_else(|| {
                BasaltError::Internal("unique compaction output lacks row origins".into())
            })?;
            for (i, origin) in origins.values().iter().enumerate() {
                let seg = (origin >> 32) as usize;
                let row = (origin & u64::from(u32::MAX)) as u32;
                if newly_deleted
                    .get(seg)
                    .and_then(Option::as_ref)
                    .is_some_and(|d| d.contains(row))
                {
                    let (seg, row) = (i / output.segment_rows, i % output.segment_rows);
                    if let Some(d) = output_deletes.get_mut(seg) {
                        d.insert(row as u32);
                    }
                    carried += 1;
                }
            }
        }
        for (seg, deletes) in output.segments.iter().zip(&output_deletes) {
            if !deletes.is_empty() {
                compacted
                    .delete_bitmaps
                    .push((seg.path.clone(), delete_bitmap::encode(deletes)?));
            }
        }
        // The output now carries every delete the inputs had when the lock was taken.
        compacted.input_deletes_seen = deletes_of(tablet, input_segments.iter().map(|s| &s.path));
        let (published, removed) = self.catalog().replace_rowsets(table.id, compacted)?;
        let version = published
            .tablets()
            .find(|(_, t)| t.id == snapshot.id)
            .map(|(_, t)| t.version());
        self.relocate_pk_index(
            table,
            snapshot.id,
            version,
            output,
            &output_deletes,
            input_segments,
        );
        Ok((removed, carried))
    }

    /// Points the cached primary-key index of a Unique tablet at the compaction's output rows
    /// (call with the table lock held). An index that is not current is evicted instead; it is
    /// rebuilt from the catalog when next needed.
    fn relocate_pk_index(
        &self,
        table: &TableMeta,
        tablet_id: TabletId,
        version: Option<u64>,
        output: &Output,
        output_deletes: &[RoaringBitmap],
        input_segments: &[&SegmentMeta],
    ) {
        let mut cache = self.pk_indexes.write();
        let Some(mut index) = cache.remove(&tablet_id) else {
            return;
        };
        if Some(index.version) != version {
            return;
        }
        let nkeys = table.num_key_columns;
        for ((seg, batch), deletes) in output
            .segments
            .iter()
            .zip(&output.batches)
            .zip(output_deletes)
        {
            let keys: Vec<ArrayRef> = batch.columns()[..nkeys].to_vec();
            if index
                .add_rows(&seg.path, &keys, 0, |r| deletes.contains(r), |_, _| {})
                .is_err()
            {
                return;
            }
        }
        index.forget_segments(input_segments.iter().map(|s| s.path.as_str()));
        cache.insert(tablet_id, index);
    }
}
