//! Scanning segments through the decoded column cache: the row groups of the scanned segments
//! are pruned by their zone maps (footer min/max/null counts against the scan's filters),
//! dealt to partitions by rows, and each row group's projected columns come from the
//! storage engine's [`ColumnCache`], or are decoded from the Parquet file once and cached.
//! Decoding reserves the row group's bytes from the query's memory pool first (its
//! `exec_mem_limit`, workload group and the process `mem_limit`), so a scan over its limit
//! fails before it allocates.
//! Rows hidden by delete bitmaps (Unique keys) are filtered out here; the filters themselves
//! stay in DataFusion's FilterExec above the scan.

use crate::key_range::{KeyColumn, KeyRange};
use basalt_common::df_error::to_df;
use basalt_common::json_binary;
use basalt_storage::column_cache::{ColumnCache, ColumnKey};
use basalt_storage::json_columns;
use basalt_storage::segment_store::SegmentStore;
use basalt_storage::ReadGuard;
use datafusion::arrow::array::{new_null_array, Array, ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::array::{BooleanBufferBuilder, RecordBatchOptions, UInt64Array};
use datafusion::arrow::compute::{cast, concat, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{internal_err, Column, ColumnStatistics, Result, ScalarValue, Statistics};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use datafusion::parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReaderBuilder,
};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_optimizer::pruning::PruningPredicateBuilder;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet, Time,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::StreamExt;
use std::collections::HashSet;
use std::sync::Arc;

/// One segment file to scan.
pub(crate) struct SegmentInput {
    /// The segment's path in the catalog: the cache key.
    pub segment: Arc<str>,
    /// Where the segment is read from.
    pub store: Arc<SegmentStore>,
    /// Footer (with the file's Arrow schema), from the metadata cache.
    pub metadata: ArrowReaderMetadata,
    /// Rows not hidden by the tablet's delete bitmap, for the whole file; `None`: all rows.
    pub live: Option<BooleanArray>,
}

/// Where a row group starts in its file, and how many rows it has.
#[derive(Debug, Clone, Copy)]
struct RowGroupRef {
    input: usize,
    row_group: usize,
    first_row: usize,
    rows: usize,
}

pub struct SegmentScanExec {
    inputs: Arc<Vec<SegmentInput>>,
    /// Row groups each output partition reads, in order.
    work: Vec<Vec<RowGroupRef>>,
    /// Table columns read, and the output schema (those columns).
    projection: Vec<usize>,
    schema: SchemaRef,
    cache: Arc<ColumnCache>,
    read_guard: Arc<ReadGuard>,
    limit: Option<usize>,
    statistics: Arc<Statistics>,
    pruning: Option<String>,
    /// The scan's bounds on a prefix of the sort key.
    key_range: Option<Arc<KeyRange>>,
    row_groups_total: usize,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl std::fmt::Debug for SegmentScanExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SegmentScanExec({} segments)", self.inputs.len())
    }
}

/// Everything [`SegmentScanExec::try_new`] needs.
pub(crate) struct SegmentScanPlan {
    pub inputs: Vec<SegmentInput>,
    pub table_schema: SchemaRef,
    pub projection: Vec<usize>,
    pub predicate: Option<Arc<dyn PhysicalExpr>>,
    pub partitions: usize,
    pub limit: Option<usize>,
    /// Statistics of the projected columns.
    pub statistics: Statistics,
    pub cache: Arc<ColumnCache>,
    pub read_guard: Arc<ReadGuard>,
    /// The segments are sorted by the table's first `sort_key_columns` columns (its key).
    pub sort_key_columns: usize,
}

/// Scans of at most this many rows run as one partition, in storage order.
pub(crate) const SMALL_SCAN_ROWS: usize = 65_536;

