//! Workload groups: each group's settings and admission queue, and the set of groups that
//! statements run in. The catalog keeps the groups durable (as normalized property maps); this
//! crate checks settings and enforces them: admission (max_concurrency, max_queue_size,
//! queue_timeout), memory (a DataFusion memory pool per group under the process's
//! `mem_limit`), CPU (every operator's polls are timed with the thread CPU clock and paused
//! while the group is over `cpu_hard_limit`, or over its `cpu_share` part under contention)
//! and local reads (`read_bytes_per_second`); and it keeps each group's live usage.

pub mod accounting;
pub mod exec;
pub mod memory;
pub mod policy;
pub mod queue;
pub mod scan_slots;
pub mod settings;
pub mod throttle;
pub mod usage;

pub use accounting::{Elsewhere, QueryAccount};
pub use exec::account_plan;
pub use memory::{GroupMemoryPool, ProcessMemory, QueryMemoryPool};
pub use policy::{Policy, PolicyAction, QueryFacts, POLICY_PROPERTY_NAMES};
pub use queue::{AdmissionQueue, Permit, QueueLimits};
pub use settings::{check_memory_sum, GroupSettings, PROPERTY_NAMES};
pub use usage::{cpu_cores, GroupUsage, Rates};

use throttle::TokenBucket;

use basalt_common::{BasaltError, Result};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use parking_lot::{Mutex, MutexGuard, RwLock};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// Share of the machine's memory the process may hold resident before its largest query is
/// cancelled.
const RSS_LIMIT_FRACTION: f64 = 0.9;

/// The process's resident memory, from /proc/self/statm (Linux).
fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).ok()?)
}

/// How long a new query waits for a full group's memory when the group sets no queue_timeout.
const DEFAULT_MEMORY_WAIT: Duration = Duration::from_secs(10);

/// How often a query waiting for a full group's memory looks again.
const MEMORY_WAIT_POLL: Duration = Duration::from_millis(5);

/// Decrements a waiter count when dropped (the wait ended, or the query was cancelled).
struct WaiterCount<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for WaiterCount<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

fn scopeguard(count: &std::sync::atomic::AtomicUsize) -> WaiterCount<'_> {
    WaiterCount(count)
}

/// The group every session starts in; it always exists.
pub const NORMAL_GROUP: &str = "normal";

/// The id of `normal` when it has never been stored.
pub const NORMAL_GROUP_ID: u64 = 1;

/// One workload group, live.
pub struct WorkloadGroup {
    pub id: u64,
    pub name: String,
    settings: RwLock<GroupSettings>,
    queue: Arc<AdmissionQueue>,
    memory: Arc<GroupMemoryPool>,
    /// CPU nanoseconds the group may use per second (`cpu_hard_limit`, or its `cpu_share`
    /// part while the machine is contended, whichever is lower).
    cpu: TokenBucket,
    /// The `cpu_share` part (percent of all cores) set by the usage sampler, if contended.
    share_limit: parking_lot::Mutex<Option<f64>>,
    /// Bytes per second the group's scans may read from local storage.
    local_reads: TokenBucket,
    /// Bytes per second the group's scans may read from remote (object) storage.
    remote_reads: TokenBucket,
    usage: GroupUsage,
    /// `scan_thread_num`: concurrent row-group reads of the group's scans.
    scan_slots: Arc<scan_slots::ScanSlots>,
    /// New queries waiting for the group's memory to fall below full.
    memory_waiters: std::sync::atomic::AtomicUsize,
    /// The execution environment of the group's queries: the shared disk manager and object
    /// stores, with the group's memory pool.
    runtime: Arc<RuntimeEnv>,
}

impl std::fmt::Debug for WorkloadGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkloadGroup")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish()
    }
}

/// What every group's execution environment is built from.
struct Environment {
    base: Arc<RuntimeEnv>,
    process: Arc<ProcessMemory>,
}

