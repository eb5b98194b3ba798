//! Planning a scan of a Basalt table: prune partitions and buckets, then read tablets whose
//! segments need no merging through DataFusion's Parquet scan (row-group and page pruning,
//! predicate pushdown, parallel file groups) and merge the others with [`TabletMergeExec`].
//! What was pruned is reported for EXPLAIN.

use crate::merge_exec::TabletMergeExec;
use crate::provider::BasaltTable;
use crate::pruning::prune;
use crate::segment_scan::{SegmentInput, SegmentScanExec, SegmentScanPlan};
use basalt_catalog::TabletMeta;
use basalt_common::df_error::to_df;
use basalt_storage::segment_store::SegmentStore;
use basalt_storage::{delete_bitmap, StorageEngine};
use datafusion::arrow::array::{BooleanArray, BooleanBufferBuilder};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session as DfSession;
use datafusion::common::stats::Precision;
use datafusion::common::DFSchema;
use datafusion::common::Result;
use datafusion::common::Statistics;
use datafusion::config::TableParquetOptions;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use datafusion::datasource::physical_plan::parquet::{
    CachedParquetFileReaderFactory, ParquetFileReaderFactory,
};
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::expr_rewriter::unnormalize_col;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::Expr;
use datafusion::object_store::{ObjectMeta, ObjectStore};
use datafusion::parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use parking_lot::Mutex;
use roaring::RoaringBitmap;
use std::sync::Arc;

/// Columns beyond which a filtered scan reads through the Parquet reader's late
/// materialization instead of the column cache.
const WIDE_SCAN_COLUMNS: usize = 16;

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

/// Plans a scan of `table`; `projection` holds storage indexes (key columns first), and the
/// plan's columns are the table's storage schema projected by it.
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
        Some(p) => Arc::new(table.storage_schema.project(p)?),
        None => table.storage_schema.clone(),
    };
    if state
        .config()
        .get_extension::<crate::tablet_scan::ClusterScans>()
        .is_some()
    {
        return cluster_scan(table, state, &pruned, projection, filters, limit);
    }
    let mut inputs: Vec<Arc<dyn ExecutionPlan>> = Vec::new();
    if !plain.is_empty() {
        inputs.push(parquet_scan(table, state, &plain, projection, filters, limit).await?);
    }
    if !merging.is_empty() {
        inputs.push(Arc::new(TabletMergeExec::new(
            table.storage.clone(),
            table.meta.clone(),
            merging,
            table.read_guard.clone(),
            projection.cloned(),
            projected_schema.clone(),
            key_predicate(state, table, filters),
        )));
    }
    match inputs.len() {
        0 => Ok(Arc::new(EmptyExec::new(projected_schema))),
        _ => UnionExec::try_new(inputs),
    }
}

/// On a cluster's frontend: the selected tablets, to be scanned by the backends holding them.
fn cluster_scan(
    table: &BasaltTable,
    state: &dyn DfSession,
    pruned: &crate::pruning::Pruned,
    projection: Option<&Vec<usize>>,
    filters: &[Expr],
    limit: Option<usize>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let mut meta = (*table.meta).clone();
    let mut partitions = Vec::new();
    for &pi in &pruned.partitions {
        let mut partition = meta.partitions[pi].clone();
        partition.tablets.retain(|t| {
            !t.rowsets.is_empty()
                && pruned
                    .buckets
                    .as_ref()
                    .is_none_or(|b| b.contains(&t.bucket))
        });
        if !partition.tablets.is_empty() {
            partitions.push(partition);
        }
    }
    meta.partitions = partitions;
    // The backends read just these tablets (the temporary partitions are not scanned).
    meta.temporary_partitions.clear();
    let scan = crate::tablet_scan::TabletScanExec::try_new(crate::tablet_scan::TabletScanSpec {
        table: Arc::new(meta),
        projection: projection.cloned(),
        filters: filters.to_vec(),
        limit,
        partitions: state.config().target_partitions(),
        placed_on: None,
        binary_json: Vec::new(),
    })?;
    Ok(Arc::new(scan.holding(table.read_guard.clone())))
}

