//! What a running query uses, charged as it runs: CPU time (measured with the thread CPU clock
//! around every poll of its operators, see [`crate::exec`]), rows and bytes its scans read,
//! and bytes read from local storage. Each charge goes to the query and to its workload group,
//! whose CPU and read-IO buckets then pause the query's streams when the group is over its limit.

use crate::WorkloadGroup;
use parking_lot::{Mutex, RwLock};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// CPU time this thread has used, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Releases a query's admission slot (in whichever group it is now) when dropped.
#[derive(Debug)]
pub struct HeldSlot(Arc<QueryAccount>);

impl Drop for HeldSlot {
    fn drop(&mut self) {
        self.0.slot.lock().take();
    }
}

/// What a query has used on a cluster's other nodes (their sum, as last reported).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Elsewhere {
    pub cpu_ms: u64,
    pub scan_rows: u64,
    pub scan_bytes: u64,
    pub memory_bytes: u64,
    pub peak_memory_bytes: u64,
}

/// One query's usage and the group it is charged to.
#[derive(Debug)]
pub struct QueryAccount {
    /// Read-locked while memory is reserved through it, write-locked to move the query.
    pub(crate) group: RwLock<Arc<WorkloadGroup>>,
    user: String,
    /// Cancels the statement (a policy's `cancel_query`).
    cancel: CancellationToken,
    /// Why it was cancelled, when a policy did it.
    cancelled_by: Mutex<Option<String>>,
    started: Instant,
    cpu_ns: AtomicU64,
    scan_rows: AtomicU64,
    scan_bytes: AtomicU64,
    memory: AtomicUsize,
    peak_memory: AtomicUsize,
    /// The most bytes the query may hold (the session's `exec_mem_limit`); `usize::MAX` for
    /// no limit of its own.
    memory_limit: AtomicUsize,
    /// Nanoseconds from `started` to the end of the last poll of any of its operators.
    active_until_ns: AtomicU64,
    /// The id the query is known by on the other nodes of a cluster, once it has run there.
    cluster_id: std::sync::OnceLock<String>,
    /// What it has used on a cluster's other nodes, as they last reported.
    elsewhere: Mutex<Elsewhere>,
    /// The admission slot the query runs in, in the group it is charged to now.
    slot: Mutex<Option<crate::Permit>>,
}

impl QueryAccount {
    /// An account for a statement of `user` in `group`; `cancel` stops the statement.
    /// Register it with [`crate::WorkloadManager::track`] for policies to watch it.
    pub fn new(
        group: Arc<WorkloadGroup>,
        user: &str,
        cancel: CancellationToken,
    ) -> Arc<QueryAccount> {
        Arc::new(QueryAccount {
            group: RwLock::new(group),
            user: user.to_string(),
            cancel,
            cancelled_by: Mutex::new(None),
            started: Instant::now(),
            cpu_ns: AtomicU64::new(0),
            scan_rows: AtomicU64::new(0),
            scan_bytes: AtomicU64::new(0),
            memory: AtomicUsize::new(0),
            peak_memory: AtomicUsize::new(0),
            memory_limit: AtomicUsize::new(usize::MAX),
            active_until_ns: AtomicU64::new(0),
            cluster_id: std::sync::OnceLock::new(),
            elsewhere: Mutex::new(Elsewhere::default()),
            slot: Mutex::new(None),
        })
    }

