//! What a session runs as while it is inside stored procedures: the procedures being run
//! (outermost first, for MySQL's recursion limit, whichever way a CALL arrives — directly, from
//! a body, or through PREPARE/EXECUTE), and the definer's account a `SQL SECURITY DEFINER`
//! procedure runs with (access checks read it in place of the session's own account).

use crate::access::Account;
use crate::engine::QueryEngine;
use crate::session::Session;
use parking_lot::Mutex;
use std::sync::{Arc, OnceLock, Weak};

/// A session's stored-procedure state.
#[derive(Debug, Default)]
pub(crate) struct RoutineContext {
    inner: Mutex<Inner>,
    /// The engine and the session itself, which stored functions called inside a query run
    /// their bodies with (set once the session is shared, see `Session::enable_routines`).
    handles: OnceLock<Handles>,
    /// Per depth, the turn a stored-function call takes to run its body: a query's calls run
    /// in several partitions at once, but the session runs one body at a time at each depth
    /// (a body's own calls take the next depth's turns).
    call_turns: Mutex<Vec<Arc<tokio::sync::Mutex<()>>>>,
}

struct Handles {
    engine: Weak<QueryEngine>,
    session: Weak<Session>,
}

impl std::fmt::Debug for Handles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handles")
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// The procedures being run, as `db\0lower-case name`.
    stack: Vec<String>,
    /// The account of the innermost DEFINER procedure being run (`None`: the session's own).
    definer: Option<Arc<Account>>,
}

impl RoutineContext {
    /// Keeps the engine and session stored functions run with.
    pub(crate) fn set_handles(&self, engine: &Arc<QueryEngine>, session: &Arc<Session>) {
        let _ = self.handles.set(Handles {
            engine: Arc::downgrade(engine),
            session: Arc::downgrade(session),
        });
    }

    /// The engine and session, while both live (`None` for a session that runs no stored
    /// functions, such as a load's).
    pub(crate) fn handles(&self) -> Option<(Arc<QueryEngine>, Arc<Session>)> {
        let handles = self.handles.get()?;
        Some((handles.engine.upgrade()?, handles.session.upgrade()?))
    }

    /// The account statements run as now, when a procedure's definer stands for the session.
    pub(crate) fn definer(&self) -> Option<Arc<Account>> {
        self.inner.lock().definer.clone()
    }

    /// True while a procedure runs.
    pub(crate) fn active(&self) -> bool {
        !self.inner.lock().stack.is_empty()
    }

    /// How many procedures and functions are being run, one inside another.
    pub(crate) fn depth(&self) -> usize {
        self.inner.lock().stack.len()
    }

    /// The turn the stored-function calls of statements at `depth` take.
    pub(crate) fn call_turn(&self, depth: usize) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.call_turns.lock();
        if turns.len() <= depth {
            turns.resize_with(depth + 1, Default::default);
        }
        turns[depth].clone()
    }

    /// How many times `key` is being run already.
    pub(crate) fn depth_of(&self, key: &str) -> usize {
        self.inner
            .lock()
            .stack
            .iter()
            .filter(|k| k.as_str() == key)
            .count()
    }

    /// Enters procedure `key`, running as `definer` (`None`: as the caller); everything is as
    /// before when the guard drops (also when a KILL drops the running CALL).
    pub(crate) fn enter(&self, key: String, definer: Option<Account>) -> RoutineGuard<'_> {
        let mut inner = self.inner.lock();
        inner.stack.push(key);
        let previous = definer.map(|d| inner.definer.replace(Arc::new(d)));
        RoutineGuard {
            context: self,
            previous,
        }
    }
}

/// Leaves a procedure when dropped.
pub(crate) struct RoutineGuard<'c> {
    context: &'c RoutineContext,
    /// The definer before this procedure replaced it.
    previous: Option<Option<Arc<Account>>>,
}

impl Drop for RoutineGuard<'_> {
    fn drop(&mut self) {
        let mut inner = self.context.inner.lock();
        inner.stack.pop();
        if let Some(previous) = self.previous.take() {
            inner.definer = previous;
        }
    }
}
