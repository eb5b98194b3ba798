//! `SHOW PROC '/transactions'` and `'/jobs'`: Basalt's loads seen as Doris's transactions and
//! load jobs. A load with a label (a stream load) is a transaction: running while its label is
//! held, then finished — committed (VISIBLE) and recorded in the catalog, or failed (ABORTED)
//! and remembered in memory since the server started. INSERT statements are transactions too
//! but Basalt records no label for them, so they are not listed.

use super::{jobs_database, not_found, sorted_databases, ListenAddresses};
use crate::catalog_provider::Services;
use crate::output::Output;
use crate::show::{self, Cell, Col, ResultBuilder};
use basalt_catalog::{DatabaseMeta, LoadJobRecord};
use basalt_common::{BasaltError, Result};
use basalt_load::LoadRegistry;
use std::sync::Arc;

/// Doris lists at most this many transactions of one state.
const MAX_SHOW_ENTRIES: usize = 2000;

/// The finished loads of a database (committed and failed), oldest first.
fn finished(services: &Services, loads: &LoadRegistry, db: &str) -> Vec<Arc<LoadJobRecord>> {
    let mut jobs = services.catalog.load_jobs(db);
    jobs.extend(loads.failures(db));
    jobs.sort_by_key(|j| (j.finished_ms, j.txn_id));
    jobs
}

/// `/transactions`: each database with the number of its running transactions.
pub(super) fn transaction_databases(services: &Services, loads: &LoadRegistry) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::int("DbId"),
        Col::str("DbName"),
        Col::int("RunningTransactionNum"),
    ]);
    for db in sorted_databases(services) {
        let running = loads.running_labels(&db.name).len() as i64;
        b.row(vec![(db.id as i64).into(), db.name.into(), running.into()]);
    }
    b.into_output()
}

/// `/transactions/<db_id>`: how many transactions are running and finished.
pub(super) fn transaction_states(
    services: &Services,
    loads: &LoadRegistry,
    db: &DatabaseMeta,
) -> Output {
    let mut b = ResultBuilder::new(&[Col::str("State"), Col::int("Number")]);
    let running = loads.running_labels(&db.name).len() as i64;
    let finished = finished(services, loads, &db.name).len() as i64;
    b.row(vec!["running".into(), running.into()]);
    b.row(vec!["finished".into(), finished.into()]);
    b.into_output()
}

/// `/transactions/<db_id>/running` and `/finished`: Doris's transaction columns.
pub(super) fn transactions(
    services: &Services,
    loads: &LoadRegistry,
    listening: Option<ListenAddresses>,
    db: &DatabaseMeta,
    state: &str,
) -> Result<Output> {
    let mut b = transaction_columns();
    let coordinator = coordinator(listening);
    match state {
        "running" => {
            // A running load is known by its label only: its transaction id, start time and
            // timeout are not kept where this can read them (NULL). Only stream loads hold
            // labels while they run.
            for label in loads
                .running_labels(&db.name)
                .into_iter()
                .take(MAX_SHOW_ENTRIES)
            {
                let mut row: Vec<Cell> = vec![
                    None::<i64>.into(),
                    label.into(),
                    coordinator.clone().into(),
                    "PREPARE".into(),
                    "BACKEND_STREAMING".into(),
                ];
                row.extend((0..5).map(|_| Cell::from(None::<String>)));
                row.extend([
                    "".into(),
                    0i64.into(),
                    None::<i64>.into(),
                    None::<i64>.into(),
                    "".into(),
                ]);
                b.row(row);
            }
        }
        "finished" => {
            let jobs = finished(services, loads, &db.name);
            let skip = jobs.len().saturating_sub(MAX_SHOW_ENTRIES);
            for j in jobs.into_iter().skip(skip) {
                b.row(finished_row(&j, coordinator.clone()));
            }
        }
        _ => return Err(BasaltError::Execution("State is invalid".into())),
    }
    Ok(b.into_output())
}

