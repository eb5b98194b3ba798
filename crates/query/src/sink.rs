//! INSERT as one transaction: DataFusion streams the rows (already coerced to the table schema)
//! into a storage load; the load publishes atomically at the end, or leaves nothing behind.

use crate::df_error::to_df;
use crate::session::SessionInfo;
use async_trait::async_trait;
use basalt_catalog::{Catalog, TableMeta};
use basalt_common::BasaltError;
use basalt_common::SqlType;
use basalt_storage::{no_partition_error, LoadWriter, StorageEngine};
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, Decimal256Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use datafusion::arrow::compute::cast as arrow_cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;
use std::sync::Arc;

#[derive(Debug)]
pub struct BasaltSink {
    table: Arc<TableMeta>,
    /// What DataFusion is told: every column nullable, so NOT NULL is checked here (error 1048).
    input_schema: SchemaRef,
    /// The table's schema, with its NOT NULL columns, as storage writes it.
    table_schema: SchemaRef,
    storage: Arc<StorageEngine>,
    session: Arc<SessionInfo>,
}

impl BasaltSink {
    pub fn new(
        table: Arc<TableMeta>,
        input_schema: SchemaRef,
        storage: Arc<StorageEngine>,
        session: Arc<SessionInfo>,
    ) -> BasaltSink {
        BasaltSink {
            table_schema: table.arrow_schema(),
            input_schema,
            table,
            storage,
            session,
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

/// Enforces what the column types declare: NOT NULL (error 1048), CHAR/VARCHAR length in bytes
/// (error 1406), and DATETIME fractional digits (extra digits are truncated).
fn conform(table: &TableMeta, batch: &RecordBatch) -> Result<Vec<ArrayRef>, BasaltError> {
    let mut columns = batch.columns().to_vec();
    for (i, c) in table.columns.iter().enumerate() {
        // Scans give strings as Utf8View; storage writes Utf8.
        let storage_type = c.ty.arrow_type();
        if columns[i].data_type() != &storage_type {
            columns[i] = arrow_cast(&columns[i], &storage_type)
                .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
        }
        let col = &columns[i];
        if !c.nullable && col.null_count() > 0 {
            return Err(BasaltError::ColumnCannotBeNull(c.name.clone()));
        }
        match c.ty {
            SqlType::Char(max) | SqlType::Varchar(max) => {
                if let Some(strings) = col.as_any().downcast_ref::<StringArray>() {
                    if strings.iter().flatten().any(|s| s.len() > max as usize) {
                        return Err(BasaltError::DataTooLong {
                            column: c.name.clone(),
                            max,
                        });
                    }
                }
            }
            SqlType::LargeInt => {
                if let Some(values) = col.as_any().downcast_ref::<Decimal256Array>() {
                    if values.iter().flatten().any(|v| v.to_i128().is_none()) {
                        return Err(BasaltError::OutOfRange(c.name.clone()));
                    }
                }
            }
            SqlType::DateTime { scale } if scale < 6 => {
                columns[i] = truncate_datetime(col, scale);
            }
            _ => {}
        }
    }
    Ok(columns)
}

/// DATETIME(scale) keeps `scale` fractional digits: extra digits are truncated.
pub(crate) fn truncate_datetime(col: &ArrayRef, scale: u8) -> ArrayRef {
    match col.as_any().downcast_ref::<TimestampMicrosecondArray>() {
        Some(ts) if scale < 6 => {
            let unit = 10i64.pow(6 - scale as u32);
            let truncated: TimestampMicrosecondArray = ts.unary(|v| v - v.rem_euclid(unit));
            Arc::new(truncated.with_timezone_opt(ts.timezone()))
        }
        _ => col.clone(),
    }
}

/// Writes one batch on a blocking thread (routing, sorting and segment writes are CPU and disk
/// work) and hands the writer back. With `delete`, every row deletes its key (Unique tables).
async fn write_batch(
    mut writer: LoadWriter,
    batch: RecordBatch,
    delete: bool,
) -> Result<LoadWriter, BasaltError> {
    tokio::task::spawn_blocking(move || {
        let flags = delete.then(|| BooleanArray::from(vec![true; batch.num_rows()]));
        let unrouted = writer.write_with_deletes(&batch, flags.as_ref())?;
        if let Some((_, value)) = unrouted.first() {
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
        _context: &Arc<TaskContext>,
    ) -> Result<u64> {
        let mut writer = self.storage.begin_load(self.table.clone());
        while let Some(batch) = data.next().await {
            let (batch, first_id) =
                fill_auto_increment(self.storage.catalog(), &self.table, batch?).map_err(to_df)?;
            if let Some(first) = first_id {
                let _ = self.session.generated_id.compare_exchange(
                    0,
                    first,
                    std::sync::atomic::Ordering::Relaxed,
                    std::sync::atomic::Ordering::Relaxed,
                );
            }
            let columns = conform(&self.table, &batch).map_err(to_df)?;
            let batch = RecordBatch::try_new(self.table_schema.clone(), columns)
                .map_err(|e| to_df(BasaltError::InvalidData(e.to_string())))?;
            writer = write_batch(writer, batch, false).await.map_err(to_df)?;
        }
        let summary = tokio::task::spawn_blocking(move || writer.commit())
            .await
            .map_err(|e| to_df(BasaltError::Internal(format!("load task failed: {e}"))))?
            .map_err(to_df)?;
        Ok(summary.rows_loaded)
    }
}

/// Deletes the keys of the given rows (whole rows of a Unique-key table, as a scan returns
/// them) in one load that publishes atomically: all keys are gone, or none. Returns the number
/// of rows deleted.
pub(crate) async fn delete_rows(
    storage: &Arc<StorageEngine>,
    table: Arc<TableMeta>,
    mut rows: impl futures::Stream<Item = Result<RecordBatch, BasaltError>> + Unpin,
) -> Result<u64, BasaltError> {
    let schema = table.arrow_schema();
    let mut writer = storage.begin_load(table.clone());
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
        writer = write_batch(writer, batch, true).await?;
    }
    let summary = tokio::task::spawn_blocking(move || writer.commit())
        .await
        .map_err(|e| BasaltError::Internal(format!("load task failed: {e}")))??;
    Ok(summary.rows_loaded)
}

/// Fills the AUTO_INCREMENT column's NULL and 0 values with new ids (MySQL semantics) and
/// moves the counter past explicitly given ids. Returns the first new id, if any was made.
pub(crate) fn fill_auto_increment(
    catalog: &Catalog,
    table: &TableMeta,
    batch: RecordBatch,
) -> Result<(RecordBatch, Option<u64>), BasaltError> {
    let Some(col) = table.columns.iter().position(|c| c.auto_increment) else {
        return Ok((batch, None));
    };
    let original = batch.column(col);
    let as_i64 = arrow_cast(original, &DataType::Int64)
        .map_err(|e| BasaltError::InvalidData(e.to_string()))?;
    let values = as_i64
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| BasaltError::Internal("AUTO_INCREMENT column is not integer".into()))?;
    let missing = values
        .iter()
        .filter(|v| matches!(v, None | Some(0)))
        .count() as u64;
    let explicit_max = values.iter().flatten().filter(|v| *v > 0).max();
    let at_least = explicit_max.map_or(0, |m| m as u64 + 1);
    if missing == 0 && at_least == 0 {
        return Ok((batch, None));
    }
    let first = catalog.reserve_auto_increment(table.id, missing, at_least)?;
    if missing == 0 {
        return Ok((batch, None));
    }
    let mut next = first;
    let filled: Int64Array = values
        .iter()
        .map(|v| match v {
            None | Some(0) => {
                let id = next as i64;
                next += 1;
                Some(id)
            }
            some => some,
        })
        .collect();
    let target = original.data_type().clone();
    let options = datafusion::arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    let filled = datafusion::arrow::compute::cast_with_options(&filled, &target, &options)
        .map_err(|_| BasaltError::OutOfRange(table.columns[col].name.clone()))?;
    let mut columns = batch.columns().to_vec();
    columns[col] = filled;
    let batch = RecordBatch::try_new(batch.schema(), columns)
        .map_err(|e| BasaltError::Internal(e.to_string()))?;
    Ok((batch, Some(first)))
}