    /// The group charged now.
    pub fn group(&self) -> Arc<WorkloadGroup> {
        self.group.read().clone()
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    /// Moves the query to `target`: the memory it holds moves with it, and its further work is
    /// charged to (and limited by) `target`.
    pub fn move_to(self: &Arc<Self>, target: Arc<WorkloadGroup>) {
        let mut group = self.group.write();
        if Arc::ptr_eq(&group, &target) {
            return;
        }
        let held = self.memory();
        group.memory.moved_out(held);
        target.memory.moved_in(held);
        target.memory.join(self);
        // Its admission slot moves too: the old group lets its next waiting query in.
        let mut slot = self.slot.lock();
        if slot.is_some() {
            *slot = Some(target.slot_now());
        }
        *group = target;
    }

    /// Whether the statement holds its admission slot already: a statement run inside it (a
    /// stored function's body, once per row) runs in that slot and takes none of its own.
    pub fn holds_slot(&self) -> bool {
        self.slot.lock().is_some()
    }

    /// Keeps `permit` (the query's admission slot) until the returned guard drops; if the
    /// query moves to another group, the slot moves with it.
    pub fn hold_slot(self: &Arc<Self>, permit: crate::Permit) -> HeldSlot {
        *self.slot.lock() = Some(permit);
        HeldSlot(self.clone())
    }

    /// Cancels the statement, saying why.
    pub fn cancel(&self, reason: String) {
        *self.cancelled_by.lock() = Some(reason);
        self.cancel.cancel();
    }

    /// Why a policy cancelled the statement, if one did.
    pub fn cancel_reason(&self) -> Option<String> {
        self.cancelled_by.lock().clone()
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The id the query is known by on a cluster's other nodes, made by `make` the first time.
    pub fn cluster_id(&self, make: impl FnOnce() -> String) -> &str {
        self.cluster_id.get_or_init(make)
    }

    /// Records what the query has used on the cluster's other nodes (their latest sum).
    pub fn set_elsewhere(&self, usage: Elsewhere) {
        *self.elsewhere.lock() = usage;
    }

    /// What the query has used on the cluster's other nodes, as last reported.
    pub fn elsewhere(&self) -> Elsewhere {
        *self.elsewhere.lock()
    }

    /// The id the query is known by on a cluster's other nodes, if it has run there.
    pub fn known_cluster_id(&self) -> Option<&str> {
        self.cluster_id.get().map(String::as_str)
    }

    /// From the account's start to the end of the last poll of any of its operators: how
    /// long the query was at work (a fragment's session may outlive its work).
    pub fn active_time(&self) -> Duration {
        Duration::from_nanos(self.active_until_ns.load(Ordering::Relaxed))
    }

    pub fn cpu_time(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Ordering::Relaxed))
    }

    pub fn scan_rows(&self) -> u64 {
        self.scan_rows.load(Ordering::Relaxed)
    }

    pub fn scan_bytes(&self) -> u64 {
        self.scan_bytes.load(Ordering::Relaxed)
    }

    /// Bytes the query's operators hold now (as reserved from its group's memory pool).
    pub fn memory(&self) -> usize {
        self.memory.load(Ordering::Relaxed)
    }

    /// Caps the bytes this query may hold (a reservation past it fails; spillable operators
    /// spill); 0 lifts the cap.
    pub fn set_memory_limit(&self, bytes: usize) {
        let limit = if bytes == 0 { usize::MAX } else { bytes };
        self.memory_limit.store(limit, Ordering::Relaxed);
    }

    pub fn memory_limit(&self) -> usize {
        self.memory_limit.load(Ordering::Relaxed)
    }

    pub fn peak_memory(&self) -> usize {
        self.peak_memory.load(Ordering::Relaxed)
    }

    pub(crate) fn memory_grown(&self, bytes: usize) {
        let now = self.memory.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak_memory.fetch_max(now, Ordering::Relaxed);
    }

    pub(crate) fn memory_shrunk(&self, bytes: usize) {
        self.memory.fetch_sub(bytes, Ordering::Relaxed);
    }

    pub fn charge_cpu(&self, ns: u64) {
        if ns == 0 {
            return;
        }
        self.cpu_ns.fetch_add(ns, Ordering::Relaxed);
        self.group.read().charge_cpu(ns);
    }

    /// How long the query's streams should pause for the group's CPU limit, if at all.
    pub fn cpu_delay(&self) -> Option<Duration> {
        self.group.read().cpu_delay()
    }

    /// Rows the plan's leaves (scans) produced.
    pub fn add_scan_rows(&self, rows: u64) {
        self.scan_rows.fetch_add(rows, Ordering::Relaxed);
    }

