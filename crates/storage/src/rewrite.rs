//! Whole-table rewrites: ALTER TABLE changes that reach the stored rows (columns added, dropped,
//! renamed, retyped) and DELETE on Duplicate and Aggregate tables. Each tablet's visible rows are
//! read merged under the old definition, passed through the caller's transform, merged again
//! under the new key model, checked against the new column types, and written as one rowset that
//! covers the tablet's versions. The new definition and every tablet's new rowset are published
//! in one catalog transaction (`TabletCatalog::alter_table`), so readers see the table entirely before
//! or entirely after; a failure anywhere (a value that does not fit its new type, a concurrent
//! load) publishes nothing and removes the files written.
//!
//! A schema change passes each stored row through the transform before merging
//! ([`RewriteRows::EachStoredRow`]): converting a value commutes with the key models' merge, and an
//! Aggregate table's SUM whose loads added up past the old type (which reads refuse) merges in the
//! new, wider type. A DELETE judges the merged rows ([`RewriteRows::Merged`]), since its predicate
//! may read aggregated values.
//!
//! Memory: one tablet's rows at a time, as compaction.

use crate::compaction::{now_ms, Output};
use crate::conform::conform;
use crate::engine::StorageEngine;
use crate::merge::{sort_and_merge, MergeSpec};
use crate::storage_err;
use arrow::array::RecordBatch;
use basalt_catalog::{KeysModel, RowsetMeta, SegmentMeta, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use std::sync::Arc;

/// Rows per segment of a rewritten tablet.
const SEGMENT_ROWS: usize = 1 << 20;

/// Turns a batch of the old definition's columns into the new definition's columns (and may
/// drop rows).
pub type RowTransform<'a> = dyn Fn(RecordBatch) -> Result<RecordBatch> + 'a;

/// Which rows of the old definition the transform sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteRows {
    /// Each tablet's visible rows, merged under the old definition.
    Merged,
    /// Each stored row of an Aggregate-key tablet before merging (merged under the new
    /// definition afterwards); other key models' visible rows, as `Merged`.
    EachStoredRow,
}

/// Which tablets a rewrite rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewriteScope {
    /// A schema change: every tablet, the temporary partitions' too.
    AllTablets,
    /// An UPDATE or DELETE: the formal partitions' tablets (the rows queries see).
    FormalPartitions,
}

/// What a rewrite did.
#[derive(Debug, Clone)]
pub struct RewriteStats {
    pub table: Arc<TableMeta>,
    /// Visible rows before and after the transform.
    pub rows_before: u64,
    pub rows_after: u64,
}

impl StorageEngine {
    /// Rewrites every tablet of `old` (a snapshot) into `new`, the changed definition of the
    /// same table (same partitions and tablets), and publishes both together. Fails with 1412,
    /// publishing nothing, if a load or compaction changed the table meanwhile: the caller may
    /// read a fresh snapshot and try again.
    pub fn rewrite_table(
        &self,
        old: &Arc<TableMeta>,
        mut new: TableMeta,
        rows: RewriteRows,
        scope: RewriteScope,
        transform: &RowTransform<'_>,
    ) -> Result<RewriteStats> {
        // On a cluster's frontend the rows come from the backends holding each tablet and the
        // rewritten segments go back to them (the whole table passes through the frontend).
        // Registered before reading, so the files read stay until the rewrite is done.
        let _guard = self.begin_read();
        let mut outputs: Vec<Output> = Vec::new();
        let written = self.rewrite_tablets(old, &mut new, rows, scope, transform, &mut outputs);
        let (rows_before, rows_after) = match written {
            Ok(counts) => counts,
            Err(e) => {
                outputs.iter().for_each(Output::remove_files);
                return Err(e);
            }
        };
        let (table, removed) = match self.catalog().alter_table(old, new) {
            Ok(done) => done,
            Err(e) => {
                outputs.iter().for_each(Output::remove_files);
                return Err(e);
            }
        };
        self.retire_rowsets(old, &removed);
        Ok(RewriteStats {
            table,
            rows_before,
            rows_after,
        })
    }

    /// Publishes a definition change that leaves the stored rows as they are (renaming the
    /// table, comments, properties).
    pub fn alter_definition(&self, old: &Arc<TableMeta>, new: TableMeta) -> Result<Arc<TableMeta>> {
        let (table, removed) = self.catalog().alter_table(old, new)?;
        self.retire_rowsets(old, &removed);
        Ok(table)
    }

