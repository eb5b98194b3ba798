//! Segment files: one sorted batch stream written as a Parquet file with page-level statistics
//! (zone maps per page and row group) and optional bloom filters, and read back whole when a
//! tablet's rowsets must be merged. JSON columns are written as text or binary documents
//! ([`crate::json_columns`]) and always read back as text.

use crate::files::publish_file;
use crate::json_columns::{self, JsonForm};
use crate::storage_err;
use arrow::array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::error::ArrowError;
use basalt_catalog::{SegmentMeta, TableMeta};
use basalt_common::Result;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowFilter,
};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// Rows per Parquet row group: the unit of zone-map pruning and scan parallelism.
const ROW_GROUP_ROWS: usize = 128 * 1024;

/// The columns a table asks bloom filters for (its `bloom_filter_columns` property).
pub fn bloom_filter_columns(table: &TableMeta) -> Vec<String> {
    table
        .properties
        .get("bloom_filter_columns")
        .map(|v| {
            v.split(',')
                .map(|c| c.trim().to_lowercase())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `batches` (already sorted) to `data_dir/rel_path` durably, with a row store beside it
/// when `row_store` is set; JSON columns as text.
pub fn write_segment(
    data_dir: &Path,
    rel_path: &Path,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    bloom_filter_columns: &[String],
    row_store: bool,
) -> Result<SegmentMeta> {
    write_segment_as(
        data_dir,
        rel_path,
        schema,
        batches,
        bloom_filter_columns,
        row_store,
        JsonForm::Text,
    )
}

/// [`write_segment`] with JSON columns stored in `json` form (see [`crate::json_columns`]).
pub fn write_segment_as(
    data_dir: &Path,
    rel_path: &Path,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    bloom_filter_columns: &[String],
    row_store: bool,
    json: JsonForm,
) -> Result<SegmentMeta> {
    let (file_schema, converted) = json_columns::file_schema(schema, json);
    let dest = data_dir.join(rel_path);
    let tmp = dest.with_extension("parquet.tmp");
    let mut props = WriterProperties::builder()
        .set_compression(Compression::LZ4_RAW)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS));
    for col in bloom_filter_columns {
        props = props.set_column_bloom_filter_enabled(col.as_str().into(), true);
    }
    // Binary JSON bytes do not order like documents: no zone maps on them.
    for f in file_schema.fields() {
        if json_columns::is_binary_json(f) {
            props = props
                .set_column_statistics_enabled(f.name().as_str().into(), EnabledStatistics::None);
        }
    }
    let file = crate::files::create_file_with_dirs(&tmp)?;
    let mut writer = ArrowWriter::try_new(file, file_schema.clone(), Some(props.build()))
        .map_err(storage_err)?;
    let mut num_rows = 0u64;
    for b in batches {
        num_rows += b.num_rows() as u64;
        if converted {
            writer
                .write(&json_columns::to_file_batch(b, &file_schema)?)
                .map_err(storage_err)?;
        } else {
            writer.write(b).map_err(storage_err)?;
        }
    }
    let footer = writer.close().map_err(storage_err)?;
    // The row store is durable before the segment it belongs to is.
    if row_store {
        crate::row_store::write_row_store(&crate::row_store::row_store_path(&dest), batches)?;
    }
    publish_file(&tmp, &dest)?;
    let size_bytes = std::fs::metadata(&dest)?.len();
    Ok(SegmentMeta {
        path: rel_path.to_string_lossy().into_owned(),
        num_rows,
        size_bytes,
        column_stats: crate::segment_stats::column_stats(&footer, &file_schema),
    })
}

/// Reads the columns `columns` (indexes into the file schema) of a whole segment, JSON columns
/// as text whatever form the file holds them in.
pub fn read_segment(path: &Path, columns: &[usize]) -> Result<Vec<RecordBatch>> {
    let file = File::open(path)?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(storage_err)?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), columns.iter().copied());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()
        .map_err(storage_err)?;
    reader
        .map(|b| json_columns::to_text_batch(b.map_err(storage_err)?))
        .collect()
}

/// The rows of a segment that `keep` selects, columns `columns` (file column numbers,
/// increasing). `keep` must look at key columns only (the first `num_key_columns` of the file):
/// it is evaluated first on those, and the other columns are decoded only for the selected rows,
/// skipping whole pages through the page index. This is what makes a key filter below a
/// merge-on-read cheap when wide values (BITMAP, HLL, long strings) sit beside the keys.
pub fn read_segment_where(
    path: &Path,
    columns: &[usize],
    num_key_columns: usize,
    schema: &SchemaRef,
    keep: Arc<crate::engine::KeyFilter>,
) -> Result<Vec<RecordBatch>> {
    let key_positions: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i] < num_key_columns)
        .collect();
    let file = File::open(path)?;
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(file, options)
        .map_err(storage_err)?;
    let parquet_schema = builder.parquet_schema();
    let mask = ProjectionMask::roots(parquet_schema, columns.iter().copied());
    let key_mask = ProjectionMask::roots(parquet_schema, key_positions.iter().map(|&i| columns[i]));
    // The filter was bound to `schema`; it sees the key columns in their places and nulls
    // elsewhere (under all-nullable fields, so the batch is valid).
    let probe_schema = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect::<Vec<_>>(),
    ));
    let predicate = ArrowPredicateFn::new(key_mask, move |keys: RecordBatch| {
        let rows = keys.num_rows();
        let mut next_key = 0;
        let probe: Vec<ArrayRef> = probe_schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if key_positions.contains(&i) {
                    next_key += 1;
                    keys.column(next_key - 1).clone()
                } else {
                    new_null_array(f.data_type(), rows)
                }
            })
            .collect();
        let batch = RecordBatch::try_new_with_options(
            probe_schema.clone(),
            probe,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?;
        keep(&batch).map_err(|e| ArrowError::ExternalError(Box::new(e)))
    });
    let reader = builder
        .with_projection(mask)
        .with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
        .with_batch_size(64 * 1024)
        .build()
        .map_err(storage_err)?;
    reader
        .map(|b| json_columns::to_text_batch(b.map_err(storage_err)?))
        .collect()
}
