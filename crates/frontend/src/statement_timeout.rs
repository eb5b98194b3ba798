//! How long a statement may run and how long it may plan, from the session's variables.
//!
//! Running: Doris's `query_timeout` (seconds) bounds a query, `insert_timeout` an INSERT,
//! UPDATE or DELETE; MySQL's `max_execution_time` (milliseconds, 0 for none) bounds a SELECT
//! when it is the smaller. A statement past its limit is cancelled like a KILL QUERY and fails
//! with 3024 naming the variable.
//!
//! Planning: Doris's `nereids_timeout_second` bounds the optimizer (unless
//! `enable_nereids_timeout` is off); see [`crate::planning_budget`].

use crate::planning_budget::PlanningBudget;
use crate::session::Session;
use crate::variables::VarValue;
use basalt_sql::ast;
use std::time::Duration;

/// Starts the running statement's time limit (the statement is registered in the process
/// list: its limit cancels its token).
pub(crate) fn arm(session: &Session, stmt: &ast::Statement) {
    // Inside a stored procedure the CALL's own limit holds (see `arm_call`).
    if session.info.routine.active() {
        return;
    }
    if let Some((limit, what)) = running_limit(session, stmt) {
        session.process.limit_running(limit, what);
    }
}

/// Starts a CALL's time limit (Doris's `query_timeout`; MySQL's `max_execution_time` bounds
/// SELECTs only, not procedures): the statements of its body are not limited one by one.
pub(crate) fn arm_call(session: &Session) {
    if let Some(seconds) = positive(session, "query_timeout") {
        let limit = Duration::from_secs(seconds);
        session
            .process
            .limit_running(limit, format!("query_timeout = {seconds} s"));
    }
}

/// The limit on running `stmt` and the variable that set it; `None` for no limit.
fn running_limit(session: &Session, stmt: &ast::Statement) -> Option<(Duration, String)> {
    use ast::Statement as S;
    let seconds = |name: &str| positive(session, name).map(Duration::from_secs);
    let (doris, name) = match stmt {
        S::Insert(_) | S::Update(_) | S::Delete(_) => (seconds("insert_timeout"), "insert_timeout"),
        _ => (seconds("query_timeout"), "query_timeout"),
    };
    let mut limit = doris.map(|d| (d, format!("{name} = {} s", d.as_secs())));
    if matches!(stmt, S::Query(_)) {
        if let Some(ms) = positive(session, "max_execution_time") {
            let mysql = Duration::from_millis(ms);
            if limit.as_ref().is_none_or(|(d, _)| mysql < *d) {
                limit = Some((mysql, format!("max_execution_time = {ms} ms")));
            }
        }
    }
    limit
}

/// What may stop the planning of the session's running statement: its cancellation and the
/// planning time limit.
pub(crate) fn planning_budget(session: &Session) -> PlanningBudget {
    PlanningBudget {
        cancel: session.process.running_token(),
        limit: planning_limit(session),
    }
}

/// The limit on planning a statement, and how to name it; `None` for no limit.
fn planning_limit(session: &Session) -> Option<(Duration, String)> {
    // Off (0) when `enable_nereids_timeout` is false.
    positive(session, "enable_nereids_timeout")?;
    positive(session, "nereids_timeout_second").map(|s| {
        (
            Duration::from_secs(s),
            format!("planning took more than nereids_timeout_second = {s} s"),
        )
    })
}

/// An integer variable's value when it is above zero.
fn positive(session: &Session, name: &str) -> Option<u64> {
    match session.variables().get(name) {
        Ok(VarValue::Int(v)) if v > 0 => Some(v as u64),
        _ => None,
    }
}
