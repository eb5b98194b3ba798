//! Workload groups reach the backends with each query: the frontend tags a distributed query
//! with its workload group (id, name, settings), its memory limit and an id, sent as a gRPC
//! header with every fragment. A backend keeps its own live copy of each group it has seen
//! (settings as the latest query carried them), so the group's memory pool, CPU and read
//! limits apply on every node, each against that node's own cores and `mem_limit`.

use basalt_common::{BasaltError, Result};
use basalt_workload::{GroupSettings, QueryAccount, WorkloadManager, NORMAL_GROUP};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::SessionConfig;
use datafusion_distributed::DistributedExt;
use http::{HeaderMap, HeaderValue};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// The header carrying a [`WorkloadTag`] (hex of its JSON: header values are visible ASCII).
const HEADER: &str = "x-basalt-workload";

/// Which group a distributed query runs in, and what it may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadTag {
    /// Unique per query on its frontend (the frontend's start time and a counter); kept on
    /// the query's account, so every statement part of one query shares it.
    pub query: String,
    pub user: String,
    pub group_id: u64,
    pub group: String,
    /// The group's settings, as the catalog stores them.
    pub properties: BTreeMap<String, String>,
    /// The query's own memory limit (`exec_mem_limit`) on each node; `usize::MAX` for none.
    pub memory_limit: usize,
}

impl WorkloadTag {
    /// The tag of a query running under `account` on this frontend.
    pub fn for_query(account: &QueryAccount) -> WorkloadTag {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static STARTED: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
        let started = STARTED.get_or_init(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        });
        let group = account.group();
        let query =
            account.cluster_id(|| format!("{started:x}-{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        WorkloadTag {
            query: query.to_string(),
            user: account.user().to_string(),
            group_id: group.id,
            group: group.name.clone(),
            properties: group.settings().to_properties(),
            memory_limit: account.memory_limit(),
        }
    }