impl WorkloadGroup {
    fn new(
        env: &Environment,
        id: u64,
        name: &str,
        settings: GroupSettings,
    ) -> Result<Arc<WorkloadGroup>> {
        let memory = GroupMemoryPool::new(
            name,
            env.process.clone(),
            settings.memory_limit,
            settings.enable_memory_overcommit,
        );
        let mut builder = RuntimeEnvBuilder::new().with_memory_pool(memory.clone());
        builder.disk_manager = Some(env.base.disk_manager.clone());
        builder.object_store_registry = env.base.object_store_registry.clone();
        let runtime = builder
            .build_arc()
            .map_err(|e| BasaltError::Internal(format!("workload group runtime: {e}")))?;
        Ok(Arc::new(WorkloadGroup {
            id,
            name: name.to_string(),
            queue: AdmissionQueue::new(settings.max_concurrency),
            cpu: TokenBucket::new(cpu_rate(settings.cpu_hard_limit, None)),
            share_limit: parking_lot::Mutex::new(None),
            local_reads: TokenBucket::new(settings.read_bytes_per_second.map(|b| b as f64)),
            remote_reads: TokenBucket::new(settings.remote_read_bytes_per_second.map(|b| b as f64)),
            usage: GroupUsage::default(),
            scan_slots: scan_slots::ScanSlots::new(settings.scan_thread_num),
            memory_waiters: Default::default(),
            settings: RwLock::new(settings),
            memory,
            runtime,
        }))
    }

    /// Where this group's queries execute (with its memory pool).
    pub fn runtime(&self) -> Arc<RuntimeEnv> {
        self.runtime.clone()
    }

    /// Where one query of this group executes: the group's environment, with a pool that
    /// also keeps the query's own memory use on `account`.
    pub fn query_runtime(&self, account: &Arc<QueryAccount>) -> Arc<RuntimeEnv> {
        account.group().memory.join(account);
        Arc::new(RuntimeEnv {
            memory_pool: Arc::new(QueryMemoryPool::new(account.clone())),
            ..(*self.runtime).clone()
        })
    }

    /// Bytes the group's running queries hold now.
    pub fn memory_used(&self) -> usize {
        self.memory.used()
    }

    pub fn settings(&self) -> GroupSettings {
        self.settings.read().clone()
    }

    /// Queries of this group running now.
    pub fn running(&self) -> u32 {
        self.queue.running()
    }

