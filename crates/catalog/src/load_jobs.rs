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
    /// Key of the record in the catalog: labels are unique within a database.
    pub fn key(database: &str, label: &str) -> String {
        format!("{database}\u{0}{label}")
    }
}
