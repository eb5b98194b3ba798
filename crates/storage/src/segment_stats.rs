//! A freshly written segment's column statistics for the catalog: min, max and null count of
//! each orderable scalar column (numbers, decimals, dates, timestamps), from the row group
//! statistics of the footer the writer just produced. The catalog keeps them with the segment,
//! so planning on a node without the segment files (a cluster's frontend) estimates join
//! sizes from the same numbers as the node that wrote them.

use arrow::array::{Array, ArrayRef};
use arrow::compute::{sort_to_indices, SortOptions};
use arrow::datatypes::{DataType, Schema};
use arrow::util::display::array_value_to_string;
use basalt_catalog::SegmentColumnStats;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;

/// Statistics of the columns of `schema` (the file's Arrow schema) that planning can use.
/// A column whose statistics cannot be read is left out (unknown), never guessed.
pub fn column_stats(metadata: &ParquetMetaData, schema: &Schema) -> Vec<SegmentColumnStats> {
    let row_groups = metadata.row_groups();
    if row_groups.is_empty() {
        return Vec::new();
    }
    let parquet_schema = metadata.file_metadata().schema_descr();
    schema
        .fields()
        .iter()
        .filter(|f| has_usable_order(f.data_type()))
        .filter_map(|field| {
            let converter =
                StatisticsConverter::try_new(field.name(), schema, parquet_schema).ok()?;
            let mins = converter.row_group_mins(row_groups.iter()).ok()?;
            let maxes = converter.row_group_maxes(row_groups.iter()).ok()?;
            let nulls = converter.row_group_null_counts(row_groups.iter()).ok()?;
            // A row group without a bound makes the segment's bound unknown.
            let min = (mins.null_count() == 0)
                .then(|| extreme(&mins, false))
                .flatten();
            let max = (maxes.null_count() == 0)
                .then(|| extreme(&maxes, true))
                .flatten();
            let null_count = (nulls.null_count() == 0).then(|| nulls.values().iter().sum());
            Some(SegmentColumnStats {
                column: field.name().clone(),
                min,
                max,
                null_count,
            })
        })
        .collect()
}

/// Types whose text form casts back to the same value and whose order the statistics keep
/// (strings are left out: their footer bounds may be truncated).
fn has_usable_order(t: &DataType) -> bool {
    t.is_integer()
        || t.is_floating()
        || matches!(
            t,
            DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..)
                | DataType::Date32
                | DataType::Date64
                | DataType::Timestamp(..)
        )
}

/// The smallest (or largest) value of `values`, in text form.
fn extreme(values: &ArrayRef, largest: bool) -> Option<String> {
    let options = SortOptions {
        descending: largest,
        nulls_first: false,
    };
    let first = sort_to_indices(values.as_ref(), Some(options), Some(1)).ok()?;
    if first.is_empty() {
        return None;
    }
    let v = array_value_to_string(values.as_ref(), first.value(0) as usize).ok()?;
    // NaN bounds order nothing.
    (!v.eq_ignore_ascii_case("nan")).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, Float64Array, Int64Array, StringArray};
    use arrow::datatypes::Field;
    use arrow::record_batch::RecordBatch;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use std::sync::Arc;

    fn write(batches: &[RecordBatch], rows_per_group: usize) -> ParquetMetaData {
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(rows_per_group))
            .build();
        let mut w =
            ArrowWriter::try_new(Vec::new(), batches[0].schema(), Some(props)).expect("writer");
        for b in batches {
            w.write(b).expect("write");
        }
        w.close().expect("close")
    }

    #[test]
    fn bounds_span_every_row_group_and_strings_are_left_out() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("d", DataType::Date32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![5, -3, 9, 7])),
                Arc::new(Date32Array::from(vec![
                    Some(19000),
                    None,
                    Some(18000),
                    Some(20000),
                ])),
                Arc::new(Float64Array::from(vec![Some(1.5), Some(-2.25), None, None])),
                Arc::new(StringArray::from(vec!["b", "a", "c", "d"])),
            ],
        )
        .expect("batch");
        let stats = column_stats(&write(&[batch], 2), &schema);
        let by = |c: &str| stats.iter().find(|s| s.column == c).cloned();
        let k = by("k").expect("k");
        assert_eq!(
            (k.min.as_deref(), k.max.as_deref()),
            (Some("-3"), Some("9"))
        );
        assert_eq!(k.null_count, Some(0));
        let d = by("d").expect("d");
        assert_eq!(
            (d.min.as_deref(), d.max.as_deref()),
            (Some("2019-04-14"), Some("2024-10-04"))
        );
        assert_eq!(d.null_count, Some(1));
        let f = by("f").expect("f");
        assert_eq!((f.min.as_deref(), f.max.as_deref()), (None, None));
        assert_eq!(f.null_count, Some(2));
        assert!(by("s").is_none());
    }
}
