//! The process list: every session, the statement it runs now, and how to stop it. SHOW
//! PROCESSLIST, information_schema.processlist / active_queries and KILL read it.
//!
//! Each session owns a connection token; each running statement a child of it. KILL QUERY
//! cancels the statement's token, KILL CONNECTION the connection's (and so the statement's).
//! Whoever runs the statement waits on the token and fails it with "Query execution was
//! interrupted"; the connection closes when its token is cancelled. A statement's time limit
//! cancels the same token, and the statement fails with 3024 instead.

use crate::session::SessionInfo;
use basalt_common::BasaltError;
use basalt_workload::{QueryAccount, WorkloadGroup};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub struct ProcessList {
    processes: Mutex<BTreeMap<u32, Arc<Process>>>,
    /// The server's status counters (connections, statements, traffic).
    pub status: crate::server_status::ServerStatus,
}

impl ProcessList {
    pub fn register(&self, session: Arc<SessionInfo>) -> Arc<Process> {
        let process = Arc::new(Process {
            session,
            connection: CancellationToken::new(),
            state: Mutex::new(State {
                running: None,
                since: Instant::now(),
            }),
        });
        let open = {
            let mut processes = self.processes.lock();
            processes.insert(process.id(), process.clone());
            processes.keys().filter(|id| **id != 0).count()
        };
        if process.id() != 0 {
            self.status.connected(open);
        }
        process
    }

    pub fn remove(&self, id: u32) {
        self.processes.lock().remove(&id);
    }

    pub fn get(&self, id: u32) -> Option<Arc<Process>> {
        self.processes.lock().get(&id).cloned()
    }

    /// Sessions of client connections (Stream Load's sessions have no connection id).
    pub fn connections(&self) -> usize {
        self.processes.lock().keys().filter(|id| **id != 0).count()
    }

    /// Client sessions running a statement now.
    pub fn running(&self) -> usize {
        self.processes
            .lock()
            .values()
            .filter(|p| p.id() != 0 && p.state.lock().running.is_some())
            .count()
    }

    /// Every session, by connection id.
    pub fn all(&self) -> Vec<Arc<Process>> {
        self.processes.lock().values().cloned().collect()
    }
}

#[derive(Debug)]
pub struct Process {
    pub session: Arc<SessionInfo>,
    connection: CancellationToken,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    running: Option<Running>,
    /// When the current statement started, or the session went idle.
    since: Instant,
}

#[derive(Debug, Clone)]
struct Running {
    sql: String,
    /// What the statement uses, and the workload group charged (`None` if the session's
    /// group is gone).
    account: Option<Arc<QueryAccount>>,
    cancel: CancellationToken,
    /// Set (with the limit that was exceeded) when the statement's time limit cancels it.
    timed_out: Arc<OnceLock<String>>,
    /// Cancelled when the statement ends, which stops its time limit's timer.
    finished: CancellationToken,
}

/// What a session does now, as the process list shows it.
#[derive(Debug, Clone)]
pub struct Activity {
    /// The statement's text, or `None` when idle.
    pub sql: Option<String>,
    pub group: Option<String>,
    pub elapsed_ms: u64,
    pub account: Option<Arc<QueryAccount>>,
}

impl Process {
    pub fn id(&self) -> u32 {
        self.session.connection_id
    }

    /// Marks a statement as running until the returned guard drops.
    /// An account is opened for the statement when its workload `group` is known.
    pub fn begin(self: &Arc<Self>, sql: &str, group: Option<Arc<WorkloadGroup>>) -> StatementGuard {
        let cancel = self.connection.child_token();
        let account = group.map(|g| QueryAccount::new(g, &self.session.user, cancel.clone()));
        let timed_out = Arc::new(OnceLock::new());
        let finished = CancellationToken::new();
        let mut state = self.state.lock();
        state.running = Some(Running {
            sql: sql.to_string(),
            account: account.clone(),
            cancel: cancel.clone(),
            timed_out: timed_out.clone(),
            finished: finished.clone(),
        });
        state.since = Instant::now();
        StatementGuard {
            process: self.clone(),
            cancel,
            account,
            timed_out,
            finished,
        }
    }