    /// Queries of this group waiting to run (for a slot, or for memory).
    pub fn waiting(&self) -> usize {
        self.queue.waiting()
            + self
                .memory_waiters
                .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Waits for a slot to run a query in, under the group's current limits.
    pub async fn admit(&self) -> Result<Permit> {
        let limits = {
            let s = self.settings.read();
            QueueLimits {
                max_queue_size: s.max_queue_size,
                queue_timeout: Duration::from_millis(s.queue_timeout_ms),
            }
        };
        // A hard-limited group that is nearly full lets new queries in only as memory frees
        // up (they wait here, within the same queue_timeout, before taking a slot).
        let started = std::time::Instant::now();
        // Without a queue_timeout, a query still waits a while for memory rather than fail.
        let memory_wait = if limits.queue_timeout.is_zero() {
            DEFAULT_MEMORY_WAIT
        } else {
            limits.queue_timeout
        };
        if self.memory.is_full() {
            self.memory_waiters
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let _waiting = scopeguard(&self.memory_waiters);
            while self.memory.is_full() {
                let waited = started.elapsed();
                if waited >= memory_wait {
                    return Err(BasaltError::MemoryQueueTimeout(format!(
                        "query queue timeout, timeout: {} ms: workload group '{}' stayed full \
                         (MEM_LIMIT_EXCEEDED: group usage {} bytes, group limit {} bytes)",
                        memory_wait.as_millis(),
                        self.name,
                        self.memory.used(),
                        self.memory.limit()
                    )));
                }
                tokio::time::sleep((memory_wait - waited).min(MEMORY_WAIT_POLL)).await;
            }
        }
        // Time spent waiting for memory counts against the same queue_timeout.
        let timeout = limits.queue_timeout;
        let remaining = QueueLimits {
            queue_timeout: timeout.saturating_sub(started.elapsed()),
            ..limits
        };
        self.queue.admit(remaining).await.map_err(|e| match e {
            BasaltError::QueueTimeout(_) => BasaltError::QueueTimeout(timeout.as_millis() as u64),
            other => other,
        })
    }

    /// The group's scan slots (`scan_thread_num`).
    pub fn scan_slots(&self) -> &Arc<scan_slots::ScanSlots> {
        &self.scan_slots
    }

    /// A slot taken at once (see [`AdmissionQueue::admit_now`]).
    pub(crate) fn slot_now(&self) -> Permit {
        self.queue.admit_now()
    }

    pub fn usage(&self) -> &GroupUsage {
        &self.usage
    }

    pub(crate) fn charge_cpu(&self, ns: u64) {
        self.usage.add_cpu(ns);
        self.cpu.charge(ns as f64);
    }

    pub(crate) fn cpu_delay(&self) -> Option<Duration> {
        self.cpu.delay()
    }

    pub(crate) fn charge_local_read(&self, bytes: u64) {
        self.usage.add_local_read(bytes);
        self.local_reads.charge(bytes as f64);
    }

    pub(crate) fn read_delay(&self) -> Option<Duration> {
        self.local_reads.delay()
    }

    pub(crate) fn charge_remote_read(&self, bytes: u64) {
        self.usage.add_remote_read(bytes);
        self.remote_reads.charge(bytes as f64);
    }

    pub(crate) fn remote_read_delay(&self) -> Option<Duration> {
        self.remote_reads.delay()
    }

    /// The CPU limit in force now, in percent of all cores (`None`: unlimited).
    pub fn cpu_limit_percent(&self) -> Option<f64> {
        self.cpu
            .rate()
            .map(|ns_per_s| ns_per_s / 1e9 / cpu_cores() as f64 * 100.0)
    }

    /// Sets (or lifts) the `cpu_share` part while the machine is contended.
    pub(crate) fn set_share_limit(&self, percent: Option<f64>) {
        let mut share = self.share_limit.lock();
        if *share != percent {
            *share = percent;
            let hard = self.settings.read().cpu_hard_limit;
            self.cpu.set_rate(cpu_rate(hard, percent));
        }
    }

    fn update(&self, settings: GroupSettings) {
        self.queue.set_max_concurrency(settings.max_concurrency);
        let share = *self.share_limit.lock();
        self.cpu.set_rate(cpu_rate(settings.cpu_hard_limit, share));
        self.local_reads
            .set_rate(settings.read_bytes_per_second.map(|b| b as f64));
        self.remote_reads
            .set_rate(settings.remote_read_bytes_per_second.map(|b| b as f64));
        self.scan_slots.set_limit(settings.scan_thread_num);
        self.memory
            .configure(settings.memory_limit, settings.enable_memory_overcommit);
        *self.settings.write() = settings;
    }
}

/// CPU nanoseconds per second for a hard limit and a share part, both in percent of all
/// cores; the lower one holds.
fn cpu_rate(hard_limit: Option<u32>, share: Option<f64>) -> Option<f64> {
    let percent = match (hard_limit.map(f64::from), share) {
        (Some(h), Some(s)) => Some(h.min(s)),
        (h, s) => h.or(s),
    }?;
    Some(percent / 100.0 * cpu_cores() as f64 * 1e9)
}

/// Doris's defaults for `normal`.
fn normal_defaults() -> GroupSettings {
    GroupSettings {
        memory_limit: Some(30.0),
        ..GroupSettings::default()
    }
}

/// All workload groups by (lower-case) name.
pub struct WorkloadManager {
    env: Environment,
    groups: RwLock<BTreeMap<String, Arc<WorkloadGroup>>>,
    /// Held by a CREATE/ALTER/DROP from checking to applying, so checks like the memory sum
    /// see every other change.
    ddl: Mutex<()>,
    /// Workload policies, highest priority first.
    policies: RwLock<Vec<Arc<Policy>>>,
    /// Accounts of running statements, for policies to watch.
    accounts: Mutex<Vec<std::sync::Weak<QueryAccount>>>,
    /// Resident memory above which the largest query is cancelled (the last line of defence
    /// against the OOM killer, for memory the pools do not see).
    rss_limit: std::sync::atomic::AtomicUsize,
}

impl WorkloadManager {
    /// The groups as stored: (id, name, properties). `normal` is added if it was never stored.
    /// Queries of all groups together may hold `mem_limit` bytes; `base` supplies the disk
    /// manager and object stores.
    pub fn new(
        stored: Vec<(u64, String, BTreeMap<String, String>)>,
        base: Arc<RuntimeEnv>,
        mem_limit: usize,
    ) -> Result<WorkloadManager> {
        let env = Environment {
            base,
            process: ProcessMemory::new(mem_limit),
        };
        let mut groups = BTreeMap::new();
        for (id, name, properties) in stored {
            let base = if name == NORMAL_GROUP {
                normal_defaults()
            } else {
                GroupSettings::default()
            };
            let settings = base.with(&properties)?;
            groups.insert(name.clone(), WorkloadGroup::new(&env, id, &name, settings)?);
        }
        if !groups.contains_key(NORMAL_GROUP) {
            let normal =
                WorkloadGroup::new(&env, NORMAL_GROUP_ID, NORMAL_GROUP, normal_defaults())?;
            groups.insert(NORMAL_GROUP.to_string(), normal);
        }
        Ok(WorkloadManager {
            env,
            groups: RwLock::new(groups),
            ddl: Mutex::new(()),
            policies: RwLock::new(Vec::new()),
            accounts: Mutex::new(Vec::new()),
            rss_limit: std::sync::atomic::AtomicUsize::new(
                basalt_common::config::physical_memory_bytes().map_or(usize::MAX, |total| {
                    (total as f64 * RSS_LIMIT_FRACTION) as usize
                }),
            ),
        })
    }