async fn parquet_scan(
    table: &BasaltTable,
    state: &dyn DfSession,
    tablets: &[&TabletMeta],
    projection: Option<&Vec<usize>>,
    filters: &[Expr],
    limit: Option<usize>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let mut files: Vec<PartitionedFile> = Vec::new();
    // For the cached path: each file's catalog path, and the rows its delete bitmap leaves.
    let mut segments: Vec<(Arc<str>, Option<BooleanArray>)> = Vec::new();
    let store = table.storage.segments();
    // Each file's object meta and, where a delete bitmap hides rows, its live row count.
    let mut file_rows: Vec<(ObjectMeta, Option<usize>)> = Vec::new();
    for tablet in tablets {
        for seg in tablet.rowsets.iter().flat_map(|r| r.segments.iter()) {
            let file = PartitionedFile::new(store.location(&seg.path), seg.size_bytes)
                .with_extension(table.read_guard.clone());
            // Unique keys: skip the rows newer loads replaced.
            let (file, live_rows) = match tablet.delete_bitmaps.get(&seg.path) {
                None => (file, None),
                Some(b) if b.deleted_rows >= seg.num_rows => continue,
                Some(b) => {
                    let deleted = delete_bitmap::decode(b).map_err(to_df)?;
                    let file = file.with_extension(ParquetRowSelection::new(
                        delete_bitmap::live_rows(&deleted, seg.num_rows),
                    ));
                    (file, Some(deleted))
                }
            };
            let live_mask = live_rows.as_ref().map(|d| live_mask(d, seg.num_rows));
            file_rows.push((
                file.object_meta.clone(),
                live_mask.as_ref().map(|m| m.true_count()),
            ));
            segments.push((seg.path.as_str().into(), live_mask));
            files.push(file);
        }
    }
    if files.is_empty() {
        let schema = match projection {
            Some(p) => Arc::new(table.storage_schema.project(p)?),
            None => table.storage_schema.clone(),
        };
        return Ok(Arc::new(EmptyExec::new(schema)));
    }
    // Footers and page indexes are read once per segment file, then served from the
    // runtime's metadata cache (segment files never change once written).
    let store_url = segment_store_url(store)?;
    let store = state.runtime_env().object_store(&store_url)?;
    let metadata_cache = state.runtime_env().cache_manager.get_file_metadata_cache();
    let footers = fetch_footers(&store, &metadata_cache, &file_rows).await?;
    // Row counts, sizes and each projected column's min/max/null count let the optimizer
    // estimate join sizes, pick build sides and broadcast small inputs, as it does for its
    // own Parquet tables.
    let statistics = scan_statistics(&footers, &file_rows, &table.storage_schema, projection)?;
    let mut parquet_options = state.config().options().execution.parquet.clone();
    let cache = table.storage.column_cache();
    let columns: Vec<usize> = match projection {
        Some(p) => p.clone(),
        None => (0..table.storage_schema.fields().len()).collect(),
    };
    // A filtered scan of many columns (`SELECT * .. WHERE`) is better served by the Parquet
    // reader's late materialization: it decodes the filter's columns, then the others only
    // for matching rows, where the cache would decode (and cycle) every column of every row
    // group. ClickBench Q24 over 105 columns: 4.0 s through the cache, 0.35 s this way.
    let wide_filtered = !filters.is_empty() && columns.len() > WIDE_SCAN_COLUMNS;
    parquet_options.pushdown_filters |= wide_filtered;
    if cache.enabled() && !parquet_options.pushdown_filters {
        let mut inputs = Vec::with_capacity(files.len());
        for (footer, (segment, live)) in footers.into_iter().zip(segments) {
            inputs.push(SegmentInput {
                segment,
                store: table.storage.segments().clone(),
                metadata: ArrowReaderMetadata::try_new(footer, ArrowReaderOptions::new())?,
                live,
            });
        }
        let scan = SegmentScanExec::try_new(SegmentScanPlan {
            inputs,
            table_schema: table.storage_schema.clone(),
            projection: columns.clone(),
            predicate: pruning_predicate(state, &table.storage_schema, filters),
            partitions: state.config().target_partitions(),
            limit,
            statistics: statistics.project(Some(&columns)),
            cache: cache.clone(),
            read_guard: table.read_guard.clone(),
            sort_key_columns: table.meta.num_key_columns,
        })?;
        return Ok(Arc::new(scan));
    }
    // A small scan is one group in storage order (as in the cached path); a larger one
    // deals files largest first, round robin, so groups get similar amounts of data.
    let rows: usize = footers
        .iter()
        .zip(&file_rows)
        .map(|(f, (_, live))| live.unwrap_or(f.file_metadata().num_rows().max(0) as usize))
        .sum();
    let n_groups = if rows <= crate::segment_scan::SMALL_SCAN_ROWS {
        1
    } else {
        files.sort_by_key(|f| std::cmp::Reverse(f.object_meta.size));
        state.config().target_partitions().max(1).min(files.len())
    };
    let mut groups: Vec<Vec<PartitionedFile>> = vec![Vec::new(); n_groups];
    for (i, file) in files.into_iter().enumerate() {
        groups[i % n_groups].push(file);
    }
    let source = ParquetSource::new(table.storage_schema.clone())
        .with_table_parquet_options(TableParquetOptions {
            global: parquet_options,
            ..Default::default()
        })
        .with_enable_page_index(true)
        .with_parquet_file_reader_factory(reader_factory(
            state,
            Arc::new(CachedParquetFileReaderFactory::new(
                store.clone(),
                metadata_cache.clone(),
            )),
        ));
    // The filters are not attached here: DataFusion keeps them in a FilterExec above this
    // scan (they are Inexact) and its filter pushdown moves that into the Parquet source,
    // with row-group, page and row pruning. Attaching them too evaluated each one twice.
    let config = FileScanConfigBuilder::new(store_url, Arc::new(source))
        .with_file_groups(groups.into_iter().map(FileGroup::new).collect())
        .with_projection_indices(projection.cloned())?
        .with_limit(limit)
        .with_statistics(statistics)
        .build();
    Ok(DataSourceExec::from_data_source(config))
}

