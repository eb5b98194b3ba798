//! The key models' merge rules, as one vectorized kernel used when a load writes a segment, when
//! a read combines a tablet's rowsets, and (later) by compaction: sort by the key columns keeping
//! arrival order among equal keys, then collapse each run of equal keys — the last row wins for
//! Unique keys, each value column's function for Aggregate keys. Duplicate keys only sort.
//!
//! A SUM that leaves its column's type is always an error (MySQL's 1690), never a wrapped value:
//! when a load's own rows overflow, the load fails; when published loads add up past the type,
//! reads and compaction of that column fail until the column is widened (a schema change converts
//! each stored row before merging, see `rewrite.rs`).

use arrow::array::{
    make_comparator, Array, ArrayRef, BinaryArray, BinaryBuilder, PrimitiveArray, RecordBatch,
    UInt32Array, UInt64Array,
};
use arrow::compute::{
    lexsort_to_indices, partition, take, take_record_batch, SortColumn, SortOptions,
};
use arrow::datatypes::*;
use basalt_catalog::{AggKind, KeysModel, TableMeta};
use basalt_common::{bitmap_value, hll_value, BasaltError, Result, SqlType};
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

/// How to merge a batch whose first `num_keys` columns are the key.
#[derive(Debug, Clone)]
pub struct MergeSpec {
    pub model: KeysModel,
    pub num_keys: usize,
    /// For Aggregate keys: the function of each value column, in batch order after the keys.
    pub value_aggs: Vec<AggKind>,
    /// The name of each value column, in batch order after the keys (for error messages).
    pub value_names: Vec<String>,
    /// The declared type of each value column, in batch order after the keys (when known): a
    /// SUM must fit it (LARGEINT and DECIMAL(39, 0) are both Decimal256(39, 0) in Arrow, but
    /// hold different ranges).
    pub value_types: Vec<SqlType>,
}

impl MergeSpec {
    /// The spec for a batch holding all of `table`'s columns in table order.
    pub fn for_table(table: &TableMeta) -> MergeSpec {
        Self::for_columns(table, &(0..table.columns.len()).collect::<Vec<_>>())
    }

    /// The spec for a batch holding `columns` (table column indexes; keys first, in order).
    pub fn for_columns(table: &TableMeta, columns: &[usize]) -> MergeSpec {
        MergeSpec {
            model: table.keys_model,
            num_keys: table.num_key_columns,
            value_aggs: columns
                .iter()
                .skip(table.num_key_columns)
                .map(|i| table.columns[*i].agg.unwrap_or(AggKind::Replace))
                .collect(),
            value_names: columns
                .iter()
                .skip(table.num_key_columns)
                .map(|i| table.columns[*i].name.clone())
                .collect(),
            value_types: columns
                .iter()
                .skip(table.num_key_columns)
                .map(|i| table.columns[*i].ty.clone())
                .collect(),
        }
    }
}

fn err(e: impl std::fmt::Display) -> BasaltError {
    BasaltError::Storage(e.to_string())
}

/// Sorts `batch` by its key columns and applies the model's merge rule. Rows that arrive later in
/// `batch` are newer.
pub fn sort_and_merge(batch: &RecordBatch, spec: &MergeSpec) -> Result<RecordBatch> {
    let n = batch.num_rows();
    // A Duplicate table without sort key keeps its rows in load order.
    if n == 0 || (spec.model == KeysModel::Duplicate && spec.num_keys == 0) {
        return Ok(batch.clone());
    }
    let mut sort_cols: Vec<SortColumn> = (0..spec.num_keys)
        .map(|i| SortColumn {
            values: batch.column(i).clone(),
            options: Some(SortOptions {
                descending: false,
                nulls_first: true,
            }),
        })
        .collect();
    if spec.model != KeysModel::Duplicate {
        // Arrival order breaks ties so "last" means "newest".
        sort_cols.push(SortColumn {
            values: Arc::new(UInt64Array::from_iter_values(0..n as u64)),
            options: None,
        });
    }
    let indices = lexsort_to_indices(&sort_cols, None).map_err(err)?;
    let sorted = take_record_batch(batch, &indices).map_err(err)?;
    if spec.model == KeysModel::Duplicate {
        return Ok(sorted);
    }
    let keys: Vec<ArrayRef> = sorted.columns()[..spec.num_keys].to_vec();
    let ranges = partition(&keys).map_err(err)?.ranges();
    if ranges.len() == n {
        return Ok(sorted);
    }
    let firsts = UInt32Array::from_iter_values(ranges.iter().map(|r| r.start as u32));
    let lasts = UInt32Array::from_iter_values(ranges.iter().map(|r| (r.end - 1) as u32));
    let mut out: Vec<ArrayRef> = Vec::with_capacity(sorted.num_columns());
    for (i, col) in sorted.columns().iter().enumerate() {
        let merged = if i < spec.num_keys {
            take(col, &firsts, None).map_err(err)?
        } else if spec.model == KeysModel::Unique {
            take(col, &lasts, None).map_err(err)?
        } else {
            let agg = spec
                .value_aggs
                .get(i - spec.num_keys)
                .copied()
                .unwrap_or(AggKind::Replace);
            let value = i - spec.num_keys;
            let column = ValueColumn {
                name: spec.value_names.get(value).map(String::as_str),
                ty: spec.value_types.get(value),
            };
            aggregate_column(col, &ranges, agg, &column)?
        };
        out.push(merged);
    }
    RecordBatch::try_new(sorted.schema(), out).map_err(err)
}