/// Doris's columns of a transaction.
fn transaction_columns() -> ResultBuilder {
    ResultBuilder::new(&[
        Col::int("TransactionId"),
        Col::str("Label"),
        Col::str("Coordinator"),
        Col::str("TransactionStatus"),
        Col::str("LoadJobSourceType"),
        Col::str("PrepareTime"),
        Col::str("PreCommitTime"),
        Col::str("CommitTime"),
        Col::str("PublishTime"),
        Col::str("FinishTime"),
        Col::str("Reason"),
        Col::int("ErrorReplicasCount"),
        Col::int("ListenerId"),
        Col::int("TimeoutMs"),
        Col::str("ErrMsg"),
    ])
}

/// The frontend coordinates every load (Doris names the coordinating node so).
pub(crate) fn coordinator(listening: Option<ListenAddresses>) -> Option<String> {
    listening.map(|l| format!("FE: {}", l.query.ip()))
}

/// Doris's status of a finished load's transaction.
pub(crate) fn transaction_status(j: &LoadJobRecord) -> &'static str {
    if j.state == "FINISHED" {
        "VISIBLE"
    } else {
        "ABORTED"
    }
}

/// Doris's SHOW TRANSACTION: the rows of finished loads' transactions, as
/// `/transactions/<db_id>/finished` gives them.
pub(crate) fn finished_transactions(
    jobs: &[Arc<LoadJobRecord>],
    coordinator: Option<String>,
) -> Output {
    let mut b = transaction_columns();
    for j in jobs {
        b.row(finished_row(j, coordinator.clone()));
    }
    b.into_output()
}

/// One finished load. A load publishes as it commits, so its commit, publish and finish times
/// are one; Basalt has no pre-commit (two-phase) step (NULL) and keeps no per-load timeout
/// (NULL). The listener (Doris's load job) is the load itself: its job id is its transaction id.
fn finished_row(j: &LoadJobRecord, coordinator: Option<String>) -> Vec<Cell> {
    let visible = j.state == "FINISHED";
    let finish = show::format_ms(j.finished_ms);
    let reason = if visible { "" } else { j.message.as_str() };
    vec![
        (j.txn_id as i64).into(),
        j.label.clone().into(),
        coordinator.into(),
        transaction_status(j).into(),
        source_type(&j.kind).into(),
        show::format_ms(j.created_ms).into(),
        None::<String>.into(),
        if visible { finish.clone() } else { None }.into(),
        if visible { finish.clone() } else { None }.into(),
        finish.into(),
        reason.into(),
        0i64.into(),
        (j.txn_id as i64).into(),
        None::<i64>.into(),
        reason.into(),
    ]
}

/// Doris's LoadJobSourceType for a load's kind.
fn source_type(kind: &str) -> &'static str {
    match kind {
        "STREAM LOAD" => "BACKEND_STREAMING",
        "INSERT" => "INSERT_STREAMING",
        _ => "FRONTEND",
    }
}

/// `/jobs`: the databases whose jobs can be listed.
pub(super) fn job_databases(services: &Services) -> Output {
    let mut b = ResultBuilder::new(&[Col::int("DbId"), Col::str("DbName")]);
    for db in sorted_databases(services) {
        b.row(vec![(db.id as i64).into(), db.name.into()]);
    }
    b.into_output()
}

/// `/jobs/<db_id>`: per job type, how many are pending, running, finished and cancelled.
pub(super) fn job_counts(services: &Services, loads: &LoadRegistry, db: &DatabaseMeta) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("JobType"),
        Col::int("Pending"),
        Col::int("Running"),
        Col::int("Finished"),
        Col::int("Cancelled"),
        Col::int("Total"),
    ]);
    let jobs = finished(services, loads, &db.name);
    let done = jobs.iter().filter(|j| j.state == "FINISHED").count() as i64;
    // Loads start at once (none pend); failed loads are remembered since the server started.
    let counts = |pending: i64, running: i64, finished: i64, cancelled: i64| {
        [
            Some(pending),
            Some(running),
            Some(finished),
            Some(cancelled),
            Some(pending + running + finished + cancelled),
        ]
    };
    let rows: [(&str, [Option<i64>; 5]); 5] = [
        (
            "load",
            counts(
                0,
                loads.running_labels(&db.name).len() as i64,
                done,
                jobs.len() as i64 - done,
            ),
        ),
        // DELETE runs inside its statement and is not recorded as a job (Doris counts none
        // either).
        ("delete", counts(0, 0, 0, 0)),
        // Basalt has no rollups.
        ("rollup", counts(0, 0, 0, 0)),
        // ALTER TABLE runs inside its statement; its jobs are not recorded (NULL).
        ("schema_change", [None; 5]),
        // Basalt has no EXPORT.
        ("export", counts(0, 0, 0, 0)),
    ];
    for (kind, numbers) in rows {
        let mut row: Vec<Cell> = vec![kind.into()];
        row.extend(numbers.into_iter().map(Cell::from));
        b.row(row);
    }
    b.into_output()
}

