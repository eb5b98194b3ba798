//! A table's statistics for planning, from metadata it already keeps: the row count from the
//! catalog's segment records and each column's min/max/null count from the segments' Parquet
//! footers (read once per segment file, then served from a process-wide cache: segment files
//! never change once written). The join order rule reads them through
//! `TableProvider::statistics` before any scan is planned.
//!
//! Values are inexact: rows in delete bitmaps still count, string bounds may be truncated.
//! A segment whose footer cannot be read here (a cluster frontend holds no segment files) is
//! described by the statistics the catalog recorded for it when it was written; a segment
//! with neither leaves its columns' values unknown; the row count stays.

use crate::provider::BasaltTable;
use basalt_catalog::{SegmentMeta, TableMeta};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};
use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::parquet::file::metadata::ParquetMetaDataReader;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// Segments whose statistics are kept; past it the cache starts over.
const CACHED_SEGMENTS: usize = 16_384;

/// Per segment file (by data directory and path): its statistics over the storage schema of
/// the table when first read, with that schema's column names.
type SegmentKey = (PathBuf, String);
type Cache = Mutex<HashMap<SegmentKey, Arc<SegmentStatistics>>>;

struct SegmentStatistics {
    columns: Vec<String>,
    statistics: Statistics,
}

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// A table's merged statistics by data directory, table and the rowsets they cover (any
/// load, compaction or schema change publishes other rowsets or columns).
type TableKey = (PathBuf, u64, Vec<u64>, Vec<String>);
type TableCache = Mutex<HashMap<TableKey, Statistics>>;

/// Tables whose merged statistics are kept; past it the cache starts over.
const CACHED_TABLES: usize = 1024;

fn table_cache() -> &'static TableCache {
    static CACHE: OnceLock<TableCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The table's statistics in its declared column order (as `BasaltTable::schema`), merged
/// once per set of visible rowsets.
pub(crate) fn table_statistics(table: &BasaltTable) -> Statistics {
    let rowsets: Vec<u64> = table
        .meta
        .partitions
        .iter()
        .flat_map(|p| &p.tablets)
        .flat_map(|t| &t.rowsets)
        .map(|r| r.id)
        .collect();
    let columns: Vec<String> = table
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let key = (
        table.storage.data_dir().to_path_buf(),
        table.meta.id,
        rowsets,
        columns,
    );
    if let Some(s) = table_cache().lock().get(&key) {
        return s.clone();
    }
    let statistics = merged_statistics(table);
    let mut cache = table_cache().lock();
    if cache.len() >= CACHED_TABLES {
        cache.clear();
    }
    cache.insert(key, statistics.clone());
    statistics
}

fn merged_statistics(table: &BasaltTable) -> Statistics {
    let storage = &table.storage_schema;
    let names: Vec<String> = storage.fields().iter().map(|f| f.name().clone()).collect();
    let mut rows: usize = 0;
    let mut per_segment: Vec<Statistics> = Vec::new();
    let mut complete = true;
    for partition in &table.meta.partitions {
        for tablet in &partition.tablets {
            for rowset in &tablet.rowsets {
                for segment in &rowset.segments {
                    rows = rows.saturating_add(segment.num_rows as usize);
                    match segment_statistics(table, &segment.path, &names)
                        .or_else(|| recorded_statistics(segment, storage))
                    {
                        Some(s) => per_segment.push(s),
                        None => complete = false,
                    }
                }
            }
        }
    }
    let mut columns = Statistics::unknown_column(storage);
    if complete && !per_segment.is_empty() {
        if let Ok(merged) = Statistics::try_merge_iter(per_segment.iter(), storage) {
            columns = merged
                .column_statistics
                .into_iter()
                .map(ColumnStatistics::to_inexact)
                .collect();
        }
    }
    let declared: Vec<ColumnStatistics> = if table.meta.has_declared_order() {
        table
            .meta
            .declared_indexes()
            .into_iter()
            .map(|i| columns.get(i).cloned().unwrap_or_default())
            .collect()
    } else {
        columns
    };
    Statistics {
        num_rows: Precision::Inexact(rows),
        total_byte_size: Precision::Absent,
        column_statistics: declared,
    }
}

