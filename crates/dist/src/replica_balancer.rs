//! The frontend's replica balancer, in the background: it keeps every tablet's replicas on
//! backends that can serve them, one move at a time ([`crate::replica_moves`]), each copy
//! bounded by `catch_up_mb_per_second`. In order of urgency:
//!
//! 1. **Clone**: a backend that has not answered for `replica_clone_after_seconds` gets each
//!    of its replicas re-created on a live backend holding none of that tablet (the one with
//!    the fewest tablets), and then leaves the tablet.
//! 2. **Decommission** (`ALTER SYSTEM DECOMMISSION BACKEND`): the replicas of a decommissioned
//!    backend move the same way; once it holds none, it is removed from the cluster.
//! 3. **Rebalance**, after `ALTER SYSTEM ADD BACKEND`: a replica moves from the live backend
//!    holding the most tablets to the one holding the fewest, until the counts differ by at
//!    most one. Only tablets whose replicas are all live and readable move.
//!
//! It also has a backend that answers again (or for the first time since the frontend started)
//! remove the files of tablets it no longer holds (their replicas were re-created elsewhere
//! while it was down): nothing reads them any more, and they would only take its disk.
//!
//! Moves left half-done by a previous run of the frontend (a joining replica) are given up at
//! start; the plan then makes them again.

use crate::cluster::Cluster;
use crate::replica_moves::{move_replica, ReplicaMove};
use crate::tablet_files::{TabletDir, LIST_TABLETS, REMOVE_TABLETS};
use basalt_catalog::{BackendId, Catalog, TableId, TabletMeta};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// How often the balancer looks when it has nothing to do.
const BALANCE_INTERVAL: Duration = Duration::from_secs(1);

/// What the balancer is told at start.
#[derive(Debug, Clone, Copy)]
pub struct BalancerSettings {
    /// The most a move's copy reads per second (`catch_up_mb_per_second`; 0 unbounded).
    pub bytes_per_second: u64,
    /// A backend down this long has its replicas re-created elsewhere
    /// (`replica_clone_after_seconds`).
    pub clone_after: Duration,
}

/// Starts the balancer on the cluster's runtime.
pub fn start_replica_balancer(
    cluster: &Arc<Cluster>,
    catalog: Arc<dyn Catalog>,
    settings: BalancerSettings,
) {
    let weak = Arc::downgrade(cluster);
    cluster.runtime().spawn(async move {
        let mut tidied: HashSet<BackendId> = HashSet::new();
        let mut removals: Vec<Removal> = Vec::new();
        let mut leftovers_given_up = false;
        loop {
            let Some(cluster) = weak.upgrade() else {
                return;
            };
            if !leftovers_given_up {
                leftovers_given_up = give_up_leftover_moves(catalog.as_ref());
            }
            tidy_returning_backends(&cluster, catalog.as_ref(), &mut tidied).await;
            remove_due(&cluster, catalog.as_ref(), &mut removals).await;
            let moved = match next_move(&cluster, catalog.as_ref(), settings.clone_after) {
                Some((m, why)) => {
                    tracing::info!(
                        "{why}: moving tablet {}'s replica from backend {} to backend {}",
                        m.tablet_id,
                        m.from,
                        m.to
                    );
                    let moved =
                        move_replica(&cluster, catalog.as_ref(), m, settings.bytes_per_second)
                            .await;
                    // The old replica's files go once queries planned before the move are
                    // done; a move given up leaves its copies on the target to remove.
                    let (backend, after) = match &moved {
                        Ok(()) => (m.from, REMOVE_MOVED_AFTER),
                        Err(_) => (m.to, Duration::ZERO),
                    };
                    removals.push(Removal {
                        due: tokio::time::Instant::now() + after,
                        backend,
                        tablet: TabletDir {
                            table_id: m.table_id,
                            tablet_id: m.tablet_id,
                        },
                    });
                    match moved {
                        Ok(()) => true,
                        Err(e) => {
                            tracing::warn!("{why}: {e}");
                            false
                        }
                    }
                }
                None => false,
            };
            remove_emptied_decommissioned(&cluster, catalog.as_ref(), &removals);
            drop(cluster);
            if !moved {
                tokio::time::sleep(BALANCE_INTERVAL).await;
            }
        }
    });
}

/// How long a moved replica's old files stay, for queries planned before the move.
const REMOVE_MOVED_AFTER: Duration = Duration::from_secs(10);

/// Files of a tablet a backend no longer holds, to remove from `due` on.
struct Removal {
    due: tokio::time::Instant,
    backend: BackendId,
    tablet: TabletDir,
}