    /// Writes each tablet's rewritten rows; fills `new`'s tablets with their one new rowset.
    fn rewrite_tablets(
        &self,
        old: &TableMeta,
        new: &mut TableMeta,
        rows: RewriteRows,
        scope: RewriteScope,
        transform: &RowTransform<'_>,
        outputs: &mut Vec<Output>,
    ) -> Result<(u64, u64)> {
        let spec = MergeSpec::for_table(new);
        let each_stored_row =
            rows == RewriteRows::EachStoredRow && old.keys_model == KeysModel::Aggregate;
        let ncols = old.columns.len();
        let (mut before, mut after) = (0u64, 0u64);
        let new_definition = new.clone();
        let tablets: Vec<&TabletMeta> = match scope {
            RewriteScope::AllTablets => old.tablets().map(|(_, t)| t).collect(),
            RewriteScope::FormalPartitions => old
                .partitions
                .iter()
                .flat_map(|p| p.tablets.iter())
                .collect(),
        };
        for tablet in tablets {
            if tablet.rowsets.is_empty() {
                continue;
            }
            let segments: Vec<&SegmentMeta> = tablet
                .rowsets
                .iter()
                .flat_map(|r| r.segments.iter())
                .collect();
            let merged = if each_stored_row {
                self.stored_rows(old, tablet, &segments)?
            } else {
                self.merge_inputs(old, tablet, &segments)?
            };
            // Unique keys carry an origin column for compaction; a rewrite has no use for it.
            let rows = RecordBatch::try_new(old.arrow_schema(), merged.columns()[..ncols].to_vec())
                .map_err(storage_err)?;
            before += rows.num_rows() as u64;
            let changed = transform(rows)?;
            let checked = conform(&new_definition, &changed)?;
            let checked = RecordBatch::try_new(new_definition.arrow_schema(), checked)
                .map_err(storage_err)?;
            let remerged = sort_and_merge(&checked, &spec)?;
            after += remerged.num_rows() as u64;
            let output = self.write_output(&new_definition, tablet.id, remerged, SEGMENT_ROWS)?;
            // On a cluster: replicas that missed the rewritten rows turn stale with the publish.
            let missing = output.missing_replicas(&new_definition, tablet);
            outputs.push(output);
            let missing = missing?;
            let output = outputs.last().ok_or_else(|| {
                BasaltError::Internal(format!("rewrite lost tablet {}", tablet.id))
            })?;
            let rowset = RowsetMeta {
                id: self.catalog().allocate_id(),
                tablet_id: tablet.id,
                start_version: tablet.start_version(),
                version: tablet.version(),
                segments: output.segments.clone(),
                segments_overlap: false,
                created_ms: now_ms(),
            };
            let target = new
                .tablets_mut()
                .find(|t| t.id == tablet.id)
                .ok_or_else(|| {
                    BasaltError::Internal(format!("rewrite lost tablet {}", tablet.id))
                })?;
            target.rowsets = vec![Arc::new(rowset)];
            target.delete_bitmaps.clear();
            target.mark_stale(missing);
        }
        Ok((before, after))
    }

    /// After a publish: the replaced rowsets' files go once no query reads them, and what the
    /// caches hold of them (and the tablets' primary-key indexes) is forgotten.
    pub fn retire_rowsets(&self, old: &TableMeta, removed: &[Arc<RowsetMeta>]) {
        if removed.is_empty() {
            return;
        }
        // The rewritten rows live at new places (a cluster's frontend keeps the key indexes
        // of its Unique tablets too).
        self.evict_indexes(old.tablets().map(|(_, t)| t));
        if self.remote().is_some() {
            let holders = |tablet: u64| {
                old.tablets()
                    .find(|(_, t)| t.id == tablet)
                    .map(|(_, t)| t.replicas.clone())
                    .unwrap_or_default()
            };
            self.remove_remote_when_unread(
                removed
                    .iter()
                    .flat_map(|r| {
                        r.segments
                            .iter()
                            .map(|s| (holders(r.tablet_id), s.path.clone()))
                    })
                    .collect(),
            );
            return;
        }
        let segments = || removed.iter().flat_map(|r| r.segments.iter());
        self.forget_segment_caches(segments().map(|s| s.path.as_str()));
        let files = segments().map(|s| self.segment_path(&s.path)).collect();
        self.reads.delete_when_unread(files);
    }
}