    /// If the process's resident memory is over its limit (90% of the machine's memory),
    /// cancels the running query that holds the most memory, saying why. Called every policy
    /// interval; a query already cancelled is given time to let go of its memory.
    pub fn guard_process_memory(&self) {
        let Some(rss) = resident_bytes() else {
            return;
        };
        let limit = self.rss_limit.load(std::sync::atomic::Ordering::Relaxed);
        if rss <= limit {
            return;
        }
        // The caches give their memory back before any query is cancelled.
        if self.env.process.cached() > 0 && self.env.process.reclaim(rss - limit) {
            return;
        }
        let live = self.live_accounts();
        if live.iter().any(|a| a.is_cancelled() && a.memory() > 0) {
            return;
        }
        if let Some(largest) = live
            .iter()
            .filter(|a| !a.is_cancelled())
            .max_by_key(|a| a.memory())
        {
            tracing::warn!(
                "process memory {rss} bytes is over {limit} bytes: cancelling the largest query"
            );
            largest.cancel(format!(
                "MEM_LIMIT_EXCEEDED: process memory (resident {rss} bytes) is over the process \
                 limit {limit} bytes; cancelled the largest query (holding {} bytes in workload \
                 group '{}')",
                largest.memory(),
                largest.group().name
            ));
        }
    }

    /// The accounts of the statements running now.
    pub fn live_accounts(&self) -> Vec<Arc<QueryAccount>> {
        let mut accounts = self.accounts.lock();
        accounts.retain(|a| a.strong_count() > 0);
        accounts
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .collect()
    }

    /// Lets policies watch a running statement (until its account is dropped).
    pub fn track(&self, account: &Arc<QueryAccount>) {
        self.accounts.lock().push(Arc::downgrade(account));
    }

    /// The policies, highest priority first.
    pub fn policies(&self) -> Vec<Arc<Policy>> {
        self.policies.read().clone()
    }

