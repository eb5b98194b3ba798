//! Partition rules that hold whatever DDL asked for them: a new partition starts with one empty
//! tablet per bucket, and no two partitions of a table share a name or overlap.

use crate::model::*;
use basalt_common::{BasaltError, Result};

impl PartitionMeta {
    /// Visible rows over the partition's tablets.
    pub fn num_rows(&self) -> u64 {
        self.tablets.iter().map(|t| t.num_rows()).sum()
    }

    /// Bytes of the partition's segment files.
    pub fn data_bytes(&self) -> u64 {
        self.tablets
            .iter()
            .flat_map(|t| t.rowsets.iter())
            .map(|r| r.size_bytes())
            .sum()
    }

    /// A new partition with `buckets` empty tablets, ids from `next_id`.
    pub fn empty(
        name: String,
        bound: PartitionBound,
        buckets: u32,
        mut next_id: impl FnMut() -> u64,
    ) -> PartitionMeta {
        let id = next_id();
        let tablets = (0..buckets)
            .map(|bucket| TabletMeta {
                id: next_id(),
                bucket,
                replicas: Vec::new(),
                stale_replicas: Vec::new(),
                joining_replicas: Vec::new(),
                rowsets: Vec::new(),
                delete_bitmaps: Default::default(),
            })
            .collect();
        PartitionMeta {
            id,
            name,
            bound,
            tablets,
        }
    }
}

/// Rejects a duplicate name or a bound that overlaps an existing partition.
pub fn check_new_partition(
    name: &str,
    bound: &PartitionBound,
    existing: &[(String, PartitionBound)],
) -> Result<()> {
    for (other, b) in existing {
        if other.eq_ignore_ascii_case(name) {
            return Err(BasaltError::DuplicatePartition(name.to_string()));
        }
        let overlap = match (bound, b) {
            (
                PartitionBound::Range {
                    lower: l1,
                    upper: u1,
                },
                PartitionBound::Range {
                    lower: l2,
                    upper: u2,
                },
            ) => {
                let starts_before_other_ends = match (l1, u2) {
                    (Some(l), Some(u)) => l < u,
                    _ => true,
                };
                let other_starts_before_end = match (l2, u1) {
                    (Some(l), Some(u)) => l < u,
                    _ => true,
                };
                starts_before_other_ends && other_starts_before_end
            }
            (PartitionBound::List { values: a }, PartitionBound::List { values: b }) => {
                a.iter().any(|v| b.contains(v))
            }
            _ => false,
        };
        if overlap {
            return Err(BasaltError::InvalidDdl(format!(
                "partition {name}'s range or values overlap partition {other}"
            )));
        }
    }
    Ok(())
}