    /// Stored (compressed) bytes a scan went through, cached or not.
    pub fn add_scan_bytes(&self, bytes: u64) {
        self.scan_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Waits for one of the group's scan slots (`scan_thread_num`) for one row-group read.
    pub async fn scan_slot(&self) -> crate::scan_slots::ScanSlot {
        let slots = self.group.read().scan_slots().clone();
        slots.acquire().await
    }

    /// Charges `bytes` read from local storage and waits while the group is over its
    /// `read_bytes_per_second`.
    pub async fn read_local(&self, bytes: u64) {
        self.group.read().charge_local_read(bytes);
        self.wait_for_reads(WorkloadGroup::read_delay).await;
    }

    /// Charges `bytes` read from remote (object) storage and waits while the group is over its
    /// `remote_read_bytes_per_second`. Readers of remote storage call this per request.
    pub async fn read_remote(&self, bytes: u64) {
        self.group.read().charge_remote_read(bytes);
        self.wait_for_reads(WorkloadGroup::remote_read_delay).await;
    }

    /// Sleeps until `delay` of the query's current group (it may be moved meanwhile) is none.
    async fn wait_for_reads(&self, delay: fn(&WorkloadGroup) -> Option<Duration>) {
        loop {
            let pause = delay(&self.group.read());
            match pause {
                Some(p) => tokio::time::sleep(p).await,
                None => break,
            }
        }
    }
}

thread_local! {
    /// Nesting of accounted polls on this thread (an operator's poll polls its input's).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Thread CPU time at the last charge.
    static CHARGED_CPU: Cell<u64> = const { Cell::new(0) };
    /// Wall time at the last charge (reading the CPU clock is a system call; the wall clock
    /// is not).
    static CHARGED_AT: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The account of the last outer poll that ended on this thread (by address) and the
    /// thread's CPU time then.
    static LAST_EXIT: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
}

/// Work a task does between two polls of the same query's operators on one thread (a
/// repartition task hashing the batch it just pulled, a merge feeding its channels) is charged
/// to that query too, up to this much per gap: more is taken to be other work the thread did.
const MAX_GAP_NS: u64 = 10_000_000;

fn address(account: &QueryAccount) -> usize {
    account as *const QueryAccount as usize
}

/// Inside an outer poll, CPU time is charged at most this often, so long polls (an aggregate
/// draining its input) are seen, and throttled, as they run.
const INNER_CHARGE_INTERVAL: Duration = Duration::from_millis(1);

/// Charges the CPU this thread used since the last charge to `account`.
fn charge_now(account: &QueryAccount) {
    let now = thread_cpu_ns();
    let before = CHARGED_CPU.replace(now);
    CHARGED_AT.set(Some(Instant::now()));
    account.charge_cpu(now.saturating_sub(before));
}

fn due() -> bool {
    CHARGED_AT
        .get()
        .is_none_or(|at| at.elapsed() >= INNER_CHARGE_INTERVAL)
}

/// An accounted poll: entered before an operator's stream is polled, left after.
pub(crate) struct PollFrame<'a> {
    account: &'a QueryAccount,
    /// CPU time was charged on entering (always for an outer poll, at most every
    /// millisecond for nested ones): only then can the group's CPU debt have changed.
    pub(crate) charged: bool,
}

impl<'a> PollFrame<'a> {
    pub(crate) fn enter(account: &'a QueryAccount) -> PollFrame<'a> {
        let depth = DEPTH.get();
        let charged = depth == 0 || due();
        if depth == 0 {
            let now = thread_cpu_ns();
            let (last, at) = LAST_EXIT.get();
            let gap = now.saturating_sub(at);
            if last == address(account) && gap <= MAX_GAP_NS {
                account.charge_cpu(gap);
            }
            CHARGED_CPU.set(now);
            CHARGED_AT.set(Some(Instant::now()));
        } else if charged {
            charge_now(account);
        }
        DEPTH.set(depth + 1);
        PollFrame { account, charged }
    }
}

impl Drop for PollFrame<'_> {
    fn drop(&mut self) {
        let depth = DEPTH.get().saturating_sub(1);
        DEPTH.set(depth);
        if depth == 0 || due() {
            charge_now(self.account);
        }
        if depth == 0 {
            LAST_EXIT.set((address(self.account), CHARGED_CPU.get()));
            let active = self.account.started.elapsed().as_nanos() as u64;
            self.account
                .active_until_ns
                .fetch_max(active, Ordering::Relaxed);
        }
    }
}