/// The address DataFusion reaches the storage engine's segments at.
fn segment_store_url(store: &SegmentStore) -> Result<ObjectStoreUrl> {
    ObjectStoreUrl::parse(store.url().as_str())
}

/// Makes the storage engine's segments readable by scans planned with `runtime` (once per
/// runtime, before the first query).
pub fn register_segment_store(runtime: &RuntimeEnv, storage: &StorageEngine) {
    let segments = storage.segments();
    runtime.register_object_store(segments.url(), segments.object_store());
}

/// Reads through `inner`, charged to the statement's account when it has one.
fn reader_factory(
    state: &dyn DfSession,
    inner: Arc<dyn ParquetFileReaderFactory>,
) -> Arc<dyn ParquetFileReaderFactory> {
    match crate::scan_io::query_account(state.config()) {
        Some(account) => Arc::new(crate::scan_io::AccountedReaderFactory { inner, account }),
        None => inner,
    }
}

/// Each file's footer, from the metadata cache or read (a few at a time) into it.
async fn fetch_footers(
    store: &Arc<dyn ObjectStore>,
    metadata_cache: &Arc<FileMetadataCache>,
    files: &[(ObjectMeta, Option<usize>)],
) -> Result<Vec<Arc<ParquetMetaData>>> {
    // Owned values in each future: borrowed ones make the scan's future not provably Send.
    futures::stream::iter(files.iter().cloned().map(|(meta, _)| {
        let store = store.clone();
        let metadata_cache = metadata_cache.clone();
        async move {
            DFParquetMetadata::new(store.as_ref(), &meta)
                .with_file_metadata_cache(Some(metadata_cache))
                .fetch_metadata()
                .await
        }
    }))
    .buffered(FOOTER_READS_IN_FLIGHT)
    .try_collect()
    .await
}

/// The scan's statistics: per segment, the footer's row count and the projected columns'
/// min/max/null counts (DataFusion's own conversion of Parquet statistics), merged over the
/// segments. Column values are marked inexact: string bounds in footers may be truncated and
/// rows in delete bitmaps still count, and exact values would let DataFusion answer MIN/MAX
/// from them. Row counts stay exact when no segment has deleted rows.
fn scan_statistics(
    footers: &[Arc<ParquetMetaData>],
    files: &[(ObjectMeta, Option<usize>)],
    schema: &SchemaRef,
    projection: Option<&Vec<usize>>,
) -> Result<Statistics> {
    let columns: Vec<usize> = match projection {
        Some(p) => p.clone(),
        None => (0..schema.fields().len()).collect(),
    };
    let projected = Arc::new(schema.project(&columns)?);
    let mut per_file = Vec::with_capacity(footers.len());
    for (footer, (_, live_rows)) in footers.iter().zip(files) {
        let mut stats = DFParquetMetadata::statistics_from_parquet_metadata(footer, &projected)?;
        if let Some(live) = live_rows {
            stats = stats.to_inexact();
            stats.num_rows = Precision::Inexact(*live);
        }
        per_file.push(stats);
    }
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

/// The scan's filters as one physical predicate over the table's columns, for zone-map
/// pruning; `None` when there are none or they cannot be planned alone.
/// The filters that look at key columns only, planned against the key columns: a merge-on-read
/// tablet applies them to each segment before merging.
fn key_predicate(
    state: &dyn DfSession,
    table: &BasaltTable,
    filters: &[Expr],
) -> Option<crate::merge_exec::KeyPredicate> {
    let num_keys = table.meta.num_key_columns;
    let key_schema = Arc::new(
        table
            .storage_schema
            .project(&(0..num_keys).collect::<Vec<_>>())
            .ok()?,
    );
    let on_keys: Vec<Expr> = filters
        .iter()
        .filter(|f| {
            let columns = f.column_refs();
            !columns.is_empty()
                && columns
                    .iter()
                    .all(|c| key_schema.field_with_name(&c.name).is_ok())
        })
        .cloned()
        .collect();
    let predicate = pruning_predicate(state, &key_schema, &on_keys)?;
    Some(crate::merge_exec::KeyPredicate {
        predicate,
        key_schema,
    })
}

fn pruning_predicate(
    state: &dyn DfSession,
    schema: &SchemaRef,
    filters: &[Expr],
) -> Option<Arc<dyn PhysicalExpr>> {
    let predicate = conjunction(filters.iter().cloned().map(unnormalize_col))?;
    let df_schema = DFSchema::try_from(schema.as_ref().clone()).ok()?;
    state.create_physical_expr(predicate, &df_schema).ok()
}

/// Rows of a `num_rows`-row segment not in `deleted`, as a filter mask.
fn live_mask(deleted: &RoaringBitmap, num_rows: u64) -> BooleanArray {
    let mut mask = BooleanBufferBuilder::new(num_rows as usize);
    mask.append_n(num_rows as usize, true);
    for row in deleted.iter().take_while(|r| u64::from(*r) < num_rows) {
        mask.set_bit(row as usize, false);
    }
    BooleanArray::new(mask.finish(), None)
}
