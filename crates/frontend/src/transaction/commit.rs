//! COMMIT: every table the transaction wrote is published in one durable catalog transaction
//! (`Catalog::publish_tables`), so other sessions see all of its changes or none.
//!
//! A table another session published to after the transaction first wrote it: if the
//! transaction only appended rowsets to a Duplicate or Aggregate table, its rowsets are
//! appended to the newer version (rebased); anything else — a Unique table (its delete bitmaps
//! were computed against the older rows), or rows the transaction deleted or rewrote — would
//! lose one side's changes, so COMMIT fails with 1213 and the transaction is discarded. A table
//! only compactions changed since (no user write; `StorageEngine::only_compacted`) takes the
//! transaction's changes on the compacted version: appends follow the compacted rowsets, with
//! Unique delete bitmaps carried onto the compacted segments by key
//! (`StorageEngine::carry_staged_deletes`), and a rewritten tablet is its rewrite.

use super::overlay::{rowset_ids, StagedTable};
use super::staged::StagedWrites;
use crate::catalog_provider::Services;
use basalt_catalog::{KeysModel, RowsetMeta, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use basalt_storage::StorageEngine;
use std::sync::Arc;

/// How many times COMMIT rebases when another publish races it.
const ATTEMPTS: usize = 3;

/// Publishes the transaction's writes; on error nothing of them is published.
pub(super) fn commit(services: &Services, writes: &StagedWrites) -> Result<()> {
    let staged: Vec<StagedTable> = writes
        .overlay
        .staged()
        .into_iter()
        .filter(|t| !Arc::ptr_eq(&t.base, &t.current))
        .collect();
    if staged.is_empty() {
        return Ok(());
    }
    // Compactions and merge-on-write loads publish under their table's lock, after computing
    // delete bitmaps from the table they read under it. Holding the locks of every table the
    // transaction wrote (in id order, as no other holder takes two) keeps such a publish from
    // landing between this COMMIT's reading of a table and its publish: a compaction that
    // read the table before would otherwise drop the delete bitmaps the COMMIT put on its
    // input segments, and the rows the transaction deleted or replaced would be back.
    let mut table_ids: Vec<_> = staged.iter().map(|t| t.base.id).collect();
    table_ids.sort_unstable();
    table_ids.dedup();
    let locks: Vec<_> = table_ids
        .iter()
        .map(|id| services.storage.table_lock(*id))
        .collect();
    let _guards: Vec<_> = locks.iter().map(|l| l.lock()).collect();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut changes = Vec::with_capacity(staged.len());
        for table in &staged {
            let current = services.catalog.table_by_id(table.base.id).ok_or_else(|| {
                BasaltError::UnknownTable(format!("{}.{}", table.base.database, table.base.name))
            })?;
            let new = publishable_on(&services.storage, table, &current)?;
            changes.push((current, new));
        }
        match services.catalog.publish_tables(changes) {
            Ok(removed) => {
                writes.mark_published();
                retire(services, &staged, &removed);
                services.storage.notify_compaction();
                return Ok(());
            }
            Err(BasaltError::ConcurrentDdl(_)) if attempt < ATTEMPTS => continue,
            Err(BasaltError::ConcurrentDdl(_)) => {
                return Err(BasaltError::TransactionConflict(
                    "tables kept changing during COMMIT".into(),
                ))
            }
            Err(e) => return Err(e),
        }
    }
}

/// What `table` becomes when the transaction publishes on `current`: [`publishable`], or when
/// only compactions changed the table since the transaction's base, its changes carried onto
/// the compacted version ([`rebase_over_compaction`]).
fn publishable_on(
    storage: &StorageEngine,
    table: &StagedTable,
    current: &TableMeta,
) -> Result<TableMeta> {
    if current.schema_version == table.base.schema_version
        && !same_rowsets(current, &table.base)
        && only_compacted(storage, &table.base, current)
    {
        return rebase_over_compaction(storage, table, current);
    }
    publishable(table, current)
}

/// What `table` becomes when the transaction publishes on `current` (the newest version),
/// with the replicas stale in either marked stale: those the transaction's writes missed, and
/// those loads published meanwhile missed.
fn publishable(table: &StagedTable, current: &TableMeta) -> Result<TableMeta> {
    let mut new = publishable_rowsets(table, current)?;
    for tablet in new.tablets_mut() {
        for version in [current, table.current.as_ref()] {
            if let Some((_, t)) = version.tablets().find(|(_, t)| t.id == tablet.id) {
                tablet.mark_stale(t.stale_replicas.iter().copied());
            }
        }
    }
    Ok(new)
}

