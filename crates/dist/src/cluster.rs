//! The cluster as a frontend sees it: the backends in its catalog, their liveness from
//! heartbeats (asked on [`crate::health_lane`]), and authenticated connections to them. It
//! resolves the distributed engine's workers (the backends) and is how loads reach the
//! backends' segment services.

use crate::channels::SecretChannelResolver;
use crate::health_lane::{HealthLane, StatusAnswer};
use crate::secret::ClusterSecret;
use crate::segment_protocol::{BackendStatus, RemoveOrphans, QUERY_USAGE, REMOVE_ORPHANS};
use crate::workload_tag::QueryUsage;
use arrow_flight::{Action, FlightClient};
use basalt_catalog::{BackendId, BackendMeta, Catalog};
use basalt_common::clock::now_ms;
use basalt_common::{BasaltError, Result};
use datafusion::common::DataFusionError;
use datafusion_distributed::grpc::BoxCloneSyncChannel;
use datafusion_distributed::WorkerResolver;
use futures::TryStreamExt;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// How often the frontend asks every backend how it is (a round that runs longer delays the
/// next, never more than [`HEARTBEAT_TIMEOUT`]).
const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);
/// A backend that does not answer within this is reported dead. A backend that stops
/// answering right after a round is found dead by the next-but-one round at the latest:
/// within `HEARTBEAT_INTERVAL + 2 * HEARTBEAT_TIMEOUT` = 5 s, since the backends are asked
/// together, so one that hangs delays no other's verdict.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(2);

/// What the last heartbeat said about one backend.
#[derive(Debug, Clone, Default)]
pub struct BackendHealth {
    pub alive: bool,
    /// Unix milliseconds of the last answered heartbeat.
    pub last_heartbeat_ms: Option<i64>,
    pub status: BackendStatus,
    /// Why the last heartbeat failed.
    pub error: String,
    /// Unix milliseconds since which the backend has not answered (since it was first found
    /// dead, or since this frontend started if it never answered); `None` while it answers.
    pub down_since_ms: Option<i64>,
    /// When a failed query or read last found it not answering ([`Cluster::mark_dead`]): a
    /// heartbeat answered before then does not mark it alive again.
    suspected_at: Option<std::time::Instant>,
}

impl BackendHealth {
    /// Marks the backend dead for `why`, keeping when it went down.
    fn set_down(&mut self, why: String) {
        if self.alive || self.down_since_ms.is_none() {
            self.down_since_ms = Some(now_ms());
        }
        self.alive = false;
        self.error = why;
    }

    /// Marks the backend alive: it answered with `status` just now.
    fn set_up(&mut self, status: BackendStatus) {
        self.alive = true;
        self.last_heartbeat_ms = Some(now_ms());
        self.down_since_ms = None;
        self.status = status;
        self.error.clear();
    }
}

/// The frontend's view of its backends.
pub struct Cluster {
    catalog: Arc<dyn Catalog>,
    channels: SecretChannelResolver,
    /// Where heartbeats and probes run, apart from queries.
    health_lane: HealthLane,
    health: RwLock<BTreeMap<BackendId, BackendHealth>>,
    runtime: tokio::runtime::Handle,
    /// A backend was added: the balancer spreads tablets onto it ([`crate::replica_balancer`]).
    rebalance_wanted: std::sync::atomic::AtomicBool,
    /// Held while a replica copies segment files, so copies run one at a time.
    copy_lane: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").finish_non_exhaustive()
    }
}

/// The address the distributed engine and the segment service reach a backend at.
pub fn backend_url(backend: &BackendMeta) -> Result<Url> {
    Url::parse(&format!("http://{}:{}", backend.host, backend.port))
        .map_err(|e| BasaltError::InvalidDdl(format!("backend {}: {e}", backend.address())))
}

impl Cluster {
    /// Must be called inside the runtime the cluster's connections run on.
    pub fn new(catalog: Arc<dyn Catalog>, secret: ClusterSecret) -> Result<Arc<Cluster>> {
        Ok(Arc::new(Cluster {
            catalog,
            channels: SecretChannelResolver::new(secret.clone()),
            health_lane: HealthLane::start(secret)?,
            health: RwLock::new(BTreeMap::new()),
            runtime: tokio::runtime::Handle::current(),
            rebalance_wanted: Default::default(),
            copy_lane: Default::default(),
        }))
    }

