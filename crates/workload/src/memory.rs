//! Query memory: one limit for the whole process (`mem_limit`) and a DataFusion memory pool per
//! workload group under it. A group with `enable_memory_overcommit = false` never holds more
//! than its `memory_limit`; with overcommit it may use memory other groups leave free, up to the
//! process limit. A reservation that does not fit fails (DataFusion's spillable operators spill
//! on that; others fail their query) with a message naming the group, its usage and its limit.
//!
//! In a group with a hard limit, memory pressure is resolved in this order: spillable operators
//! spill first (their reservation fails and they spill); new queries wait while the group is
//! nearly full ([`GroupMemoryPool::is_full`]); and when an operator that cannot spill needs more,
//! the group's largest query is cancelled (MEM_LIMIT_EXCEEDED naming the group, its usage and
//! limit) and the operator gets its memory once that query has let go of it. Only when the asker
//! is itself the largest does its own query fail.
//!
//! The storage caches hold their bytes under the same `mem_limit` ([`ProcessMemory::try_hold_cached`]):
//! they grow only into memory queries leave free, and when a query's reservation finds the
//! process short, the caches give memory back ([`ProcessMemory::set_reclaimer`]) before anything
//! is refused or cancelled.

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::memory_pool::{MemoryPool, MemoryReservation};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// A hard-limited group at or above this share of its limit is full: new queries wait.
pub const FULL_FRACTION: f64 = 0.9;

/// How long an operator that cannot spill waits for a cancelled larger query's memory. The
/// victim lets go as soon as its tasks see the cancellation, which on a loaded machine can take
/// a few seconds; the asker fails with the original refusal if it takes longer.
const VICTIM_RELEASE_WAIT: Duration = Duration::from_secs(10);

/// Frees up to the bytes asked from the caches; returns the bytes freed.
pub type Reclaimer = Box<dyn Fn(usize) -> usize + Send + Sync>;

/// The process-wide memory account: queries' reservations and the caches' bytes.
pub struct ProcessMemory {
    limit: usize,
    /// Queries' and caches' bytes together.
    used: AtomicUsize,
    /// Of `used`, the bytes caches hold.
    cached: AtomicUsize,
    reclaimer: std::sync::OnceLock<Reclaimer>,
    /// Every group's pool, to find the ones borrowing memory (overcommit) under pressure.
    groups: parking_lot::Mutex<Vec<Weak<GroupMemoryPool>>>,
}

impl std::fmt::Debug for ProcessMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessMemory")
            .field("limit", &self.limit)
            .field("used", &self.used())
            .field("cached", &self.cached())
            .finish()
    }
}

impl ProcessMemory {
    pub fn new(limit: usize) -> Arc<ProcessMemory> {
        Arc::new(ProcessMemory {
            limit,
            used: AtomicUsize::new(0),
            cached: AtomicUsize::new(0),
            reclaimer: std::sync::OnceLock::new(),
            groups: parking_lot::Mutex::new(Vec::new()),
        })
    }

    /// A cache takes `bytes` if they fit under the limit with everything else held.
    pub fn try_hold_cached(&self, bytes: usize) -> bool {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if used > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        self.cached.fetch_add(bytes, Ordering::Relaxed);
        true
    }