fn publishable_rowsets(table: &StagedTable, current: &TableMeta) -> Result<TableMeta> {
    let conflict = || {
        BasaltError::TransactionConflict(format!(
            "{}.{} was changed by another session during the transaction",
            current.database, current.name
        ))
    };
    if current.schema_version != table.base.schema_version {
        return Err(conflict());
    }
    if same_rowsets(current, &table.base) {
        return Ok((*table.current).clone());
    }
    if table.base.keys_model == KeysModel::Unique || !only_appends(table) {
        return Err(conflict());
    }
    rebase(table, current).ok_or_else(conflict)
}

/// Whether two versions of a table hold the same rowsets and delete bitmaps.
fn same_rowsets(a: &TableMeta, b: &TableMeta) -> bool {
    let tablets = |t: &TableMeta| -> Vec<(u64, Vec<u64>)> {
        t.tablets()
            .map(|(_, t)| (t.id, t.rowsets.iter().map(|r| r.id).collect()))
            .collect()
    };
    tablets(a) == tablets(b)
        && a.tablets()
            .zip(b.tablets())
            .all(|((_, x), (_, y))| x.delete_bitmaps == y.delete_bitmaps)
}

/// True when `current` differs from `base` only by compactions: the same tablets at the same
/// versions, every rowset new in `current` made by compaction of `base`'s rowsets, and the same
/// delete bitmaps on the segments both hold.
fn only_compacted(storage: &StorageEngine, base: &TableMeta, current: &TableMeta) -> bool {
    let tablets = |t: &TableMeta| -> Vec<u64> { t.tablets().map(|(_, t)| t.id).collect() };
    tablets(base) == tablets(current)
        && base
            .tablets()
            .zip(current.tablets())
            .all(|((_, b), (_, c))| {
                b.version() == c.version()
                    && storage.only_compacted(b, c)
                    && b.delete_bitmaps.iter().all(|(path, bitmap)| {
                        c.delete_bitmaps.get(path).is_none_or(|n| n == bitmap)
                    })
            })
}

/// `current` (compactions of the transaction's base) with the transaction's changes, tablet by
/// tablet: appended rowsets follow the compacted ones (their versions follow the unchanged
/// tablet version) with Unique deletes carried onto the compacted segments; a tablet the
/// transaction rewrote (DELETE or UPDATE on a Duplicate or Aggregate table) is its rewrite,
/// which holds every row the compacted rowsets held.
fn rebase_over_compaction(
    storage: &StorageEngine,
    table: &StagedTable,
    current: &TableMeta,
) -> Result<TableMeta> {
    let published = rowset_ids(&table.base);
    let mut new = current.clone();
    let tablets = table.base.tablets().zip(table.current.tablets());
    for ((_, base), (_, staged)) in tablets {
        let ids = |t: &TabletMeta| -> Vec<u64> { t.rowsets.iter().map(|r| r.id).collect() };
        if ids(staged) == ids(base) && staged.delete_bitmaps == base.delete_bitmaps {
            continue;
        }
        let tablet = new
            .tablets_mut()
            .find(|t| t.id == staged.id)
            .ok_or_else(|| BasaltError::Internal(format!("tablet {} vanished", staged.id)))?;
        let appended =
            staged.rowsets.len() >= base.rowsets.len() && ids(staged).starts_with(&ids(base));
        if appended {
            tablet.delete_bitmaps = storage.carry_staged_deletes(current, base, staged, tablet)?;
            tablet.rowsets.extend(
                staged
                    .rowsets
                    .iter()
                    .filter(|r| !published.contains(&r.id))
                    .cloned(),
            );
        } else if table.base.keys_model == KeysModel::Unique {
            return Err(BasaltError::TransactionConflict(format!(
                "{}.{} was changed by another session during the transaction",
                current.database, current.name
            )));
        } else {
            tablet.rowsets = staged.rowsets.clone();
            tablet.delete_bitmaps = staged.delete_bitmaps.clone();
        }
        // Replicas the transaction's writes missed serve no reads until caught up.
        for backend in &staged.stale_replicas {
            if !tablet.stale_replicas.contains(backend) {
                tablet.stale_replicas.push(*backend);
            }
        }
    }
    Ok(new)
}

/// True when the transaction only added rowsets: every tablet is its base's rowsets followed
/// by new ones, with the base's delete bitmaps.
fn only_appends(table: &StagedTable) -> bool {
    table.base.tablets().all(|(_, base)| {
        table
            .current
            .tablets()
            .find(|(_, t)| t.id == base.id)
            .is_some_and(|(_, t)| {
                t.rowsets.len() >= base.rowsets.len()
                    && t.rowsets
                        .iter()
                        .zip(&base.rowsets)
                        .all(|(a, b)| a.id == b.id)
                    && t.delete_bitmaps == base.delete_bitmaps
            })
    })
}

