//! The row cache: encoded rows of row-store segments, least-recently-used first out when their
//! bytes exceed the limit (`row_cache_mem_limit`). Entries are keyed by where the row lives
//! (segment, row number); segments never change, and loads, updates and deletes move a key's live
//! row to a new place through the primary-key index, so an entry can never be stale — an old
//! location is simply no longer asked for, and entries of deleted segments are dropped.

use lru::LruCache;
use parking_lot::Mutex;
use std::sync::Arc;

/// Bytes of bookkeeping counted per entry besides the row itself.
const ENTRY_OVERHEAD: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowKey {
    pub segment: Arc<str>,
    pub row: u32,
}

/// How the cache is used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowCacheStats {
    pub bytes: usize,
    pub entries: usize,
    pub capacity: usize,
    pub hits: u64,
    pub misses: u64,
}

pub struct RowCache {
    capacity: usize,
    state: Mutex<State>,
}

struct State {
    rows: LruCache<RowKey, Arc<[u8]>>,
    bytes: usize,
    hits: u64,
    misses: u64,
}

impl RowCache {
    /// A cache of at most `capacity` bytes; 0 disables it.
    pub fn new(capacity: usize) -> RowCache {
        RowCache {
            capacity,
            state: Mutex::new(State {
                rows: LruCache::unbounded(),
                bytes: 0,
                hits: 0,
                misses: 0,
            }),
        }
    }

    pub fn get(&self, key: &RowKey) -> Option<Arc<[u8]>> {
        if self.capacity == 0 {
            return None;
        }
        let mut state = self.state.lock();
        let found = state.rows.get(key).cloned();
        if found.is_some() {
            state.hits += 1;
        } else {
            state.misses += 1;
        }
        found
    }

    pub fn insert(&self, key: RowKey, row: Arc<[u8]>) {
        let size = row.len() + ENTRY_OVERHEAD;
        if self.capacity == 0 || size > self.capacity / 8 {
            return;
        }
        let mut state = self.state.lock();
        if let Some(old) = state.rows.put(key, row) {
            state.bytes -= old.len() + ENTRY_OVERHEAD;
        }
        state.bytes += size;
        while state.bytes > self.capacity {
            match state.rows.pop_lru() {
                Some((_, evicted)) => state.bytes -= evicted.len() + ENTRY_OVERHEAD,
                None => break,
            }
        }
    }

    /// Drops the rows of segments whose files are being deleted.
    pub fn forget_segments<'a>(&self, segments: impl IntoIterator<Item = &'a str>) {
        let gone: std::collections::HashSet<&str> = segments.into_iter().collect();
        if gone.is_empty() || self.capacity == 0 {
            return;
        }
        let mut state = self.state.lock();
        let keys: Vec<RowKey> = state
            .rows
            .iter()
            .filter(|(k, _)| gone.contains(&*k.segment))
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            if let Some(row) = state.rows.pop(&k) {
                state.bytes -= row.len() + ENTRY_OVERHEAD;
            }
        }
    }

    pub fn stats(&self) -> RowCacheStats {
        let state = self.state.lock();
        RowCacheStats {
            bytes: state.bytes,
            entries: state.rows.len(),
            capacity: self.capacity,
            hits: state.hits,
            misses: state.misses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seg: &str, row: u32) -> RowKey {
        RowKey {
            segment: seg.into(),
            row,
        }
    }

    #[test]
    fn evicts_least_recent_and_forgets_segments() {
        let cache = RowCache::new(8 * (100 + ENTRY_OVERHEAD));
        for i in 0..8 {
            cache.insert(key("a", i), vec![0u8; 100].into());
        }
        assert!(cache.get(&key("a", 0)).is_some());
        cache.insert(key("b", 0), vec![1u8; 100].into());
        // Row 1 was the least recently used.
        assert!(cache.get(&key("a", 1)).is_none());
        assert!(cache.get(&key("a", 0)).is_some());
        cache.forget_segments(["a"]);
        assert_eq!(cache.stats().entries, 1);
        assert_eq!(cache.stats().bytes, 100 + ENTRY_OVERHEAD);
        let disabled = RowCache::new(0);
        disabled.insert(key("a", 0), vec![0u8; 1].into());
        assert!(disabled.get(&key("a", 0)).is_none());
    }
}
