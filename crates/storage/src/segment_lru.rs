//! A byte-bounded LRU cache of things read from segment files, shared by the column cache and
//! the row cache. Segment files never change once written, so an entry never goes stale; the
//! entries of segments whose files are deleted are dropped with [`SegmentLru::forget_segments`].

use foldhash::fast::RandomState;
use lru::LruCache;
use parking_lot::Mutex;
use std::hash::Hash;

/// A cache key that names the segment its value was read from.
pub trait SegmentKey: Hash + Eq + Clone {
    fn segment(&self) -> &str;
}

/// A cached value's size in bytes, as counted against the capacity.
pub trait Weighed {
    fn weight(&self) -> usize;
}

/// How the cache is used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUsage {
    pub bytes: usize,
    pub entries: usize,
    pub capacity: usize,
    pub hits: u64,
    pub misses: u64,
}

pub struct SegmentLru<K: SegmentKey, V: Weighed + Clone> {
    capacity: usize,
    state: Mutex<State<K, V>>,
}

struct State<K: Hash + Eq, V> {
    entries: LruCache<K, V, RandomState>,
    bytes: usize,
    hits: u64,
    misses: u64,
}

impl<K: SegmentKey, V: Weighed + Clone> std::fmt::Debug for SegmentLru<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentLru")
            .field("usage", &self.usage())
            .finish()
    }
}

impl<K: SegmentKey, V: Weighed + Clone> SegmentLru<K, V> {
    /// A cache of at most `capacity` bytes; 0 disables it.
    pub fn new(capacity: usize) -> Self {
        SegmentLru {
            capacity,
            state: Mutex::new(State {
                entries: LruCache::unbounded_with_hasher(RandomState::default()),
                bytes: 0,
                hits: 0,
                misses: 0,
            }),
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// The cached value, marked as just used.
    pub fn get(&self, key: &K) -> Option<V> {
        if !self.enabled() {
            return None;
        }
        let mut state = self.state.lock();
        let found = state.entries.get(key).cloned();
        if found.is_some() {
            state.hits += 1;
        } else {
            state.misses += 1;
        }
        found
    }

    /// Caches `value` (replacing an entry of the same key), then evicts the least recently used
    /// entries until the cache fits. A value larger than an eighth of the capacity is not
    /// cached: it would push out many small ones that other readers share.
    pub fn insert(&self, key: K, value: V) {
        let size = value.weight();
        if !self.enabled() || size > self.capacity / 8 {
            return;
        }
        let mut state = self.state.lock();
        if let Some(old) = state.entries.put(key, value) {
            state.bytes -= old.weight();
        }
        state.bytes += size;
        while state.bytes > self.capacity {
            match state.entries.pop_lru() {
                Some((_, evicted)) => state.bytes -= evicted.weight(),
                None => break,
            }
        }
    }

    /// Drops every entry of these segments (their files are being deleted).
    pub fn forget_segments<'a>(&self, segments: impl IntoIterator<Item = &'a str>) {
        let gone: std::collections::HashSet<&str> = segments.into_iter().collect();
        if gone.is_empty() || !self.enabled() {
            return;
        }
        let mut state = self.state.lock();
        let keys: Vec<K> = state
            .entries
            .iter()
            .filter(|(k, _)| gone.contains(k.segment()))
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            if let Some(value) = state.entries.pop(&key) {
                state.bytes -= value.weight();
            }
        }
    }

    pub fn usage(&self) -> CacheUsage {
        let state = self.state.lock();
        CacheUsage {
            bytes: state.bytes,
            entries: state.entries.len(),
            capacity: self.capacity,
            hits: state.hits,
            misses: state.misses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Eq, Hash)]
    struct Key(&'static str, u32);

    impl SegmentKey for Key {
        fn segment(&self) -> &str {
            self.0
        }
    }

    #[derive(Clone)]
    struct Bytes(usize);

    impl Weighed for Bytes {
        fn weight(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn evicts_least_recently_used_to_fit() {
        let cache = SegmentLru::new(850);
        for i in 0..8 {
            cache.insert(Key("a", i), Bytes(100));
        }
        assert_eq!(cache.usage().entries, 8);
        // Touch entry 0, then add a ninth: entry 1 (least recently used) goes.
        assert!(cache.get(&Key("a", 0)).is_some());
        cache.insert(Key("a", 8), Bytes(100));
        assert!(cache.usage().bytes <= cache.usage().capacity);
        assert!(cache.get(&Key("a", 0)).is_some());
        assert!(cache.get(&Key("a", 1)).is_none());
        assert!(cache.get(&Key("a", 8)).is_some());
        let usage = cache.usage();
        assert_eq!((usage.hits, usage.misses), (3, 1));
    }

    #[test]
    fn large_values_and_a_disabled_cache_are_not_cached() {
        let cache = SegmentLru::new(400);
        cache.insert(Key("a", 0), Bytes(100));
        assert!(
            cache.get(&Key("a", 0)).is_none(),
            "over an eighth of the capacity"
        );
        let off = SegmentLru::new(0);
        off.insert(Key("a", 0), Bytes(1));
        assert!(off.get(&Key("a", 0)).is_none());
    }

    #[test]
    fn forgetting_a_segment_frees_its_bytes() {
        let cache = SegmentLru::new(1 << 30);
        cache.insert(Key("a", 0), Bytes(100));
        cache.insert(Key("a", 1), Bytes(100));
        cache.insert(Key("b", 0), Bytes(100));
        cache.forget_segments(["a"]);
        assert_eq!(cache.usage().entries, 1);
        assert_eq!(cache.usage().bytes, 100);
        assert!(cache.get(&Key("b", 0)).is_some());
    }
}