/// What the merge knows of a value column beyond its Arrow array.
struct ValueColumn<'a> {
    name: Option<&'a str>,
    ty: Option<&'a SqlType>,
}

impl ValueColumn<'_> {
    /// MySQL's out-of-range error for a SUM of this column.
    fn sum_overflow(&self, col: &ArrayRef) -> BasaltError {
        let ty = self
            .ty
            // MySQL names the type without its parameters (`DECIMAL value is out of range`).
            .map(|t| t.to_string().to_uppercase())
            .map(|t| t.split('(').next().unwrap_or_default().trim().to_string())
            .unwrap_or_else(|| col.data_type().to_string());
        let name = self.name.unwrap_or("?");
        BasaltError::NumericOverflow(format!(
            "{ty} value is out of range in 'SUM(`{name}`)': the rows loaded for a key add up past \
             the column's type; widen it (ALTER TABLE .. MODIFY COLUMN `{name}` <wider type> SUM)"
        ))
    }
}

fn aggregate_column(
    col: &ArrayRef,
    ranges: &[Range<usize>],
    agg: AggKind,
    column: &ValueColumn<'_>,
) -> Result<ArrayRef> {
    let pick = |choose: &dyn Fn(Range<usize>) -> usize| -> Result<ArrayRef> {
        let idx = UInt32Array::from_iter_values(ranges.iter().map(|r| choose(r.clone()) as u32));
        take(col, &idx, None).map_err(err)
    };
    match agg {
        AggKind::Replace => pick(&|r| r.end - 1),
        AggKind::ReplaceIfNotNull => pick(&|r| {
            r.clone()
                .rev()
                .find(|i| col.is_valid(*i))
                .unwrap_or(r.end - 1)
        }),
        AggKind::Min | AggKind::Max => {
            let cmp =
                make_comparator(col.as_ref(), col.as_ref(), SortOptions::default()).map_err(err)?;
            let want = if agg == AggKind::Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            pick(&|r| {
                let mut best: Option<usize> = None;
                for i in r.clone() {
                    if col.is_null(i) {
                        continue;
                    }
                    best = match best {
                        Some(b) if cmp(i, b) != want => Some(b),
                        _ => Some(i),
                    };
                }
                best.unwrap_or(r.start)
            })
        }
        AggKind::Sum => sum_ranges(col, ranges, column),
        AggKind::BitmapUnion => union_ranges(col, ranges, &|v| {
            bitmap_value::union_serialized(v.iter().copied())
        }),
        AggKind::HllUnion => union_ranges(col, ranges, &|v| {
            hll_value::union_serialized(v.iter().copied())
        }),
        AggKind::QuantileUnion => union_ranges(col, ranges, &|v| {
            basalt_common::quantile_value::union_serialized(v.iter().copied())
        }),
    }
}

/// Merges serialized sketches into one.
type SketchUnion = dyn Fn(&[&[u8]]) -> std::result::Result<Vec<u8>, String>;

