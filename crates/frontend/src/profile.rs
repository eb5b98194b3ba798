//! Query profiles. With `enable_profile` on, a statement's executed physical plan is walked when
//! its results are finished and a per-operator summary (rows, compute time, memory, bytes read,
//! spills, and every metric DataFusion kept) is stored in a process-wide ring of the most recent
//! profiles; `SHOW QUERY PROFILE` lists them and `SHOW QUERY PROFILE '/<id>'` shows one. On a
//! cluster the operators that ran on backends carry their metrics summed over their tasks, the
//! totals (CPU, rows and bytes scanned, peak memory) add every node's, and each backend the
//! query ran on gets a row of its own (wall and CPU time, rows and bytes scanned, peak memory).

use crate::output::Output;
use crate::show::{Col, ResultBuilder};
use basalt_common::{BasaltError, Result};
use basalt_workload::QueryAccount;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{displayable, ExecutionPlan};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// How many profiles are kept (the oldest is dropped first).
const KEPT_PROFILES: usize = 100;

/// One operator of an executed plan, summed over its partitions.
#[derive(Debug, Clone)]
pub struct OperatorProfile {
    pub id: usize,
    pub parent: Option<usize>,
    pub depth: usize,
    /// The operator's one-line description (name and arguments).
    pub operator: String,
    pub partitions: usize,
    pub output_rows: Option<usize>,
    pub compute_ns: Option<usize>,
    /// Peak memory reported by the operator (hash tables, sort buffers).
    pub peak_memory: Option<usize>,
    /// Stored bytes of the columns scanned, and bytes read from files (cache misses).
    pub bytes_scanned: Option<usize>,
    pub bytes_read: Option<usize>,
    pub spilled_bytes: Option<usize>,
    /// Every metric, summed by name.
    pub metrics: String,
}

/// One finished statement.
#[derive(Debug, Clone)]
pub struct QueryProfile {
    pub id: String,
    pub user: String,
    pub database: Option<String>,
    pub sql: String,
    pub started_ms: i64,
    pub total_ms: u64,
    pub state: String,
    pub workload_group: String,
    pub cpu_ms: u64,
    pub scan_rows: u64,
    pub scan_bytes: u64,
    pub peak_memory: u64,
    pub operators: Vec<OperatorProfile>,
    /// On a cluster: what the query used on each backend it ran on.
    pub backends: Vec<(basalt_catalog::BackendMeta, basalt_dist::QueryUsage)>,
}

/// On a cluster, how long a finished query's profile waits for the backends' metrics.
const BACKEND_METRICS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most recent profiles of the process.
#[derive(Debug, Default)]
pub struct ProfileStore {
    next_id: AtomicU64,
    kept: Mutex<VecDeque<Arc<QueryProfile>>>,
}

impl ProfileStore {
    fn add(&self, profile: QueryProfile) {
        let mut kept = self.kept.lock();
        if kept.len() == KEPT_PROFILES {
            kept.pop_front();
        }
        kept.push_back(Arc::new(profile));
    }

    fn visible(&self, viewer: Option<&str>) -> Vec<Arc<QueryProfile>> {
        self.kept
            .lock()
            .iter()
            .rev()
            .filter(|p| viewer.is_none_or(|v| p.user == v))
            .cloned()
            .collect()
    }
}

/// Collects a statement's profile when its results are finished (or abandoned).
pub struct ProfileRecorder {
    store: Arc<ProfileStore>,
    plan: Arc<dyn ExecutionPlan>,
    account: Arc<QueryAccount>,
    user: String,
    database: Option<String>,
    sql: String,
    started: Instant,
    started_ms: i64,
    failed: Option<String>,
    /// On a cluster: the cluster and the query's id there.
    cluster: Option<(Arc<basalt_dist::Cluster>, String)>,
}

impl ProfileRecorder {
    pub fn new(
        store: Arc<ProfileStore>,
        plan: Arc<dyn ExecutionPlan>,
        account: Arc<QueryAccount>,
        user: &str,
        database: Option<String>,
        sql: String,
    ) -> ProfileRecorder {
        let started_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        ProfileRecorder {
            store,
            plan,
            account,
            user: user.to_string(),
            database,
            sql,
            started: Instant::now(),
            started_ms,
            failed: None,
            cluster: None,
        }
    }

