//! What the frontend and a backend say about segment files over Arrow Flight: a `do_put` whose
//! descriptor command is a [`WriteSegment`] and whose batches are the segment's sorted rows
//! (answered with the written [`basalt_catalog::SegmentMeta`]), and two actions.

use serde::{Deserialize, Serialize};

/// The command of a segment `do_put`.
#[derive(Debug, Serialize, Deserialize)]
pub struct WriteSegment {
    /// The catalog path (`data/<table>/<tablet>/<load>_<n>.parquet`).
    pub path: String,
    pub bloom_filter_columns: Vec<String>,
    pub row_store: bool,
}

/// The ticket of a `do_get`: columns of one segment (the frontend's merge-on-write index reads
/// the keys of a tablet's segments).
#[derive(Debug, Serialize, Deserialize)]
pub struct ReadSegment {
    pub path: String,
    pub columns: Vec<usize>,
}

/// Action: delete segment files; body: a JSON list of catalog paths.
pub const REMOVE_SEGMENTS: &str = "remove_segments";

/// Action: compact segments of one tablet; body: a JSON [`CompactTablet`], answered with the
/// JSON list of the written [`basalt_catalog::SegmentMeta`]s.
pub const COMPACT: &str = "compact";

/// What a backend needs to compact a tablet's rowsets: the table's definition (key model,
/// columns), the tablet, the input segments in version order, and the output's name.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompactTablet {
    pub table: basalt_catalog::TableMeta,
    pub tablet_id: u64,
    pub inputs: Vec<basalt_catalog::SegmentMeta>,
    pub output_id: u64,
    pub segment_rows: usize,
}

/// Action: the backend's state; answered with a JSON [`BackendStatus`].
pub const STATUS: &str = "status";

/// A backend's answer to a heartbeat.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BackendStatus {
    /// Tablets with at least one segment file here.
    pub tablets: u64,
    /// Bytes of segment files here.
    pub data_bytes: u64,
    /// Tablets this backend has scanned since it started, ascending.
    pub scanned_tablets: Vec<u64>,
}