    /// A cache let go of `bytes`.
    pub fn release_cached(&self, bytes: usize) {
        self.cached.fetch_sub(bytes, Ordering::Relaxed);
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// The bytes caches hold.
    pub fn cached(&self) -> usize {
        self.cached.load(Ordering::Relaxed)
    }

    /// How the caches give memory back when queries need it (set once, at startup).
    pub fn set_reclaimer(&self, reclaimer: Reclaimer) {
        let _ = self.reclaimer.set(reclaimer);
    }

    /// Asks the caches for `bytes`; true when they freed that much.
    pub(crate) fn reclaim(&self, bytes: usize) -> bool {
        match self.reclaimer.get() {
            Some(reclaim) if self.cached() > 0 => reclaim(bytes) >= bytes,
            _ => false,
        }
    }

    /// The largest query of a group that holds more than its own memory_limit (borrowed
    /// through overcommit), if any.
    fn largest_borrower(&self) -> Option<Arc<crate::QueryAccount>> {
        let pools: Vec<Arc<GroupMemoryPool>> = {
            let mut groups = self.groups.lock();
            groups.retain(|g| g.strong_count() > 0);
            groups.iter().filter_map(Weak::upgrade).collect()
        };
        pools
            .iter()
            .filter(|p| !p.hard_limited() && p.used() > p.limit())
            .filter_map(|p| p.largest_member())
            .filter(|a| !a.is_cancelled())
            .max_by_key(|a| a.memory())
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// One workload group's pool.
#[derive(Debug)]
pub struct GroupMemoryPool {
    group: String,
    process: Arc<ProcessMemory>,
    /// Percent of the process limit, as configured (for messages).
    percent: parking_lot::Mutex<Option<f64>>,
    limit: AtomicUsize,
    overcommit: AtomicBool,
    used: AtomicUsize,
    /// Queries that reserve from this pool (some may have ended or moved away).
    members: parking_lot::Mutex<Vec<Weak<crate::QueryAccount>>>,
}

impl GroupMemoryPool {
    pub fn new(
        group: &str,
        process: Arc<ProcessMemory>,
        percent: Option<f64>,
        overcommit: bool,
    ) -> Arc<GroupMemoryPool> {
        let pool = Arc::new(GroupMemoryPool {
            group: group.to_string(),
            process,
            percent: parking_lot::Mutex::new(None),
            limit: AtomicUsize::new(usize::MAX),
            overcommit: AtomicBool::new(true),
            used: AtomicUsize::new(0),
            members: parking_lot::Mutex::new(Vec::new()),
        });
        pool.configure(percent, overcommit);
        pool.process.groups.lock().push(Arc::downgrade(&pool));
        pool
    }

    /// Applies new settings (ALTER); running queries see them at their next reservation.
    pub fn configure(&self, percent: Option<f64>, overcommit: bool) {
        let limit = match percent {
            Some(p) => (self.process.limit as f64 * p / 100.0) as usize,
            None => self.process.limit,
        };
        *self.percent.lock() = percent;
        self.limit.store(limit, Ordering::Relaxed);
        self.overcommit.store(overcommit, Ordering::Relaxed);
    }

    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// A query holding `bytes` left the group (the process total is unchanged).
    pub(crate) fn moved_out(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// A query holding `bytes` joined the group.
    pub(crate) fn moved_in(&self, bytes: usize) {
        self.used.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// True when the group has a hard limit (no overcommit) and holds at least
    /// [`FULL_FRACTION`] of it: new queries wait for memory before they start.
    pub fn is_full(&self) -> bool {
        !self.overcommit.load(Ordering::Relaxed)
            && self.used() as f64 >= self.limit() as f64 * FULL_FRACTION
    }

    /// Records that `account` reserves from this pool.
    pub(crate) fn join(&self, account: &Arc<crate::QueryAccount>) {
        let mut members = self.members.lock();
        members.retain(|m| m.strong_count() > 0);
        members.push(Arc::downgrade(account));
    }

    /// The live query holding the most memory in this pool now.
    fn largest_member(self: &Arc<Self>) -> Option<Arc<crate::QueryAccount>> {
        let mut members = self.members.lock();
        members.retain(|m| m.strong_count() > 0);
        members
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|a| Arc::ptr_eq(&a.group.read().memory, self))
            .max_by_key(|a| a.memory())
    }

    fn hard_limited(&self) -> bool {
        !self.overcommit.load(Ordering::Relaxed)
    }

    /// The message of a query of this (overcommitted) group cancelled to give memory back.
    fn borrower_reason(&self, victim_bytes: usize, asking: usize) -> String {
        format!(
            "MEM_LIMIT_EXCEEDED: cancelled as the largest query of workload group '{}' \
             (holding {victim_bytes} bytes), which uses more than its memory limit through \
             overcommit, when another group's query needed {asking} bytes and all queries \
             together were at mem_limit {} bytes: group usage {} bytes, group limit {} bytes",
            self.group,
            self.process.limit,
            self.used(),
            self.limit()
        )
    }

    /// The message of a query cancelled to make room (it names the group, usage and limit).
    fn victim_reason(&self, victim_bytes: usize, asking: usize) -> String {
        format!(
            "MEM_LIMIT_EXCEEDED: cancelled as the largest query of workload group '{}' \
             (holding {victim_bytes} bytes) when another query needed {asking} more bytes \
             that could not spill: group usage {} bytes, group limit {} bytes",
            self.group,
            self.used(),
            self.limit()
        )
    }

    fn exceeded(&self, additional: usize, what: String) -> DataFusionError {
        let percent = self
            .percent
            .lock()
            .map_or("none".to_string(), |p| format!("{p}%"));
        DataFusionError::ResourcesExhausted(format!(
            "workload group '{}' cannot reserve {additional} more bytes: {what} \
             (group usage {} bytes, group limit {} bytes = memory_limit {percent} of mem_limit {} bytes, \
             enable_memory_overcommit={})",
            self.group,
            self.used(),
            self.limit(),
            self.process.limit,
            self.overcommit.load(Ordering::Relaxed),
        ))
    }
}

impl std::fmt::Display for GroupMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "workload group '{}': {} of {} bytes",
            self.group,
            self.used(),
            self.limit()
        )
    }
}

impl MemoryPool for GroupMemoryPool {
    fn name(&self) -> &str {
        "workload_group"
    }