/// `/jobs/<db_id>/<type>`: the load jobs as SHOW LOAD lists them; the other types, with
/// Doris's columns (SHOW DELETE's, SHOW ALTER TABLE ROLLUP's and COLUMN's, SHOW EXPORT's), list
/// nothing: Basalt runs DELETE and ALTER TABLE inside their statements without keeping jobs,
/// and has no rollups or EXPORT.
pub(super) fn jobs_of_type(
    services: &Services,
    loads: &LoadRegistry,
    db_id: &str,
    kind: &str,
    path: &str,
) -> Result<Output> {
    let db = jobs_database(services, db_id)?;
    match kind {
        "load" => Ok(show::show_load(&finished(services, loads, &db.name), false)),
        "delete" => Ok(no_jobs(&[
            "TableName",
            "PartitionName",
            "CreateTime",
            "DeleteCondition",
            "State",
        ])),
        "rollup" => Ok(no_jobs(&[
            "JobId",
            "TableName",
            "CreateTime",
            "FinishTime",
            "BaseIndexName",
            "RollupIndexName",
            "RollupId",
            "TransactionId",
            "State",
            "Msg",
            "Progress",
            "Timeout",
        ])),
        "schema_change" => Ok(no_jobs(&[
            "JobId",
            "TableName",
            "CreateTime",
            "FinishTime",
            "IndexName",
            "IndexId",
            "OriginIndexId",
            "SchemaVersion",
            "TransactionId",
            "State",
            "Msg",
            "Progress",
            "Timeout",
        ])),
        "export" => Ok(no_jobs(&[
            "JobId",
            "Label",
            "State",
            "Progress",
            "TaskInfo",
            "Path",
            "CreateTime",
            "StartTime",
            "FinishTime",
            "Timeout",
            "ErrorMsg",
            "OutfileInfo",
        ])),
        _ => Err(not_found(path)),
    }
}

/// An empty job list with Doris's column names (all text, as Doris's proc nodes give them).
fn no_jobs(columns: &[&str]) -> Output {
    let columns: Vec<Col> = columns.iter().map(|c| Col::str(c)).collect();
    ResultBuilder::new(&columns).into_output()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_kinds_map_to_doris_source_types() {
        assert_eq!(source_type("STREAM LOAD"), "BACKEND_STREAMING");
        assert_eq!(source_type("INSERT"), "INSERT_STREAMING");
        assert_eq!(source_type("BROKER LOAD"), "FRONTEND");
    }

    #[test]
    fn a_failed_load_is_aborted_with_its_reason() {
        let job = LoadJobRecord {
            label: "l1".into(),
            database: "d".into(),
            table: "t".into(),
            txn_id: 7,
            state: "CANCELLED".into(),
            message: "too many filtered rows".into(),
            total_rows: 1,
            loaded_rows: 0,
            filtered_rows: 1,
            unselected_rows: 0,
            load_bytes: 3,
            user: "root".into(),
            created_ms: 0,
            finished_ms: 1000,
            error_url: None,
            kind: "STREAM LOAD".into(),
        };
        let row = finished_row(&job, None);
        let text = |i: usize| match &row[i] {
            Cell::Str(s) => s.clone(),
            _ => panic!("column {i} is not text"),
        };
        assert_eq!(text(3).as_deref(), Some("ABORTED"));
        assert_eq!(text(7), None, "an aborted load has no commit time");
        assert_eq!(text(9).as_deref(), Some("1970-01-01 00:00:01"));
        assert_eq!(text(10).as_deref(), Some("too many filtered rows"));
    }
}