/// BITMAP_UNION / HLL_UNION / QUANTILE_UNION: each run's non-NULL serialized sketches merged into one (NULL when
/// the run has none); a run of one row is taken as it is.
fn union_ranges(col: &ArrayRef, ranges: &[Range<usize>], union: &SketchUnion) -> Result<ArrayRef> {
    let a = col
        .as_any()
        .downcast_ref::<BinaryArray>()
        .ok_or_else(|| err(format!("sketch union over {}", col.data_type())))?;
    let mut out = BinaryBuilder::with_capacity(ranges.len(), a.value_data().len());
    for r in ranges {
        let values: Vec<&[u8]> = r
            .clone()
            .filter(|i| a.is_valid(*i))
            .map(|i| a.value(i))
            .collect();
        match values.as_slice() {
            [] => out.append_null(),
            [one] => out.append_value(one),
            _ => out.append_value(union(&values).map_err(BasaltError::InvalidData)?),
        }
    }
    Ok(Arc::new(out.finish()))
}

fn sum_ranges(
    col: &ArrayRef,
    ranges: &[Range<usize>],
    column: &ValueColumn<'_>,
) -> Result<ArrayRef> {
    macro_rules! sum {
        ($t:ty) => {{
            let a = col
                .as_any()
                .downcast_ref::<PrimitiveArray<$t>>()
                .ok_or_else(|| err("sum over mismatched array"))?;
            let mut out: Vec<Option<<$t as ArrowPrimitiveType>::Native>> =
                Vec::with_capacity(ranges.len());
            for r in ranges {
                let mut acc: Option<<$t as ArrowPrimitiveType>::Native> = None;
                for i in r.clone() {
                    if a.is_valid(i) {
                        let v = a.value(i);
                        acc = Some(match acc {
                            None => v,
                            Some(s) => arrow::datatypes::ArrowNativeTypeOp::add_checked(s, v)
                                .map_err(|_| column.sum_overflow(col))?,
                        });
                    }
                }
                out.push(acc);
            }
            let out = out
                .into_iter()
                .collect::<PrimitiveArray<$t>>()
                .with_data_type(col.data_type().clone());
            let out = Arc::new(out) as ArrayRef;
            if !sum_fits(&out, column.ty) {
                return Err(column.sum_overflow(col));
            }
            out
        }};
    }
    Ok(match col.data_type() {
        DataType::Int8 => sum!(Int8Type),
        DataType::Int16 => sum!(Int16Type),
        DataType::Int32 => sum!(Int32Type),
        DataType::Int64 => sum!(Int64Type),
        DataType::UInt8 => sum!(UInt8Type),
        DataType::UInt16 => sum!(UInt16Type),
        DataType::UInt32 => sum!(UInt32Type),
        DataType::UInt64 => sum!(UInt64Type),
        DataType::Float32 => sum!(Float32Type),
        DataType::Float64 => sum!(Float64Type),
        DataType::Decimal128(_, _) => sum!(Decimal128Type),
        DataType::Decimal256(_, _) => sum!(Decimal256Type),
        other => {
            return Err(BasaltError::Storage(format!(
                "SUM is not defined for {other}"
            )))
        }
    })
}

