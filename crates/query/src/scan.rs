//! Planning a scan of a Basalt table: prune partitions and buckets, then read tablets whose
//! segments need no merging through DataFusion's Parquet scan (row-group and page pruning,
//! predicate pushdown, parallel file groups) and merge the others with [`TabletMergeExec`].
//! What was pruned is reported for EXPLAIN.

use crate::df_error::to_df;
use crate::merge_exec::TabletMergeExec;
use crate::provider::BasaltTable;
use crate::pruning::prune;
use basalt_catalog::TabletMeta;
use basalt_storage::{delete_bitmap, StorageEngine};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session as DfSession;
use datafusion::common::stats::Precision;
use datafusion::common::Result;
use datafusion::common::Statistics;
use datafusion::config::TableParquetOptions;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::Expr;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use parking_lot::Mutex;
use std::sync::Arc;

/// Segment footers read at once while planning a scan whose footers are not cached yet.
const FOOTER_READS_IN_FLIGHT: usize = 16;

/// Lines describing each scan planned for the current statement (shown by EXPLAIN).
#[derive(Debug, Default)]
pub struct ScanReports {
    lines: Mutex<Vec<String>>,
}

impl ScanReports {
    pub fn clear(&self) {
        self.lines.lock().clear();
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lines.lock())
    }

    fn push(&self, line: String) {
        self.lines.lock().push(line);
    }
}

pub async fn plan_scan(
    table: &BasaltTable,
    state: &dyn DfSession,
    projection: Option<&Vec<usize>>,
    filters: &[Expr],
    limit: Option<usize>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let meta = &table.meta;
    let pruned = prune(meta, filters);
    let total_tablets: usize = meta.partitions.iter().map(|p| p.tablets.len()).sum();
    let mut plain: Vec<&TabletMeta> = Vec::new();
    let mut merging: Vec<TabletMeta> = Vec::new();
    let mut selected = 0usize;
    for &pi in &pruned.partitions {
        for tablet in &meta.partitions[pi].tablets {
            if pruned
                .buckets
                .as_ref()
                .is_some_and(|b| !b.contains(&tablet.bucket))
            {
                continue;
            }
            selected += 1;
            if tablet.rowsets.is_empty() {
                continue;
            }
            if StorageEngine::needs_merge(meta, tablet) {
                merging.push(tablet.clone());
            } else {
                plain.push(tablet);
            }
        }
    }
    if let Some(reports) = state.config().get_extension::<ScanReports>() {
        let names: Vec<&str> = pruned
            .partitions
            .iter()
            .map(|i| meta.partitions[*i].name.as_str())
            .collect();
        reports.push(format!(
            "BasaltScan {}.{}: partitions={}/{} [{}], tablets={}/{}, merge-on-read tablets={}",
            meta.database,
            meta.name,
            pruned.partitions.len(),
            meta.partitions.len(),
            names.join(", "),
            selected,
            total_tablets,
            merging.len()
        ));
    }

    let projected_schema = match projection {
        Some(p) => Arc::new(table.schema.project(p)?),
        None => table.schema.clone(),
    };
    let mut inputs: Vec<Arc<dyn ExecutionPlan>> = Vec::new();
    if !plain.is_empty() {
        inputs.push(parquet_scan(table, state, &plain, projection, limit).await?);
    }
    if !merging.is_empty() {
        inputs.push(Arc::new(TabletMergeExec::new(
            table.storage.clone(),
            table.meta.clone(),
            merging,
            table.read_guard.clone(),
            projection.cloned(),
            projected_schema.clone(),
        )));
    }
    match inputs.len() {
        0 => Ok(Arc::new(EmptyExec::new(projected_schema))),
        _ => UnionExec::try_new(inputs),
    }
}

