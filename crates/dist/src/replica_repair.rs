//! Catch-up of stale replicas, in the frontend's background: for each tablet with a stale
//! replica (one that missed a published version, see
//! [`basalt_catalog::TabletMeta::stale_replicas`]) on a live backend, that backend copies the
//! segment files of the tablet's visible rowsets it lacks from a backend holding a readable
//! replica ([`crate::segment_copy`]: the target pulls from the source, so the bytes cross the
//! network once and never through the frontend), verified by length and CRC-32. Then the
//! frontend clears the mark in a catalog publish that checks, under the catalog's writer lock,
//! that the replica holds every segment of the tablet's rowsets as they are *then*: a load or
//! compaction that published meanwhile (without this replica, which was stale) leaves it
//! stale, and the next round copies what is new.
//!
//! A replica a move is adding (joining) is left to that move ([`crate::replica_moves`]), which
//! drives the same copy itself. One copy runs at a time in the cluster (these and the moves'),
//! each at most `bytes_per_second` (the `catch_up_mb_per_second`
//! config key), so catch-up never takes more than that much disk and network from foreground
//! queries and loads.

use crate::cluster::Cluster;
use crate::segment_protocol::{CopyReport, CopySegments, COPY_SEGMENTS};
use basalt_catalog::{BackendId, BackendMeta, Catalog, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the frontend looks for stale replicas.
const REPAIR_INTERVAL: Duration = Duration::from_secs(1);
/// Copy rounds for one replica in one pass, while loads keep publishing rowsets it lacks.
const ROUNDS_PER_PASS: usize = 5;

/// Starts catching up stale replicas in the background, copying at most `bytes_per_second`.
pub fn start_replica_repair(
    cluster: &Arc<Cluster>,
    catalog: Arc<dyn Catalog>,
    bytes_per_second: u64,
) {
    let weak = Arc::downgrade(cluster);
    cluster.runtime().spawn(async move {
        let mut ticks = tokio::time::interval(REPAIR_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(cluster) = weak.upgrade() else {
                return;
            };
            repair_pass(&cluster, catalog.as_ref(), bytes_per_second).await;
        }
    });
}

/// The backends whose last heartbeat answered (one never asked yet does not count: a copy
/// needs both ends up).
pub(crate) fn answering_backends(cluster: &Cluster) -> HashSet<BackendId> {
    cluster
        .health()
        .into_iter()
        .filter(|(_, h)| h.alive)
        .map(|(b, _)| b.id)
        .collect()
}

/// One look at every tablet: catches up each stale replica that can be caught up now.
async fn repair_pass(cluster: &Cluster, catalog: &dyn Catalog, bytes_per_second: u64) {
    let alive = answering_backends(cluster);
    for db in catalog.databases() {
        let Ok(tables) = catalog.tables(&db.name) else {
            continue;
        };
        for table in tables {
            for (_, tablet) in table.tablets() {
                // A joining replica is caught up by the move adding it (replica_moves).
                let catching_up = tablet
                    .stale_replicas
                    .iter()
                    .filter(|b| alive.contains(b) && !tablet.joining_replicas.contains(b));
                for stale in catching_up {
                    if let Err(e) = catch_up(
                        cluster,
                        catalog,
                        &table,
                        tablet.id,
                        *stale,
                        bytes_per_second,
                    )
                    .await
                    {
                        tracing::warn!(
                            "catching up the replica of tablet {} of {}.{} on backend {stale}: {e}",
                            tablet.id,
                            table.database,
                            table.name
                        );
                    }
                }
            }
        }
    }
}

/// The tablet as the catalog holds it now.
pub(crate) fn current_tablet(
    catalog: &dyn Catalog,
    table: &TableMeta,
    tablet_id: u64,
) -> Option<TabletMeta> {
    catalog
        .table_by_id(table.id)?
        .tablets()
        .find(|(_, t)| t.id == tablet_id)
        .map(|(_, t)| t.clone())
}

/// A live backend holding a readable replica of `tablet`, spread over them by `round`.
fn source_of(
    cluster: &Cluster,
    tablet: &TabletMeta,
    alive: &HashSet<BackendId>,
    round: usize,
) -> Option<BackendMeta> {
    let readable: Vec<BackendId> = tablet
        .readable_replicas()
        .filter(|b| alive.contains(b))
        .collect();
    let id = *readable.get((tablet.id as usize + round) % readable.len().max(1))?;
    cluster.backend(id).ok()
}

/// Copies what `backend`'s replica of the tablet lacks and clears its stale mark, retrying
/// while publishes race it.
pub(crate) async fn catch_up(
    cluster: &Cluster,
    catalog: &dyn Catalog,
    table: &TableMeta,
    tablet_id: u64,
    backend: BackendId,
    bytes_per_second: u64,
) -> Result<()> {
    let target = cluster.backend(backend)?;
    let started = Instant::now();
    let (mut files, mut bytes) = (0u64, 0u64);
    for round in 0..ROUNDS_PER_PASS {
        let Some(tablet) = current_tablet(catalog, table, tablet_id) else {
            return Ok(()); // dropped
        };
        if !tablet.stale_replicas.contains(&backend) {
            return Ok(());
        }
        let alive = answering_backends(cluster);
        let segments: Vec<String> = tablet.segment_paths().map(str::to_string).collect();
        let held: HashSet<String> = if segments.is_empty() {
            HashSet::new()
        } else {
            let source = source_of(cluster, &tablet, &alive, round).ok_or_else(|| {
                BasaltError::Storage(format!(
                    "tablet {tablet_id} has no readable replica on a live backend to copy from"
                ))
            })?;
            let job = CopySegments {
                source: source.address(),
                segments,
                bytes_per_second,
            };
            let body =
                serde_json::to_vec(&job).map_err(|e| BasaltError::Internal(e.to_string()))?;
            // One copy at a time in the whole cluster (catch-up and moves share the lane), so
            // all of them together stay within `bytes_per_second`.
            let lane = cluster.copy_lane().lock().await;
            let answer = cluster.action(&target, COPY_SEGMENTS, body).await;
            drop(lane);
            let answer = answer?;
            let report: CopyReport = serde_json::from_slice(&answer)
                .map_err(|e| BasaltError::Execution(format!("{COPY_SEGMENTS}: {e}")))?;
            files += report.files_copied;
            bytes += report.bytes_copied;
            report.held.into_iter().collect()
        };
        if catalog.clear_stale_replica(table.id, tablet_id, backend, &held)? {
            tracing::info!(
                "replica of tablet {tablet_id} of {}.{} on backend {} caught up: {files} files, \
                 {bytes} bytes copied in {} ms",
                table.database,
                table.name,
                target.address(),
                started.elapsed().as_millis()
            );
            return Ok(());
        }
        // A load or compaction published segments it lacks meanwhile: copy those.
    }
    Ok(())
}
