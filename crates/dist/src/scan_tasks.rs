//! How a tablet scan becomes distributed tasks: one task slot per backend (at least two, see
//! [`crate::cluster::BackendWorkers`]), each tablet scanned by the slot of the backend holding
//! the replica chosen for it, and each task routed to that backend — so a backend only ever
//! scans tablets it holds, and the frontend scans none.

use crate::cluster::{backend_url, Cluster};
use basalt_catalog::{BackendId, BackendMeta, TableMeta, TabletMeta};
use basalt_query::TabletScanExec;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_datafusion_err, DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DesiredTaskCountHandler,
    DistributedLeafExec, NetworkBoundaryExt, RouteTasksEvent, RouteTasksEventResponse,
    RouteTasksHandler, ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse, ScaleUpLeafNodeHandler,
};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The distributed planner's handlers for tablet scans.
pub struct ScanTasks(pub Arc<Cluster>);

#[async_trait::async_trait]
impl DesiredTaskCountHandler for ScanTasks {
    async fn handle(
        &self,
        ev: DesiredTaskCountEvent<'_>,
    ) -> Option<Result<DesiredTaskCountEventResponse>> {
        desired_task_count(&self.0, ev)
    }
}

impl ScaleUpLeafNodeHandler for ScanTasks {
    fn handle(&self, ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
        scale_up_leaf(&self.0, ev)
    }
}

impl RouteTasksHandler for ScanTasks {
    fn handle(&self, ev: RouteTasksEvent) -> Option<Result<RouteTasksEventResponse>> {
        route_tasks(&self.0, ev)
    }
}

/// Task slots a scan stage asks for: one per backend, at least two.
fn slots(cluster: &Cluster) -> usize {
    cluster.backends().len().max(2)
}

fn desired_task_count(
    cluster: &Cluster,
    event: DesiredTaskCountEvent,
) -> Option<Result<DesiredTaskCountEventResponse>> {
    event.plan.downcast_ref::<TabletScanExec>()?;
    Some(Ok(DesiredTaskCountEventResponse::desired(slots(cluster))))
}

/// The replica a scan reads a tablet from (spread over replicas by tablet id).
fn chosen_replica(tablet: &TabletMeta) -> Option<BackendId> {
    let n = tablet.replicas.len();
    (n > 0).then(|| tablet.replicas[(tablet.id % n as u64) as usize])
}

fn scale_up_leaf(
    cluster: &Cluster,
    event: ScaleUpLeafNodeEvent,
) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = event.plan.downcast_ref::<TabletScanExec>()?;
    Some(split(cluster, event.plan, scan, event.task_count))
}

fn split(
    cluster: &Cluster,
    original: &Arc<dyn ExecutionPlan>,
    scan: &TabletScanExec,
    task_count: usize,
) -> Result<ScaleUpLeafNodeEventResponse> {
    let backends: Vec<BackendMeta> = cluster.backends();
    let n = backends.len();
    if n == 0 || task_count < n {
        return Err(plan_datafusion_err!(
            "a tablet scan over {n} backend(s) cannot run as {task_count} task(s)"
        ));
    }
    // Slot i runs on backends[i % n]; a backend's tablets are dealt over its slots.
    let table = &scan.spec().table;
    let mut shares: Vec<Vec<(usize, TabletMeta)>> = vec![Vec::new(); task_count];
    let mut next_slot: Vec<usize> = (0..n).collect();
    for (pi, partition) in table.partitions.iter().enumerate() {
        for tablet in &partition.tablets {
            let replica = chosen_replica(tablet).ok_or_else(|| {
                plan_datafusion_err!("tablet {} has no replica on any backend", tablet.id)
            })?;
            let b = backends
                .iter()
                .position(|b| b.id == replica)
                .ok_or_else(|| {
                    plan_datafusion_err!("tablet {} is on unknown backend {replica}", tablet.id)
                })?;
            let slot = next_slot[b];
            next_slot[b] = if slot + n < task_count { slot + n } else { b };
            shares[slot].push((pi, tablet.clone()));
        }
    }
    let variants = shares
        .into_iter()
        .enumerate()
        .map(|(slot, tablets)| {
            let mut share: TableMeta = (**table).clone();
            for (pi, partition) in share.partitions.iter_mut().enumerate() {
                partition.tablets = tablets
                    .iter()
                    .filter(|(p, _)| *p == pi)
                    .map(|(_, t)| t.clone())
                    .collect();
            }
            share.partitions.retain(|p| !p.tablets.is_empty());
            let mut exec = scan.with_table(Arc::new(share))?;
            exec.place_on(backends[slot % n].id);
            Ok(Arc::new(exec) as Arc<dyn ExecutionPlan>)
        })
        .collect::<Result<Vec<_>>>()?;
    let leaf = DistributedLeafExec::try_new(original.clone(), variants)?;
    Ok(ScaleUpLeafNodeEventResponse::new(Arc::new(leaf)))
}

/// Routes each task of a stage that scans tablets to the backend its shares were placed on.
fn route_tasks(
    cluster: &Cluster,
    event: RouteTasksEvent,
) -> Option<Result<RouteTasksEventResponse>> {
    let mut placements: Vec<BTreeSet<BackendId>> = vec![BTreeSet::new(); event.task_count];
    let mut found = false;
    let walk = event.plan.apply(|node| {
        if node.is_network_boundary() {
            return Ok(TreeNodeRecursion::Jump);
        }
        if let Some(leaf) = node.downcast_ref::<DistributedLeafExec>() {
            if leaf.original().downcast_ref::<TabletScanExec>().is_some() {
                found = true;
                for (slot, variant) in leaf.variants().iter().enumerate() {
                    let placed = variant
                        .downcast_ref::<TabletScanExec>()
                        .and_then(|s| s.spec().placed_on);
                    if let (Some(id), Some(set)) = (placed, placements.get_mut(slot)) {
                        set.insert(id);
                    }
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    if let Err(e) = walk {
        return Some(Err(e));
    }
    if !found {
        return None;
    }
    Some(urls(cluster, placements))
}

fn urls(
    cluster: &Cluster,
    placements: Vec<BTreeSet<BackendId>>,
) -> Result<RouteTasksEventResponse> {
    let backends = cluster.backends();
    let to_df = |e: basalt_common::BasaltError| DataFusionError::External(Box::new(e));
    let mut urls = Vec::with_capacity(placements.len());
    for (slot, placed) in placements.into_iter().enumerate() {
        let backend = match placed.len() {
            0 => backends.get(slot % backends.len().max(1)).cloned(),
            1 => {
                let id = placed.into_iter().next().unwrap_or_default();
                Some(cluster.backend(id).map_err(to_df)?)
            }
            _ => {
                return Err(plan_datafusion_err!(
                    "task {slot} of a stage would scan tablets of several backends"
                ))
            }
        };
        let backend = backend.ok_or_else(|| plan_datafusion_err!("the cluster has no backends"))?;
        urls.push(backend_url(&backend).map_err(to_df)?);
    }
    Ok(RouteTasksEventResponse::new(urls))
}
