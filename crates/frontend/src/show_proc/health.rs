//! `SHOW PROC '/cluster_health'` (`/tablet_health`: each database's tablets by health, as
//! Doris's tablet checker classifies them) and `'/tasks'` (Doris's queue of agent tasks per
//! task type).

use super::sorted_databases;
use crate::catalog_provider::Services;
use crate::output::Output;
use crate::show::{Cell, Col, ResultBuilder};
use basalt_catalog::TabletMeta;
use std::collections::HashSet;

/// Doris's defaults for a tablet too large (`min_bytes_indicate_replica_too_large`, 2 GiB) and a
/// replica compacting too slowly (`min_version_count_indicate_replica_compaction_too_slow`).
const OVERSIZE_BYTES: u64 = 2 << 30;
const TOO_MANY_VERSIONS: usize = 200;

/// `/cluster_health`: its one item.
pub(super) fn cluster_health() -> Output {
    let mut b = ResultBuilder::new(&[Col::str("Items")]);
    b.row(vec!["tablet_health".into()]);
    b.into_output()
}

/// One database's tablets counted by health.
#[derive(Default)]
struct TabletHealth {
    tablets: i64,
    healthy: i64,
    replica_missing: i64,
    version_incomplete: i64,
    unrecoverable: i64,
    compaction_too_slow: i64,
    oversize: i64,
}

impl TabletHealth {
    /// A tablet with every replica on a live backend and none stale is healthy (on a single
    /// node every tablet is); with some replicas on dead backends a replica is missing; with
    /// all of them, it cannot be recovered; with every backend live but a replica stale (it
    /// missed a published version and is catching up), its version is incomplete.
    fn count(&mut self, tablet: &TabletMeta, dead: &HashSet<u64>) {
        self.tablets += 1;
        let lost = tablet.replicas.iter().filter(|r| dead.contains(r)).count();
        if lost == 0 && !tablet.stale_replicas.is_empty() {
            self.version_incomplete += 1;
        } else if lost == 0 {
            self.healthy += 1;
        } else if lost == tablet.replicas.len() {
            self.unrecoverable += 1;
        } else {
            self.replica_missing += 1;
        }
        if tablet.rowsets.len() > TOO_MANY_VERSIONS {
            self.compaction_too_slow += 1;
        }
        let bytes: u64 = tablet.rowsets.iter().map(|r| r.size_bytes()).sum();
        if bytes > OVERSIZE_BYTES {
            self.oversize += 1;
        }
    }

    fn add(&mut self, other: &TabletHealth) {
        self.tablets += other.tablets;
        self.healthy += other.healthy;
        self.replica_missing += other.replica_missing;
        self.version_incomplete += other.version_incomplete;
        self.unrecoverable += other.unrecoverable;
        self.compaction_too_slow += other.compaction_too_slow;
        self.oversize += other.oversize;
    }

    /// The counts after DbId and DbName. Basalt never moves, adds or clones replicas (stale
    /// ones catch up in place), has no tags and no colocation groups: those counts are 0. It
    /// runs no consistency checks (InconsistentNum: NULL).
    fn cells(&self) -> Vec<Cell> {
        vec![
            self.tablets.into(),
            self.healthy.into(),
            self.replica_missing.into(),
            self.version_incomplete.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            0i64.into(),
            self.unrecoverable.into(),
            self.compaction_too_slow.into(),
            None::<i64>.into(),
            self.oversize.into(),
            0i64.into(),
        ]
    }
}

