//! The process list: every session, the statement it runs now, and how to stop it. SHOW
//! PROCESSLIST, information_schema.processlist / active_queries and KILL read it.
//!
//! Each session owns a connection token; each running statement a child of it. KILL QUERY
//! cancels the statement's token, KILL CONNECTION the connection's (and so the statement's).
//! Whoever runs the statement waits on the token and fails it with "Query execution was
//! interrupted"; the connection closes when its token is cancelled.

use crate::session::SessionInfo;
use basalt_common::BasaltError;
use basalt_workload::{QueryAccount, WorkloadGroup};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub struct ProcessList {
    processes: Mutex<BTreeMap<u32, Arc<Process>>>,
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
        self.processes.lock().insert(process.id(), process.clone());
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
        let mut state = self.state.lock();
        state.running = Some(Running {
            sql: sql.to_string(),
            account: account.clone(),
            cancel: cancel.clone(),
        });
        state.since = Instant::now();
        StatementGuard {
            process: self.clone(),
            cancel,
            account,
        }
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
}

impl StatementGuard {
    /// Cancelled by KILL QUERY, KILL CONNECTION or a workload policy.
    pub fn token(&self) -> &CancellationToken {
        &self.cancel
    }

    pub fn account(&self) -> Option<&Arc<QueryAccount>> {
        self.account.as_ref()
    }

    /// The error a cancelled statement fails with: a workload policy's reason, or KILL's.
    pub fn interrupted(&self) -> BasaltError {
        match self.account.as_ref().and_then(|a| a.cancel_reason()) {
            Some(reason) => BasaltError::QueryCancelled(reason),
            None => BasaltError::QueryInterrupted,
        }
    }
}

impl Drop for StatementGuard {
    fn drop(&mut self) {
        // A session runs one statement at a time: this guard's statement is the current one.
        let mut state = self.process.state.lock();
        state.running = None;
        state.since = Instant::now();
    }
}
