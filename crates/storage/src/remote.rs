//! The seam between storage and scale-out: on a frontend whose tablets live on backends, a
//! load's segments are written (and an aborted load's or dropped table's removed) through
//! [`RemoteSegments`] on the backends holding each tablet's replicas, never on local disk.
//!
//! Replicas: a write goes to the replicas on live backends (a compaction's to the readable
//! ones only, a load's to stale ones too); it succeeds when a majority of the tablet's replicas
//! hold it durably, and says which do, so the publish can mark the others stale
//! ([`basalt_catalog::TabletMeta::stale_replicas`]).

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use basalt_catalog::{BackendId, SegmentMeta, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use std::path::Path;

/// A segment written on some of a tablet's replicas.
#[derive(Debug, Clone)]
pub struct WrittenSegment {
    pub meta: SegmentMeta,
    /// The replicas that hold it durably (at least a majority of the tablet's).
    pub replicas: Vec<BackendId>,
}

/// A compaction's output segments, written on some of a tablet's replicas.
#[derive(Debug, Clone)]
pub struct CompactedSegments {
    pub segments: Vec<SegmentMeta>,
    /// The replicas that hold them durably (at least a majority of the tablet's).
    pub replicas: Vec<BackendId>,
}

/// How many of `replicas` replicas must hold a version before it may be published.
pub fn majority(replicas: usize) -> usize {
    replicas / 2 + 1
}

/// The error of a write that reached fewer than a majority of a tablet's replicas; `why` says
/// what happened to the others.
pub fn too_few_replicas(
    table: &TableMeta,
    tablet: &TabletMeta,
    written: usize,
    why: &str,
) -> BasaltError {
    let n = tablet.normal_replica_count();
    BasaltError::Storage(format!(
        "tablet {} of {}.{}: {written} of {n} replicas written, a majority ({}) is needed; {why}",
        tablet.id,
        table.database,
        table.name,
        majority(n)
    ))
}

/// Fails unless `holders` (the replicas holding every segment a write made for `tablet`) are
/// a majority of its normal replicas (a joining one, see
/// [`basalt_catalog::TabletMeta::joining_replicas`], counts neither way); otherwise returns the
/// replicas that do not hold them.
pub fn missing_replicas(
    table: &TableMeta,
    tablet: &TabletMeta,
    holders: &[BackendId],
) -> Result<Vec<BackendId>> {
    // A replica a move is adding counts neither way: the majority is the normal set's.
    let held = tablet
        .replicas
        .iter()
        .filter(|r| holders.contains(r) && !tablet.joining_replicas.contains(r))
        .count();
    let missing: Vec<BackendId> = tablet
        .replicas
        .iter()
        .copied()
        .filter(|r| !holders.contains(r))
        .collect();
    if held < majority(tablet.normal_replica_count()) {
        let ids: Vec<String> = missing.iter().map(|b| b.to_string()).collect();
        return Err(too_few_replicas(
            table,
            tablet,
            held,
            &format!(
                "backends {} missed some of its segments (down, stale or failed)",
                ids.join(", ")
            ),
        ));
    }
    Ok(missing)
}

/// The replicas that hold every one of a write's segments: the intersection, as segments
/// arrive (`None` before the first).
pub fn keep_common(holders: &mut Option<Vec<BackendId>>, written: &[BackendId]) {
    match holders {
        None => *holders = Some(written.to_vec()),
        Some(h) => h.retain(|b| written.contains(b)),
    }
}

/// Segment files on the backends that hold a tablet's replicas.
pub trait RemoteSegments: Send + Sync {
    /// Writes one sorted segment of `tablet` (of `table`) as `rel` on every readable replica
    /// on a live backend; when this returns Ok the file is durable on the replicas it names,
    /// a majority of the tablet's (else it fails with [`too_few_replicas`]'s error). Its bloom
    /// filters and row store follow `table`'s properties. Called from storage's writer
    /// threads (outside the async runtime), so it blocks.
    fn write(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        rel: &Path,
        schema: &SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<WrittenSegment>;

    /// Reads columns `columns` of segment `rel` of `tablet` from a backend holding it (a
    /// merge-on-write load's primary-key index reads the keys of the tablet's segments).
    fn read(&self, tablet: &TabletMeta, rel: &str, columns: &[usize]) -> Result<Vec<RecordBatch>>;

    /// The encoded rows (see [`crate::row_store`]) at `rows` (segment, row number) of
    /// `tablet`, read from a backend holding it (a short-circuit point query's rows), in order.
    fn read_rows(&self, tablet: &TabletMeta, rows: &[(String, u32)]) -> Result<Vec<Vec<u8>>>;

    /// Compacts `inputs` (segments of `tablet`, in version order) on every readable replica on
    /// a live backend (never on a stale one: it lacks inputs), each writing the same output
    /// segments `c<output_id>_<n>` durably; returns them and the replicas that hold them (a
    /// majority, else an error). Blocks, as [`RemoteSegments::write`] does.
    fn compact(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        inputs: &[SegmentMeta],
        output_id: u64,
        segment_rows: usize,
    ) -> Result<CompactedSegments>;

    /// Deletes segment files (each with the backends holding it) of aborted loads and dropped
    /// tablets. Best effort: a backend that cannot be reached keeps its files.
    fn remove(&self, files: Vec<(Vec<BackendId>, String)>);
}