    /// A fragment that came without a tag runs as a query of its own in `normal`.
    pub fn untagged() -> WorkloadTag {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        WorkloadTag {
            query: format!("untagged-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            user: String::new(),
            group_id: basalt_workload::NORMAL_GROUP_ID,
            group: NORMAL_GROUP.into(),
            properties: BTreeMap::new(),
            memory_limit: usize::MAX,
        }
    }

    /// Sends this tag with every fragment of the query planned under `config`.
    pub fn attach(&self, config: &mut SessionConfig) -> Result<()> {
        let json = serde_json::to_vec(self).map_err(|e| BasaltError::Internal(e.to_string()))?;
        let value = HeaderValue::from_str(&to_hex(&json))
            .map_err(|e| BasaltError::Internal(e.to_string()))?;
        let mut headers = HeaderMap::new();
        headers.insert(HEADER, value);
        config
            .set_distributed_passthrough_headers(headers)
            .map_err(|e| BasaltError::Internal(e.to_string()))
    }

    /// The tag a fragment's request carries, if any.
    pub fn from_headers(headers: &HeaderMap) -> Result<Option<WorkloadTag>> {
        let Some(value) = headers.get(HEADER) else {
            return Ok(None);
        };
        let bad = |what: &dyn std::fmt::Display| {
            BasaltError::InvalidData(format!("malformed {HEADER} header: {what}"))
        };
        let bytes = value
            .to_str()
            .ok()
            .and_then(from_hex)
            .ok_or_else(|| bad(&"not hex"))?;
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| bad(&e))
    }
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// How many finished queries' usage a backend keeps for profiles.
const KEPT_FINISHED: usize = 1000;

/// How long a finished query's usage stays in the backend's heartbeat: a fragment that ends
/// between two heartbeats (1 s apart) is still reported to the frontend, whose statement may
/// still be running (sending buffered rows) and judged by workload policies.
const REPORTED_AFTER_FINISH: std::time::Duration = std::time::Duration::from_secs(5);

/// At most this many recently finished queries go in one heartbeat (the newest), so a
/// backend answering many short queries keeps its heartbeats small.
const REPORTED_FINISHED: usize = 256;

/// A finished query's usage here and when its last fragment here ended.
struct Finished {
    at: std::time::Instant,
    usage: QueryUsage,
}

/// One query's share of a backend: its account (charged by the fragments' operators and
/// scans here) and the execution environment with its group's memory pool. When its last
/// fragment ends, its usage is kept among the finished queries.
pub struct BackendQuery {
    pub id: String,
    pub account: Arc<QueryAccount>,
    pub runtime: Arc<RuntimeEnv>,
    finished: Arc<Mutex<VecDeque<Finished>>>,
}

impl BackendQuery {
    fn usage(&self, finished: bool) -> QueryUsage {
        let a = &self.account;
        QueryUsage {
            query: self.id.clone(),
            finished,
            wall_ms: a.active_time().as_millis() as u64,
            cpu_ms: a.cpu_time().as_millis() as u64,
            scan_rows: a.scan_rows(),
            scan_bytes: a.scan_bytes(),
            memory_bytes: a.memory() as u64,
            peak_memory_bytes: a.peak_memory() as u64,
        }
    }
}

impl Drop for BackendQuery {
    fn drop(&mut self) {
        let usage = self.usage(true);
        let mut finished = self.finished.lock();
        let at = std::time::Instant::now();
        // A query whose fragments here did not overlap ran here more than once: one record.
        if let Some(record) = finished
            .iter_mut()
            .rev()
            .find(|f| f.usage.query == usage.query)
        {
            record.at = at;
            record.usage.add_finished(&usage);
            return;
        }
        if finished.len() >= KEPT_FINISHED {
            finished.pop_front();
        }
        finished.push_back(Finished { at, usage });
    }
}

/// What one query used on one backend: from its first fragment here to its last (or to now,
/// while it runs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryUsage {
    pub query: String,
    /// False while a fragment of the query still runs here.
    pub finished: bool,
    /// From its first fragment's start here to the end of its last operator's work.
    pub wall_ms: u64,
    pub cpu_ms: u64,
    pub scan_rows: u64,
    pub scan_bytes: u64,
    pub memory_bytes: u64,
    pub peak_memory_bytes: u64,
}

impl QueryUsage {
    /// Adds what the query's fragments that already finished here used (a query whose
    /// fragments here did not overlap): its figures are the whole query's here.
    fn add_finished(&mut self, earlier: &QueryUsage) {
        self.wall_ms = self.wall_ms.max(earlier.wall_ms);
        self.cpu_ms += earlier.cpu_ms;
        self.scan_rows += earlier.scan_rows;
        self.scan_bytes += earlier.scan_bytes;
        self.peak_memory_bytes = self.peak_memory_bytes.max(earlier.peak_memory_bytes);
    }
}

/// A backend's workload groups and the queries running in them.
pub struct BackendWorkloads {
    manager: Arc<WorkloadManager>,
    /// By query id; an entry lives while a fragment of the query does.
    queries: Mutex<HashMap<String, Weak<BackendQuery>>>,
    /// The most recently finished queries' usage, oldest first.
    finished: Arc<Mutex<VecDeque<Finished>>>,
}

impl BackendWorkloads {
    pub fn new(manager: Arc<WorkloadManager>) -> BackendWorkloads {
        BackendWorkloads {
            manager,
            queries: Mutex::new(HashMap::new()),
            finished: Default::default(),
        }
    }

    /// The usage here of every query running here now, and of those that finished here in
    /// the last few seconds (their final figures).
    pub fn current(&self) -> Vec<QueryUsage> {
        let running: Vec<Arc<BackendQuery>> = self
            .queries
            .lock()
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        let mut out: Vec<QueryUsage> = running.iter().map(|q| q.usage(false)).collect();
        drop(running);
        let finished = self.finished.lock();
        let mut recent = 0;
        for f in finished.iter().rev() {
            match out.iter_mut().find(|u| u.query == f.usage.query) {
                Some(running) => running.add_finished(&f.usage),
                None if recent < REPORTED_FINISHED && f.at.elapsed() < REPORTED_AFTER_FINISH => {
                    recent += 1;
                    out.push(f.usage.clone());
                }
                None => {}
            }
        }
        out
    }

