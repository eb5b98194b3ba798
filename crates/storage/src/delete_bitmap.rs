//! Delete bitmaps of merge-on-write Unique-key tables: roaring bitmaps of the row ordinals of a
//! segment that newer loads replaced, their stored form, and the Parquet row selection that
//! makes a scan skip those rows.

use crate::storage_err;
use basalt_catalog::DeleteBitmap;
use basalt_common::Result;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use roaring::RoaringBitmap;
use std::sync::Arc;

pub fn decode(b: &DeleteBitmap) -> Result<RoaringBitmap> {
    RoaringBitmap::deserialize_from(b.bytes.as_slice()).map_err(storage_err)
}

pub fn encode(bm: &RoaringBitmap) -> Result<DeleteBitmap> {
    let mut bytes = Vec::with_capacity(bm.serialized_size());
    bm.serialize_into(&mut bytes).map_err(storage_err)?;
    Ok(DeleteBitmap {
        bytes: Arc::new(bytes),
        deleted_rows: bm.len(),
    })
}

/// The rows of a `num_rows`-row segment that are not in `deleted`, as a Parquet row selection.
pub fn live_rows(deleted: &RoaringBitmap, num_rows: u64) -> RowSelection {
    let mut selectors = Vec::new();
    let mut next = 0u64; // first row not yet described
    let mut run_start: Option<u64> = None;
    let mut run_end = 0u64;
    for row in deleted.iter().map(u64::from).filter(|r| *r < num_rows) {
        match run_start {
            Some(_) if row == run_end => run_end += 1,
            _ => {
                if let Some(start) = run_start {
                    selectors.push(RowSelector::skip((run_end - start) as usize));
                    next = run_end;
                }
                if row > next {
                    selectors.push(RowSelector::select((row - next) as usize));
                }
                run_start = Some(row);
                run_end = row + 1;
            }
        }
    }
    if let Some(start) = run_start {
        selectors.push(RowSelector::skip((run_end - start) as usize));
        next = run_end;
    }
    if next < num_rows {
        selectors.push(RowSelector::select((num_rows - next) as usize));
    }
    RowSelection::from(selectors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_skips_deleted_rows() {
        let bm: RoaringBitmap = [0u32, 1, 5, 9].into_iter().collect();
        let sel = live_rows(&bm, 10);
        let selected: Vec<usize> = sel
            .iter()
            .filter(|s| !s.skip)
            .map(|s| s.row_count)
            .collect();
        assert_eq!(selected, vec![3, 3]);
        assert_eq!(sel.row_count(), 6);
        assert_eq!(live_rows(&RoaringBitmap::new(), 4).row_count(), 4);
        let all: RoaringBitmap = (0u32..4).collect();
        assert_eq!(live_rows(&all, 4).row_count(), 0);
        let round = encode(&bm).unwrap();
        assert_eq!(round.deleted_rows, 4);
        assert_eq!(decode(&round).unwrap(), bm);
    }
}