async fn parquet_scan(
    table: &BasaltTable,
    state: &dyn DfSession,
    tablets: &[&TabletMeta],
    projection: Option<&Vec<usize>>,
    limit: Option<usize>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let mut files: Vec<PartitionedFile> = Vec::new();
    // Each file's object meta and, where a delete bitmap hides rows, its live row count.
    let mut file_rows: Vec<(ObjectMeta, Option<usize>)> = Vec::new();
    for tablet in tablets {
        for seg in tablet.rowsets.iter().flat_map(|r| r.segments.iter()) {
            let path = table
                .storage
                .segment_path(&seg.path)
                .to_string_lossy()
                .into_owned();
            let file =
                PartitionedFile::new(path, seg.size_bytes).with_extension(table.read_guard.clone());
            // Unique keys: skip the rows newer loads replaced.
            let (file, live_rows) = match tablet.delete_bitmaps.get(&seg.path) {
                None => (file, None),
                Some(b) if b.deleted_rows >= seg.num_rows => continue,
                Some(b) => {
                    let deleted = delete_bitmap::decode(b).map_err(to_df)?;
                    let file = file.with_extension(ParquetRowSelection::new(
                        delete_bitmap::live_rows(&deleted, seg.num_rows),
                    ));
                    (file, Some((seg.num_rows - b.deleted_rows) as usize))
                }
            };
            file_rows.push((file.object_meta.clone(), live_rows));
            files.push(file);
        }
    }
    if files.is_empty() {
        let schema = match projection {
            Some(p) => Arc::new(table.schema.project(p)?),
            None => table.schema.clone(),
        };
        return Ok(Arc::new(EmptyExec::new(schema)));
    }
    // Largest first, dealt round robin so groups get similar amounts of data.
    files.sort_by_key(|f| std::cmp::Reverse(f.object_meta.size));
    let n_groups = state.config().target_partitions().max(1).min(files.len());
    let mut groups: Vec<Vec<PartitionedFile>> = vec![Vec::new(); n_groups];
    for (i, file) in files.into_iter().enumerate() {
        groups[i % n_groups].push(file);
    }
    // Footers and page indexes are read once per segment file, then served from the
    // runtime's metadata cache (segment files never change once written).
    let store_url = ObjectStoreUrl::local_filesystem();
    let store = state.runtime_env().object_store(&store_url)?;
    let metadata_cache = state.runtime_env().cache_manager.get_file_metadata_cache();
    let source = ParquetSource::new(table.schema.clone())
        .with_table_parquet_options(TableParquetOptions {
            global: state.config().options().execution.parquet.clone(),
            ..Default::default()
        })
        .with_enable_page_index(true)
        .with_parquet_file_reader_factory(Arc::new(CachedParquetFileReaderFactory::new(
            store.clone(),
            metadata_cache.clone(),
        )));
    // The filters are not attached here: DataFusion keeps them in a FilterExec above this
    // scan (they are Inexact) and its filter pushdown moves that into the Parquet source,
    // with row-group, page and row pruning. Attaching them too evaluated each one twice.
    // Row counts, sizes and each projected column's min/max/null count (from the segments'
    // footers, which the metadata cache holds) let the optimizer estimate join sizes, pick
    // build sides and broadcast small inputs, as it does for its own Parquet tables.
    let statistics = scan_statistics(
        &store,
        &metadata_cache,
        &file_rows,
        &table.schema,
        projection,
    )
    .await?;
    let config = FileScanConfigBuilder::new(store_url, Arc::new(source))
        .with_file_groups(groups.into_iter().map(FileGroup::new).collect())
        .with_projection_indices(projection.cloned())?
        .with_limit(limit)
        .with_statistics(statistics)
        .build();
    Ok(DataSourceExec::from_data_source(config))
}

/// The scan's statistics: per segment, the footer's row count and the projected columns'
/// min/max/null counts (DataFusion's own conversion of Parquet statistics), merged over the
/// segments. Column values are marked inexact: string bounds in footers may be truncated and
/// rows in delete bitmaps still count, and exact values would let DataFusion answer MIN/MAX
/// from them. Row counts stay exact when no segment has deleted rows.
async fn scan_statistics(
    store: &Arc<dyn ObjectStore>,
    metadata_cache: &Arc<FileMetadataCache>,
    files: &[(ObjectMeta, Option<usize>)],
    schema: &SchemaRef,
    projection: Option<&Vec<usize>>,
) -> Result<Statistics> {
    let columns: Vec<usize> = match projection {
        Some(p) => p.clone(),
        None => (0..schema.fields().len()).collect(),
    };
    let projected = Arc::new(schema.project(&columns)?);
    // Owned values in each future: borrowed ones make the scan's future not provably Send.
    let per_file = futures::stream::iter(files.iter().cloned().map(|(meta, live_rows)| {
        let projected = projected.clone();
        let store = store.clone();
        let metadata_cache = metadata_cache.clone();
        async move {
            let metadata = DFParquetMetadata::new(store.as_ref(), &meta)
                .with_file_metadata_cache(Some(metadata_cache))
                .fetch_metadata()
                .await?;
            let mut stats =
                DFParquetMetadata::statistics_from_parquet_metadata(&metadata, &projected)?;
            if let Some(live) = live_rows {
                stats = stats.to_inexact();
                stats.num_rows = Precision::Inexact(live);
            }
            Ok::<_, datafusion::error::DataFusionError>(stats)
        }
    }))
    .buffer_unordered(FOOTER_READS_IN_FLIGHT)
    .try_collect::<Vec<_>>()
    .await?;
    let merged = Statistics::try_merge_iter(per_file.iter(), &projected)?;
    let mut column_statistics = Statistics::unknown_column(schema);
    for (stats, &col) in merged.column_statistics.into_iter().zip(&columns) {
        column_statistics[col] = stats.to_inexact();
    }
    Ok(Statistics {
        num_rows: merged.num_rows,
        total_byte_size: merged.total_byte_size,
        column_statistics,
    })
}
