//! UPDATE on Duplicate-key tables. Their rows have no key a new version could replace them by,
//! so each tablet holding a matching row is rewritten with the matching rows changed in place
//! (others as they were, in their order), and every rewritten tablet is published in one
//! catalog transaction ([`basalt_catalog::TabletCatalog::alter_table`]): readers see all of the
//! statement's changes or none, and a failure anywhere (a value that does not fit its column, a
//! concurrent load) publishes nothing and removes the files written. Tablets without a
//! matching row keep their rowsets.
//!
//! A Duplicate table's key is only its sort key, so the changed rows are sorted again. When
//! the statement assigns a partition or distribution column, an updated row may belong to
//! another tablet: it leaves its tablet's rewrite and is written to its new tablet as a new
//! rowset in the same publish, as a load would write it (rows of a RANDOM-distributed table
//! that stay in their partition stay in their tablet).
//!
//! Memory: one tablet's rows at a time, plus the rows that move.

use crate::compaction::{now_ms, Output};
use crate::conform::conform;
use crate::engine::StorageEngine;
use crate::merge::{sort_and_merge, MergeSpec};
use crate::routing::{route_batch, PartitionLocator};
use crate::storage_err;
use crate::writer::no_partition_error;
use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt32Array};
use arrow::compute::kernels::cmp::distinct;
use arrow::compute::{concat_batches, filter_record_batch, or, take_record_batch};
use basalt_catalog::{RowsetMeta, SegmentMeta, TableMeta, TabletId, TabletMeta};
use basalt_common::{BasaltError, Result};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Rows per segment of a rewritten tablet.
const SEGMENT_ROWS: usize = 1 << 20;

/// One tablet's rows after an UPDATE: every row of the tablet in its order (the table's
/// columns, in any types `conform` takes), and which of them the statement matched.
pub struct UpdatedRows {
    pub rows: RecordBatch,
    pub matched: BooleanArray,
}

/// Turns a tablet's rows (the table's columns, merged) into their updated form; `None` when
/// no row matches.
pub type RowUpdate<'a> = dyn Fn(RecordBatch) -> Result<Option<UpdatedRows>> + 'a;

/// What an UPDATE did.
#[derive(Debug, Clone)]
pub struct UpdateStats {
    pub table: Arc<TableMeta>,
    /// Rows the statement matched, and those of them whose values it changed.
    pub matched: u64,
    pub changed: u64,
}

/// Rows moving to other tablets, by target tablet.
type Moving = BTreeMap<TabletId, Vec<RecordBatch>>;

impl StorageEngine {
    /// Applies `update` to every tablet of `table` (a snapshot) and publishes the changed
    /// tablets together. `routes_change` says whether the statement assigns a partition or
    /// distribution column (rows may then move between tablets). Fails with 1412, publishing
    /// nothing, if a load or compaction changed the table meanwhile.
    pub fn update_table(
        &self,
        table: &Arc<TableMeta>,
        routes_change: bool,
        update: &RowUpdate<'_>,
    ) -> Result<UpdateStats> {
        let _guard = self.begin_read();
        let mut new = (**table).clone();
        let mut outputs: Vec<Output> = Vec::new();
        let written = self.update_tablets(table, &mut new, routes_change, update, &mut outputs);
        let (matched, changed) = match written {
            Ok(counts) => counts,
            Err(e) => {
                outputs.iter().for_each(Output::remove_files);
                return Err(e);
            }
        };
        if matched == 0 {
            return Ok(UpdateStats {
                table: table.clone(),
                matched,
                changed,
            });
        }
        let (published, removed) = match self.catalog().alter_table(table, new) {
            Ok(done) => done,
            Err(e) => {
                outputs.iter().for_each(Output::remove_files);
                return Err(e);
            }
        };
        self.retire_rowsets(table, &removed);
        Ok(UpdateStats {
            table: published,
            matched,
            changed,
        })
    }