/// Has each backend remove the files of the due removals, unless it holds a replica of that
/// tablet again (a later move brought it back). Runs between moves, so none can add the
/// backend to the tablet while its files go. A backend down keeps them until it answers again
/// ([`tidy_returning_backends`]).
async fn remove_due(cluster: &Cluster, catalog: &dyn Catalog, removals: &mut Vec<Removal>) {
    let now = tokio::time::Instant::now();
    let (due, later): (Vec<Removal>, Vec<Removal>) = std::mem::take(removals)
        .into_iter()
        .partition(|r| r.due <= now);
    *removals = later;
    for r in due {
        let held_again = catalog.table_by_id(r.tablet.table_id).is_some_and(|t| {
            t.tablets()
                .any(|(_, t)| t.id == r.tablet.tablet_id && t.replicas.contains(&r.backend))
        });
        let Ok(backend) = cluster.backend(r.backend) else {
            continue; // removed from the cluster: its files are its own
        };
        if held_again || !cluster.is_live(r.backend) {
            continue;
        }
        let body = serde_json::to_vec(&[r.tablet]).unwrap_or_default();
        if let Err(e) = cluster.action(&backend, REMOVE_TABLETS, body).await {
            tracing::warn!(
                "backend {} keeps the files of tablet {} it no longer holds: {e}",
                backend.address(),
                r.tablet.tablet_id
            );
        }
    }
}

/// Gives up the moves a previous run of the frontend left joining; true once done.
fn give_up_leftover_moves(catalog: &dyn Catalog) -> bool {
    let mut done = true;
    for (table_id, tablet) in all_tablets(catalog) {
        for to in &tablet.joining_replicas {
            match catalog.abandon_replica_move(table_id, tablet.id, *to) {
                Ok(_) => tracing::info!(
                    "tablet {}: a move to backend {to} left unfinished is given up",
                    tablet.id
                ),
                Err(e) => {
                    tracing::warn!(
                        "tablet {}: giving up a move to backend {to}: {e}",
                        tablet.id
                    );
                    done = false;
                }
            }
        }
    }
    done
}

/// Every tablet with its table's id.
fn all_tablets(catalog: &dyn Catalog) -> Vec<(TableId, TabletMeta)> {
    let mut out = Vec::new();
    for db in catalog.databases() {
        for table in catalog.tables(&db.name).unwrap_or_default() {
            for (_, tablet) in table.tablets() {
                out.push((table.id, tablet.clone()));
            }
        }
    }
    out
}

/// A backend as the planner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BackendState {
    pub id: BackendId,
    /// Answering heartbeats.
    pub alive: bool,
    /// Down past the clone timeout: its replicas are re-created elsewhere.
    pub lost: bool,
    pub decommissioned: bool,
}

impl BackendState {
    fn takes_replicas(&self) -> bool {
        self.alive && !self.decommissioned
    }
}

/// Which backends' replicas leave them.
type Leaving = fn(&BackendState) -> bool;

