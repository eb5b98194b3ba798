//! Routing rows to tablets: the partition from the partition column's value, the bucket from the
//! hash of the distribution columns (or round robin for RANDOM distribution).

use crate::hashing::buckets_of_rows;
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::*;
use basalt_catalog::{PartitionBound, PartitionKind, PartitionValue, TableMeta, TabletId};
use basalt_common::{BasaltError, Result};
use std::collections::HashMap;

/// Finds the partition (index into `TableMeta::partitions`) of a partition value.
pub struct PartitionLocator {
    kind: PartitionKind,
    /// Range partitions sorted by lower bound: (lower, upper, partition index).
    ranges: Vec<(Option<PartitionValue>, Option<PartitionValue>, usize)>,
    list: HashMap<PartitionValue, usize>,
    /// When set, only these partitions (by index) accept rows; others count as "no partition".
    allowed: Option<Vec<bool>>,
}

impl PartitionLocator {
    pub fn new(table: &TableMeta) -> PartitionLocator {
        let mut ranges = Vec::new();
        let mut list = HashMap::new();
        for (i, p) in table.partitions.iter().enumerate() {
            match &p.bound {
                PartitionBound::Range { lower, upper } => {
                    ranges.push((lower.clone(), upper.clone(), i))
                }
                PartitionBound::List { values } => {
                    for v in values {
                        list.insert(v.clone(), i);
                    }
                }
                PartitionBound::All => {}
            }
        }
        // `None` (unbounded) lower bounds sort first.
        ranges.sort_by(|a, b| a.0.cmp(&b.0));
        PartitionLocator {
            kind: table.partition_kind,
            ranges,
            list,
            allowed: None,
        }
    }

    /// Accept rows only for the partitions whose indexes are `true` in `allowed`.
    pub fn restrict(&mut self, allowed: Vec<bool>) {
        self.allowed = Some(allowed);
    }

    /// The partition holding `value`, if any and if it accepts rows.
    pub fn locate_allowed(&self, value: Option<&PartitionValue>) -> Option<usize> {
        let p = self.locate(value)?;
        match &self.allowed {
            Some(allowed) if !allowed.get(p).copied().unwrap_or(false) => None,
            _ => Some(p),
        }
    }

    /// The partition holding `value` (`None` = SQL NULL), if any.
    pub fn locate(&self, value: Option<&PartitionValue>) -> Option<usize> {
        match self.kind {
            PartitionKind::Unpartitioned => Some(0),
            PartitionKind::List => value.and_then(|v| self.list.get(v).copied()),
            PartitionKind::Range => {
                let Some(v) = value else {
                    // NULL sorts below everything: only a partition without a lower bound holds it.
                    return self.ranges.first().filter(|r| r.0.is_none()).map(|r| r.2);
                };
                let pos = self
                    .ranges
                    .partition_point(|r| r.0.as_ref().is_none_or(|l| l <= v));
                let candidate = pos.checked_sub(1).map(|i| &self.ranges[i])?;
                candidate
                    .1
                    .as_ref()
                    .is_none_or(|u| v < u)
                    .then_some(candidate.2)
            }
        }
    }
}

/// The partition value of row `row` of `array`, or `None` for NULL.
pub fn partition_value_at(array: &ArrayRef, row: usize) -> Result<Option<PartitionValue>> {
    if array.is_null(row) {
        return Ok(None);
    }
    let v = match array.data_type() {
        DataType::Int8 => PartitionValue::Int(array.as_primitive::<Int8Type>().value(row) as i128),
        DataType::Int16 => {
            PartitionValue::Int(array.as_primitive::<Int16Type>().value(row) as i128)
        }
        DataType::Int32 => {
            PartitionValue::Int(array.as_primitive::<Int32Type>().value(row) as i128)
        }
        DataType::Int64 => {
            PartitionValue::Int(array.as_primitive::<Int64Type>().value(row) as i128)
        }
        DataType::UInt8 => PartitionValue::Int(array.as_primitive::<UInt8Type>().value(row).into()),
        DataType::UInt16 => {
            PartitionValue::Int(array.as_primitive::<UInt16Type>().value(row).into())
        }
        DataType::UInt32 => {
            PartitionValue::Int(array.as_primitive::<UInt32Type>().value(row).into())
        }
        DataType::UInt64 => {
            PartitionValue::Int(array.as_primitive::<UInt64Type>().value(row).into())
        }
        DataType::Decimal128(_, 0) => {
            PartitionValue::Int(array.as_primitive::<Decimal128Type>().value(row))
        }
        DataType::Date32 => {
            PartitionValue::Int(array.as_primitive::<Date32Type>().value(row) as i128)
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            PartitionValue::Int(array.as_primitive::<TimestampMicrosecondType>().value(row) as i128)
        }
        DataType::Boolean => PartitionValue::Int(array.as_boolean().value(row) as i128),
        DataType::Utf8 => PartitionValue::Str(array.as_string::<i32>().value(row).to_string()),
        other => {
            return Err(BasaltError::Internal(format!(
                "unsupported partition column type {other}"
            )))
        }
    };
    Ok(Some(v))
}

/// Rows of one batch grouped by target tablet, plus the rows that fall in no partition.
pub struct RoutedBatch {
    pub by_tablet: Vec<(TabletId, Vec<u32>)>,
    /// (row index, the partition value as text) of rows that fall in no partition.
    pub unrouted: Vec<(usize, String)>,
}

/// Routes every row of `batch` (in table schema) to its tablet. `round_robin` is the running
/// counter used by RANDOM distribution.
pub fn route_batch(
    table: &TableMeta,
    locator: &PartitionLocator,
    batch: &RecordBatch,
    round_robin: &mut u64,
) -> Result<RoutedBatch> {
    let n = batch.num_rows();
    let buckets = table.distribution.buckets.max(1);
    let bucket_of: Vec<u32> = if table.distribution.columns.is_empty() {
        (0..n)
            .map(|_| {
                *round_robin += 1;
                (*round_robin % buckets as u64) as u32
            })
            .collect()
    } else {
        let cols: Vec<ArrayRef> = table
            .distribution
            .columns
            .iter()
            .map(|i| batch.column(*i).clone())
            .collect();
        buckets_of_rows(&cols, n, buckets)?
    };
    let mut groups: HashMap<TabletId, Vec<u32>> = HashMap::new();
    let mut unrouted = Vec::new();
    match table.partition_column {
        None if locator.locate_allowed(None).is_none() => {
            unrouted.extend((0..n).map(|row| (row, "(not in the chosen partitions)".to_string())));
        }
        None => {
            let p = &table.partitions[0];
            for (row, b) in bucket_of.iter().enumerate() {
                groups
                    .entry(p.tablets[*b as usize].id)
                    .or_default()
                    .push(row as u32);
            }
        }
        Some(col) => {
            let array = batch.column(col);
            let ty = &table.columns[col].ty;
            for (row, b) in bucket_of.iter().enumerate() {
                let value = partition_value_at(array, row)?;
                match locator.locate_allowed(value.as_ref()) {
                    Some(p) => groups
                        .entry(table.partitions[p].tablets[*b as usize].id)
                        .or_default()
                        .push(row as u32),
                    None => unrouted.push((
                        row,
                        value
                            .map(|v| v.display(ty))
                            .unwrap_or_else(|| "NULL".into()),
                    )),
                }
            }
        }
    }
    let mut by_tablet: Vec<(TabletId, Vec<u32>)> = groups.into_iter().collect();
    by_tablet.sort_by_key(|(t, _)| *t);
    Ok(RoutedBatch {
        by_tablet,
        unrouted,
    })
}