    /// Profiles a query that runs on `cluster`'s backends as `query`: its profile is kept once
    /// the backends have reported their operators' metrics and usage.
    pub fn on_cluster(mut self, cluster: Arc<basalt_dist::Cluster>, query: String) -> Self {
        self.cluster = Some((cluster, query));
        self
    }

    /// Marks the statement failed (the profile still shows how far it got).
    pub fn failed(&mut self, error: &str) {
        self.failed.get_or_insert_with(|| error.to_string());
    }
}

impl Drop for ProfileRecorder {
    fn drop(&mut self) {
        let n = self.store.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let account = &self.account;
        let profile = QueryProfile {
            id: format!("{:x}-{n}", self.started_ms),
            user: self.user.clone(),
            database: self.database.clone(),
            sql: std::mem::take(&mut self.sql),
            started_ms: self.started_ms,
            total_ms: self.started.elapsed().as_millis() as u64,
            state: match &self.failed {
                None => "OK".into(),
                Some(e) => format!("ERROR: {e}"),
            },
            workload_group: account.group().name.clone(),
            cpu_ms: account.cpu_time().as_millis() as u64,
            scan_rows: account.scan_rows(),
            scan_bytes: account.scan_bytes(),
            peak_memory: account.peak_memory() as u64,
            operators: Vec::new(),
            backends: Vec::new(),
        };
        let plan = self.plan.clone();
        let store = self.store.clone();
        let runtime = tokio::runtime::Handle::try_current();
        match (self.cluster.take(), runtime) {
            (Some((cluster, query)), Ok(runtime)) => {
                runtime.spawn(async move {
                    let plan = basalt_dist::with_backend_metrics(plan, BACKEND_METRICS_WAIT).await;
                    let backends = finished_usage(&cluster, &query).await;
                    // The query's totals are the frontend's and every backend's together.
                    let sum = |f: fn(&basalt_dist::QueryUsage) -> u64| -> u64 {
                        backends.iter().map(|(_, u)| f(u)).sum()
                    };
                    store.add(QueryProfile {
                        operators: operators(&plan),
                        cpu_ms: profile.cpu_ms + sum(|u| u.cpu_ms),
                        scan_rows: profile.scan_rows + sum(|u| u.scan_rows),
                        scan_bytes: profile.scan_bytes + sum(|u| u.scan_bytes),
                        peak_memory: profile.peak_memory + sum(|u| u.peak_memory_bytes),
                        backends,
                        ..profile
                    });
                });
            }
            _ => store.add(QueryProfile {
                operators: operators(&plan),
                ..profile
            }),
        }
    }
}

fn operators(plan: &Arc<dyn ExecutionPlan>) -> Vec<OperatorProfile> {
    let mut out = Vec::new();
    collect(plan, None, 0, &mut out);
    out
}

