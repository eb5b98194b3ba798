//! INSERT as one transaction: DataFusion streams the rows (already coerced to the table schema)
//! into a storage load; the load publishes atomically at the end, or leaves nothing behind.

use async_trait::async_trait;
use basalt_catalog::{TableId, TableMeta};
use basalt_common::clock::now_ms;
use basalt_common::df_error::to_df;
use basalt_common::BasaltError;
use basalt_storage::conform::{conform, fill_auto_increment};
use basalt_storage::{no_partition_error, LoadWriter, StorageEngine};
use datafusion::arrow::array::{BooleanArray, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The first AUTO_INCREMENT id a statement's INSERT generated, reported back to the session
/// that planned it (`LAST_INSERT_ID()` and the OK packet's last insert id).
#[derive(Debug, Default)]
pub struct GeneratedIds {
    first: AtomicU64,
}

impl GeneratedIds {
    /// Forgets the previous statement's id.
    pub fn reset(&self) {
        self.first.store(0, Ordering::Relaxed);
    }

    /// The first id generated since the last reset (0: none).
    pub fn first(&self) -> u64 {
        self.first.load(Ordering::Relaxed)
    }

    /// Keeps `id` unless an earlier batch of the statement already generated one.
    fn report(&self, id: u64) {
        let _ = self
            .first
            .compare_exchange(0, id, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Something the next INSERT into one table takes from the session's config: its sink takes
/// it (set by the statement that plans the INSERT, cleared after in case no sink ran).
#[derive(Debug)]
pub struct NextInsert<T> {
    pending: parking_lot::Mutex<Option<(TableId, T)>>,
}

impl<T> Default for NextInsert<T> {
    fn default() -> Self {
        NextInsert {
            pending: parking_lot::Mutex::new(None),
        }
    }
}

impl<T> NextInsert<T> {
    /// Keeps `value` for the next INSERT into `table`.
    pub fn set(&self, table: TableId, value: T) {
        *self.pending.lock() = Some((table, value));
    }

    /// Forgets a value no INSERT took.
    pub fn clear(&self) {
        *self.pending.lock() = None;
    }

    /// The value, if it is for `table` (a value for another table stays).
    fn take(&self, table: TableId) -> Option<T> {
        let mut pending = self.pending.lock();
        match pending.take() {
            Some((id, value)) if id == table => Some(value),
            other => {
                *pending = other;
                None
            }
        }
    }
}

/// Rows an INSERT moves to other keys (an UPDATE of a Unique table's key columns): whole rows
/// of the table, as a scan returns them, whose keys the sink deletes in its own load before it
/// writes the new rows, so the old keys go and the new rows come in one publish (within a load
/// the newest row of a key decides).
pub type KeyMoves = NextInsert<Vec<RecordBatch>>;

/// Where the next INSERT into a table may put its rows: only in the partitions its statement
/// named (`INSERT .. PARTITION (p1, p2)`; another row is error 1748), or only in partitions
/// the table has (an AUTO PARTITION table's INSERT OVERWRITE with
/// `enable_auto_create_when_overwrite` off).
pub type PartitionTargets = NextInsert<TargetPartitions>;

/// The partitions an INSERT may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetPartitions {
    /// Only these (by name).
    Named(Vec<String>),
    /// Only these temporary partitions (Doris's `TEMPORARY PARTITION (..)`).
    Temporary(Vec<String>),
    /// Only those the table has: AUTO PARTITION creates none.
    Existing,
}

/// Doris's `INSERT .. WITH LABEL l`: the load record the next INSERT publishes with its rows
/// (in the same catalog transaction, so a label already taken fails the INSERT), and the
/// transaction id it got. Kept on a session's config for its next statement.
#[derive(Debug, Default)]
pub struct InsertLabel {
    pending: parking_lot::Mutex<Option<basalt_catalog::LoadJobRecord>>,
    txn_id: AtomicU64,
}

impl InsertLabel {
    /// The record (label, user, kind, start time) the next INSERT completes and publishes.
    pub fn set(&self, record: basalt_catalog::LoadJobRecord) {
        *self.pending.lock() = Some(record);
        self.txn_id.store(0, Ordering::Relaxed);
    }

    /// Forgets a record no INSERT took.
    pub fn clear(&self) {
        *self.pending.lock() = None;
    }

    /// The transaction id of the INSERT that published the label (0: none yet).
    pub fn txn_id(&self) -> u64 {
        self.txn_id.load(Ordering::Relaxed)
    }

    fn take(&self) -> Option<basalt_catalog::LoadJobRecord> {
        self.pending.lock().take()
    }
}

#[derive(Debug)]
pub struct BasaltSink {
    table: Arc<TableMeta>,
    /// What DataFusion is told: every column nullable, so NOT NULL is checked here (error 1048).
    input_schema: SchemaRef,
    /// The table's schema, with its NOT NULL columns, as storage writes it.
    table_schema: SchemaRef,
    /// For a table declared in another order than it stores (its input comes in declared
    /// order): the input column of each storage column.
    storage_columns: Option<Vec<usize>>,
    storage: Arc<StorageEngine>,
    generated: Arc<GeneratedIds>,
}

impl BasaltSink {
    pub fn new(
        table: Arc<TableMeta>,
        input_schema: SchemaRef,
        storage: Arc<StorageEngine>,
        generated: Arc<GeneratedIds>,
    ) -> BasaltSink {
        let storage_columns = table.has_declared_order().then(|| {
            (0..table.columns.len())
                .map(|i| table.declared_position(i))
                .collect()
        });
        BasaltSink {
            table_schema: table.arrow_schema(),
            storage_columns,
            input_schema,
            table,
            storage,
            generated,
        }
    }
}

impl DisplayAs for BasaltSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BasaltSink: table={}.{}",
            self.table.database, self.table.name
        )
    }
}