/// True if every summed value fits the column: DECIMAL(p, s) within its precision; LARGEINT
/// (Decimal256(39, 0), like DECIMAL(39, 0), told apart by its declared type) within the 128-bit
/// range.
fn sum_fits(out: &ArrayRef, ty: Option<&SqlType>) -> bool {
    match out.data_type() {
        DataType::Decimal128(p, _) => out
            .as_any()
            .downcast_ref::<PrimitiveArray<Decimal128Type>>()
            .is_some_and(|d| d.validate_decimal_precision(*p).is_ok()),
        DataType::Decimal256(p, _) => out
            .as_any()
            .downcast_ref::<PrimitiveArray<Decimal256Type>>()
            .is_some_and(|d| match ty {
                Some(SqlType::LargeInt) => d.iter().flatten().all(|v| v.to_i128().is_some()),
                _ => d.validate_decimal_precision(*p).is_ok(),
            }),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, Int32Array, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    fn batch(keys: Vec<i32>, a: Vec<Option<i64>>, b: Vec<Option<&str>>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(keys)),
                Arc::new(Int64Array::from(a)),
                Arc::new(StringArray::from(b)),
            ],
        )
        .unwrap()
    }

    fn spec(model: KeysModel, aggs: Vec<AggKind>) -> MergeSpec {
        MergeSpec {
            model,
            num_keys: 1,
            value_aggs: aggs,
            value_names: vec![],
            value_types: vec![],
        }
    }

    /// LARGEINT and DECIMAL(39, 0) share an Arrow type; a SUM is held to the declared one.
    #[test]
    fn wide_decimal_sums_fit_their_declared_type() {
        use arrow::array::Decimal256Array;
        let big = i256::from_i128(i128::MAX);
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("v", DataType::Decimal256(39, 0), true),
        ]));
        let b = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 1])),
                Arc::new(
                    Decimal256Array::from(vec![big, big])
                        .with_precision_and_scale(39, 0)
                        .unwrap(),
                ),
            ],
        )
        .unwrap();
        let mut s = spec(KeysModel::Aggregate, vec![AggKind::Sum]);
        s.value_types = vec![SqlType::LargeInt];
        assert!(sort_and_merge(&b, &s).is_err());
        s.value_types = vec![SqlType::Decimal {
            precision: 39,
            scale: 0,
        }];
        let m = sort_and_merge(&b, &s).unwrap();
        let v = m.column(1).as_primitive::<Decimal256Type>().value(0);
        assert_eq!(v, big.wrapping_add(big));
        // Past 39 digits is past DECIMAL(39, 0).
        let nines = i256::from_string(&"9".repeat(39)).unwrap();
        let b = RecordBatch::try_new(
            b.schema(),
            vec![
                Arc::new(Int32Array::from(vec![1, 1])),
                Arc::new(
                    Decimal256Array::from(vec![nines, i256::ONE])
                        .with_precision_and_scale(39, 0)
                        .unwrap(),
                ),
            ],
        )
        .unwrap();
        assert!(sort_and_merge(&b, &s).is_err());
    }

    #[test]
    fn sum_overflow_is_mysqls_out_of_range_error_never_a_wrapped_value() {
        let b = batch(vec![1, 1], vec![Some(i64::MAX), Some(1)], vec![None, None]);
        let mut s = spec(KeysModel::Aggregate, vec![AggKind::Sum, AggKind::Replace]);
        s.value_names = vec!["hits".into(), "b".into()];
        s.value_types = vec![SqlType::BigInt, SqlType::String];
        let e = sort_and_merge(&b, &s).unwrap_err();
        assert_eq!(e.mysql_code(), 1690, "{e}");
        assert!(e.to_string().contains("SUM(`hits`)"), "{e}");
        // Past the type in the other direction too.
        let b = batch(vec![1, 1], vec![Some(i64::MIN), Some(-1)], vec![None, None]);
        assert_eq!(sort_and_merge(&b, &s).unwrap_err().mysql_code(), 1690);
    }

    #[test]
    fn unique_keeps_latest_row() {
        let b = batch(
            vec![2, 1, 2, 1],
            vec![Some(1), Some(2), Some(3), None],
            vec![Some("x"), Some("y"), Some("z"), None],
        );
        let m = sort_and_merge(&b, &spec(KeysModel::Unique, vec![])).unwrap();
        assert_eq!(m.num_rows(), 2);
        let a = m.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert!(a.is_null(0)); // key 1: the later row had NULL
        assert_eq!(a.value(1), 3);
    }

    #[test]
    fn aggregate_functions() {
        let b = batch(
            vec![1, 1, 1, 2],
            vec![Some(5), None, Some(7), None],
            vec![Some("m"), Some("a"), None, None],
        );
        let m = sort_and_merge(
            &b,
            &spec(KeysModel::Aggregate, vec![AggKind::Sum, AggKind::Min]),
        )
        .unwrap();
        let a = m.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(a.value(0), 12);
        assert!(a.is_null(1));
        let s = m.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(0), "a");
        let m = sort_and_merge(
            &b,
            &spec(
                KeysModel::Aggregate,
                vec![AggKind::Max, AggKind::ReplaceIfNotNull],
            ),
        )
        .unwrap();
        let a = m.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(a.value(0), 7);
        let s = m.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(0), "a");
        let m = sort_and_merge(
            &b,
            &spec(
                KeysModel::Aggregate,
                vec![AggKind::Replace, AggKind::Replace],
            ),
        )
        .unwrap();
        let s = m.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        assert!(s.is_null(0));
    }

    #[test]
    fn duplicate_keeps_all_rows_sorted() {
        let b = batch(
            vec![3, 1, 3],
            vec![Some(1), Some(2), Some(3)],
            vec![None, None, None],
        );
        let m = sort_and_merge(&b, &spec(KeysModel::Duplicate, vec![])).unwrap();
        assert_eq!(m.num_rows(), 3);
        let k = m.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(k.values().to_vec(), vec![1, 3, 3]);
    }
}
