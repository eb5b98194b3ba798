//! The seam between storage and scale-out: on a frontend whose tablets live on backends, a
//! load's segments are written (and an aborted load's or dropped table's removed) through
//! [`RemoteSegments`] on the backends holding each tablet's replicas, never on local disk.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use basalt_catalog::{BackendId, SegmentMeta, TableMeta, TabletMeta};
use basalt_common::Result;
use std::path::Path;

/// Segment files on the backends that hold a tablet's replicas.
pub trait RemoteSegments: Send + Sync {
    /// Writes one sorted segment of `tablet` as `rel` on every backend holding a replica of
    /// it; when this returns Ok the file is durable on all of them. Called from storage's
    /// writer threads (outside the async runtime), so it blocks.
    fn write(
        &self,
        tablet: &TabletMeta,
        rel: &Path,
        schema: &SchemaRef,
        batches: &[RecordBatch],
        bloom_filter_columns: &[String],
        row_store: bool,
    ) -> Result<SegmentMeta>;

    /// Reads columns `columns` of segment `rel` of `tablet` from a backend holding it (a
    /// merge-on-write load's primary-key index reads the keys of the tablet's segments).
    fn read(&self, tablet: &TabletMeta, rel: &str, columns: &[usize]) -> Result<Vec<RecordBatch>>;

    /// The encoded rows (see [`crate::row_store`]) at `rows` (segment, row number) of
    /// `tablet`, read from a backend holding it (a short-circuit point query's rows), in order.
    fn read_rows(&self, tablet: &TabletMeta, rows: &[(String, u32)]) -> Result<Vec<Vec<u8>>>;

    /// Compacts `inputs` (segments of `tablet`, in version order) on every backend holding a
    /// replica, each writing the same output segments `c<output_id>_<n>` durably; returns
    /// them. Blocks, as [`RemoteSegments::write`] does.
    fn compact(
        &self,
        table: &TableMeta,
        tablet: &TabletMeta,
        inputs: &[SegmentMeta],
        output_id: u64,
        segment_rows: usize,
    ) -> Result<Vec<SegmentMeta>>;

    /// Deletes segment files (each with the backends holding it) of aborted loads and dropped
    /// tablets. Best effort: a backend that cannot be reached keeps its files.
    fn remove(&self, files: Vec<(Vec<BackendId>, String)>);
}