/// What `query` used on each backend, once every backend has seen its fragments end (or
/// after a short wait, as far as they got).
async fn finished_usage(
    cluster: &basalt_dist::Cluster,
    query: &str,
) -> Vec<(basalt_catalog::BackendMeta, basalt_dist::QueryUsage)> {
    let deadline = Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let usage = cluster.query_usage(query).await;
        if usage.iter().all(|(_, u)| u.finished) || Instant::now() >= deadline {
            return usage;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

fn collect(
    plan: &Arc<dyn ExecutionPlan>,
    parent: Option<usize>,
    depth: usize,
    out: &mut Vec<OperatorProfile>,
) {
    let id = out.len();
    let raw = plan.metrics().unwrap_or_default();
    let partitions = plan.properties().output_partitioning().partition_count();
    let metrics = raw.aggregate_by_name();
    let sum = |name: &str| metrics.sum_by_name(name).map(|v| v.as_usize());
    out.push(OperatorProfile {
        id,
        parent,
        depth,
        operator: displayable(plan.as_ref())
            .one_line()
            .to_string()
            .trim()
            .to_string(),
        partitions,
        output_rows: metrics.output_rows(),
        compute_ns: metrics.elapsed_compute(),
        peak_memory: memory(&metrics),
        bytes_scanned: sum("bytes_scanned"),
        bytes_read: sum("bytes_read"),
        spilled_bytes: metrics.spilled_bytes(),
        metrics: metrics
            .sorted_for_display()
            .timestamps_removed()
            .to_string(),
    });
    for child in plan.children() {
        collect(child, Some(id), depth + 1, out);
    }
}

/// The memory an operator reports: its peak, or what it holds (a join's build side).
fn memory(metrics: &MetricsSet) -> Option<usize> {
    metrics
        .iter()
        .filter(|m| m.value().name().ends_with("mem_used"))
        .map(|m| m.value().as_usize())
        .max()
}

fn int(v: Option<usize>) -> Option<i64> {
    v.map(|v| v.min(i64::MAX as usize) as i64)
}

/// `SHOW QUERY PROFILE`: the kept profiles the viewer may see, newest first.
pub fn show_list(store: &ProfileStore, viewer: Option<&str>) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("Query ID"),
        Col::str("User"),
        Col::str("Default Db"),
        Col::str("Sql Statement"),
        Col::str("Start Time"),
        Col::int("Total Ms"),
        Col::str("Query State"),
        Col::str("Workload Group"),
        Col::int("Cpu Ms"),
        Col::int("Scan Rows"),
        Col::int("Scan Bytes"),
        Col::int("Peak Memory Bytes"),
    ]);
    for p in store.visible(viewer) {
        b.row(vec![
            p.id.clone().into(),
            p.user.clone().into(),
            p.database.clone().into(),
            p.sql.clone().into(),
            crate::show::format_ms(p.started_ms).into(),
            (p.total_ms as i64).into(),
            p.state.clone().into(),
            p.workload_group.clone().into(),
            (p.cpu_ms as i64).into(),
            (p.scan_rows.min(i64::MAX as u64) as i64).into(),
            (p.scan_bytes.min(i64::MAX as u64) as i64).into(),
            (p.peak_memory.min(i64::MAX as u64) as i64).into(),
        ]);
    }
    b.into_output()
}

/// `SHOW QUERY PROFILE '/<id>'`: one row per operator, in plan order (parents first).
pub fn show_one(store: &ProfileStore, viewer: Option<&str>, id: &str) -> Result<Output> {
    let profile = store
        .visible(viewer)
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| BasaltError::UnknownQueryProfile(id.to_string()))?;
    let mut b = ResultBuilder::new(&[
        Col::int("Id"),
        Col::int("Parent Id"),
        Col::str("Operator"),
        Col::int("Partitions"),
        Col::int("Rows"),
        Col::float("Compute Ms"),
        Col::int("Peak Memory Bytes"),
        Col::int("Bytes Scanned"),
        Col::int("Bytes Read"),
        Col::int("Spilled Bytes"),
        Col::str("Metrics"),
    ]);
    for op in &profile.operators {
        b.row(vec![
            (op.id as i64).into(),
            op.parent.map(|p| p as i64).into(),
            format!("{}{}", "  ".repeat(op.depth), op.operator).into(),
            (op.partitions as i64).into(),
            int(op.output_rows).into(),
            op.compute_ns.map(|ns| ns as f64 / 1e6).into(),
            int(op.peak_memory).into(),
            int(op.bytes_scanned).into(),
            int(op.bytes_read).into(),
            int(op.spilled_bytes).into(),
            op.metrics.clone().into(),
        ]);
    }
    // On a cluster: one row per backend the query ran on, after its operators.
    let first_id = profile.operators.len() as i64;
    for (id, (backend, usage)) in (first_id..).zip(&profile.backends) {
        b.row(vec![
            id.into(),
            None::<i64>.into(),
            format!("Backend {} ({})", backend.id, backend.address()).into(),
            None::<i64>.into(),
            (usage.scan_rows.min(i64::MAX as u64) as i64).into(),
            (usage.cpu_ms as f64).into(),
            (usage.peak_memory_bytes.min(i64::MAX as u64) as i64).into(),
            (usage.scan_bytes.min(i64::MAX as u64) as i64).into(),
            None::<i64>.into(),
            None::<i64>.into(),
            format!(
                "wall_ms={}, cpu_ms={}, scan_rows={}, scan_bytes={}, peak_memory_bytes={}",
                usage.wall_ms,
                usage.cpu_ms,
                usage.scan_rows,
                usage.scan_bytes,
                usage.peak_memory_bytes
            )
            .into(),
        ]);
    }
    Ok(b.into_output())
}