impl SegmentScanExec {
    pub(crate) fn try_new(plan: SegmentScanPlan) -> Result<SegmentScanExec> {
        let schema = Arc::new(plan.table_schema.project(&plan.projection)?);
        // The leading key columns the scan reads, in sort-key order.
        let keys: Vec<KeyColumn<'_>> = (0..plan.sort_key_columns)
            .map_while(|c| {
                let position = plan.projection.iter().position(|&p| p == c)?;
                let field = plan.table_schema.field(c);
                Some(KeyColumn {
                    name: field.name(),
                    data_type: field.data_type(),
                    position,
                })
            })
            .collect();
        let key_range = plan
            .predicate
            .as_ref()
            .and_then(|p| KeyRange::from_predicate(p, &keys))
            .map(Arc::new);
        // A predicate the pruning rewrite cannot handle only means no pruning.
        let pruning = plan
            .predicate
            .and_then(|p| {
                PruningPredicateBuilder::new()
                    .with_file_schema(plan.table_schema.clone())
                    .try_build(p)
                    .ok()
            })
            .filter(|p| !p.always_true());
        let mut kept = Vec::new();
        let mut row_groups_total = 0;
        for (i, input) in plan.inputs.iter().enumerate() {
            let row_groups = input.metadata.metadata().row_groups();
            row_groups_total += row_groups.len();
            let keep = match &pruning {
                Some(p) => {
                    let stats = RowGroupZoneMaps {
                        input,
                        scan_schema: &plan.table_schema,
                    };
                    p.prune(&stats)
                        .unwrap_or_else(|_| vec![true; row_groups.len()])
                }
                None => vec![true; row_groups.len()],
            };
            let mut first_row = 0;
            for (rg, meta) in row_groups.iter().enumerate() {
                let rows = meta.num_rows().max(0) as usize;
                if keep.get(rg).copied().unwrap_or(true) && rows > 0 {
                    kept.push(RowGroupRef {
                        input: i,
                        row_group: rg,
                        first_row,
                        rows,
                    });
                }
                first_row += rows;
            }
        }
        // A small scan is one partition reading in storage order (load order for a table
        // without sort key), which is what `SELECT *` without ORDER BY then shows; a larger
        // one deals its row groups largest first, each to the partition with the fewest rows
        // so far.
        let kept_rows: usize = kept.iter().map(|r| r.rows).sum();
        let partitions = if kept_rows <= SMALL_SCAN_ROWS {
            1
        } else {
            plan.partitions.max(1).min(kept.len().max(1))
        };
        kept.sort_by_key(|r| std::cmp::Reverse(r.rows));
        let mut work: Vec<Vec<RowGroupRef>> = vec![Vec::new(); partitions];
        let mut rows = vec![0usize; partitions];
        for r in kept {
            let p = (0..partitions).min_by_key(|&p| rows[p]).unwrap_or(0);
            rows[p] += r.rows;
            work[p].push(r);
        }
        for w in &mut work {
            w.sort_by_key(|r| (r.input, r.row_group));
        }
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(SegmentScanExec {
            inputs: Arc::new(plan.inputs),
            work,
            projection: plan.projection,
            schema,
            cache: plan.cache,
            read_guard: plan.read_guard,
            limit: plan.limit,
            statistics: Arc::new(plan.statistics),
            pruning: pruning.map(|p| p.predicate_expr().to_string()),
            key_range,
            row_groups_total,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// This scan giving the JSON columns at output positions `columns` as binary documents
    /// ([`json_binary::binary_field`]) instead of their text, for operators that only read
    /// them with the JSON path functions; None if one of them is no JSON text column.
    pub fn with_binary_json(&self, columns: &[usize]) -> Option<SegmentScanExec> {
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        let mut statistics = self.statistics.as_ref().clone();
        for &c in columns {
            let field = fields.get(c)?;
            if !crate::binary_json::is_json_text(field) {
                return None;
            }
            fields[c] = json_binary::binary_field(field);
            // Text bounds mean nothing to bytes.
            if let Some(column) = statistics.column_statistics.get_mut(c) {
                let nulls = column.null_count;
                *column = ColumnStatistics::new_unknown();
                column.null_count = nulls;
            }
        }
        let schema = Arc::new(Schema::new_with_metadata(
            fields,
            self.schema.metadata().clone(),
        ));
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            self.properties.partitioning.clone(),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Some(SegmentScanExec {
            inputs: self.inputs.clone(),
            work: self.work.clone(),
            projection: self.projection.clone(),
            schema,
            cache: self.cache.clone(),
            read_guard: self.read_guard.clone(),
            limit: self.limit,
            statistics: Arc::new(statistics),
            pruning: self.pruning.clone(),
            key_range: self.key_range.clone(),
            row_groups_total: self.row_groups_total,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    fn row_groups_selected(&self) -> usize {
        self.work.iter().map(Vec::len).sum()
    }
}

impl DisplayAs for SegmentScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let columns: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        write!(
            f,
            "SegmentScanExec: segments={}, row_groups={}/{}, projection=[{}]",
            self.inputs.len(),
            self.row_groups_selected(),
            self.row_groups_total,
            columns.join(", ")
        )?;
        let binary: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .filter(|f| json_binary::is_binary_json(f))
            .map(|f| f.name().as_str())
            .collect();
        if !binary.is_empty() {
            write!(f, ", binary_json=[{}]", binary.join(", "))?;
        }
        if let Some(p) = &self.pruning {
            write!(f, ", pruning_predicate={p}")?;
        }
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for SegmentScanExec {
    fn name(&self) -> &str {
        "SegmentScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            internal_err!("SegmentScanExec has no children")
        }
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        Ok(match partition {
            None => self.statistics.clone(),
            Some(_) => Arc::new(self.statistics.as_ref().clone().to_inexact()),
        })
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let Some(work) = self.work.get(partition).cloned() else {
            return internal_err!("SegmentScanExec has no partition {partition}");
        };
        let reader = Arc::new(RowGroupReader {
            inputs: self.inputs.clone(),
            projection: self.projection.clone(),
            schema: self.schema.clone(),
            key_range: self.key_range.clone(),
            cache: self.cache.clone(),
            _read_guard: self.read_guard.clone(),
            baseline: BaselineMetrics::new(&self.metrics, partition),
            cache_hits: MetricBuilder::new(&self.metrics).counter("cache_hits", partition),
            cache_misses: MetricBuilder::new(&self.metrics).counter("cache_misses", partition),
            decode_time: MetricBuilder::new(&self.metrics).subset_time("decode_time", partition),
            decoded: parking_lot::Mutex::new(
                MemoryConsumer::new(format!("SegmentScanExec[{partition}]"))
                    .register(context.memory_pool()),
            ),
        });
        let batch_size = context.session_config().batch_size().max(1);
        let account = crate::scan_io::query_account(context.session_config());
        // Stored bytes of the projected columns (cached or not), and bytes read from files.
        let bytes_scanned = MetricBuilder::new(&self.metrics).counter("bytes_scanned", partition);
        let bytes_read = MetricBuilder::new(&self.metrics).counter("bytes_read", partition);
        let mut remaining = self.limit.unwrap_or(usize::MAX);
        let stream = futures::stream::iter(work)
            .then(move |rg| {
                let reader = reader.clone();
                let account = account.clone();
                let (bytes_scanned, bytes_read) = (bytes_scanned.clone(), bytes_read.clone());
                async move {
                    // The group's scan_thread_num bounds how many row groups it reads at once.
                    let slot = match &account {
                        Some(account) => Some(account.scan_slot().await),
                        None => None,
                    };
                    let batch = reader.read(rg).map(|(batch, io)| {
                        bytes_scanned.add(io.scanned as usize);
                        bytes_read.add(io.read as usize);
                        if let Some(account) = &account {
                            account.add_scan_bytes(io.scanned);
                        }
                        (batch, io.read)
                    });
                    drop(slot);
                    // Bytes read from the file are paid for after the read: a group over
                    // its read_bytes_per_second waits here before its next row group.
                    if let (Some(account), Ok((_, read))) = (&account, &batch) {
                        account.read_local(*read).await;
                    }
                    futures::stream::iter(match batch {
                        Ok((b, _)) => split(b, batch_size).into_iter().map(Ok).collect(),
                        Err(e) => vec![Err(e)],
                    })
                }
            })
            .flatten()
            .take_while(move |batch| {
                let go = remaining > 0;
                if let Ok(b) = batch {
                    remaining = remaining.saturating_sub(b.num_rows());
                }
                futures::future::ready(go)
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}

/// Slices of at most `batch_size` rows (zero-copy).
fn split(batch: RecordBatch, batch_size: usize) -> Vec<RecordBatch> {
    if batch.num_rows() <= batch_size {
        return vec![batch];
    }
    (0..batch.num_rows())
        .step_by(batch_size)
        .map(|start| batch.slice(start, batch_size.min(batch.num_rows() - start)))
        .collect()
}

/// Reads row groups for one partition of a scan.
struct RowGroupReader {
    inputs: Arc<Vec<SegmentInput>>,
    projection: Vec<usize>,
    schema: SchemaRef,
    key_range: Option<Arc<KeyRange>>,
    cache: Arc<ColumnCache>,
    /// The files stay until the last stream reading them ends.
    _read_guard: Arc<ReadGuard>,
    baseline: BaselineMetrics,
    cache_hits: Count,
    cache_misses: Count,
    decode_time: Time,
    /// The bytes of the row group being read that were decoded for this scan.
    decoded: parking_lot::Mutex<MemoryReservation>,
}

/// Stored bytes of the columns one row group read took.
struct RowGroupIo {
    /// All projected column chunks, cached or not.
    scanned: u64,
    /// The chunks decoded from the file (not in the cache).
    read: u64,
}

impl RowGroupReader {
    /// The projected columns of one row group, live rows only, and the bytes that took.
    fn read(&self, rg: RowGroupRef) -> Result<(RecordBatch, RowGroupIo)> {
        let _timer = self.baseline.elapsed_compute().timer();
        let input = &self.inputs[rg.input];
        let file_schema = input.metadata.schema();
        let mut columns: Vec<Option<ArrayRef>> = vec![None; self.projection.len()];
        // (output position, file column) of columns not in the cache.
        let mut missing: Vec<(usize, usize)> = Vec::new();
        let chunks = input.metadata.metadata().row_group(rg.row_group);
        let chunk_bytes = |file_column: usize| chunks.column(file_column).compressed_size() as u64;
        let mut io = RowGroupIo {
            scanned: 0,
            read: 0,
        };
        for (pos, field) in self.schema.fields().iter().enumerate() {
            let Some((file_column, _)) = file_schema.column_with_name(field.name()) else {
                columns[pos] = Some(new_null_array(field.data_type(), rg.rows));
                continue;
            };
            io.scanned += chunk_bytes(file_column);
            let key = self.key(input, rg, file_column, pos);
            match self.cache.get(&key) {
                Some(array) => {
                    self.cache_hits.add(1);
                    columns[pos] = Some(array);
                }
                None => {
                    io.read += chunk_bytes(file_column);
                    missing.push((pos, file_column));
                }
            }
        }
        // The previous row group's decoded bytes are with the operators above by now; this
        // one's are reserved before they are allocated (estimated from the footer), then
        // counted as decoded.
        let estimate: usize = missing
            .iter()
            .map(|(_, c)| usize::try_from(chunks.column(*c).uncompressed_size()).unwrap_or(0))
            .sum();
        self.decoded.lock().try_resize(estimate)?;
        if !missing.is_empty() {
            self.cache_misses.add(missing.len());
            let _decode = self.decode_time.timer();
            let decoded = decode(input, rg, &missing)?;
            let bytes = decoded.iter().map(|a| a.get_array_memory_size()).sum();
            self.decoded.lock().try_resize(bytes)?;
            for ((pos, file_column), array) in missing.iter().zip(decoded) {
                let wanted_field = self.schema.field(*pos);
                let wanted = wanted_field.data_type();
                // JSON is read in the form the scan gives it: a segment may hold either.
                let stored_binary = json_columns::is_binary_json(file_schema.field(*file_column));
                let array = match (stored_binary, json_binary::is_binary_json(wanted_field)) {
                    (true, false) => json_columns::decode_column(&array).map_err(to_df)?,
                    (false, true) => json_columns::encode_column(
                        &cast(&array, &DataType::Utf8)?,
                        wanted_field.name(),
                    )
                    .map_err(to_df)?,
                    _ => array,
                };
                let array = if array.data_type() == wanted {
                    array
                } else {
                    cast(&array, wanted)?
                };
                if self.cache.enabled() {
                    self.cache
                        .insert(self.key(input, rg, *file_column, *pos), array.clone());
                }
                columns[*pos] = Some(array);
            }
        }
        let mut columns: Vec<ArrayRef> = columns.into_iter().flatten().collect();
        // Only the rows within the key bounds: zero-copy slices of the (cached) arrays to the
        // span of the runs, and a mask when there are several (an IN list).
        let (mut span, mut runs_mask) = (0..rg.rows, None);
        if let Some(range) = &self.key_range {
            let runs = range.rows(&columns)?;
            span = match (runs.first(), runs.last()) {
                (Some(first), Some(last)) => first.start..last.end,
                _ => 0..0,
            };
            if runs.len() > 1 {
                // The runs are ascending and disjoint.
                let mut mask = BooleanBufferBuilder::new(span.len());
                let mut at = span.start;
                for run in &runs {
                    mask.append_n(run.start - at, false);
                    mask.append_n(run.len(), true);
                    at = run.end;
                }
                runs_mask = Some(mask.finish());
            }
            if span.len() < rg.rows {
                columns = columns
                    .iter()
                    .map(|c| c.slice(span.start, span.len()))
                    .collect();
            }
        }
        // COUNT(*) reads no column: the batch still carries its row count.
        let options = RecordBatchOptions::new().with_row_count(Some(span.len()));
        let batch = RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)?;
        let live = input
            .live
            .as_ref()
            .map(|live| live.slice(rg.first_row + span.start, span.len()));
        let keep = match (live, runs_mask) {
            (Some(live), Some(runs)) => Some(BooleanArray::new(live.values() & &runs, None)),
            (Some(live), None) => Some(live),
            (None, Some(runs)) => Some(BooleanArray::new(runs, None)),
            (None, None) => None,
        };
        let batch = match keep {
            Some(keep) => filter_record_batch(&batch, &keep)?,
            None => batch,
        };
        self.baseline.record_output(batch.num_rows());
        Ok((batch, io))
    }

    /// The cache key of a column chunk in the form output position `pos` gives it.
    fn key(
        &self,
        input: &SegmentInput,
        rg: RowGroupRef,
        file_column: usize,
        pos: usize,
    ) -> ColumnKey {
        ColumnKey {
            segment: input.segment.clone(),
            row_group: rg.row_group as u32,
            column: file_column as u32,
            binary_json: json_binary::is_binary_json(self.schema.field(pos)),
        }
    }
}

/// Decodes columns `missing` (output position, file column) of one row group from the
/// Parquet file, in the order of `missing`.
fn decode(
    input: &SegmentInput,
    rg: RowGroupRef,
    missing: &[(usize, usize)],
) -> Result<Vec<ArrayRef>> {
    let file = input.store.open_segment(&input.segment).map_err(to_df)?;
    let mut file_columns: Vec<usize> = missing.iter().map(|(_, c)| *c).collect();
    file_columns.sort_unstable();
    file_columns.dedup();
    let mask = ProjectionMask::roots(
        input.metadata.metadata().file_metadata().schema_descr(),
        file_columns.iter().copied(),
    );
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file, input.metadata.clone())
        .with_row_groups(vec![rg.row_group])
        .with_projection(mask)
        .with_batch_size(rg.rows.max(1))
        .build()?;
    let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
    let mut by_file_column = Vec::with_capacity(file_columns.len());
    for (i, _) in file_columns.iter().enumerate() {
        let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
        let array = match parts.as_slice() {
            [one] => make_array_ref(*one),
            _ => concat(&parts)?,
        };
        by_file_column.push(array);
    }
    Ok(missing
        .iter()
        .map(|(_, c)| {
            let i = file_columns.binary_search(c).unwrap_or_default();
            by_file_column[i].clone()
        })
        .collect())
}

fn make_array_ref(array: &dyn Array) -> ArrayRef {
    datafusion::arrow::array::make_array(array.to_data())
}

/// A segment's row groups as pruning containers: min/max/null counts from its footer.
struct RowGroupZoneMaps<'a> {
    input: &'a SegmentInput,
    scan_schema: &'a Schema,
}

impl RowGroupZoneMaps<'_> {
    /// Footer values in the scan's type (the predicate's literals have it), e.g. Utf8View.
    fn as_scan_type(&self, column: &Column, values: ArrayRef) -> Option<ArrayRef> {
        let field = self.scan_schema.field_with_name(&column.name).ok()?;
        if values.data_type() == field.data_type() {
            Some(values)
        } else {
            cast(&values, field.data_type()).ok()
        }
    }

    fn converter(&self, column: &Column) -> Option<StatisticsConverter<'_>> {
        let schema: &Schema = self.input.metadata.schema();
        StatisticsConverter::try_new(
            &column.name,
            schema,
            self.input
                .metadata
                .metadata()
                .file_metadata()
                .schema_descr(),
        )
        .ok()
    }
}

impl PruningStatistics for RowGroupZoneMaps<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        let mins = self
            .converter(column)?
            .row_group_mins(self.input.metadata.metadata().row_groups())
            .ok()?;
        self.as_scan_type(column, mins)
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        let maxes = self
            .converter(column)?
            .row_group_maxes(self.input.metadata.metadata().row_groups())
            .ok()?;
        self.as_scan_type(column, maxes)
    }

    fn num_containers(&self) -> usize {
        self.input.metadata.metadata().num_row_groups()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let counts = self
            .converter(column)?
            .row_group_null_counts(self.input.metadata.metadata().row_groups())
            .ok()?;
        Some(Arc::new(counts))
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        let counts: UInt64Array = self
            .input
            .metadata
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| Some(rg.num_rows().max(0) as u64))
            .collect();
        Some(Arc::new(counts))
    }

    #[allow(clippy::mutable_key_type)] // the trait's signature
    fn contained(&self, _column: &Column, _values: &HashSet<ScalarValue>) -> Option<BooleanArray> {
        None
    }
}
