//! How a tablet scan becomes distributed tasks: one task slot per backend (with one backend,
//! see [`crate::frontend_scans`]), each tablet scanned by the slot of the backend holding
//! the replica chosen for it, and each task routed to that backend — so a backend only ever
//! scans tablets it holds, and the frontend scans none. Only live backends get tasks, and only
//! readable (not stale) replicas on them are chosen.

use crate::cluster::{backend_url, Cluster};
use basalt_catalog::{BackendId, BackendMeta, TableMeta, TabletMeta};
use basalt_query::TabletScanExec;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_datafusion_err, DataFusionError, Result};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::placeholder_row::PlaceholderRowExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
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
        if is_constant_leaf(ev.plan) {
            // Any task count: one task produces the rows (see `scale_up_leaf`).
            return Some(Ok(DesiredTaskCountEventResponse::desired(1)));
        }
        if crate::single_task_inputs::runs_in_one_task(ev.plan.as_ref()) {
            return Some(Ok(DesiredTaskCountEventResponse::maximum(1)));
        }
        desired_task_count(&self.0, ev)
    }
}

impl ScaleUpLeafNodeHandler for ScanTasks {
    fn handle(&self, ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
        if is_constant_leaf(ev.plan) {
            return Some(once_in_first_task(ev.plan, ev.task_count));
        }
        scale_up_leaf(&self.0, ev)
    }
}

/// A leaf whose rows are in the plan itself (`SELECT 7`, an empty relation). Left to the
/// distributed engine, it would hold its whole stage to one task — and a stage of one task
/// runs on the frontend, which cannot scan tablets (`... UNION ALL SELECT 7`).
fn is_constant_leaf(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.is::<PlaceholderRowExec>() || plan.is::<EmptyExec>()
}

/// The leaf in the first of `task_count` tasks and nothing in the others: its rows once.
fn once_in_first_task(
    plan: &Arc<dyn ExecutionPlan>,
    task_count: usize,
) -> Result<ScaleUpLeafNodeEventResponse> {
    if task_count <= 1 {
        return Ok(ScaleUpLeafNodeEventResponse::new(plan.clone()));
    }
    let partitions = plan.output_partitioning().partition_count();
    let nothing: Arc<dyn ExecutionPlan> =
        Arc::new(EmptyExec::new(plan.schema()).with_partitions(partitions));
    let variants =
        std::iter::once(plan.clone()).chain(std::iter::repeat_n(nothing, task_count - 1));
    let leaf = DistributedLeafExec::try_new(plan.clone(), variants)?;
    Ok(ScaleUpLeafNodeEventResponse::new(Arc::new(leaf)))
}

impl RouteTasksHandler for ScanTasks {
    fn handle(&self, ev: RouteTasksEvent) -> Option<Result<RouteTasksEventResponse>> {
        route_tasks(&self.0, ev)
    }
}

/// Task slots a scan stage asks for: one per live backend.
fn slots(cluster: &Cluster) -> usize {
    cluster.live_backends().len().max(1)
}

fn desired_task_count(
    cluster: &Cluster,
    event: DesiredTaskCountEvent,
) -> Option<Result<DesiredTaskCountEventResponse>> {
    event.plan.downcast_ref::<TabletScanExec>()?;
    Some(Ok(DesiredTaskCountEventResponse::desired(slots(cluster))))
}

/// The replica a scan reads a tablet from: a readable one on a live backend (spread over
/// those by tablet id); an error naming the table, the tablet and its backends' state when
/// there is none, so the query fails at once rather than waiting on a dead backend.
fn chosen_replica(cluster: &Cluster, table: &TableMeta, tablet: &TabletMeta) -> Result<BackendId> {
    let order = crate::replica_choice::scan_order(cluster, table, tablet).map_err(to_df)?;
    order
        .first()
        .copied()
        .ok_or_else(|| plan_datafusion_err!("tablet {} has no replica to read", tablet.id))
}

