//! Query memory: one limit for the whole process (`mem_limit`) and a DataFusion memory pool per
//! workload group under it. A group with `enable_memory_overcommit = false` never holds more
//! than its `memory_limit`; with overcommit it may use memory other groups leave free, up to the
//! process limit. A reservation that does not fit fails (DataFusion's spillable operators spill
//! on that; others fail their query) with a message naming the group, its usage and its limit.

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::memory_pool::{MemoryPool, MemoryReservation};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// The process-wide query memory account.
#[derive(Debug)]
pub struct ProcessMemory {
    limit: usize,
    used: AtomicUsize,
}

impl ProcessMemory {
    pub fn new(limit: usize) -> Arc<ProcessMemory> {
        Arc::new(ProcessMemory {
            limit,
            used: AtomicUsize::new(0),
        })
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
        });
        pool.configure(percent, overcommit);
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
        let process_used = self.process.used.fetch_add(additional, Ordering::Relaxed) + additional;
        let over_group = !self.overcommit.load(Ordering::Relaxed) && group_used > self.limit();
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
        let group = self.account.group.read();
        group.memory.try_grow(reservation, additional)?;
        self.account.memory_grown(additional);
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.account.group.read().memory.used()
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
