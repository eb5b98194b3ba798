//! KILL and SHOW PROCESSLIST over the process list, and the rows of
//! information_schema.processlist and information_schema.active_queries.

use crate::catalog_provider::Services;
use crate::output::Output;
use crate::session::Session;
use crate::show::{Cell, Col, ResultBuilder};
use basalt_common::{BasaltError, Result};
use basalt_sql::ast::KillType;

/// `KILL [CONNECTION | QUERY] id`: an administrator may stop any session, others only their
/// own user's.
pub(crate) fn kill(
    services: &Services,
    session: &Session,
    modifier: Option<KillType>,
    id: u64,
) -> Result<Output> {
    let process = u32::try_from(id)
        .ok()
        .and_then(|id| services.processes.get(id))
        .ok_or(BasaltError::UnknownThread(id))?;
    if !session.access().is_admin() && process.session.user != session.user() {
        return Err(BasaltError::NotThreadOwner(id));
    }
    match modifier {
        Some(KillType::Query) => process.kill_query(),
        Some(KillType::Mutation) => return Err(BasaltError::NotSupported("KILL MUTATION".into())),
        Some(KillType::Connection) | None => process.kill_connection(),
    }
    Ok(Output::ok())
}

/// The rows of SHOW PROCESSLIST / information_schema.processlist (MySQL's columns). A
/// `viewer` (a user without ADMIN_PRIV) sees their own sessions only; `None` sees all.
pub(crate) fn processlist(services: &Services, viewer: Option<&str>, full: bool) -> ResultBuilder {
    let mut b = ResultBuilder::new(&[
        Col::int("Id"),
        Col::str("User"),
        Col::str("Host"),
        Col::str("db"),
        Col::str("Command"),
        Col::int("Time"),
        Col::str("State"),
        Col::str("Info"),
    ]);
    for p in services.processes.all() {
        if viewer.is_some_and(|v| p.session.user != v) {
            continue;
        }
        let a = p.activity();
        let running = a.sql.is_some();
        let info = a.sql.map(|s| {
            if full || s.chars().count() <= 100 {
                s
            } else {
                s.chars().take(100).collect()
            }
        });
        b.row(vec![
            (p.id() as i64).into(),
            p.session.user.clone().into(),
            p.session.host.clone().into(),
            p.session.database().into(),
            if running { "Query" } else { "Sleep" }.into(),
            ((a.elapsed_ms / 1000) as i64).into(),
            if running { "executing" } else { "" }.into(),
            info.into(),
        ]);
    }
    b
}

pub(crate) fn show_processlist(services: &Services, session: &Session, full: bool) -> Output {
    processlist(services, session.access().viewer().as_deref(), full).into_output()
}

/// information_schema.active_queries: the statements running now, with their workload group.
pub(crate) fn active_queries(services: &Services, viewer: Option<&str>) -> ResultBuilder {
    let mut b = ResultBuilder::new(&[
        Col::int("CONNECTION_ID"),
        Col::str("USER"),
        Col::str("DATABASE"),
        Col::str("WORKLOAD_GROUP"),
        Col::int("QUERY_TIME_MS"),
        Col::int("CPU_TIME_MS"),
        Col::int("SCAN_ROWS"),
        Col::int("SCAN_BYTES"),
        Col::int("CURRENT_MEMORY_BYTES"),
        Col::int("PEAK_MEMORY_BYTES"),
        Col::str("SQL"),
    ]);
    for p in services.processes.all() {
        if viewer.is_some_and(|v| p.session.user != v) {
            continue;
        }
        let a = p.activity();
        let Some(sql) = a.sql else {
            continue;
        };
        let usage = StatementUsage::of(a.account.as_deref());
        b.row(vec![
            (p.id() as i64).into(),
            p.session.user.clone().into(),
            p.session.database().into(),
            a.group.into(),
            (a.elapsed_ms as i64).into(),
            usage.cpu_ms,
            usage.scan_rows,
            usage.scan_bytes,
            usage.memory,
            usage.peak_memory,
            sql.into(),
        ]);
    }
    b
}

/// What a running statement has used, as result cells (NULL without an account). On a
/// cluster, what the backends reported the statement used there counts too.
pub(crate) struct StatementUsage {
    pub cpu_ms: Cell,
    pub scan_rows: Cell,
    pub scan_bytes: Cell,
    pub memory: Cell,
    pub peak_memory: Cell,
}

impl StatementUsage {
    pub(crate) fn of(account: Option<&basalt_workload::QueryAccount>) -> StatementUsage {
        let remote = account.map(|acc| acc.elsewhere()).unwrap_or_default();
        let cell = |f: &dyn Fn(&basalt_workload::QueryAccount) -> u64, elsewhere: u64| -> Cell {
            account
                .map(|acc| f(acc).saturating_add(elsewhere).min(i64::MAX as u64) as i64)
                .into()
        };
        StatementUsage {
            cpu_ms: cell(&|acc| acc.cpu_time().as_millis() as u64, remote.cpu_ms),
            scan_rows: cell(&|acc| acc.scan_rows(), remote.scan_rows),
            scan_bytes: cell(&|acc| acc.scan_bytes(), remote.scan_bytes),
            memory: cell(&|acc| acc.memory() as u64, remote.memory_bytes),
            peak_memory: cell(&|acc| acc.peak_memory() as u64, remote.peak_memory_bytes),
        }
    }
}