/// Writes one batch on a blocking thread (routing, sorting and segment writes are CPU and disk
/// work) and hands the writer back. With `delete`, every row deletes its key (Unique tables).
/// A row in no partition fails the load: with 1748 when `named` partitions restricted it.
async fn write_batch(
    mut writer: LoadWriter,
    batch: RecordBatch,
    delete: bool,
    named: bool,
) -> Result<LoadWriter, BasaltError> {
    tokio::task::spawn_blocking(move || {
        let flags = delete.then(|| BooleanArray::from(vec![true; batch.num_rows()]));
        let unrouted = writer.write_with_deletes(&batch, flags.as_ref())?;
        if let Some((_, value)) = unrouted.first() {
            if named {
                return Err(BasaltError::RowNotInPartitions);
            }
            return Err(no_partition_error(writer.table(), value));
        }
        Ok(writer)
    })
    .await
    .map_err(|e| BasaltError::Internal(format!("load task failed: {e}")))?
}

#[async_trait]
impl DataSink for BasaltSink {
    fn schema(&self) -> &SchemaRef {
        &self.input_schema
    }

    async fn write_all(
        &self,
        mut data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let mut writer = self
            .storage
            .begin_load(self.table.clone())
            .await
            .map_err(to_df)?;
        let targets = context
            .session_config()
            .get_extension::<PartitionTargets>()
            .and_then(|t| t.take(self.table.id));
        let named = matches!(
            targets,
            Some(TargetPartitions::Named(_) | TargetPartitions::Temporary(_))
        );
        match targets {
            Some(TargetPartitions::Named(names)) => {
                writer.restrict_partitions(&names).map_err(to_df)?
            }
            Some(TargetPartitions::Temporary(names)) => writer
                .restrict_temporary_partitions(&names)
                .map_err(to_df)?,
            Some(TargetPartitions::Existing) => {
                let names: Vec<String> = writer
                    .table()
                    .partitions
                    .iter()
                    .map(|p| p.name.clone())
                    .collect();
                writer.restrict_partitions(&names).map_err(to_df)?
            }
            None => {}
        }
        if let Some(moves) = context.session_config().get_extension::<KeyMoves>() {
            for batch in moves.take(self.table.id).unwrap_or_default() {
                let columns = conform(&self.table, &batch).map_err(to_df)?;
                let batch = RecordBatch::try_new(self.table_schema.clone(), columns)
                    .map_err(|e| to_df(BasaltError::InvalidData(e.to_string())))?;
                writer = write_batch(writer, batch, true, named)
                    .await
                    .map_err(to_df)?;
            }
        }
        // Outside strict mode, values that do not fit their columns are fitted to them.
        let lenient = context
            .session_config()
            .get_extension::<crate::lenient_store::StoreWarnings>();
        while let Some(batch) = data.next().await {
            let batch = match &self.storage_columns {
                Some(columns) => batch?.project(columns)?,
                None => batch?,
            };
            let batch = match &lenient {
                Some(report) => {
                    crate::lenient_store::fit_batch(&self.table, batch, report).map_err(to_df)?
                }
                None => batch,
            };
            let (batch, first_id) =
                fill_auto_increment(self.storage.catalog().as_ref(), &self.table, batch)
                    .map_err(to_df)?;
            if let Some(first) = first_id {
                self.generated.report(first);
            }
            let batch = compute_generated(&self.table, batch).map_err(to_df)?;
            let columns = conform(&self.table, &batch).map_err(to_df)?;
            let batch = RecordBatch::try_new(self.table_schema.clone(), columns)
                .map_err(|e| to_df(BasaltError::InvalidData(e.to_string())))?;
            writer = write_batch(writer, batch, false, named)
                .await
                .map_err(to_df)?;
        }
        let label = context.session_config().get_extension::<InsertLabel>();
        let job = label.as_ref().and_then(|l| l.take()).map(|mut job| {
            job.database = self.table.database.clone();
            job.table = self.table.name.clone();
            job.txn_id = writer.load_id();
            job.total_rows = writer.rows_loaded();
            job.loaded_rows = writer.rows_loaded();
            job.finished_ms = now_ms();
            job
        });
        let txn_id = job.as_ref().map(|j| j.txn_id);
        let summary = tokio::task::spawn_blocking(move || writer.commit_with_label(job))
            .await
            .map_err(|e| to_df(BasaltError::Internal(format!("load task failed: {e}"))))?
            .map_err(to_df)?;
        if let (Some(label), Some(id)) = (label, txn_id) {
            label.txn_id.store(id, Ordering::Relaxed);
        }
        Ok(summary.rows_loaded)
    }
}

