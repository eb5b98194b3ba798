//! Moving a tablet's replica from one backend to another in the local catalog (decommission,
//! clone of a dead backend's replicas, rebalancing): the new replica joins as a stale,
//! *joining* replica in one publish; once it has caught up, the old replica leaves and the
//! joining mark goes in another, checked under the writer lock. Writers that read a table
//! before such a change and publish after it keep the tablet's current replica set
//! ([`carry_replica_changes`]), so no publish brings a moved replica back or makes one
//! readable that lacks its segments.

use super::{to_json, LocalCatalog};
use crate::api::TabletCatalog;
use crate::model::{BackendId, RowsetId, TableId, TableMeta, TabletId, TabletMeta};
use crate::store::Op;
use basalt_common::{BasaltError, Result};

impl LocalCatalog {
    /// Applies `change` to tablet `tablet_id` of table `table_id` under the writer lock and
    /// publishes it when it returns true; Ok(false) (nothing changed) when the table or the
    /// tablet is gone or `change` declines.
    fn change_tablet(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        change: impl FnOnce(&mut TabletMeta) -> Result<bool>,
    ) -> Result<bool> {
        let _w = self.writer.lock();
        let Some(old) = self.table_by_id(table_id) else {
            return Ok(false);
        };
        let mut new = (*old).clone();
        let Some(tablet) = new.tablets_mut().find(|t| t.id == tablet_id) else {
            return Ok(false);
        };
        if !change(tablet)? {
            return Ok(false);
        }
        self.store.commit(vec![
            Op::PutTable(new.id, to_json(&new)?),
            self.counter_op(),
        ])?;
        self.replace_in_memory(new);
        Ok(true)
    }

    pub(crate) fn join_replica(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        backend: BackendId,
    ) -> Result<bool> {
        if !self.backend_list().iter().any(|b| b.id == backend) {
            return Err(BasaltError::InvalidDdl(format!("no backend {backend}")));
        }
        self.change_tablet(table_id, tablet_id, |tablet| {
            if tablet.replicas.contains(&backend) {
                return Ok(false);
            }
            tablet.replicas.push(backend);
            tablet.stale_replicas.push(backend);
            tablet.stale_replicas.sort_unstable();
            tablet.joining_replicas.push(backend);
            Ok(true)
        })
    }

    pub(crate) fn end_replica_move(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        from: BackendId,
        to: BackendId,
    ) -> Result<bool> {
        self.change_tablet(table_id, tablet_id, |tablet| {
            let ready = tablet.replicas.contains(&from)
                && tablet.replicas.contains(&to)
                && !tablet.stale_replicas.contains(&to)
                && from != to;
            if !ready {
                return Ok(false);
            }
            tablet.replicas.retain(|b| *b != from);
            tablet.stale_replicas.retain(|b| *b != from);
            tablet.joining_replicas.retain(|b| *b != from && *b != to);
            Ok(true)
        })
    }

    pub(crate) fn abandon_replica_move(
        &self,
        table_id: TableId,
        tablet_id: TabletId,
        to: BackendId,
    ) -> Result<bool> {
        self.change_tablet(table_id, tablet_id, |tablet| {
            if !tablet.joining_replicas.contains(&to) {
                return Ok(false);
            }
            tablet.replicas.retain(|b| *b != to);
            tablet.stale_replicas.retain(|b| *b != to);
            tablet.joining_replicas.retain(|b| *b != to);
            Ok(true)
        })
    }
}

/// Each tablet's replica sets (all, stale, joining), to tell whether a publish changes them.
pub(super) fn replica_sets(t: &TableMeta) -> Vec<(TabletId, [&[BackendId]; 3])> {
    t.tablets()
        .map(|(_, t)| {
            (
                t.id,
                [
                    t.replicas.as_slice(),
                    t.stale_replicas.as_slice(),
                    t.joining_replicas.as_slice(),
                ],
            )
        })
        .collect()
}

/// A table written from the snapshot `based_on` (a transaction's, an ALTER's) keeps the
/// replica sets `current` has now: a replica that left since stays gone, one that joined
/// stays, stale if this write changed the tablet's rowsets (it did not write there), and a
/// replica stale in either stays stale.
pub(super) fn carry_replica_changes(
    based_on: &TableMeta,
    current: &TableMeta,
    new: &mut TableMeta,
) {
    let rowset_ids = |t: &TabletMeta| -> Vec<RowsetId> { t.rowsets.iter().map(|r| r.id).collect() };
    for tablet in new.tablets_mut() {
        let Some((_, now)) = current.tablets().find(|(_, t)| t.id == tablet.id) else {
            continue;
        };
        let before = based_on
            .tablets()
            .find(|(_, t)| t.id == tablet.id)
            .map(|(_, t)| t);
        let rewritten = before.is_none_or(|b| rowset_ids(b) != rowset_ids(tablet));
        let known = |id: &BackendId| before.is_some_and(|b| b.replicas.contains(id));
        let stale: Vec<BackendId> = now
            .replicas
            .iter()
            .copied()
            .filter(|id| {
                now.stale_replicas.contains(id)
                    || if known(id) {
                        tablet.stale_replicas.contains(id)
                    } else {
                        rewritten
                    }
            })
            .collect();
        tablet.replicas = now.replicas.clone();
        tablet.joining_replicas = now.joining_replicas.clone();
        tablet.stale_replicas = stale;
        tablet.stale_replicas.sort_unstable();
    }
}
