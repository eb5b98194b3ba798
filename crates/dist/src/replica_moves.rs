//! Moving one replica of a tablet from backend `from` to backend `to` (which holds none of
//! it): the mechanism under decommission, clone of a dead backend's replicas and rebalancing.
//!
//! 1. `to` joins the tablet's replicas as a stale, *joining* replica in one catalog publish
//!    ([`basalt_catalog::Catalog::join_replica`]). From then on loads write it too (stale
//!    replicas take loads), but a write's majority is still counted over the tablet's normal
//!    replicas, so a move never makes a load fail (or succeed) where it would not otherwise.
//! 2. `to` catches up: it copies the segment files of the visible rowsets from a readable
//!    replica on a live backend, at most `bytes_per_second`, until the catalog (under its
//!    writer lock) finds it holds every one ([`crate::replica_repair::catch_up`]).
//! 3. `from` leaves and `to`'s joining mark goes in one publish, which the catalog makes only
//!    while `to` is readable ([`basalt_catalog::Catalog::end_replica_move`]); a load that
//!    published meanwhile without `to` made it stale again, so it copies that and tries again.
//! 4. The balancer ([`crate::replica_balancer`]) has `from` remove its files of the tablet a
//!    little later (queries planned before step 3 may still read them), between moves and
//!    only if `from` has not become a replica of the tablet again meanwhile. A `from` that is
//!    down keeps them until it answers again; nothing routes reads or writes of the tablet to
//!    it.
//!
//! A move whose target stops answering, or that cannot catch up within [`CATCH_UP_LIMIT`],
//! is given up: `to` leaves the tablet again (and the balancer removes what it copied).

use crate::cluster::Cluster;
use crate::replica_repair::{catch_up, current_tablet};
use basalt_catalog::{BackendId, Catalog, TableId, TabletId};
use basalt_common::{BasaltError, Result};
use std::time::{Duration, Instant};

/// The longest a move waits for its new replica to catch up.
const CATCH_UP_LIMIT: Duration = Duration::from_secs(600);

/// One replica to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplicaMove {
    pub table_id: TableId,
    pub tablet_id: TabletId,
    pub from: BackendId,
    pub to: BackendId,
}

/// Moves the replica; Ok when it moved (or the tablet was dropped meanwhile).
pub(crate) async fn move_replica(
    cluster: &Cluster,
    catalog: &dyn Catalog,
    m: ReplicaMove,
    bytes_per_second: u64,
) -> Result<()> {
    let table = catalog
        .table_by_id(m.table_id)
        .ok_or_else(|| BasaltError::Storage(format!("table {} is gone", m.table_id)))?;
    let started = Instant::now();
    if !catalog.join_replica(m.table_id, m.tablet_id, m.to)? {
        let joining = current_tablet(catalog, &table, m.tablet_id)
            .is_some_and(|t| t.joining_replicas.contains(&m.to));
        if !joining {
            return Err(BasaltError::Storage(format!(
                "tablet {} already has a replica on backend {}",
                m.tablet_id, m.to
            )));
        }
    }
    loop {
        let Some(tablet) = current_tablet(catalog, &table, m.tablet_id) else {
            return Ok(()); // dropped meanwhile
        };
        if !tablet.stale_replicas.contains(&m.to) {
            if catalog.end_replica_move(m.table_id, m.tablet_id, m.from, m.to)? {
                break;
            }
            continue; // a load made it stale again just now
        }
        if !cluster.is_live(m.to) || started.elapsed() > CATCH_UP_LIMIT {
            catalog.abandon_replica_move(m.table_id, m.tablet_id, m.to)?;
            return Err(BasaltError::Storage(format!(
                "moving tablet {} to backend {}: given up after {} s (the target {})",
                m.tablet_id,
                m.to,
                started.elapsed().as_secs(),
                if cluster.is_live(m.to) {
                    "did not catch up"
                } else {
                    "stopped answering"
                }
            )));
        }
        if let Err(e) = catch_up(
            cluster,
            catalog,
            &table,
            m.tablet_id,
            m.to,
            bytes_per_second,
        )
        .await
        {
            tracing::warn!(
                "moving tablet {} of {}.{} to backend {}: {e}",
                m.tablet_id,
                table.database,
                table.name,
                m.to
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    tracing::info!(
        "tablet {} of {}.{}: replica moved from backend {} to backend {} in {} ms",
        m.tablet_id,
        table.database,
        table.name,
        m.from,
        m.to,
        started.elapsed().as_millis()
    );
    Ok(())
}
