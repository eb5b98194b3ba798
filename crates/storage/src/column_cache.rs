//! Decoded column cache: the Arrow arrays of segment row groups, kept in memory and evicted
//! least-recently-used first when their bytes exceed the limit, so repeated scans skip reading
//! and decoding Parquet pages (Doris's page cache and ClickHouse's uncompressed cache play
//! this part). The caching itself is [`SegmentLru`]'s.

use crate::segment_lru::{SegmentKey, SegmentLru, Weighed};
use arrow::array::ArrayRef;
use std::sync::Arc;

/// One column of one row group of one segment (path relative to the data directory).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColumnKey {
    pub segment: Arc<str>,
    pub row_group: u32,
    pub column: u32,
    /// A JSON column's chunk as binary documents (true) or as text: a scan may ask for
    /// either, whichever form the segment stores.
    pub binary_json: bool,
}

impl SegmentKey for ColumnKey {
    fn segment(&self) -> &str {
        &self.segment
    }
}

impl Weighed for ArrayRef {
    fn weight(&self) -> usize {
        self.get_array_memory_size()
    }
}

pub type ColumnCache = SegmentLru<ColumnKey, ArrayRef>;