    /// Gives the running statement a time limit: when `limit` passes before it ends, it is
    /// cancelled and fails with 3024 naming `what` (the variable that set the limit). Must be
    /// called inside a Tokio runtime; without a running statement it does nothing.
    pub fn limit_running(&self, limit: Duration, what: String) {
        let Some(running) = self.state.lock().running.clone() else {
            return;
        };
        tokio::spawn(async move {
            tokio::select! {
                _ = running.finished.cancelled() => {}
                _ = running.cancel.cancelled() => {}
                _ = tokio::time::sleep(limit) => {
                    let _ = running.timed_out.set(what);
                    running.cancel.cancel();
                }
            }
        });
    }

    /// The running statement's cancellation token (KILL, a workload policy, its time limit).
    pub fn running_token(&self) -> Option<CancellationToken> {
        self.state.lock().running.as_ref().map(|r| r.cancel.clone())
    }

    /// The error the running statement fails with when it was cancelled (KILL, its time limit,
    /// a workload policy); `None` while it may go on. For work that checks between its steps
    /// (a stored procedure's loop).
    pub fn interruption(&self) -> Option<BasaltError> {
        let state = self.state.lock();
        let running = state.running.as_ref()?;
        if !running.cancel.is_cancelled() {
            return None;
        }
        Some(interruption(&running.timed_out, running.account.as_ref()))
    }

    pub fn activity(&self) -> Activity {
        let state = self.state.lock();
        let account = state.running.as_ref().and_then(|r| r.account.clone());
        Activity {
            sql: state.running.as_ref().map(|r| r.sql.clone()),
            group: state.running.as_ref().map(|r| {
                r.account
                    .as_ref()
                    .map(|a| a.group().name.clone())
                    .unwrap_or_default()
            }),
            elapsed_ms: state.since.elapsed().as_millis() as u64,
            account,
        }
    }

    /// The running statement's account, if it has one.
    pub fn account(&self) -> Option<Arc<QueryAccount>> {
        self.state
            .lock()
            .running
            .as_ref()
            .and_then(|r| r.account.clone())
    }

    /// Cancels the running statement, if any.
    pub fn kill_query(&self) {
        if let Some(r) = &self.state.lock().running {
            r.cancel.cancel();
        }
    }

    /// Cancels the running statement and closes the connection.
    pub fn kill_connection(&self) {
        self.connection.cancel();
    }

    /// Cancelled when the connection is killed.
    pub fn connection_token(&self) -> CancellationToken {
        self.connection.clone()
    }
}

/// A running statement's registration; dropping it marks the session idle.
#[derive(Debug)]
pub struct StatementGuard {
    process: Arc<Process>,
    cancel: CancellationToken,
    account: Option<Arc<QueryAccount>>,
    timed_out: Arc<OnceLock<String>>,
    finished: CancellationToken,
}

/// The error a cancelled statement fails with: its time limit's, a workload policy's reason,
/// or KILL's.
fn interruption(timed_out: &OnceLock<String>, account: Option<&Arc<QueryAccount>>) -> BasaltError {
    if let Some(limit) = timed_out.get() {
        return BasaltError::QueryTimeout(limit.clone());
    }
    match account.and_then(|a| a.cancel_reason()) {
        Some(reason) => BasaltError::QueryCancelled(reason),
        None => BasaltError::QueryInterrupted,
    }
}

impl StatementGuard {
    /// Cancelled by KILL QUERY, KILL CONNECTION or a workload policy.
    pub fn token(&self) -> &CancellationToken {
        &self.cancel
    }

    pub fn account(&self) -> Option<&Arc<QueryAccount>> {
        self.account.as_ref()
    }

    /// The error a cancelled statement fails with: its time limit's, a workload policy's
    /// reason, or KILL's.
    pub fn interrupted(&self) -> BasaltError {
        interruption(&self.timed_out, self.account.as_ref())
    }
}

impl Drop for StatementGuard {
    fn drop(&mut self) {
        self.finished.cancel();
        // A session runs one statement at a time: this guard's statement is the current one.
        let mut state = self.process.state.lock();
        state.running = None;
        state.since = Instant::now();
    }
}