    /// Writes each changed tablet's rows, then the rows that moved; fills `new`'s tablets
    /// with their rowsets. Returns the rows matched and changed.
    fn update_tablets(
        &self,
        table: &TableMeta,
        new: &mut TableMeta,
        routes_change: bool,
        update: &RowUpdate<'_>,
        outputs: &mut Vec<Output>,
    ) -> Result<(u64, u64)> {
        let spec = MergeSpec::for_table(table);
        let ncols = table.columns.len();
        let locator = PartitionLocator::new(table);
        let mut round_robin = 0u64;
        let mut moving = Moving::new();
        let (mut matched, mut changed) = (0u64, 0u64);
        for (partition, tablet) in table
            .partitions
            .iter()
            .enumerate()
            .flat_map(|(p, part)| part.tablets.iter().map(move |t| (p, t)))
        {
            if tablet.rowsets.is_empty() {
                continue;
            }
            let segments: Vec<&SegmentMeta> = tablet
                .rowsets
                .iter()
                .flat_map(|r| r.segments.iter())
                .collect();
            let merged = self.merge_inputs(table, tablet, &segments)?;
            let old =
                RecordBatch::try_new(table.arrow_schema(), merged.columns()[..ncols].to_vec())
                    .map_err(storage_err)?;
            let Some(updated) = update(old.clone())? else {
                continue;
            };
            if updated.rows.num_rows() != old.num_rows() || updated.matched.len() != old.num_rows()
            {
                return Err(BasaltError::Internal(
                    "UPDATE's rows do not match the tablet's".into(),
                ));
            }
            let hits = updated.matched.true_count() as u64;
            if hits == 0 {
                continue;
            }
            let rows = RecordBatch::try_new(table.arrow_schema(), conform(table, &updated.rows)?)
                .map_err(storage_err)?;
            matched += hits;
            changed += count_changed(&old, &rows, &updated.matched)?;
            let staying = if routes_change {
                let place = Place {
                    table,
                    locator: &locator,
                    partition,
                    tablet: tablet.id,
                };
                place.split(&rows, &updated.matched, &mut round_robin, &mut moving)?
            } else {
                rows
            };
            let sorted = sort_and_merge(&staying, &spec)?;
            let output = self.write_output(table, tablet.id, sorted, SEGMENT_ROWS)?;
            // On a cluster: replicas that missed the rewritten rows turn stale with the publish.
            let missing = output.missing_replicas(table, tablet);
            let rowset = RowsetMeta {
                id: self.catalog().allocate_id(),
                tablet_id: tablet.id,
                start_version: tablet.start_version(),
                version: tablet.version(),
                segments: output.segments.clone(),
                segments_overlap: false,
                created_ms: now_ms(),
            };
            outputs.push(output);
            let target = tablet_mut(new, tablet.id)?;
            target.rowsets = vec![Arc::new(rowset)];
            target.delete_bitmaps.clear();
            target.mark_stale(missing?);
        }
        for (tablet_id, batches) in moving {
            let rows = concat_batches(&table.arrow_schema(), &batches).map_err(storage_err)?;
            let sorted = sort_and_merge(&rows, &spec)?;
            let output = self.write_output(table, tablet_id, sorted, SEGMENT_ROWS)?;
            let target = tablet_mut(new, tablet_id)?;
            let missing = output.missing_replicas(table, target);
            // As a load: the tablet's next version.
            let version = target.version() + 1;
            let rowset = RowsetMeta {
                id: self.catalog().allocate_id(),
                tablet_id,
                start_version: version,
                version,
                segments_overlap: output.segments.len() > 1,
                segments: output.segments.clone(),
                created_ms: now_ms(),
            };
            outputs.push(output);
            target.rowsets.push(Arc::new(rowset));
            target.mark_stale(missing?);
        }
        Ok((matched, changed))
    }
}

/// Where a tablet's updated rows belong.
struct Place<'a> {
    table: &'a TableMeta,
    locator: &'a PartitionLocator,
    /// The tablet's partition (index into the table's partitions) and id.
    partition: usize,
    tablet: TabletId,
}

