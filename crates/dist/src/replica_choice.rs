//! Which replica of a tablet a read uses: one that holds every published version (not stale)
//! on a backend the heartbeats call alive, spread over those by tablet id; and, for reads the
//! frontend makes itself (a point query's rows, a primary-key index's keys), the next such
//! replica when one fails.

use crate::cluster::Cluster;
use basalt_catalog::{BackendId, BackendMeta, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use std::future::Future;

/// The replicas a read of `tablet` may use, the preferred first (by tablet id over the
/// readable replicas on live backends, so a table's reads spread over its backends); an error
/// naming the tablet and why each replica cannot serve when there are none.
pub(crate) fn read_order(cluster: &Cluster, tablet: &TabletMeta) -> Result<Vec<BackendId>> {
    if tablet.replicas.is_empty() {
        return Err(BasaltError::Storage(format!(
            "tablet {} has no replica on any backend (it was made while the cluster had \
             none); drop and re-create its table or partition",
            tablet.id
        )));
    }
    let mut usable: Vec<BackendId> = tablet
        .readable_replicas()
        .filter(|id| cluster.is_live(*id))
        .collect();
    if usable.is_empty() {
        return Err(BasaltError::BackendUnavailable(format!(
            "tablet {} has no readable replica on a live backend: {}",
            tablet.id,
            unusable_replicas(cluster, tablet)
        )));
    }
    let first = (tablet.id % usable.len() as u64) as usize;
    usable.rotate_left(first);
    // A decommissioned backend's replicas last: it is about to leave the cluster, so reads
    // planned now should not need it (it serves them only when no other replica can).
    let leaving: Vec<BackendId> = cluster
        .backends()
        .into_iter()
        .filter(|b| b.decommissioned)
        .map(|b| b.id)
        .collect();
    usable.sort_by_key(|id| leaving.contains(id));
    Ok(usable)
}

/// [`read_order`] of a tablet of `table`, its error naming the table.
pub(crate) fn scan_order(
    cluster: &Cluster,
    table: &TableMeta,
    tablet: &TabletMeta,
) -> Result<Vec<BackendId>> {
    read_order(cluster, tablet).map_err(|e| match e {
        BasaltError::BackendUnavailable(why) => BasaltError::BackendUnavailable(format!(
            "cannot read table `{}`.`{}`: {why}",
            table.database, table.name
        )),
        other => other,
    })
}

/// Each replica of `tablet` and why it cannot serve a read ("backend 2 (127.0.0.1:9060) is
/// down", "... missed a version").
fn unusable_replicas(cluster: &Cluster, tablet: &TabletMeta) -> String {
    let described: Vec<String> = tablet
        .replicas
        .iter()
        .map(|id| {
            let address = cluster
                .backend(*id)
                .map(|b| b.address())
                .unwrap_or_else(|_| "unknown address".into());
            let state = if !cluster.is_live(*id) {
                "is down"
            } else {
                "missed a published version"
            };
            format!("backend {id} ({address}) {state}")
        })
        .collect();
    described.join(", ")
}

/// Runs `read` against the replicas of `tablet` in [`read_order`] until one succeeds: a
/// replica that fails (its backend died, froze or lost the file) hands the read to the next,
/// and its backend is probed in the background so the next reads skip it at once. The error,
/// when all fail, names every replica's failure.
pub(crate) async fn read_from_replicas<T, F, Fut>(
    cluster: &std::sync::Arc<Cluster>,
    tablet: &TabletMeta,
    read: F,
) -> Result<T>
where
    F: Fn(BackendMeta) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut failures: Vec<String> = Vec::new();
    for id in read_order(cluster, tablet)? {
        let backend = cluster.backend(id)?;
        match read(backend.clone()).await {
            Ok(value) => return Ok(value),
            Err(e) => {
                tracing::warn!(
                    "reading tablet {} on backend {}: {e}; trying another replica",
                    tablet.id,
                    backend.address()
                );
                failures.push(e.to_string());
                let probing = cluster.clone();
                cluster.runtime().spawn(async move {
                    probing.probe_live_backends().await;
                });
            }
        }
    }
    Err(BasaltError::BackendUnavailable(format!(
        "every replica of tablet {} failed: {}",
        tablet.id,
        failures.join("; ")
    )))
}