/// `placed` with each tablet read from a replica on one of at most `task_count` backends
/// (chosen greedily, the backend serving the most tablets not yet covered first); `None` when
/// the tablets' readable replicas need more backends than that.
fn narrowed(
    cluster: &Cluster,
    table: &TableMeta,
    placed: &[(usize, TabletMeta, BackendId)],
    task_count: usize,
) -> Result<Option<Vec<(usize, TabletMeta, BackendId)>>> {
    let readable: Vec<Vec<BackendId>> = placed
        .iter()
        .map(|(_, tablet, _)| crate::replica_choice::scan_order(cluster, table, tablet))
        .collect::<basalt_common::Result<_>>()
        .map_err(to_df)?;
    let mut chosen: Vec<BackendId> = Vec::new();
    let mut uncovered: Vec<usize> = (0..placed.len()).collect();
    while !uncovered.is_empty() && chosen.len() < task_count {
        let candidates: BTreeSet<BackendId> = uncovered
            .iter()
            .flat_map(|i| readable[*i].iter().copied())
            .collect();
        let Some(best) = candidates.into_iter().max_by_key(|b| {
            uncovered
                .iter()
                .filter(|i| readable[**i].contains(b))
                .count()
        }) else {
            return Ok(None);
        };
        chosen.push(best);
        uncovered.retain(|i| !readable[*i].contains(&best));
    }
    if !uncovered.is_empty() {
        return Ok(None);
    }
    Ok(placed
        .iter()
        .zip(&readable)
        .map(|((pi, tablet, _), replicas)| {
            replicas
                .iter()
                .find(|r| chosen.contains(r))
                .map(|r| (*pi, tablet.clone(), *r))
        })
        .collect())
}

fn to_df(e: basalt_common::BasaltError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

fn scale_up_leaf(
    cluster: &Cluster,
    event: ScaleUpLeafNodeEvent,
) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = event.plan.downcast_ref::<TabletScanExec>()?;
    Some(
        split_scan(cluster, event.plan, scan, event.task_count)
            .map(ScaleUpLeafNodeEventResponse::new),
    )
}

/// `scan` (the node `original`) as `task_count` task slots, each with the tablets of one
/// backend to read there.
pub(crate) fn split_scan(
    cluster: &Cluster,
    original: &Arc<dyn ExecutionPlan>,
    scan: &TabletScanExec,
    task_count: usize,
) -> Result<Arc<dyn ExecutionPlan>> {
    let backends: Vec<BackendMeta> = cluster.live_backends();
    let table = &scan.spec().table;
    let mut placed: Vec<(usize, TabletMeta, BackendId)> = Vec::new();
    for (pi, partition) in table.partitions.iter().enumerate() {
        for tablet in &partition.tablets {
            let replica = chosen_replica(cluster, table, tablet)?;
            if !backends.iter().any(|b| b.id == replica) {
                return Err(plan_datafusion_err!(
                    "tablet {} is on unknown backend {replica}",
                    tablet.id
                ));
            }
            placed.push((pi, tablet.clone(), replica));
        }
    }
    // Which backend each task slot runs on: every backend in turn when the stage has a slot
    // for each; else (a stage the planner keeps narrow) only the backends this scan needs.
    // A decommissioned backend takes no task unless a tablet can be read only there.
    let slot_order = |placed: &[(usize, TabletMeta, BackendId)]| {
        let mut order: Vec<BackendId> = backends
            .iter()
            .filter(|b| !b.decommissioned || placed.iter().any(|(_, _, r)| *r == b.id))
            .map(|b| b.id)
            .collect();
        if task_count < order.len() {
            order.retain(|id| placed.iter().any(|(_, _, r)| r == id));
        }
        order
    };
    let mut order = slot_order(&placed);
    // Fewer slots than backends to read from: the task count was set before a backend came
    // back. Each tablet is then read from a replica on at most `task_count` backends, when its
    // replicas allow.
    if task_count > 0 && task_count < order.len() {
        if let Some(narrowed) = narrowed(cluster, table, &placed, task_count)? {
            placed = narrowed;
            order = slot_order(&placed);
        }
    }
    if order.is_empty() {
        order = backends.iter().map(|b| b.id).take(1).collect();
    }
    if task_count == 0 || task_count < order.len() {
        return Err(plan_datafusion_err!(
            "a scan of tablets on {} backend(s) cannot run as {task_count} task(s)",
            order.len()
        ));
    }
    let slot_backend: Vec<BackendId> = (0..task_count).map(|i| order[i % order.len()]).collect();
    // A backend's tablets are dealt over its slots.
    let mut shares: Vec<Vec<(usize, TabletMeta)>> = vec![Vec::new(); task_count];
    let mut dealt: std::collections::HashMap<BackendId, usize> = Default::default();
    for (pi, tablet, replica) in placed {
        let slots: Vec<usize> = (0..task_count)
            .filter(|i| slot_backend[*i] == replica)
            .collect();
        let turn = dealt.entry(replica).or_default();
        let slot = *slots
            .get(*turn % slots.len().max(1))
            .ok_or_else(|| plan_datafusion_err!("no task slot on backend {replica}"))?;
        *turn += 1;
        shares[slot].push((pi, tablet));
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
            exec.place_on(slot_backend[slot]);
            Ok(Arc::new(exec) as Arc<dyn ExecutionPlan>)
        })
        .collect::<Result<Vec<_>>>()?;
    let leaf = DistributedLeafExec::try_new(original.clone(), variants)?;
    Ok(Arc::new(leaf))
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
    let backends = cluster.working_backends();
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