/// One segment's statistics over the storage schema `names`, from the cache or its footer.
fn segment_statistics(table: &BasaltTable, path: &str, names: &[String]) -> Option<Statistics> {
    let key = (table.storage.data_dir().to_path_buf(), path.to_string());
    let cached = cache().lock().get(&key).cloned();
    let entry = match cached {
        Some(entry) if entry.columns == names => entry,
        _ => {
            let file = table.storage.segments().open_segment(path).ok()?;
            let footer = ParquetMetaDataReader::new().parse_and_finish(&file).ok()?;
            let statistics =
                DFParquetMetadata::statistics_from_parquet_metadata(&footer, &table.storage_schema)
                    .ok()?;
            let entry = Arc::new(SegmentStatistics {
                columns: names.to_vec(),
                statistics,
            });
            let mut cache = cache().lock();
            if cache.len() >= CACHED_SEGMENTS {
                cache.clear();
            }
            cache.insert(key, entry.clone());
            entry
        }
    };
    Some(entry.statistics.clone())
}

/// A segment's statistics over the storage schema `storage` from what the catalog recorded
/// when it was written (see `basalt_storage`'s segment statistics); `None` for a segment
/// recorded before those were kept. Columns without a record are unknown.
fn recorded_statistics(segment: &SegmentMeta, storage: &Schema) -> Option<Statistics> {
    if segment.column_stats.is_empty() {
        return None;
    }
    let bound = |text: &Option<String>, field: &Field| -> Precision<ScalarValue> {
        text.as_ref()
            .and_then(|t| ScalarValue::try_from_string(t.clone(), field.data_type()).ok())
            .map_or(Precision::Absent, Precision::Inexact)
    };
    let column_statistics = storage
        .fields()
        .iter()
        .map(|field| {
            let Some(recorded) = segment
                .column_stats
                .iter()
                .find(|c| c.column == *field.name())
            else {
                return ColumnStatistics::new_unknown();
            };
            ColumnStatistics {
                null_count: recorded
                    .null_count
                    .map_or(Precision::Absent, |n| Precision::Inexact(n as usize)),
                min_value: bound(&recorded.min, field),
                max_value: bound(&recorded.max, field),
                ..ColumnStatistics::new_unknown()
            }
        })
        .collect();
    Some(Statistics {
        num_rows: Precision::Inexact(segment.num_rows as usize),
        total_byte_size: Precision::Absent,
        column_statistics,
    })
}

/// `table`'s statistics over its storage schema `storage` from the catalog's records alone (no
/// segment file is opened): what a cluster's frontend knows of the tablets it plans to scan.
/// A column is unknown unless every segment recorded it.
pub(crate) fn recorded_table_statistics(table: &TableMeta, storage: &Schema) -> Statistics {
    let segments: Vec<&SegmentMeta> = table
        .partitions
        .iter()
        .flat_map(|p| &p.tablets)
        .flat_map(|t| &t.rowsets)
        .flat_map(|r| &r.segments)
        .collect();
    let rows: usize = segments.iter().map(|s| s.num_rows as usize).sum();
    let per_segment: Option<Vec<Statistics>> = segments
        .iter()
        .map(|s| recorded_statistics(s, storage))
        .collect();
    let columns = per_segment
        .filter(|s| !s.is_empty())
        .and_then(|s| Statistics::try_merge_iter(s.iter(), storage).ok())
        .map(|m| {
            m.column_statistics
                .into_iter()
                .map(ColumnStatistics::to_inexact)
                .collect()
        })
        .unwrap_or_else(|| Statistics::unknown_column(storage));
    Statistics {
        num_rows: Precision::Inexact(rows),
        total_byte_size: Precision::Absent,
        column_statistics: columns,
    }
}
