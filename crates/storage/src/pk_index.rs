//! The primary-key index of a Unique-key tablet: key -> (segment, row) of the live row. Loads
//! consult it to find the rows they replace (merge-on-write), so reads never merge. It lives in
//! memory, built from the tablet's segments on first use and kept current by each publish.

use crate::delete_bitmap;
use crate::engine::StorageEngine;
use crate::storage_err;
use arrow::array::ArrayRef;
use arrow::row::{RowConverter, SortField};
use basalt_catalog::{TableMeta, TabletMeta};
use basalt_common::Result;
use foldhash::HashMap;
use foldhash::HashMapExt;
use std::sync::Arc;

pub struct PrimaryKeyIndex {
    /// The tablet version this index reflects.
    pub version: u64,
    converter: RowConverter,
    segments: Vec<Arc<str>>,
    segment_ids: HashMap<String, u32>,
    rows: HashMap<Box<[u8]>, (u32, u32)>,
}

impl PrimaryKeyIndex {
    fn empty(table: &TableMeta) -> Result<PrimaryKeyIndex> {
        let fields = table
            .key_columns()
            .iter()
            .map(|c| SortField::new(c.ty.arrow_type()))
            .collect();
        Ok(PrimaryKeyIndex {
            version: 0,
            converter: RowConverter::new(fields).map_err(storage_err)?,
            segments: Vec::new(),
            segment_ids: HashMap::new(),
            rows: HashMap::new(),
        })
    }

    /// Reads the key columns of every live row of the tablet.
    pub fn build(
        engine: &StorageEngine,
        table: &TableMeta,
        tablet: &TabletMeta,
    ) -> Result<PrimaryKeyIndex> {
        let mut index = Self::empty(table)?;
        let key_cols: Vec<usize> = (0..table.num_key_columns).collect();
        for rowset in &tablet.rowsets {
            for seg in &rowset.segments {
                let deleted = match tablet.delete_bitmaps.get(&seg.path) {
                    Some(b) => delete_bitmap::decode(b)?,
                    None => Default::default(),
                };
                let mut offset = 0u32;
                for batch in engine.read_segment_columns(tablet, &seg.path, &key_cols)? {
                    let n = batch.num_rows() as u32;
                    index.add_rows(
                        &seg.path,
                        batch.columns(),
                        offset,
                        |row| deleted.contains(row),
                        |_, _| {},
                    )?;
                    offset += n;
                }
            }
        }
        index.version = tablet.version();
        Ok(index)
    }

    pub(crate) fn converter(&self) -> &RowConverter {
        &self.converter
    }

    /// The live row (segment, row number) of an encoded key.
    pub(crate) fn get(&self, key: &[u8]) -> Option<(Arc<str>, u32)> {
        let (seg, row) = self.rows.get(key)?;
        Some((self.segments.get(*seg as usize)?.clone(), *row))
    }

    /// Forgets the names of segments no row points to any more (replaced by compaction).
    pub fn forget_segments<'a>(&mut self, segments: impl Iterator<Item = &'a str>) {
        for seg in segments {
            if let Some(id) = self.segment_ids.remove(seg) {
                if let Some(name) = self.segments.get_mut(id as usize) {
                    *name = Arc::from("");
                }
            }
        }
    }

    /// Records the rows of a new segment (key columns `keys`, rows numbered from `first_row`);
    /// `replaced(segment, row)` is called for each live row a new row replaces.
    pub fn add_rows(
        &mut self,
        segment: &str,
        keys: &[ArrayRef],
        first_row: u32,
        skip: impl Fn(u32) -> bool,
        mut replaced: impl FnMut(&str, u32),
    ) -> Result<()> {
        let seg_id = match self.segment_ids.get(segment) {
            Some(id) => *id,
            None => {
                let id = self.segments.len() as u32;
                self.segments.push(Arc::from(segment));
                self.segment_ids.insert(segment.to_string(), id);
                id
            }
        };
        let rows = self.converter.convert_columns(keys).map_err(storage_err)?;
        for (i, row) in rows.iter().enumerate() {
            let ordinal = first_row + i as u32;
            if skip(ordinal) {
                continue;
            }
            if let Some((old_seg, old_row)) =
                self.rows.insert(row.as_ref().into(), (seg_id, ordinal))
            {
                replaced(&self.segments[old_seg as usize], old_row);
            }
        }
        Ok(())
    }

    /// Forgets the rows `ordinals` of `segment` (delete tombstones): their keys no longer have
    /// a live row. `keys` are the segment's key columns.
    pub fn forget_rows(
        &mut self,
        segment: &str,
        keys: &[ArrayRef],
        ordinals: &[u32],
    ) -> Result<()> {
        let Some(&seg_id) = self.segment_ids.get(segment) else {
            return Ok(());
        };
        let rows = self.converter.convert_columns(keys).map_err(storage_err)?;
        for &ordinal in ordinals {
            let key = rows.row(ordinal as usize);
            let key: &[u8] = key.as_ref();
            if self.rows.get(key) == Some(&(seg_id, ordinal)) {
                self.rows.remove(key);
            }
        }
        Ok(())
    }
}