    pub fn channels(&self) -> &SecretChannelResolver {
        &self.channels
    }

    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// Runs `work` on the cluster's runtime and waits for it, from any thread: storage calls
    /// in from its own threads and from tasks of the runtime (where blocking on the runtime
    /// directly would panic, so a helper thread waits instead).
    pub(crate) fn wait_for<F>(&self, work: F) -> F::Output
    where
        F: std::future::Future + Send,
        F::Output: Send,
    {
        if tokio::runtime::Handle::try_current().is_err() {
            return self.runtime.block_on(work);
        }
        std::thread::scope(|scope| {
            scope
                .spawn(|| self.runtime.block_on(work))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// The backends, in id order.
    pub fn backends(&self) -> Vec<BackendMeta> {
        self.catalog.backends()
    }

    pub fn backend(&self, id: BackendId) -> Result<BackendMeta> {
        self.backends()
            .into_iter()
            .find(|b| b.id == id)
            .ok_or_else(|| BasaltError::Internal(format!("tablet replica on unknown backend {id}")))
    }

    /// Each backend with what its last heartbeat said.
    pub fn health(&self) -> Vec<(BackendMeta, BackendHealth)> {
        let health = self.health.read();
        self.backends()
            .into_iter()
            .map(|b| {
                let h = health.get(&b.id).cloned().unwrap_or_default();
                (b, h)
            })
            .collect()
    }

    /// An authenticated Arrow Flight client of a backend's segment service.
    pub(crate) async fn flight(
        &self,
        backend: &BackendMeta,
    ) -> Result<FlightClient<BoxCloneSyncChannel>> {
        let url = backend_url(backend)?;
        let channel = self.channels.channel(&url).await.map_err(|e| {
            BasaltError::Execution(format!("backend {} unreachable: {e}", backend.address()))
        })?;
        Ok(FlightClient::new(channel))
    }

    /// Runs action `kind` with `body` on a backend's segment service and returns its one
    /// answer. The answer stream is read to its end: a stream dropped early is reset, and a
    /// server that sees many resets on one connection closes it (HTTP/2 "too many internal
    /// resets"), failing every call on it — as point queries did under concurrent load.
    pub(crate) async fn action(
        &self,
        backend: &BackendMeta,
        kind: &str,
        body: Vec<u8>,
    ) -> Result<bytes::Bytes> {
        let failed = |e: &dyn std::fmt::Display| {
            BasaltError::Execution(format!("{kind} on backend {}: {e}", backend.address()))
        };
        let mut client = self.flight(backend).await?;
        let answers = client
            .do_action(Action::new(kind.to_string(), body))
            .await
            .map_err(|e| failed(&e))?;
        let all: Vec<bytes::Bytes> = answers.try_collect().await.map_err(|e| failed(&e))?;
        all.into_iter().next().ok_or_else(|| failed(&"no answer"))
    }

    /// What the query `query` (a [`crate::WorkloadTag`]'s id) used on each backend it ran on.
    pub async fn query_usage(&self, query: &str) -> Vec<(BackendMeta, QueryUsage)> {
        let body = serde_json::to_vec(&[query]).unwrap_or_default();
        let asks = self.backends().into_iter().map(|backend| {
            let body = body.clone();
            async move {
                let answer = self.action(&backend, QUERY_USAGE, body).await.ok()?;
                let usage: Vec<QueryUsage> = serde_json::from_slice(&answer).ok()?;
                Some((backend, usage.into_iter().next()?))
            }
        });
        futures::future::join_all(asks)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Asks `backend` how it is, on the health lane: no answer within `within` is silence.
    async fn heartbeat(&self, backend: &BackendMeta, within: Duration) -> StatusAnswer {
        self.health_lane.status(backend, within).await
    }

    /// Asks every backend once, all together, and records the answers.
    pub async fn heartbeat_all(&self) {
        let asks = self.backends().into_iter().map(|backend| async move {
            let answer = self.heartbeat(&backend, HEARTBEAT_TIMEOUT).await;
            (backend, answer, std::time::Instant::now())
        });
        for (backend, answer, answered_at) in futures::future::join_all(asks).await {
            let mut health = self.health.write();
            let entry = health.entry(backend.id).or_default();
            let was_alive = entry.alive;
            match answer {
                // An answer that came before a query found the backend dead (the round
                // waited on slower backends) is stale: the verdict stands until a newer one.
                StatusAnswer::Answered(_)
                    if entry.suspected_at.is_some_and(|at| at > answered_at) => {}
                StatusAnswer::Answered(status) => {
                    if !entry.alive && entry.last_heartbeat_ms.is_some() {
                        tracing::info!("backend {} answers heartbeats again", backend.address());
                    }
                    entry.set_up(status)
                }
                StatusAnswer::Failed(e) => entry.set_down(e.to_string()),
                StatusAnswer::Silent => entry.set_down("heartbeat timed out".into()),
            }
            if was_alive && !entry.alive {
                tracing::warn!(
                    "backend {} stopped answering heartbeats: {}",
                    backend.address(),
                    entry.error
                );
            }
        }
    }

    /// Has every backend remove the segment files the frontend's catalog did not reference
    /// when it started (`referenced`, taken then) and that are named by an id below
    /// `ids_below` (allocated then): loads that were never published and compactions never
    /// finished, when a frontend died. Each backend is asked once, when it first answers a
    /// heartbeat, for up to an hour.
    pub fn remove_orphans_once(
        self: &Arc<Self>,
        referenced: std::collections::HashSet<String>,
        ids_below: u64,
    ) {
        let cluster = Arc::downgrade(self);
        let body = match serde_json::to_vec(&RemoveOrphans {
            referenced,
            ids_below,
        }) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!("orphaned segments are not removed: {e}");
                return;
            }
        };
        self.runtime.spawn(async move {
            let mut done: std::collections::HashSet<BackendId> = Default::default();
            let give_up = tokio::time::Instant::now() + Duration::from_secs(3600);
            while tokio::time::Instant::now() < give_up {
                let Some(c) = cluster.upgrade() else { return };
                let alive: Vec<BackendMeta> = c
                    .health()
                    .into_iter()
                    .filter(|(b, h)| h.alive && !done.contains(&b.id))
                    .map(|(b, _)| b)
                    .collect();
                for backend in alive {
                    match c.action(&backend, REMOVE_ORPHANS, body.clone()).await {
                        Ok(_) => {
                            done.insert(backend.id);
                        }
                        Err(e) => tracing::warn!(
                            "removing orphaned segments on backend {}: {e}",
                            backend.address()
                        ),
                    }
                }
                let all_done = c.backends().iter().all(|b| done.contains(&b.id));
                drop(c);
                if all_done {
                    return;
                }
                tokio::time::sleep(HEARTBEAT_INTERVAL).await;
            }
        });
    }

    /// Held while a replica copies segment files (catch-up and moves take turns).
    pub(crate) fn copy_lane(&self) -> &tokio::sync::Mutex<()> {
        &self.copy_lane
    }

    /// Asks the balancer to spread tablets evenly over the live backends (after ALTER SYSTEM
    /// ADD BACKEND).
    pub fn request_rebalance(&self) {
        self.rebalance_wanted
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a rebalance is wanted; `done` clears the wish.
    pub(crate) fn rebalance_wanted(&self, done: bool) -> bool {
        if done {
            self.rebalance_wanted
                .store(false, std::sync::atomic::Ordering::Relaxed);
        }
        self.rebalance_wanted
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Heartbeats every backend from now on, in the background.
    pub fn start_heartbeats(self: &Arc<Self>) {
        let cluster = Arc::downgrade(self);
        self.health_lane.runtime().spawn(async move {
            let mut rounds = tokio::time::interval(HEARTBEAT_INTERVAL);
            rounds.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                rounds.tick().await;
                let Some(c) = cluster.upgrade() else { return };
                c.heartbeat_all().await;
            }
        });
    }
}

/// How long a backend suspected after a failed read or query may take to answer before it is
/// marked dead (the heartbeats mark it alive again once it answers them).
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Which backends reads may use: liveness as the heartbeats (and failed reads) found it.
impl Cluster {
    /// Whether reads may go to backend `id`: nothing has found it dead. A backend not asked
    /// yet (a frontend just started) counts as live; its first heartbeat decides.
    pub fn is_live(&self, id: BackendId) -> bool {
        self.health.read().get(&id).is_none_or(|h| h.alive)
    }

    /// The backends reads may use, in id order.
    pub fn live_backends(&self) -> Vec<BackendMeta> {
        let health = self.health.read();
        self.backends()
            .into_iter()
            .filter(|b| health.get(&b.id).is_none_or(|h| h.alive))
            .collect()
    }

    /// The backends new stages run on: the live ones not decommissioned (one decommissioned
    /// is about to leave the cluster, so queries planned now should not need it), else the
    /// live ones, else all (a scan then fails naming the dead backends).
    pub fn working_backends(&self) -> Vec<BackendMeta> {
        let live = self.live_backends();
        let staying: Vec<BackendMeta> =
            live.iter().filter(|b| !b.decommissioned).cloned().collect();
        if !staying.is_empty() {
            return staying;
        }
        if !live.is_empty() {
            return live;
        }
        self.backends()
    }

    /// Marks `id` dead at once (a failed read or query found it not answering), before the
    /// next heartbeat would; the heartbeats mark it alive again when it answers.
    pub fn mark_dead(&self, id: BackendId, why: String) {
        let mut health = self.health.write();
        let entry = health.entry(id).or_default();
        if entry.alive || entry.last_heartbeat_ms.is_none() {
            tracing::warn!("backend {id} marked dead: {why}");
        }
        entry.suspected_at = Some(std::time::Instant::now());
        entry.set_down(why);
    }

    /// Asks the backends marked dead whether they answer now (within [`HEARTBEAT_TIMEOUT`])
    /// and marks those that do alive: a backend too busy to answer a probe in time, not
    /// dead, need not wait for the next heartbeat round before reads may use it again.
    /// Returns whether one answered, and whether one was silent (no answer in time, as a
    /// busy or frozen process) rather than refusing.
    async fn recheck(&self) -> (bool, bool) {
        let dead: Vec<BackendMeta> = self
            .backends()
            .into_iter()
            .filter(|b| !self.is_live(b.id))
            .collect();
        let asks = dead.into_iter().map(|backend| async move {
            let answer = self.heartbeat(&backend, HEARTBEAT_TIMEOUT).await;
            (backend, answer)
        });
        let (mut revived, mut silent) = (false, false);
        for (backend, answer) in futures::future::join_all(asks).await {
            match answer {
                StatusAnswer::Answered(status) => {
                    let mut health = self.health.write();
                    let entry = health.entry(backend.id).or_default();
                    entry.set_up(status);
                    tracing::info!("backend {} answers again", backend.id);
                    revived = true;
                }
                StatusAnswer::Failed(_) => {}
                StatusAnswer::Silent => silent = true,
            }
        }
        (revived, silent)
    }

    /// Re-asks the backends marked dead until one answers, or until `within` has passed while
    /// one stays silent (a backend busy with a failed query's last connections may answer a
    /// few seconds later; one that refuses connections is gone, so that ends the wait at
    /// once); whether one answered.
    pub async fn await_revival(&self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let (revived, silent) = self.recheck().await;
            if revived {
                return true;
            }
            if !silent || tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Asks every backend believed live whether it answers (within [`PROBE_TIMEOUT`]), after
    /// a query or read failed; marks those that do not dead and returns them.
    pub async fn probe_live_backends(&self) -> Vec<BackendMeta> {
        let asks = self.live_backends().into_iter().map(|backend| async move {
            match self.heartbeat(&backend, PROBE_TIMEOUT).await {
                StatusAnswer::Answered(_) => None,
                StatusAnswer::Failed(e) => Some((backend, e.to_string())),
                StatusAnswer::Silent => Some((backend, "did not answer within 2 s".to_string())),
            }
        });
        let mut dead = Vec::new();
        for (backend, why) in futures::future::join_all(asks).await.into_iter().flatten() {
            self.mark_dead(backend.id, why);
            dead.push(backend);
        }
        dead
    }
}

/// The distributed engine's workers: the live backends, in id order (none before the first is
/// added; all of them when none is live, so a scan fails naming the dead backends instead of
/// running on the frontend).
pub struct BackendWorkers(pub Arc<Cluster>);

impl WorkerResolver for BackendWorkers {
    fn get_urls(&self) -> std::result::Result<Vec<Url>, DataFusionError> {
        let workers = self.0.working_backends();
        let urls = workers
            .iter()
            .map(backend_url)
            .collect::<Result<Vec<_>>>()
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        // Without backends no table has tablets to scan (CREATE TABLE waits for one): plans
        // then run whole on the frontend (constant queries, system tables, a client's probes).
        Ok(urls)
    }
}
