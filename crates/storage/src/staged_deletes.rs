//! Carrying a SQL transaction's Unique-key deletes across a compaction. A transaction stages
//! its writes on the version of a tablet it read (`base`); its delete bitmaps mark the rows of
//! `base`'s segments its rows replaced. When a compaction publishes meanwhile, some of those
//! segments are merged into new ones: the marked rows now live elsewhere, at new row numbers.
//! They are found again by key in the compacted tablet (each key has one live row), so COMMIT
//! can publish the transaction's rowsets on the compacted version instead of failing.

use crate::delete_bitmap;
use crate::engine::StorageEngine;
use crate::pk_index::PrimaryKeyIndex;
use crate::storage_err;
use basalt_catalog::{DeleteBitmap, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use roaring::RoaringBitmap;
use std::collections::{BTreeMap, HashSet};

impl StorageEngine {
    /// The delete bitmaps of a Unique tablet after a transaction's commit: `current`'s (a
    /// version of the tablet that only compaction changed since `base`), plus what the
    /// transaction's staged version `staged` (of `base`) added — on its own segments as staged,
    /// on `base`'s segments still in `current` as staged, and for rows of segments the
    /// compaction replaced, on the rows that hold their keys in `current`.
    pub fn carry_staged_deletes(
        &self,
        table: &TableMeta,
        base: &TabletMeta,
        staged: &TabletMeta,
        current: &TabletMeta,
    ) -> Result<BTreeMap<String, DeleteBitmap>> {
        let paths = |t: &TabletMeta| -> HashSet<String> {
            t.rowsets
                .iter()
                .flat_map(|r| r.segments.iter().map(|s| s.path.clone()))
                .collect()
        };
        let (base_paths, current_paths) = (paths(base), paths(current));
        let mut result = current.delete_bitmaps.clone();
        let mut relocate: Vec<(String, RoaringBitmap)> = Vec::new();
        for (path, bitmap) in &staged.delete_bitmaps {
            if !base_paths.contains(path) {
                // A segment the transaction wrote.
                result.insert(path.clone(), bitmap.clone());
                continue;
            }
            if base.delete_bitmaps.get(path) == Some(bitmap) {
                continue;
            }
            let mut added = delete_bitmap::decode(bitmap)?;
            if let Some(before) = base.delete_bitmaps.get(path) {
                added -= delete_bitmap::decode(before)?;
            }
            if added.is_empty() {
                continue;
            }
            if current_paths.contains(path) {
                let mut now = match current.delete_bitmaps.get(path) {
                    Some(b) => delete_bitmap::decode(b)?,
                    None => RoaringBitmap::new(),
                };
                now |= added;
                result.insert(path.clone(), delete_bitmap::encode(&now)?);
            } else {
                relocate.push((path.clone(), added));
            }
        }
        if relocate.is_empty() {
            return Ok(result);
        }
        let index = PrimaryKeyIndex::build(self, table, current)?;
        let key_cols: Vec<usize> = (0..table.num_key_columns).collect();
        let mut found: BTreeMap<String, RoaringBitmap> = BTreeMap::new();
        for (path, rows) in relocate {
            let mut first = 0u32;
            for batch in self.read_segment_columns(base, &path, &key_cols)? {
                let n = batch.num_rows() as u32;
                let keys = index
                    .converter()
                    .convert_columns(batch.columns())
                    .map_err(storage_err)?;
                for row in rows.range(first..first + n) {
                    let key = keys.row((row - first) as usize);
                    let (segment, at) = index.get(key.as_ref()).ok_or_else(|| {
                        BasaltError::TransactionConflict(format!(
                            "a row the transaction replaced in {}.{} is gone",
                            table.database, table.name
                        ))
                    })?;
                    found.entry(segment.to_string()).or_default().insert(at);
                }
                first += n;
            }
        }
        for (path, rows) in found {
            let mut now = match result.get(&path) {
                Some(b) => delete_bitmap::decode(b)?,
                None => RoaringBitmap::new(),
            };
            now |= rows;
            result.insert(path, delete_bitmap::encode(&now)?);
        }
        Ok(result)
    }
}
