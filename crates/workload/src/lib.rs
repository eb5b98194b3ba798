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
pub mod settings;
pub mod throttle;
pub mod usage;

pub use accounting::QueryAccount;
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
    usage: GroupUsage,
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
            usage: GroupUsage::default(),
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

    /// Queries of this group waiting to run.
    pub fn waiting(&self) -> usize {
        self.queue.waiting()
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
        self.queue.admit(limits).await
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
        })
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
        let live: Vec<Arc<QueryAccount>> = {
            let mut accounts = self.accounts.lock();
            accounts.retain(|a| a.strong_count() > 0);
            accounts
                .iter()
                .filter_map(std::sync::Weak::upgrade)
                .collect()
        };
        let policies = self.policies.read().clone();
        if policies.is_empty() {
            return;
        }
        for account in live {
            if account.is_cancelled() {
                continue;
            }
            let group = account.group();
            let facts = QueryFacts {
                user: account.user(),
                group: &group.name,
                query_time_ms: account.elapsed().as_millis() as u64,
                scan_rows: account.scan_rows(),
                scan_bytes: account.scan_bytes(),
                memory_bytes: account.memory() as u64,
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
        (self.env.process.used(), self.env.process.limit())
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
