//! Records of finished loads: a committed load's label and outcome, stored in the same catalog
//! transaction that publishes its rowsets, so a label is taken exactly when its data is visible.

use serde::{Deserialize, Serialize};

/// The outcome of one load, as `SHOW LOAD` and a repeated label report it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadJobRecord {
    pub label: String,
    pub database: String,
    pub table: String,
    pub txn_id: u64,
    /// `FINISHED` for a committed load, `CANCELLED` for a failed one.
    pub state: String,
    pub message: String,
    pub total_rows: u64,
    pub loaded_rows: u64,
    pub filtered_rows: u64,
    pub unselected_rows: u64,
    pub load_bytes: u64,
    pub user: String,
    /// Unix milliseconds.
    pub created_ms: i64,
    pub finished_ms: i64,
    pub error_url: Option<String>,
    /// `STREAM LOAD`, `INSERT`, ...
    pub kind: String,
}

impl LoadJobRecord {
    /// The record of a load starting now: `FINISHED`, nothing counted yet, for the load to
    /// complete (rows, finish time, or `CANCELLED` and its message).
    pub fn started(
        label: String,
        database: String,
        table: String,
        txn_id: u64,
        user: String,
        kind: &str,
    ) -> LoadJobRecord {
        LoadJobRecord {
            label,
            database,
            table,
            txn_id,
            state: "FINISHED".into(),
            message: String::new(),
            total_rows: 0,
            loaded_rows: 0,
            filtered_rows: 0,
            unselected_rows: 0,
            load_bytes: 0,
            user,
            created_ms: basalt_common::clock::now_ms(),
            finished_ms: 0,
            error_url: None,
            kind: kind.into(),
        }
    }

    /// Key of the record in the catalog: labels are unique within a database.
    pub fn key(database: &str, label: &str) -> String {
        format!("{database}\u{0}{label}")
    }
}