/// The next move and why, or none: clones first, then decommissions, then (when `rebalance`)
/// one step of evening out tablet counts over the backends that take replicas. Tablets with a
/// move under way are left alone; a replica moves only while the tablet has a readable
/// replica on a live backend to copy from.
pub(crate) fn plan_move(
    tablets: &[(TableId, TabletMeta)],
    backends: &[BackendState],
    rebalance: bool,
) -> Option<(ReplicaMove, &'static str)> {
    let state: HashMap<BackendId, BackendState> = backends.iter().map(|b| (b.id, *b)).collect();
    let mut counts: BTreeMap<BackendId, usize> = backends.iter().map(|b| (b.id, 0)).collect();
    for (_, t) in tablets {
        for r in &t.replicas {
            *counts.entry(*r).or_default() += 1;
        }
    }
    let alive = |id: &BackendId| state.get(id).is_some_and(|b| b.alive);
    let copyable = |t: &TabletMeta| t.readable_replicas().any(|r| alive(&r));
    // The backend taking the fewest tablets that holds no replica of `t`.
    let target = |t: &TabletMeta| {
        backends
            .iter()
            .filter(|b| b.takes_replicas() && !t.replicas.contains(&b.id))
            .min_by_key(|b| (counts.get(&b.id).copied().unwrap_or(0), b.id))
            .map(|b| b.id)
    };
    let idle = |t: &TabletMeta| t.joining_replicas.is_empty();
    let phases: [(&'static str, Leaving); 2] = [
        ("clone of a lost backend's replicas", |b| b.lost),
        ("decommission", |b| b.decommissioned),
    ];
    for (why, leaving) in phases {
        for (table_id, t) in tablets.iter().filter(|(_, t)| idle(t) && copyable(t)) {
            let from = t
                .replicas
                .iter()
                .find(|r| state.get(r).is_some_and(leaving));
            if let (Some(from), Some(to)) = (from, target(t)) {
                let m = ReplicaMove {
                    table_id: *table_id,
                    tablet_id: t.id,
                    from: *from,
                    to,
                };
                return Some((m, why));
            }
        }
    }
    if !rebalance {
        return None;
    }
    let mut takers: Vec<(usize, BackendId)> = backends
        .iter()
        .filter(|b| b.takes_replicas())
        .map(|b| (counts.get(&b.id).copied().unwrap_or(0), b.id))
        .collect();
    takers.sort();
    for &(most, from) in takers.iter().rev() {
        for &(fewest, to) in &takers {
            if most <= fewest + 1 {
                break;
            }
            let movable = tablets.iter().find(|(_, t)| {
                idle(t)
                    && t.replicas.contains(&from)
                    && !t.replicas.contains(&to)
                    && t.stale_replicas.is_empty()
                    && t.replicas.iter().all(alive)
            });
            if let Some((table_id, t)) = movable {
                let m = ReplicaMove {
                    table_id: *table_id,
                    tablet_id: t.id,
                    from,
                    to,
                };
                return Some((m, "rebalance"));
            }
        }
    }
    None
}

/// Whether the backends that take replicas hold tablet counts at most one apart.
pub(crate) fn balanced(tablets: &[(TableId, TabletMeta)], backends: &[BackendState]) -> bool {
    let counts: Vec<usize> = backends
        .iter()
        .filter(|b| b.takes_replicas())
        .map(|b| {
            tablets
                .iter()
                .filter(|(_, t)| t.replicas.contains(&b.id))
                .count()
        })
        .collect();
    match (counts.iter().min(), counts.iter().max()) {
        (Some(min), Some(max)) => max - min <= 1,
        _ => true,
    }
}

/// The next move the cluster needs; clears the rebalance wish once there is none to make.
fn next_move(
    cluster: &Cluster,
    catalog: &dyn Catalog,
    clone_after: Duration,
) -> Option<(ReplicaMove, &'static str)> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let backends: Vec<BackendState> = cluster
        .health()
        .into_iter()
        .map(|(b, h)| BackendState {
            id: b.id,
            alive: h.alive,
            lost: !h.alive
                && h.down_since_ms
                    .is_some_and(|t| now - t >= clone_after.as_millis() as i64),
            decommissioned: b.decommissioned,
        })
        .collect();
    let tablets = all_tablets(catalog);
    let rebalance = cluster.rebalance_wanted(false);
    let planned = plan_move(&tablets, &backends, rebalance);
    // Done once balanced over every backend that takes replicas (an added one counts once it
    // answers); while tablets cannot move yet (a replica catching up, a backend down) the
    // wish stays.
    let all_answer = backends.iter().all(|b| b.alive || b.decommissioned);
    if rebalance && planned.is_none() && all_answer && balanced(&tablets, &backends) {
        cluster.rebalance_wanted(true);
        tracing::info!("tablets are balanced over the backends");
    }
    planned
}

/// Removes decommissioned backends that hold no replica any more (once their old files are
/// removed too).
fn remove_emptied_decommissioned(cluster: &Cluster, catalog: &dyn Catalog, removals: &[Removal]) {
    let mut holding: HashSet<BackendId> = all_tablets(catalog)
        .iter()
        .flat_map(|(_, t)| t.replicas.iter().copied())
        .collect();
    holding.extend(removals.iter().map(|r| r.backend));
    for backend in cluster.backends() {
        if backend.decommissioned && !holding.contains(&backend.id) {
            match catalog.drop_backend(&backend.address()) {
                Ok(()) => tracing::info!(
                    "backend {} decommissioned: its replicas moved, it left the cluster",
                    backend.address()
                ),
                Err(e) => tracing::warn!("removing backend {}: {e}", backend.address()),
            }
        }
    }
}

/// Has each backend that answers again (or first since this frontend started) remove the
/// files of tablets that exist but whose replicas it no longer holds. Runs between moves, so
/// no move can add the backend to such a tablet meanwhile.
async fn tidy_returning_backends(
    cluster: &Cluster,
    catalog: &dyn Catalog,
    tidied: &mut HashSet<BackendId>,
) {
    for (backend, health) in cluster.health() {
        if !health.alive {
            tidied.remove(&backend.id);
            continue;
        }
        if tidied.contains(&backend.id) {
            continue;
        }
        let Ok(answer) = cluster.action(&backend, LIST_TABLETS, Vec::new()).await else {
            continue;
        };
        let Ok(held) = serde_json::from_slice::<Vec<TabletDir>>(&answer) else {
            continue;
        };
        let stray: Vec<TabletDir> = held
            .into_iter()
            .filter(|d| {
                catalog.table_by_id(d.table_id).is_some_and(|t| {
                    t.tablets()
                        .any(|(_, t)| t.id == d.tablet_id && !t.replicas.contains(&backend.id))
                })
            })
            .collect();
        if !stray.is_empty() {
            tracing::info!(
                "backend {} holds files of {} tablets it no longer holds replicas of: removing them",
                backend.address(),
                stray.len()
            );
            let body = serde_json::to_vec(&stray).unwrap_or_default();
            if let Err(e) = cluster.action(&backend, REMOVE_TABLETS, body).await {
                tracing::warn!("tidying backend {}: {e}", backend.address());
                continue;
            }
        }
        tidied.insert(backend.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tablet(id: u64, replicas: &[u64]) -> (TableId, TabletMeta) {
        let mut t = basalt_catalog::PartitionMeta::empty(
            "p".into(),
            basalt_catalog::PartitionBound::All,
            1,
            || id,
        )
        .tablets
        .remove(0);
        t.replicas = replicas.to_vec();
        (1, t)
    }

    fn backend(id: u64) -> BackendState {
        BackendState {
            id,
            alive: true,
            lost: false,
            decommissioned: false,
        }
    }

    #[test]
    fn a_lost_backend_is_cloned_first_to_the_least_loaded_backend_holding_none() {
        let tablets = vec![
            tablet(10, &[1, 2, 3]),
            tablet(11, &[1, 2, 4]),
            tablet(12, &[2, 3, 4]),
        ];
        let mut backends: Vec<BackendState> = (1..=5).map(backend).collect();
        backends[0].alive = false;
        backends[0].lost = true;
        backends[3].decommissioned = true;
        let (m, why) = plan_move(&tablets, &backends, true).unwrap();
        assert_eq!(why, "clone of a lost backend's replicas");
        assert_eq!((m.tablet_id, m.from, m.to), (10, 1, 5));
        // Not lost yet (down, but under the timeout): the decommission goes first.
        backends[0].lost = false;
        let (m, why) = plan_move(&tablets, &backends, false).unwrap();
        assert_eq!(why, "decommission");
        assert_eq!((m.from, m.to), (4, 5));
        // Backend 5 down too: tablet 11 goes to 3, the only live backend holding none of it.
        backends[4].alive = false;
        let (m, _) = plan_move(&tablets, &backends, false).unwrap();
        assert_eq!((m.tablet_id, m.from, m.to), (11, 4, 3));
        // Nowhere to go: no move.
        backends[2].alive = false;
        assert!(plan_move(&tablets, &backends, false).is_none());
    }

    #[test]
    fn rebalancing_moves_from_the_most_loaded_to_the_least_until_within_one() {
        let mut tablets: Vec<(TableId, TabletMeta)> =
            (0..6).map(|i| tablet(20 + i, &[1, 2, 3])).collect();
        let backends: Vec<BackendState> = (1..=4).map(backend).collect();
        assert!(plan_move(&tablets, &backends, false).is_none());
        let mut moves = 0;
        while let Some((m, why)) = plan_move(&tablets, &backends, true) {
            assert_eq!(why, "rebalance");
            assert_eq!(m.to, 4);
            let t = &mut tablets
                .iter_mut()
                .find(|(_, t)| t.id == m.tablet_id)
                .unwrap()
                .1;
            t.replicas.retain(|r| *r != m.from);
            t.replicas.push(m.to);
            moves += 1;
            assert!(moves < 20);
        }
        // 18 replicas over 4 backends: 5, 5, 4, 4 (or so), each tablet on 3 distinct backends.
        let mut counts = [0usize; 5];
        for (_, t) in &tablets {
            let distinct: HashSet<&u64> = t.replicas.iter().collect();
            assert_eq!(distinct.len(), 3);
            for r in &t.replicas {
                counts[*r as usize] += 1;
            }
        }
        let (min, max) = (counts[1..].iter().min(), counts[1..].iter().max());
        assert!(max.unwrap() - min.unwrap() <= 1, "{counts:?}");
        assert_eq!(moves, 4);
        // A tablet with a stale replica stays where it is.
        let mut stale = vec![tablet(30, &[1, 2]), tablet(31, &[1, 2])];
        stale[0].1.stale_replicas = vec![2];
        stale[1].1.stale_replicas = vec![2];
        assert!(plan_move(&stale, &backends, true).is_none());
        // Not balanced yet, though nothing can move now: the balancer keeps trying.
        assert!(!balanced(&stale, &backends));
        assert!(balanced(&tablets, &backends));
    }
}
