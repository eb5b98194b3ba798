//! A byte-bounded LRU cache of things read from segment files, shared by the column cache and
//! the row cache. Segment files never change once written, so an entry never goes stale; the
//! entries of segments whose files are deleted are dropped with [`SegmentLru::forget_segments`].
//!
//! Besides its own capacity, a cache may draw its bytes from a [`CacheBudget`] (the process's
//! `mem_limit`, shared with queries): it grows only into memory the budget grants, replaces its
//! own least recently used entries when the budget refuses, and gives memory back on demand
//! ([`SegmentLru::release`]) when queries need it.

use foldhash::fast::RandomState;
use lru::LruCache;
use parking_lot::Mutex;
use std::hash::Hash;
use std::sync::{Arc, OnceLock};

/// Where a cache's bytes come from, besides its own capacity.
pub trait CacheBudget: Send + Sync {
    /// Takes `bytes` for the cache if they are free.
    fn try_take(&self, bytes: usize) -> bool;
    /// Returns bytes the cache no longer holds.
    fn give_back(&self, bytes: usize);
}

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
    budget: OnceLock<Arc<dyn CacheBudget>>,
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
            budget: OnceLock::new(),
        }
    }

    /// Draws the cache's bytes from `budget` from now on (set once, at startup: entries cached
    /// before are taken from it now, or dropped if it refuses them).
    pub fn set_budget(&self, budget: Arc<dyn CacheBudget>) {
        let mut state = self.state.lock();
        if self.budget.set(budget).is_err() || self.take(state.bytes) {
            return;
        }
        state.entries.clear();
        state.bytes = 0;
    }

    fn take(&self, bytes: usize) -> bool {
        self.budget.get().is_none_or(|b| b.try_take(bytes))
    }

    fn give_back(&self, bytes: usize) {
        if let Some(b) = self.budget.get() {
            b.give_back(bytes);
        }
    }

    /// Evicts least recently used entries until at least `bytes` are freed (or the cache is
    /// empty); the bytes freed.
    pub fn release(&self, bytes: usize) -> usize {
        let mut state = self.state.lock();
        let mut freed = 0;
        while freed < bytes {
            match state.entries.pop_lru() {
                Some((_, evicted)) => {
                    let size = evicted.weight();
                    state.bytes -= size;
                    freed += size;
                }
                None => break,
            }
        }
        drop(state);
        self.give_back(freed);
        freed
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

    /// Caches `value` (replacing an entry of the same key), evicting the least recently used
    /// entries until it fits the capacity and the budget grants its bytes; when nothing is
    /// left to evict, the value is not cached. A value larger than an eighth of the capacity is
    /// not cached: it would push out many small ones that other readers share.
    pub fn insert(&self, key: K, value: V) {
        let size = value.weight();
        if !self.enabled() || size > self.capacity / 8 {
            return;
        }
        let mut state = self.state.lock();
        let mut freed = 0;
        if let Some(old) = state.entries.pop(&key) {
            state.bytes -= old.weight();
            freed += old.weight();
        }
        while state.bytes + size > self.capacity {
            match state.entries.pop_lru() {
                Some((_, evicted)) => {
                    state.bytes -= evicted.weight();
                    freed += evicted.weight();
                }
                None => break,
            }
        }
        // What this insert gives back, net: nothing moves when evictions paid for the value.
        let admitted = if freed >= size {
            freed -= size;
            true
        } else {
            let mut admitted = self.take(size - freed);
            while !admitted {
                let Some((_, evicted)) = state.entries.pop_lru() else {
                    break;
                };
                state.bytes -= evicted.weight();
                freed += evicted.weight();
                if freed >= size {
                    admitted = true;
                } else {
                    admitted = self.take(size - freed);
                }
            }
            if admitted {
                freed = freed.saturating_sub(size);
            }
            admitted
        };
        if admitted {
            state.entries.put(key, value);
            state.bytes += size;
        }
        drop(state);
        self.give_back(freed);
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
        let mut freed = 0;
        for key in keys {
            if let Some(value) = state.entries.pop(&key) {
                state.bytes -= value.weight();
                freed += value.weight();
            }
        }
        drop(state);
        self.give_back(freed);
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