impl Place<'_> {
    /// The rows staying in the tablet; the matched rows that belong elsewhere go to `moving`.
    fn split(
        &self,
        rows: &RecordBatch,
        matched: &BooleanArray,
        round_robin: &mut u64,
        moving: &mut Moving,
    ) -> Result<RecordBatch> {
        let hits: Vec<u32> = (0..rows.num_rows() as u32)
            .filter(|&i| matched.is_valid(i as usize) && matched.value(i as usize))
            .collect();
        let hit_rows =
            take_record_batch(rows, &UInt32Array::from(hits.clone())).map_err(storage_err)?;
        let routed = route_batch(self.table, self.locator, &hit_rows, round_robin)?;
        if let Some((_, value)) = routed.unrouted.first() {
            return Err(no_partition_error(self.table, value));
        }
        let random = self.table.distribution.columns.is_empty();
        let mut stays = vec![true; rows.num_rows()];
        for (target, positions) in routed.by_tablet {
            let same_place = if random {
                self.partition_of(target) == Some(self.partition)
            } else {
                target == self.tablet
            };
            if same_place {
                continue;
            }
            for &p in &positions {
                stays[hits[p as usize] as usize] = false;
            }
            let leaving =
                take_record_batch(&hit_rows, &UInt32Array::from(positions)).map_err(storage_err)?;
            moving.entry(target).or_default().push(leaving);
        }
        filter_record_batch(rows, &BooleanArray::from(stays)).map_err(storage_err)
    }

    fn partition_of(&self, tablet: TabletId) -> Option<usize> {
        self.table
            .partitions
            .iter()
            .position(|p| p.tablets.iter().any(|t| t.id == tablet))
    }
}

fn tablet_mut(table: &mut TableMeta, id: TabletId) -> Result<&mut TabletMeta> {
    table
        .tablets_mut()
        .find(|t| t.id == id)
        .ok_or_else(|| BasaltError::Internal(format!("UPDATE lost tablet {id}")))
}

/// How many matched rows differ from their old values in some column (NULL and NULL are the
/// same; a column whose values cannot be compared counts as changed).
fn count_changed(old: &RecordBatch, new: &RecordBatch, matched: &BooleanArray) -> Result<u64> {
    let mut differs = BooleanArray::from(vec![false; old.num_rows()]);
    for (before, after) in old.columns().iter().zip(new.columns()) {
        let column: ArrayRef = match distinct(before, after) {
            Ok(d) => Arc::new(d),
            Err(_) => Arc::new(BooleanArray::from(vec![true; old.num_rows()])),
        };
        let column = column
            .as_any()
            .downcast_ref::<BooleanArray>()
            .cloned()
            .unwrap_or_else(|| BooleanArray::from(vec![true; old.num_rows()]));
        differs = or(&differs, &column).map_err(storage_err)?;
    }
    Ok((0..old.num_rows())
        .filter(|&i| matched.is_valid(i) && matched.value(i) && differs.value(i))
        .count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    fn batch(ages: Vec<Option<i32>>, names: Vec<&str>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("age", DataType::Int32, true),
            Field::new("name", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(ages)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn only_matched_rows_with_other_values_count_as_changed() {
        let old = batch(
            vec![Some(1), None, Some(3), Some(4)],
            vec!["a", "b", "c", "d"],
        );
        // Row 0 same, row 1 NULL to NULL with another name, row 2 same, row 3 changed but
        // not matched.
        let new = batch(
            vec![Some(1), None, Some(3), Some(9)],
            vec!["a", "x", "c", "d"],
        );
        let matched = BooleanArray::from(vec![true, true, true, false]);
        assert_eq!(count_changed(&old, &new, &matched).unwrap(), 1);
        let all = BooleanArray::from(vec![true; 4]);
        assert_eq!(count_changed(&old, &new, &all).unwrap(), 2);
    }
}
