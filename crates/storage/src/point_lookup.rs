//! Point lookups on Unique-key tables: key values are routed to their tablet (partition and
//! bucket), found in the tablet's primary-key index, and their rows fetched from the row cache,
//! the row store, or — for segments written before the table stored rows — the segment itself.

use crate::engine::StorageEngine;
use crate::pk_index::PrimaryKeyIndex;
use crate::routing::{route_batch, PartitionLocator};
use crate::row_cache::RowKey;
use crate::row_store::row_store_path;
use crate::storage_err;
use arrow::array::RecordBatch;
use basalt_catalog::{KeysModel, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection, RowSelector};
use std::sync::Arc;

/// Where a key's live row is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLocation {
    pub segment: Arc<str>,
    pub row: u32,
}

impl StorageEngine {
    /// The encoded rows (see [`crate::row_store`]) of the live rows with the keys in `keys`
    /// (the key columns, in key order and storage types), one entry per key row: `None` where no
    /// live row has that key.
    pub fn lookup_rows(
        &self,
        table: &TableMeta,
        keys: &RecordBatch,
    ) -> Result<Vec<Option<Arc<[u8]>>>> {
        if table.keys_model != KeysModel::Unique {
            return Err(BasaltError::Internal(format!(
                "point lookup on {} which is not a Unique-key table",
                table.name
            )));
        }
        // Files that compaction replaces stay readable until this lookup ends.
        let _reading = self.begin_read();
        let locator = PartitionLocator::new(table);
        let mut round_robin = 0;
        let routed = route_batch(table, &locator, keys, &mut round_robin)?;
        let mut out: Vec<Option<Arc<[u8]>>> = vec![None; keys.num_rows()];
        for (tablet_id, rows) in routed.by_tablet {
            let Some(tablet) = table.tablets().map(|(_, t)| t).find(|t| t.id == tablet_id) else {
                continue;
            };
            let tablet_keys = if rows.len() == keys.num_rows() {
                keys.clone()
            } else {
                let indices = arrow::array::UInt32Array::from(rows.clone());
                arrow::compute::take_record_batch(keys, &indices).map_err(storage_err)?
            };
            let locations = self.locate_keys(table, tablet, &tablet_keys)?;
            let found: Vec<(u32, RowLocation)> = rows
                .iter()
                .zip(locations)
                .filter_map(|(row, loc)| Some((*row, loc?)))
                .collect();
            let fetched = self.fetch_rows(tablet, found.iter().map(|(_, loc)| loc))?;
            for ((row, _), bytes) in found.iter().zip(fetched) {
                out[*row as usize] = Some(bytes);
            }
        }
        Ok(out)
    }