    fn grow(&self, _reservation: &MemoryReservation, additional: usize) {
        self.used.fetch_add(additional, Ordering::Relaxed);
        self.process.used.fetch_add(additional, Ordering::Relaxed);
    }

    fn shrink(&self, _reservation: &MemoryReservation, shrink: usize) {
        self.used.fetch_sub(shrink, Ordering::Relaxed);
        self.process.used.fetch_sub(shrink, Ordering::Relaxed);
    }

    fn try_grow(&self, _reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let group_used = self.used.fetch_add(additional, Ordering::Relaxed) + additional;
        let mut process_used =
            self.process.used.fetch_add(additional, Ordering::Relaxed) + additional;
        let over_group = !self.overcommit.load(Ordering::Relaxed) && group_used > self.limit();
        if !over_group
            && process_used > self.process.limit
            && self.process.reclaim(process_used - self.process.limit)
        {
            // The caches made room.
            process_used = self.process.used();
        }
        let over_process = process_used > self.process.limit;
        if over_group || over_process {
            self.used.fetch_sub(additional, Ordering::Relaxed);
            self.process.used.fetch_sub(additional, Ordering::Relaxed);
            let what = if over_group {
                "the group would exceed its memory limit".to_string()
            } else {
                format!(
                    "all queries together would exceed mem_limit ({} bytes in use)",
                    process_used - additional
                )
            };
            return Err(self.exceeded(additional, what));
        }
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.used()
    }
}

/// One query's view of its group's pool: reservations go to the group the query is in now
/// (policies may move it), and the query's current and peak bytes are kept on its account.
#[derive(Debug)]
pub struct QueryMemoryPool {
    account: Arc<crate::QueryAccount>,
}

impl QueryMemoryPool {
    pub fn new(account: Arc<crate::QueryAccount>) -> Self {
        QueryMemoryPool { account }
    }

    /// After a larger query was cancelled to make room: the reservation, once that query has
    /// let go of its memory, or the original refusal.
    fn wait_for(
        &self,
        reservation: &MemoryReservation,
        additional: usize,
        refused: DataFusionError,
    ) -> Result<()> {
        let granted = wait_blocking(VICTIM_RELEASE_WAIT, || {
            let group = self.account.group.read();
            group.memory.try_grow(reservation, additional).is_ok()
        });
        if granted {
            self.account.memory_grown(additional);
            Ok(())
        } else {
            Err(refused)
        }
    }
}

impl std::fmt::Display for QueryMemoryPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "query holding {} bytes in {}",
            self.account.memory(),
            self.account.group.read().memory
        )
    }
}

