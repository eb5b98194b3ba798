//! Where a write of a tablet's segments goes (a load's, a rewrite's, a compaction's) and when it
//! counts: to every replica on a backend the heartbeats have not found dead — for rewrites and
//! compactions only the readable ones (a stale replica lacks versions, so it cannot rewrite or
//! compact inputs it does not hold); a load's new segments go to stale replicas too, which hold
//! them durably and count towards the majority (as Doris writes to replicas missing a version),
//! so loads keep succeeding while a restarted backend catches up. The write succeeds when a
//! majority of the tablet's replicas hold it durably. The replicas it skipped or that failed are
//! returned, so the publish marks them stale in the same catalog transaction; a stale replica
//! stays stale until it has caught up by copying what it lacks ([`crate::replica_repair`]).

use crate::cluster::Cluster;
use basalt_catalog::{BackendId, BackendMeta, TableMeta, TabletMeta};
use basalt_common::{BasaltError, Result};
use basalt_storage::remote::{majority, too_few_replicas};
use std::future::Future;

/// A replica a write did not reach, and why.
struct Missed {
    backend: BackendId,
    why: String,
}

/// Which replicas a write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Targets {
    /// Readable replicas only: the write derives from segments the replica must hold.
    Readable,
    /// Stale replicas as well: the write brings everything it needs (a load's rows).
    StaleToo,
}

/// Runs `write` on every replica of `tablet` that `targets` allows on a backend not known dead, together;
/// returns each success with its backend, or [`too_few_replicas`]'s error (naming the tablet,
/// the counts and what became of each other replica) when fewer than a majority succeed.
pub(crate) async fn write_to_majority<T, F, Fut>(
    cluster: &Cluster,
    table: &TableMeta,
    tablet: &TabletMeta,
    targets: Targets,
    write: F,
) -> Result<Vec<(BackendId, T)>>
where
    F: Fn(BackendMeta) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    if tablet.replicas.is_empty() {
        return Err(BasaltError::Storage(format!(
            "tablet {} has no replica on any backend (it was made while the cluster had \
             none); drop and re-create its table or partition",
            tablet.id
        )));
    }
    let mut missed = Vec::new();
    let stale_too = targets == Targets::StaleToo;
    let mut targets = Vec::new();
    for id in &tablet.replicas {
        let backend = cluster.backend(*id)?;
        if tablet.stale_replicas.contains(id) && !stale_too {
            missed.push(Missed {
                backend: *id,
                why: format!("{} is catching up", backend.address()),
            });
        } else if !cluster.is_live(*id) {
            // Found dead by the heartbeats or a failed call; a backend not asked yet (a
            // frontend just started) is tried: its write decides.
            missed.push(Missed {
                backend: *id,
                why: format!("{} is down", backend.address()),
            });
        } else {
            targets.push(backend);
        }
    }
    let results = futures::future::join_all(targets.iter().map(|b| write(b.clone()))).await;
    let mut written = Vec::new();
    for (backend, result) in targets.iter().zip(results) {
        match result {
            Ok(value) => written.push((backend.id, value)),
            Err(e) => {
                tracing::warn!(
                    "tablet {} of {}.{}: a replica's write failed, it turns stale: {e}",
                    tablet.id,
                    table.database,
                    table.name
                );
                missed.push(Missed {
                    backend: backend.id,
                    why: format!("{} failed ({e})", backend.address()),
                });
            }
        }
    }
    // The majority is the normal set's: a replica a move is adding takes the write but does
    // not count, so a move never makes a write fail or succeed where it would not otherwise.
    let counted = written
        .iter()
        .filter(|(b, _)| !tablet.joining_replicas.contains(b))
        .count();
    if counted < majority(tablet.normal_replica_count()) {
        let why: Vec<String> = missed
            .iter()
            .map(|m| format!("backend {} at {}", m.backend, m.why))
            .collect();
        return Err(too_few_replicas(table, tablet, counted, &why.join(", ")));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use basalt_storage::remote::majority;

    #[test]
    fn a_majority_is_more_than_half() {
        assert_eq!(majority(1), 1);
        assert_eq!(majority(2), 2);
        assert_eq!(majority(3), 2);
        assert_eq!(majority(4), 3);
        assert_eq!(majority(5), 3);
    }
}