    /// The encoded rows at `locations` of `tablet`: from the row cache, else from the row
    /// store — here, or on a cluster's frontend from a backend holding the tablet, asked once
    /// for all the rows the cache misses.
    fn fetch_rows<'a>(
        &self,
        tablet: &TabletMeta,
        locations: impl Iterator<Item = &'a RowLocation>,
    ) -> Result<Vec<Arc<[u8]>>> {
        let Some(remote) = self.remote() else {
            return locations.map(|loc| self.fetch_row(loc)).collect();
        };
        let mut out: Vec<Option<Arc<[u8]>>> = Vec::new();
        let mut misses: Vec<(usize, RowKey)> = Vec::new();
        for loc in locations {
            let key = RowKey {
                segment: loc.segment.clone(),
                row: loc.row,
            };
            let cached = self.row_cache.get(&key);
            if cached.is_none() {
                misses.push((out.len(), key));
            }
            out.push(cached);
        }
        if !misses.is_empty() {
            let wanted: Vec<(String, u32)> = misses
                .iter()
                .map(|(_, k)| (k.segment.to_string(), k.row))
                .collect();
            let rows = remote.read_rows(tablet, &wanted)?;
            if rows.len() != misses.len() {
                return Err(BasaltError::Storage(format!(
                    "a backend returned {} of {} rows of tablet {}",
                    rows.len(),
                    misses.len(),
                    tablet.id
                )));
            }
            for ((slot, key), row) in misses.into_iter().zip(rows) {
                let row: Arc<[u8]> = row.into();
                self.row_cache.insert(key, row.clone());
                out[slot] = Some(row);
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// On a backend: the encoded rows at `rows` (catalog segment path, row number) of segments
    /// stored here, for a frontend's point query.
    pub fn read_rows_here(&self, rows: &[(String, u32)]) -> Result<Vec<Arc<[u8]>>> {
        let _reading = self.begin_read();
        rows.iter()
            .map(|(segment, row)| {
                crate::files::check_segment_path(segment).map_err(BasaltError::Storage)?;
                self.fetch_row(&RowLocation {
                    segment: Arc::from(segment.as_str()),
                    row: *row,
                })
            })
            .collect()
    }

    /// Finds each key of `keys` in the tablet's primary-key index.
    fn locate_keys(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        keys: &RecordBatch,
    ) -> Result<Vec<Option<RowLocation>>> {
        // Fast path: the cached index is at least as new as the snapshot we were given (a
        // publish that finished since only makes the answer fresher).
        {
            let indexes = self.pk_indexes.read();
            if let Some(index) = indexes.get(&tablet.id) {
                if index.version >= tablet.version() {
                    return index.locate(keys.columns());
                }
            }
        }
        // Missing or behind: a publish holds it, or it was never built. Wait for the table's
        // writers, then build it from the current catalog.
        let lock = self.table_lock(table.id);
        let _guard = lock.lock();
        let current = self
            .catalog()
            .table_by_id(table.id)
            .ok_or_else(|| BasaltError::UnknownTable(table.name.clone()))?;
        let Some(tablet) = current
            .tablets()
            .map(|(_, t)| t)
            .find(|t| t.id == tablet.id)
        else {
            return Ok(vec![None; keys.num_rows()]);
        };
        {
            let indexes = self.pk_indexes.read();
            if let Some(index) = indexes.get(&tablet.id) {
                if index.version == tablet.version() {
                    return index.locate(keys.columns());
                }
            }
        }
        let index = PrimaryKeyIndex::build(self, &current, tablet)?;
        let found = index.locate(keys.columns());
        self.pk_indexes.write().insert(tablet.id, index);
        found
    }

    /// The encoded row at `loc`: from the row cache, else the row store (filling the cache).
    fn fetch_row(&self, loc: &RowLocation) -> Result<Arc<[u8]>> {
        let key = RowKey {
            segment: loc.segment.clone(),
            row: loc.row,
        };
        if let Some(row) = self.row_cache.get(&key) {
            return Ok(row);
        }
        let path = self.segment_path(&loc.segment);
        let row: Arc<[u8]> = match self.row_files.read_row(&row_store_path(&path), loc.row)? {
            Some(bytes) => bytes.into(),
            None => self.read_row_from_segment(&path, loc.row)?.into(),
        };
        self.row_cache.insert(key, row.clone());
        Ok(row)
    }

    /// Reads one row of a segment without a row store, encoded as the row store would hold it.
    fn read_row_from_segment(&self, path: &std::path::Path, row: u32) -> Result<Vec<u8>> {
        let file = std::fs::File::open(path)?;
        let selection = RowSelection::from(vec![
            RowSelector::skip(row as usize),
            RowSelector::select(1),
        ]);
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(storage_err)?
            .with_row_selection(selection)
            .build()
            .map_err(storage_err)?;
        for batch in reader {
            let batch = crate::json_columns::to_text_batch(batch.map_err(storage_err)?)?;
            if batch.num_rows() == 1 {
                let mut out = Vec::new();
                crate::row_store::encode_row(batch.columns(), 0, &mut out)?;
                return Ok(out);
            }
        }
        Err(BasaltError::Storage(format!(
            "row {row} not found in {}",
            path.display()
        )))
    }
}

impl PrimaryKeyIndex {
    /// The live row of each key row of `keys`.
    pub(crate) fn locate(
        &self,
        keys: &[arrow::array::ArrayRef],
    ) -> Result<Vec<Option<RowLocation>>> {
        let rows = self
            .converter()
            .convert_columns(keys)
            .map_err(storage_err)?;
        Ok(rows
            .iter()
            .map(|key| {
                self.get(key.as_ref())
                    .map(|(segment, row)| RowLocation { segment, row })
            })
            .collect())
    }
}