impl MemoryPool for QueryMemoryPool {
    fn name(&self) -> &str {
        "query"
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        let group = self.account.group.read();
        group.memory.grow(reservation, additional);
        self.account.memory_grown(additional);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        let group = self.account.group.read();
        group.memory.shrink(reservation, shrink);
        self.account.memory_shrunk(shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        let limit = self.account.memory_limit();
        let held = self.account.memory();
        if held.saturating_add(additional) > limit {
            return Err(DataFusionError::ResourcesExhausted(format!(
                "the query holds {held} bytes and asked for {additional} more, over its exec_mem_limit of {limit} bytes (SET exec_mem_limit to raise it)"
            )));
        }
        let refused = {
            let group = self.account.group.read();
            match group.memory.try_grow(reservation, additional) {
                Ok(()) => {
                    self.account.memory_grown(additional);
                    return Ok(());
                }
                Err(e) => e,
            }
        };
        // A spillable operator spills on the error; one that cannot spill, in a hard-limited
        // group, takes the memory of the group's largest query if that is another one.
        let pool = self.account.group().memory.clone();
        if reservation.consumer().can_spill() {
            return Err(refused);
        }
        // With overcommit, or within its own limit, what ran out is the process's memory.
        let process_short = !pool.hard_limited() || pool.used() + additional <= pool.limit();
        if process_short {
            // The process is short, not the group: groups that borrowed memory through
            // overcommit give it back (their largest query is cancelled).
            return match pool.process.largest_borrower() {
                Some(victim)
                    if !std::ptr::eq(victim.as_ref(), self.account.as_ref())
                        && victim.memory() >= additional =>
                {
                    let borrower = victim.group().memory.clone();
                    victim.cancel(borrower.borrower_reason(victim.memory(), additional));
                    self.wait_for(reservation, additional, refused)
                }
                _ => Err(refused),
            };
        }
        let Some(victim) = pool.largest_member() else {
            return Err(refused);
        };
        let asker_bytes = self.account.memory() + additional;
        if std::ptr::eq(victim.as_ref(), self.account.as_ref()) || victim.memory() < asker_bytes {
            // This query is the group's largest: it is the one that gives way.
            return Err(match refused {
                DataFusionError::ResourcesExhausted(m) => {
                    DataFusionError::ResourcesExhausted(format!(
                        "{m}; this query holds the most memory in the group ({} bytes) and \
                         cannot spill here",
                        self.account.memory()
                    ))
                }
                other => other,
            });
        }
        if !victim.is_cancelled() {
            victim.cancel(pool.victim_reason(victim.memory(), additional));
        }
        self.wait_for(reservation, additional, refused)
    }

    fn reserved(&self) -> usize {
        self.account.group.read().memory.used()
    }
}

/// Polls `ready` every millisecond for up to `limit`, off the async scheduler's hands when
/// running on a multi-threaded runtime (so the tasks that free memory keep running).
fn wait_blocking(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let mut poll = || {
        let start = Instant::now();
        loop {
            if ready() {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(poll),
        _ => poll(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::memory_pool::MemoryConsumer;

    #[test]
    fn hard_limits_and_overcommit() {
        let process = ProcessMemory::new(1000);
        let strict: Arc<dyn MemoryPool> =
            GroupMemoryPool::new("small", process.clone(), Some(10.0), false);
        let loose: Arc<dyn MemoryPool> =
            GroupMemoryPool::new("big", process.clone(), Some(10.0), true);
        let a = MemoryConsumer::new("a").register(&strict);
        a.try_grow(100).unwrap();
        let e = a.try_grow(1).unwrap_err().to_string();
        assert!(
            e.contains("workload group 'small'") && e.contains("group limit 100 bytes"),
            "{e}"
        );
        // Overcommit may use free process memory, not more.
        let b = MemoryConsumer::new("b").register(&loose);
        b.try_grow(850).unwrap();
        assert_eq!(process.used(), 950);
        let e = b.try_grow(100).unwrap_err().to_string();
        assert!(e.contains("mem_limit"), "{e}");
        drop(b);
        assert_eq!(process.used(), 100);
        a.shrink(100);
        assert_eq!(process.used(), 0);
    }
}