    /// Adds or replaces (by name) a policy.
    pub fn put_policy(&self, policy: Policy) {
        let mut policies = self.policies.write();
        policies.retain(|p| p.name != policy.name);
        policies.push(Arc::new(policy));
        policies.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.id.cmp(&b.id)));
    }

    pub fn remove_policy(&self, name: &str) {
        self.policies.write().retain(|p| p.name != name);
    }

    pub fn policy(&self, name: &str) -> Option<Arc<Policy>> {
        self.policies
            .read()
            .iter()
            .find(|p| p.name == name)
            .cloned()
    }

    /// Applies the highest-priority matching policy to every running statement: cancels it
    /// (saying which policy and why) or moves it to another group.
    pub fn enforce_policies(&self) {
        let policies = self.policies.read().clone();
        if policies.is_empty() {
            return;
        }
        let live = self.live_accounts();
        for account in live {
            if account.is_cancelled() {
                continue;
            }
            let group = account.group();
            // On a cluster, what its backends reported counts too.
            let elsewhere = account.elsewhere();
            let facts = QueryFacts {
                user: account.user(),
                group: &group.name,
                query_time_ms: account.elapsed().as_millis() as u64,
                scan_rows: account.scan_rows() + elsewhere.scan_rows,
                scan_bytes: account.scan_bytes() + elsewhere.scan_bytes,
                memory_bytes: account.memory() as u64 + elsewhere.memory_bytes,
            };
            let Some(policy) = policies.iter().find(|p| p.matches(&facts)) else {
                continue;
            };
            match &policy.action {
                PolicyAction::CancelQuery => account.cancel(format!(
                    "cancelled by workload policy '{}' ({}): query_time {} ms, be_scan_rows {}, \
                     be_scan_bytes {}, query_be_memory_bytes {}",
                    policy.name,
                    policy.condition_text(),
                    facts.query_time_ms,
                    facts.scan_rows,
                    facts.scan_bytes,
                    facts.memory_bytes
                )),
                PolicyAction::MoveQueryToGroup(target) => match self.get(target) {
                    Ok(target) => {
                        tracing::info!(
                            "workload policy '{}' moves a query of '{}' from group '{}' to '{}'",
                            policy.name,
                            facts.user,
                            group.name,
                            target.name
                        );
                        account.move_to(target);
                    }
                    Err(_) => tracing::warn!(
                        "workload policy '{}': group '{target}' no longer exists",
                        policy.name
                    ),
                },
            }
        }
    }

    /// Starts sampling the groups' usage (rates, `cpu_share` under contention) in the
    /// background, for as long as the manager lives.
    pub fn start_sampler(self: &Arc<Self>) {
        usage::start_sampler(Arc::downgrade(self));
    }

    /// Serializes workload group DDL (hold it from `check_*` to `apply`/`remove`).
    pub fn ddl_lock(&self) -> MutexGuard<'_, ()> {
        self.ddl.lock()
    }

    pub fn get(&self, name: &str) -> Result<Arc<WorkloadGroup>> {
        self.groups
            .read()
            .get(&name.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| BasaltError::UnknownWorkloadGroup(name.to_string()))
    }

    pub fn exists(&self, name: &str) -> bool {
        self.groups.read().contains_key(&name.to_ascii_lowercase())
    }

    /// Every group, by name.
    pub fn groups(&self) -> Vec<Arc<WorkloadGroup>> {
        self.groups.read().values().cloned().collect()
    }

    /// The settings a new group would have; checks the name, values and the memory sum.
    pub fn check_create(
        &self,
        name: &str,
        properties: &BTreeMap<String, String>,
    ) -> Result<GroupSettings> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(BasaltError::InvalidWorkloadGroup(format!(
                "invalid workload group name '{name}': use letters, digits, '_' and '-'"
            )));
        }
        let settings = GroupSettings::default().with(properties)?;
        self.check_sum(name, &settings)?;
        Ok(settings)
    }

    /// The settings `name` would have after ALTER.
    pub fn check_alter(
        &self,
        name: &str,
        properties: &BTreeMap<String, String>,
    ) -> Result<GroupSettings> {
        let settings = self.get(name)?.settings().with(properties)?;
        self.check_sum(name, &settings)?;
        Ok(settings)
    }

    fn check_sum(&self, name: &str, settings: &GroupSettings) -> Result<()> {
        let name = name.to_ascii_lowercase();
        let others: Vec<(String, GroupSettings)> = self
            .groups
            .read()
            .values()
            .filter(|g| g.name != name)
            .map(|g| (g.name.clone(), g.settings()))
            .collect();
        check_memory_sum(
            others
                .iter()
                .map(|(n, s)| (n.as_str(), s))
                .chain([(name.as_str(), settings)]),
        )
    }

    /// Makes checked settings live: a new group, or new settings for an existing one (running
    /// queries keep their slot; waiting ones see the new limits at once).
    pub fn apply(&self, id: u64, name: &str, settings: GroupSettings) -> Result<()> {
        let name = name.to_ascii_lowercase();
        let mut groups = self.groups.write();
        match groups.get(&name) {
            Some(g) => g.update(settings),
            None => {
                let group = WorkloadGroup::new(&self.env, id, &name, settings)?;
                groups.insert(name.clone(), group);
            }
        }
        Ok(())
    }

    /// Bytes all queries hold now, and the limit (`mem_limit`).
    pub fn process_memory(&self) -> (usize, usize) {
        let process = &self.env.process;
        (
            process.used().saturating_sub(process.cached()),
            process.limit(),
        )
    }

    /// The process's memory account, which the storage caches share with queries.
    pub fn process(&self) -> &Arc<ProcessMemory> {
        &self.env.process
    }

    /// Checks that `name` may be dropped.
    pub fn check_drop(&self, name: &str) -> Result<Arc<WorkloadGroup>> {
        if name.eq_ignore_ascii_case(NORMAL_GROUP) {
            return Err(BasaltError::InvalidWorkloadGroup(
                "workload group 'normal' cannot be dropped".into(),
            ));
        }
        self.get(name)
    }

    pub fn remove(&self, name: &str) {
        self.groups.write().remove(&name.to_ascii_lowercase());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::tests::props;

    fn manager(stored: Vec<(u64, String, BTreeMap<String, String>)>) -> WorkloadManager {
        WorkloadManager::new(stored, Arc::new(RuntimeEnv::default()), 1 << 30).unwrap()
    }

    /// A group `small` of 10% of a 1000-byte process limit (100 bytes), overcommit off.
    fn small_group(queue_timeout_ms: &str) -> (WorkloadManager, Arc<WorkloadGroup>) {
        let m = WorkloadManager::new(Vec::new(), Arc::new(RuntimeEnv::default()), 1000).unwrap();
        let s = m
            .check_create(
                "small",
                &props(&[
                    ("memory_limit", "10%"),
                    ("enable_memory_overcommit", "false"),
                    ("queue_timeout", queue_timeout_ms),
                ]),
            )
            .unwrap();
        m.apply(9, "small", s).unwrap();
        let g = m.get("small").unwrap();
        (m, g)
    }

    fn consumer(
        account: &Arc<QueryAccount>,
        can_spill: bool,
    ) -> datafusion::execution::memory_pool::MemoryReservation {
        let pool = account.group().query_runtime(account).memory_pool.clone();
        datafusion::execution::memory_pool::MemoryConsumer::new("op")
            .with_can_spill(can_spill)
            .register(&pool)
    }

    #[test]
    fn memory_pressure_spills_then_cancels_the_largest_query() {
        let (_m, g) = small_group("1000");
        let big = QueryAccount::new(g.clone(), "u", Default::default());
        let small = QueryAccount::new(g.clone(), "u", Default::default());
        let big_res = consumer(&big, false);
        big_res.try_grow(70).unwrap();
        // A spillable operator is refused: it spills, nobody is cancelled.
        let spiller = consumer(&small, true);
        assert!(spiller.try_grow(40).is_err());
        assert!(!big.is_cancelled());
        // One that cannot spill makes the larger query give way and gets its memory once
        // that query has let go of it.
        let releaser = std::thread::spawn({
            let big = big.clone();
            move || {
                let start = std::time::Instant::now();
                while !big.is_cancelled() && start.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                drop(big_res);
            }
        });
        let needy = consumer(&small, false);
        needy.try_grow(40).unwrap();
        releaser.join().unwrap();
        let reason = big.cancel_reason().unwrap();
        assert!(
            reason.contains("MEM_LIMIT_EXCEEDED")
                && reason.contains("workload group 'small'")
                && reason.contains("group limit 100 bytes"),
            "{reason}"
        );
        assert_eq!(g.memory_used(), 40);
        // The largest query asking for more fails itself; the others are left alone.
        let other = QueryAccount::new(g.clone(), "u", Default::default());
        let other_res = consumer(&other, false);
        other_res.try_grow(30).unwrap();
        let e = needy.try_grow(40).unwrap_err().to_string();
        assert!(e.contains("workload group 'small'"), "{e}");
        assert!(!other.is_cancelled() && !small.is_cancelled());
    }

    #[tokio::test]
    async fn remote_reads_are_held_to_remote_read_bytes_per_second() {
        let m = manager(Vec::new());
        let s = m
            .check_create(
                "remote",
                &props(&[("remote_read_bytes_per_second", "100000")]),
            )
            .unwrap();
        m.apply(7, "remote", s).unwrap();
        let g = m.get("remote").unwrap();
        let account = QueryAccount::new(g.clone(), "u", Default::default());
        // 40 KB at 100 KB/s takes about 0.4 s; local reads stay unlimited.
        let start = std::time::Instant::now();
        for _ in 0..4 {
            account.read_remote(10_000).await;
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        let start = std::time::Instant::now();
        account.read_local(1 << 30).await;
        assert!(start.elapsed() < Duration::from_millis(100));
        assert_eq!(g.usage().remote_read_bytes(), 40_000);
        // Lifting the limit applies at once.
        let s = m
            .check_alter("remote", &props(&[("remote_read_bytes_per_second", "-1")]))
            .unwrap();
        m.apply(7, "remote", s).unwrap();
        let start = std::time::Instant::now();
        account.read_remote(1 << 30).await;
        assert!(start.elapsed() < Duration::from_millis(100));
    }

    #[tokio::test]
    async fn a_moved_query_takes_its_slot_to_the_new_group() {
        let m = manager(Vec::new());
        for (id, name) in [(7, "a"), (8, "b")] {
            let s = m
                .check_create(
                    name,
                    &props(&[
                        ("max_concurrency", "1"),
                        ("max_queue_size", "1"),
                        ("queue_timeout", "5000"),
                    ]),
                )
                .unwrap();
            m.apply(id, name, s).unwrap();
        }
        let (a, b) = (m.get("a").unwrap(), m.get("b").unwrap());
        let running = QueryAccount::new(a.clone(), "u", Default::default());
        let _held = running.hold_slot(a.admit().await.unwrap());
        let a2 = a.clone();
        let waiter = tokio::spawn(async move { a2.admit().await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!((a.running(), a.waiting()), (1, 1));
        running.move_to(b.clone());
        waiter.await.unwrap().unwrap();
        assert_eq!(b.running(), 1);
        drop(_held);
        assert_eq!(b.running(), 0);
    }

    #[test]
    fn groups_that_borrowed_memory_give_it_back_under_pressure() {
        // Process limit 1000 bytes; `normal` (30% = 300 bytes, overcommit) borrows up to 900.
        let (m, g) = small_group("0");
        let normal = m.get("normal").unwrap();
        let borrower = QueryAccount::new(normal.clone(), "u", Default::default());
        let small = QueryAccount::new(normal.clone(), "u", Default::default());
        let held = consumer(&borrower, false);
        held.try_grow(900).unwrap();
        let small_res = consumer(&small, false);
        small_res.try_grow(50).unwrap();
        // The hard-limited group (100 bytes) asks for 80, within its own limit: the process
        // is short, so normal's largest query is cancelled and the memory comes back.
        let asker = QueryAccount::new(g.clone(), "u", Default::default());
        let releaser = std::thread::spawn({
            let borrower = borrower.clone();
            move || {
                let start = std::time::Instant::now();
                while !borrower.is_cancelled() && start.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                drop(held);
            }
        });
        let asked = consumer(&asker, false);
        asked.try_grow(80).unwrap();
        releaser.join().unwrap();
        let reason = borrower.cancel_reason().unwrap();
        assert!(
            reason.contains("workload group 'normal'") && reason.contains("overcommit"),
            "{reason}"
        );
        assert!(!small.is_cancelled());
    }

    #[test]
    fn over_the_resident_limit_the_largest_query_is_cancelled() {
        let (m, g) = small_group("0");
        let normal = m.get("normal").unwrap();
        let a = QueryAccount::new(g.clone(), "u", Default::default());
        let b = QueryAccount::new(normal, "u", Default::default());
        m.track(&a);
        m.track(&b);
        let (ra, rb) = (consumer(&a, false), consumer(&b, false));
        ra.try_grow(10).unwrap();
        rb.try_grow(500).unwrap();
        m.guard_process_memory();
        assert!(!a.is_cancelled() && !b.is_cancelled(), "under the limit");
        m.rss_limit.store(1, std::sync::atomic::Ordering::Relaxed);
        m.guard_process_memory();
        assert!(b.is_cancelled() && !a.is_cancelled());
        let reason = b.cancel_reason().unwrap();
        assert!(
            reason.contains("MEM_LIMIT_EXCEEDED") && reason.contains("holding 500 bytes"),
            "{reason}"
        );
        // The cancelled query is given time to let go before another is chosen.
        m.guard_process_memory();
        assert!(!a.is_cancelled());
        drop(rb);
        m.guard_process_memory();
        assert!(a.is_cancelled());
    }

    #[tokio::test]
    async fn new_queries_wait_while_the_group_is_full() {
        let (_m, g) = small_group("300");
        let running = QueryAccount::new(g.clone(), "u", Default::default());
        let held = consumer(&running, false);
        held.try_grow(95).unwrap();
        // Full (95 of 100 bytes): a new query waits, then times out naming the group.
        let started = std::time::Instant::now();
        let e = g.admit().await.unwrap_err().to_string();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(
            e.contains("query queue timeout") && e.contains("MEM_LIMIT_EXCEEDED"),
            "{e}"
        );
        // Memory freed while it waits lets it in.
        let g2 = g.clone();
        let waiter = tokio::spawn(async move { g2.admit().await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(g.waiting(), 1);
        held.shrink(50);
        waiter.await.unwrap().unwrap();
        assert_eq!(g.waiting(), 0);
    }

    #[test]
    fn normal_always_exists_and_cannot_be_dropped() {
        let m = manager(Vec::new());
        assert_eq!(m.get("NORMAL").unwrap().settings().memory_limit, Some(30.0));
        assert!(m.check_drop("normal").is_err());
        assert!(matches!(
            m.get("nope"),
            Err(BasaltError::UnknownWorkloadGroup(_))
        ));
    }

    #[test]
    fn create_alter_drop_check_the_memory_sum() {
        let m = manager(Vec::new());
        let s = m
            .check_create("g1", &props(&[("memory_limit", "60%")]))
            .unwrap();
        m.apply(7, "g1", s).unwrap();
        // normal 30% + g1 60% + 20% > 100%.
        assert!(m
            .check_create("g2", &props(&[("memory_limit", "20%")]))
            .is_err());
        let s = m
            .check_alter(
                "g1",
                &props(&[("memory_limit", "50%"), ("max_concurrency", "1")]),
            )
            .unwrap();
        m.apply(7, "g1", s).unwrap();
        assert_eq!(m.get("g1").unwrap().settings().max_concurrency, 1);
        let s = m
            .check_create("g2", &props(&[("memory_limit", "20%")]))
            .unwrap();
        m.apply(8, "g2", s).unwrap();
        assert!(m.check_create("bad name", &props(&[])).is_err());
        m.check_drop("g2").unwrap();
        m.remove("g2");
        assert!(!m.exists("g2"));
    }

    #[test]
    fn stored_groups_come_back() {
        let m = manager(vec![(
            9,
            "etl".into(),
            props(&[("max_concurrency", "3"), ("memory_limit", "10%")]),
        )]);
        let g = m.get("etl").unwrap();
        assert_eq!((g.id, g.settings().max_concurrency), (9, 3));
        assert!(m.exists("normal"));
    }
}
