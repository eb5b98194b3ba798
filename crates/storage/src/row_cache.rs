//! The row cache: encoded rows of row-store segments, least-recently-used first out when their
//! bytes exceed the limit (`row_cache_mem_limit`). Entries are keyed by where the row lives
//! (segment, row number); segments never change, and loads, updates and deletes move a key's live
//! row to a new place through the primary-key index, so an entry can never be stale — an old
//! location is simply no longer asked for, and entries of deleted segments are dropped.

use crate::segment_lru::{SegmentKey, SegmentLru, Weighed};
use std::sync::Arc;

/// Bytes of bookkeeping counted per entry besides the row itself.
const ENTRY_OVERHEAD: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowKey {
    pub segment: Arc<str>,
    pub row: u32,
}

impl SegmentKey for RowKey {
    fn segment(&self) -> &str {
        &self.segment
    }
}

/// One encoded row (see [`crate::row_store`]).
pub type EncodedRow = Arc<[u8]>;

impl Weighed for EncodedRow {
    fn weight(&self) -> usize {
        self.len() + ENTRY_OVERHEAD
    }
}

pub type RowCache = SegmentLru<RowKey, EncodedRow>;