/// `/cluster_health/tablet_health`: a row per database (by name, as Doris sorts them), then a
/// Total row (DbId "Total", DbName the number of databases).
pub(super) fn tablet_health(services: &Services) -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("DbId"),
        Col::str("DbName"),
        Col::int("TabletNum"),
        Col::int("HealthyNum"),
        Col::int("ReplicaMissingNum"),
        Col::int("VersionIncompleteNum"),
        Col::int("ReplicaRelocatingNum"),
        Col::int("RedundantNum"),
        Col::int("ReplicaMissingInClusterNum"),
        Col::int("ReplicaMissingForTagNum"),
        Col::int("ForceRedundantNum"),
        Col::int("ColocateMismatchNum"),
        Col::int("ColocateRedundantNum"),
        Col::int("NeedFurtherRepairNum"),
        Col::int("UnrecoverableNum"),
        Col::int("ReplicaCompactionTooSlowNum"),
        Col::int("InconsistentNum"),
        Col::int("OversizeNum"),
        Col::int("CloningNum"),
    ]);
    let dead = super::dead_backends(services);
    let mut dbs = sorted_databases(services);
    dbs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut total = TabletHealth::default();
    for db in &dbs {
        let mut health = TabletHealth::default();
        for table in services.catalog.tables(&db.name).unwrap_or_default() {
            for (_, tablet) in table.tablets() {
                health.count(tablet, &dead);
            }
        }
        total.add(&health);
        let mut row: Vec<Cell> = vec![db.id.to_string().into(), db.name.clone().into()];
        row.extend(health.cells());
        b.row(row);
    }
    let mut row: Vec<Cell> = vec!["Total".into(), dbs.len().to_string().into()];
    row.extend(total.cells());
    b.row(row);
    b.into_output()
}

/// Doris's agent task types (TTaskType), in its order.
const TASK_TYPES: [&str; 32] = [
    "CREATE",
    "DROP",
    "PUSH",
    "CLONE",
    "STORAGE_MEDIUM_MIGRATE",
    "ROLLUP",
    "SCHEMA_CHANGE",
    "CANCEL_DELETE",
    "MAKE_SNAPSHOT",
    "RELEASE_SNAPSHOT",
    "CHECK_CONSISTENCY",
    "UPLOAD",
    "DOWNLOAD",
    "CLEAR_REMOTE_FILE",
    "MOVE",
    "REALTIME_PUSH",
    "PUBLISH_VERSION",
    "CLEAR_ALTER_TASK",
    "CLEAR_TRANSACTION_TASK",
    "RECOVER_TABLET",
    "STREAM_LOAD",
    "UPDATE_TABLET_META_INFO",
    "ALTER",
    "INSTALL_PLUGIN",
    "UNINSTALL_PLUGIN",
    "COMPACTION",
    "STORAGE_MEDIUM_MIGRATE_V2",
    "NOTIFY_UPDATE_STORAGE_POLICY",
    "PUSH_COOLDOWN_CONF",
    "PUSH_STORAGE_POLICY",
    "ALTER_INVERTED_INDEX",
    "GC_BINLOG",
];

/// `/tasks`: queued agent tasks per type, then a Total row. Basalt's frontend queues no tasks
/// for backends — it calls them within the statement that needs them — so every count is 0.
pub(super) fn tasks() -> Output {
    let mut b = ResultBuilder::new(&[
        Col::str("TaskType"),
        Col::int("FailedNum"),
        Col::int("TotalNum"),
    ]);
    for name in TASK_TYPES.into_iter().chain(["Total"]) {
        b.row(vec![name.into(), 0i64.into(), 0i64.into()]);
    }
    b.into_output()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tablet(replicas: Vec<u64>) -> TabletMeta {
        TabletMeta {
            id: 1,
            bucket: 0,
            replicas,
            stale_replicas: Vec::new(),
            joining_replicas: Vec::new(),
            rowsets: Vec::new(),
            delete_bitmaps: Default::default(),
        }
    }

    #[test]
    fn tablets_are_classified_by_their_dead_replicas() {
        let dead: HashSet<u64> = [2, 3].into_iter().collect();
        let mut h = TabletHealth::default();
        h.count(&tablet(vec![]), &dead); // single node
        h.count(&tablet(vec![1]), &dead);
        h.count(&tablet(vec![1, 2]), &dead);
        h.count(&tablet(vec![2, 3]), &dead);
        assert_eq!(
            (h.tablets, h.healthy, h.replica_missing, h.unrecoverable),
            (4, 2, 1, 1)
        );
    }

    #[test]
    fn a_tablet_with_a_stale_replica_is_version_incomplete() {
        let dead: HashSet<u64> = [3].into_iter().collect();
        let mut stale = tablet(vec![1, 2]);
        stale.stale_replicas = vec![2];
        let mut stale_and_down = tablet(vec![1, 3]);
        stale_and_down.stale_replicas = vec![1];
        let mut h = TabletHealth::default();
        h.count(&stale, &dead);
        h.count(&stale_and_down, &dead);
        assert_eq!(
            (h.healthy, h.version_incomplete, h.replica_missing),
            (0, 1, 1)
        );
    }
}
