//! Decoded column cache: the Arrow arrays of segment row groups, kept in memory and evicted
//! least-recently-used first when their bytes exceed the limit, so repeated scans skip reading
//! and decoding Parquet pages (Doris's page cache and ClickHouse's uncompressed cache play
//! this part). Segment files never change once written, so an entry never goes stale; entries
//! of segments that compaction deleted are dropped with [`ColumnCache::forget_segments`].

use arrow::array::ArrayRef;
use lru::LruCache;
use parking_lot::Mutex;
use std::sync::Arc;

/// One column of one row group of one segment (path relative to the data directory).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ColumnKey {
    pub segment: Arc<str>,
    pub row_group: u32,
    pub column: u32,
}

/// How full the cache is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ColumnCacheUsage {
    pub bytes: usize,
    pub entries: usize,
    pub capacity: usize,
}

pub struct ColumnCache {
    capacity: usize,
    state: Mutex<State>,
}

struct State {
    entries: LruCache<ColumnKey, ArrayRef>,
    bytes: usize,
}

impl std::fmt::Debug for ColumnCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnCache")
            .field("usage", &self.usage())
            .finish()
    }
}

impl ColumnCache {
    /// A cache holding at most `capacity` bytes of arrays; 0 disables it.
    pub fn new(capacity: usize) -> ColumnCache {
        ColumnCache {
            capacity,
            state: Mutex::new(State {
                entries: LruCache::unbounded(),
                bytes: 0,
            }),
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// The cached array, marked as just used.
    pub fn get(&self, key: &ColumnKey) -> Option<ArrayRef> {
        self.state.lock().entries.get(key).cloned()
    }

    /// Caches `array` (replacing an entry of the same key), then evicts the least recently used
    /// entries until the cache fits. An array larger than an eighth of the capacity is not
    /// cached: it would push out many small ones that other scans share.
    pub fn insert(&self, key: ColumnKey, array: ArrayRef) {
        let size = array.get_array_memory_size();
        if !self.enabled() || size > self.capacity / 8 {
            return;
        }
        let mut state = self.state.lock();
        if let Some(old) = state.entries.put(key, array) {
            state.bytes -= old.get_array_memory_size();
        }
        state.bytes += size;
        while state.bytes > self.capacity {
            match state.entries.pop_lru() {
                Some((_, evicted)) => state.bytes -= evicted.get_array_memory_size(),
                None => break,
            }
        }
    }

    /// Drops every entry of these segments (their files are being deleted).
    pub fn forget_segments<'a>(&self, segments: impl IntoIterator<Item = &'a str>) {
        let gone: std::collections::HashSet<&str> = segments.into_iter().collect();
        if gone.is_empty() {
            return;
        }
        let mut state = self.state.lock();
        let keys: Vec<ColumnKey> = state
            .entries
            .iter()
            .filter(|(k, _)| gone.contains(&*k.segment))
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            if let Some(array) = state.entries.pop(&key) {
                state.bytes -= array.get_array_memory_size();
            }
        }
    }

    pub fn usage(&self) -> ColumnCacheUsage {
        let state = self.state.lock();
        ColumnCacheUsage {
            bytes: state.bytes,
            entries: state.entries.len(),
            capacity: self.capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    fn key(segment: &str, column: u32) -> ColumnKey {
        ColumnKey {
            segment: segment.into(),
            row_group: 0,
            column,
        }
    }

    fn array(rows: usize) -> ArrayRef {
        Arc::new(Int64Array::from(vec![7i64; rows]))
    }

    #[test]
    fn evicts_least_recently_used_to_fit() {
        let one = array(1000).get_array_memory_size();
        let cache = ColumnCache::new(one * 8 + one / 2);
        for c in 0..8 {
            cache.insert(key("a", c), array(1000));
        }
        assert_eq!(cache.usage().entries, 8);
        // Touch column 0, then add a ninth: column 1 (least recently used) goes.
        assert!(cache.get(&key("a", 0)).is_some());
        cache.insert(key("a", 8), array(1000));
        assert!(cache.usage().bytes <= cache.usage().capacity);
        assert!(cache.get(&key("a", 0)).is_some());
        assert!(cache.get(&key("a", 1)).is_none());
        assert!(cache.get(&key("a", 8)).is_some());
    }

    #[test]
    fn large_arrays_and_disabled_cache_are_not_cached() {
        let one = array(1000).get_array_memory_size();
        let cache = ColumnCache::new(one * 4);
        cache.insert(key("a", 0), array(1000));
        assert!(
            cache.get(&key("a", 0)).is_none(),
            "over an eighth of the capacity"
        );
        let off = ColumnCache::new(0);
        off.insert(key("a", 0), array(1));
        assert!(off.get(&key("a", 0)).is_none());
    }

    #[test]
    fn forgetting_a_segment_frees_its_bytes() {
        let cache = ColumnCache::new(1 << 30);
        cache.insert(key("a", 0), array(100));
        cache.insert(key("a", 1), array(100));
        cache.insert(key("b", 0), array(100));
        let before = cache.usage().bytes;
        cache.forget_segments(["a"]);
        assert_eq!(cache.usage().entries, 1);
        assert_eq!(cache.usage().bytes, before / 3);
        assert!(cache.get(&key("b", 0)).is_some());
    }
}