    /// The usage here of each of `queries` that has run here (running or finished).
    pub fn usage(&self, queries: &[String]) -> Vec<QueryUsage> {
        let running: Vec<Arc<BackendQuery>> = {
            let live = self.queries.lock();
            queries
                .iter()
                .filter_map(|q| live.get(q).and_then(Weak::upgrade))
                .collect()
        };
        let mut out: Vec<QueryUsage> = running.iter().map(|q| q.usage(false)).collect();
        drop(running);
        let finished = self.finished.lock();
        for q in queries {
            let Some(f) = finished.iter().rev().find(|f| &f.usage.query == q) else {
                continue;
            };
            match out.iter_mut().find(|u| &u.query == q) {
                Some(running) => running.add_finished(&f.usage),
                None => out.push(f.usage.clone()),
            }
        }
        out
    }

    pub fn manager(&self) -> &Arc<WorkloadManager> {
        &self.manager
    }

    /// The query `tag` names, joined by another of its fragments or started here: its group
    /// is brought up to the settings the tag carries first.
    pub fn join(&self, tag: &WorkloadTag) -> Result<Arc<BackendQuery>> {
        let mut queries = self.queries.lock();
        if let Some(query) = queries.get(&tag.query).and_then(Weak::upgrade) {
            return Ok(query);
        }
        queries.retain(|_, q| q.strong_count() > 0);
        let group = self.group(tag)?;
        let account = QueryAccount::new(group.clone(), &tag.user, Default::default());
        account.set_memory_limit(tag.memory_limit);
        self.manager.track(&account);
        let query = Arc::new(BackendQuery {
            id: tag.query.clone(),
            runtime: group.query_runtime(&account),
            account,
            finished: self.finished.clone(),
        });
        queries.insert(tag.query.clone(), Arc::downgrade(&query));
        Ok(query)
    }

    fn group(&self, tag: &WorkloadTag) -> Result<Arc<basalt_workload::WorkloadGroup>> {
        let base = if tag.group == NORMAL_GROUP {
            self.manager.get(NORMAL_GROUP)?.settings()
        } else {
            GroupSettings::default()
        };
        let settings = base.with(&tag.properties)?;
        let current = self.manager.get(&tag.group).ok();
        match current {
            Some(g) if g.id == tag.group_id && g.settings() == settings => Ok(g),
            Some(g) if g.id != tag.group_id => {
                // Dropped and created again under the same name on the frontend.
                self.manager.remove(&tag.group);
                self.manager.apply(tag.group_id, &tag.group, settings)?;
                self.manager.get(&tag.group)
            }
            _ => {
                self.manager.apply(tag.group_id, &tag.group, settings)?;
                self.manager.get(&tag.group)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_garbage() {
        let bytes = b"{\"a\":1}\x00\xff";
        assert_eq!(from_hex(&to_hex(bytes)).as_deref(), Some(&bytes[..]));
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
    }

    #[test]
    fn a_tag_travels_in_headers() {
        let tag = WorkloadTag {
            query: "1-2".into(),
            user: "ann".into(),
            group_id: 7,
            group: "etl".into(),
            properties: BTreeMap::from([("cpu_hard_limit".into(), "20%".into())]),
            memory_limit: 1 << 30,
        };
        let mut config = SessionConfig::new();
        tag.attach(&mut config).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            HEADER,
            HeaderValue::from_str(&to_hex(&serde_json::to_vec(&tag).unwrap())).unwrap(),
        );
        assert_eq!(WorkloadTag::from_headers(&headers).unwrap(), Some(tag));
        headers.insert(HEADER, HeaderValue::from_static("0g"));
        assert!(WorkloadTag::from_headers(&headers).is_err());
        assert_eq!(WorkloadTag::from_headers(&HeaderMap::new()).unwrap(), None);
    }
}
