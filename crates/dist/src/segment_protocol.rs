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

/// Action: read encoded rows (a point query's); body: a JSON list of (catalog segment path,
/// row number), answered with the rows in order, each as its length (u32, little-endian) and
/// its bytes.
pub const READ_ROWS: &str = "read_rows";

/// Frames rows for a [`READ_ROWS`] answer.
pub fn frame_rows<'a>(rows: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for row in rows {
        out.extend_from_slice(&(row.len() as u32).to_le_bytes());
        out.extend_from_slice(row);
    }
    out
}

/// The rows of a [`READ_ROWS`] answer; `None` when it is malformed.
pub fn unframe_rows(mut body: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut rows = Vec::new();
    while !body.is_empty() {
        let (len, rest) = body.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return None;
        }
        let (row, rest) = rest.split_at(len);
        rows.push(row.to_vec());
        body = rest;
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framed_rows_round_trip_and_truncation_is_refused() {
        let rows: Vec<&[u8]> = vec![b"abc", b"", b"\x00\x01"];
        let framed = frame_rows(rows.iter().copied());
        let back = unframe_rows(&framed).unwrap();
        assert_eq!(back, vec![b"abc".to_vec(), Vec::new(), vec![0, 1]]);
        assert!(unframe_rows(&framed[..framed.len() - 1]).is_none());
        assert!(unframe_rows(&[1, 0]).is_none());
    }
}

/// Action: what queries used on this backend; body: a JSON list of query ids (as a
/// [`crate::WorkloadTag`] names them), answered with a JSON list of
/// [`crate::workload_tag::QueryUsage`] for those that ran here.
pub const QUERY_USAGE: &str = "query_usage";

/// Action: remove orphaned segment files; body: a JSON [`RemoveOrphans`], answered with the
/// JSON number of files removed.
pub const REMOVE_ORPHANS: &str = "remove_orphans";

/// What a frontend's catalog referenced when it started, and an id it allocated then (every
/// load and compaction since names its files with a larger one).
#[derive(Debug, Serialize, Deserialize)]
pub struct RemoveOrphans {
    pub referenced: std::collections::HashSet<String>,
    pub ids_below: u64,
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
    /// The live usage of each workload group this backend has run queries of.
    #[serde(default)]
    pub groups: Vec<GroupUsageReport>,
    /// What each query running here now has used here, and the final figures of those that
    /// finished here in the last few seconds (`finished` set).
    #[serde(default)]
    pub queries: Vec<crate::workload_tag::QueryUsage>,
}

/// One workload group's usage on one backend, as its usage sampler last measured it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GroupUsageReport {
    pub id: u64,
    pub name: String,
    pub memory_bytes: u64,
    /// Percent of this backend's cores over the last sampling interval.
    pub cpu_percent: f64,
    pub local_read_bytes_per_second: u64,
    pub remote_read_bytes_per_second: u64,
    /// The CPU limit in force on this backend, in percent of its cores.
    pub cpu_limit_percent: Option<f64>,
    pub cpu_time_ms: u64,
    pub local_read_bytes: u64,
}

/// Action: the length and CRC-32 of each file of the given segments held here (the segment
/// and its row store, when it has one); body: a JSON list of catalog segment paths, answered
/// with a JSON list of [`FileDigest`] (a file not held here is left out).
pub const SEGMENT_FILES: &str = "segment_files";

/// One file of a segment as a backend holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// The catalog segment path.
    pub segment: String,
    /// The segment's row store file rather than the segment file itself.
    pub row_store: bool,
    pub len: u64,
    pub crc32: u32,
}

/// Action: bytes of one segment file; body: a JSON [`FileChunk`], answered with the raw bytes
/// (fewer than asked at the end of the file).
pub const READ_FILE_CHUNK: &str = "read_file_chunk";

/// Which bytes of which file a [`READ_FILE_CHUNK`] asks for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileChunk {
    pub segment: String,
    pub row_store: bool,
    pub offset: u64,
    pub len: u64,
}

/// Action (catch-up of a stale replica): copy the files of `segments` that this backend lacks
/// (or holds with another length or checksum) from the backend at `source`, verified against
/// the source's length and CRC-32 and made durable, reading at most `bytes_per_second`; body:
/// a JSON [`CopySegments`], answered with a JSON [`CopyReport`].
pub const COPY_SEGMENTS: &str = "copy_segments";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CopySegments {
    /// `host:port` of a backend holding a readable replica.
    pub source: String,
    /// Catalog segment paths of the tablet's visible rowsets.
    pub segments: Vec<String>,
    pub bytes_per_second: u64,
}

/// What a [`COPY_SEGMENTS`] did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CopyReport {
    /// The segments this backend now holds, every file verified against the source's.
    pub held: Vec<String>,
    pub files_copied: u64,
    pub bytes_copied: u64,
    /// Files it already held, identical to the source's.
    pub files_present: u64,
}