/// `current` with the transaction's new rowsets appended, numbered after its versions.
fn rebase(table: &StagedTable, current: &TableMeta) -> Option<TableMeta> {
    let published = rowset_ids(&table.base);
    let mut new = current.clone();
    for (_, staged) in table.current.tablets() {
        let added: Vec<&Arc<RowsetMeta>> = staged
            .rowsets
            .iter()
            .filter(|r| !published.contains(&r.id))
            .collect();
        if added.is_empty() {
            continue;
        }
        let tablet = new.tablets_mut().find(|t| t.id == staged.id)?;
        for rowset in added {
            let version = tablet.version() + 1;
            tablet.rowsets.push(Arc::new(RowsetMeta {
                start_version: version,
                version,
                ..rowset.as_ref().clone()
            }));
        }
    }
    Some(new)
}

/// After COMMIT: the files of published rowsets the transaction rewrote (or compactions of
/// them, see `rebase_over_compaction`) go once unread.
fn retire(services: &Services, staged: &[StagedTable], removed: &[Arc<RowsetMeta>]) {
    for table in staged {
        let tablets: std::collections::HashSet<u64> =
            table.base.tablets().map(|(_, t)| t.id).collect();
        let mine: Vec<Arc<RowsetMeta>> = removed
            .iter()
            .filter(|r| tablets.contains(&r.tablet_id))
            .cloned()
            .collect();
        if !mine.is_empty() {
            services.storage.retire_rowsets(&table.base, &mine);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_catalog::{
        DistributionMeta, PartitionBound, PartitionKind, PartitionMeta, TabletMeta,
    };

    fn rowset(id: u64, version: u64) -> Arc<RowsetMeta> {
        Arc::new(RowsetMeta {
            id,
            tablet_id: 1,
            start_version: version,
            version,
            segments_overlap: false,
            segments: vec![],
            created_ms: 0,
        })
    }

    fn table(keys_model: KeysModel, rowsets: Vec<Arc<RowsetMeta>>) -> Arc<TableMeta> {
        let tablet = TabletMeta {
            id: 1,
            bucket: 0,
            replicas: vec![],
            stale_replicas: vec![],
            joining_replicas: Vec::new(),
            rowsets,
            delete_bitmaps: Default::default(),
        };
        Arc::new(TableMeta {
            id: 7,
            database: "d".into(),
            name: "t".into(),
            columns: vec![],
            keys_model,
            num_key_columns: 0,
            partition_kind: PartitionKind::Unpartitioned,
            partition_column: None,
            temporary_partitions: Vec::new(),
            partitions: vec![PartitionMeta {
                id: 2,
                name: "t".into(),
                bound: PartitionBound::All,
                tablets: vec![tablet],
            }],
            distribution: DistributionMeta {
                columns: vec![],
                buckets: 1,
            },
            properties: Default::default(),
            comment: String::new(),
            created_ms: 0,
            schema_version: 0,
            declared_order: vec![],
            indexes: vec![],
            foreign_keys: vec![],
            auto_partition: None,
        })
    }

    #[test]
    fn appends_rebase_on_a_newer_version_and_other_changes_conflict() {
        let base = table(KeysModel::Duplicate, vec![rowset(10, 1)]);
        let staged = StagedTable {
            base: base.clone(),
            current: table(KeysModel::Duplicate, vec![rowset(10, 1), rowset(20, 2)]),
        };
        let newer = table(KeysModel::Duplicate, vec![rowset(10, 1), rowset(30, 2)]);
        let rebased = publishable(&staged, &newer).unwrap();
        let (_, tablet) = rebased.tablets().next().unwrap();
        let got: Vec<(u64, u64)> = tablet.rowsets.iter().map(|r| (r.id, r.version)).collect();
        assert_eq!(got, vec![(10, 1), (30, 2), (20, 3)]);
        // Unchanged base: published as staged.
        assert!(publishable(&staged, &base).is_ok());
        // A rewrite (the base rowset replaced) cannot be replayed on a newer version.
        let rewritten = StagedTable {
            base: base.clone(),
            current: table(KeysModel::Duplicate, vec![rowset(20, 2)]),
        };
        let err = publishable(&rewritten, &newer).unwrap_err();
        assert_eq!(err.mysql_code(), 1213);
        // Nor can a Unique table's append (its delete bitmaps are stale).
        let unique = StagedTable {
            base: table(KeysModel::Unique, vec![rowset(10, 1)]),
            current: table(KeysModel::Unique, vec![rowset(10, 1), rowset(20, 2)]),
        };
        let newer = table(KeysModel::Unique, vec![rowset(10, 1), rowset(30, 2)]);
        assert_eq!(publishable(&unique, &newer).unwrap_err().mysql_code(), 1213);
    }
}