/// `batch` (the table's columns in storage order) with its generated columns computed from the
/// others; whatever values they held are replaced.
pub fn compute_generated(
    table: &TableMeta,
    batch: RecordBatch,
) -> Result<RecordBatch, BasaltError> {
    let generated = table.generated_columns();
    if generated.is_empty() {
        return Ok(batch);
    }
    // The expressions name the columns as the catalog does.
    let fields: Vec<datafusion::arrow::datatypes::Field> = table
        .columns
        .iter()
        .zip(batch.columns())
        .map(|(c, a)| {
            datafusion::arrow::datatypes::Field::new(&c.name, a.data_type().clone(), true)
        })
        .collect();
    let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(fields));
    let named = RecordBatch::try_new(schema, batch.columns().to_vec())
        .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
    let computed = basalt_functions::generated_columns::compute(named, &generated)
        .map_err(|e| BasaltError::InvalidData(format!("generated column: {e}")))?;
    RecordBatch::try_new(batch.schema(), computed.columns().to_vec())
        .map_err(|e| BasaltError::InvalidData(e.to_string()))
}

/// Deletes the keys of the given rows (whole rows of a Unique-key table, as a scan returns
/// them) in one load that publishes atomically: all keys are gone, or none. Returns the number
/// of rows deleted.
pub async fn delete_rows(
    storage: &Arc<StorageEngine>,
    table: Arc<TableMeta>,
    mut rows: impl futures::Stream<Item = Result<RecordBatch, BasaltError>> + Unpin,
) -> Result<u64, BasaltError> {
    let schema = table.arrow_schema();
    let mut writer = storage.begin_load(table.clone()).await?;
    while let Some(batch) = rows.next().await {
        let batch = batch?;
        if batch.num_columns() != schema.fields().len() {
            return Err(BasaltError::Internal(format!(
                "DELETE read {} columns of a {}-column table",
                batch.num_columns(),
                schema.fields().len()
            )));
        }
        let columns = conform(&table, &batch)?;
        let batch = RecordBatch::try_new(schema.clone(), columns)
            .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
        writer = write_batch(writer, batch, true, false).await?;
    }
    let summary = tokio::task::spawn_blocking(move || writer.commit())
        .await
        .map_err(|e| BasaltError::Internal(format!("load task failed: {e}")))??;
    Ok(summary.rows_loaded)
}
