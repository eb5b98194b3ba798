//! Tablet scans the distributed planner would leave to the frontend run on their backend. The
//! planner folds every stage of one task into the frontend's own part of the plan: with one
//! backend, every stage has one task, and the frontend holds no tablets. Such a plan runs
//! instead as one task on the backend, under a single gather to the frontend: the largest
//! parts of the plan that contain a tablet scan and can travel become one-task stages, and
//! only their results cross the network (no shuffle between tasks of one backend).

use crate::cluster::Cluster;
use crate::scan_tasks::split_scan;
use basalt_query::{SubqueryApplyExec, TabletScanExec};
use datafusion::catalog::Session;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{internal_err, Result};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::aggregates::AggregateExec;
use datafusion::physical_plan::analyze::AnalyzeExec;
use datafusion::physical_plan::async_func::AsyncFuncExec;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::placeholder_row::PlaceholderRowExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion_distributed::{
    DistributedConfig, DistributedExec, MaybeEncoded, NetworkBoundary, NetworkBoundaryExt,
    NetworkCoalesceExec, Stage,
};
use datafusion_proto::protobuf::PhysicalPlanNode;
use prost::Message;
use std::sync::Arc;

/// The distributed planner (`inner`), then [`run_scans_on_backends`] on what it left whole.
#[derive(Debug)]
pub struct FrontendScansPlanner {
    pub inner: Arc<dyn QueryPlanner + Send + Sync>,
    pub cluster: Arc<Cluster>,
}

#[async_trait::async_trait]
impl QueryPlanner for FrontendScansPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self
            .inner
            .create_physical_plan(logical_plan, session)
            .await?;
        let collect_metrics =
            DistributedConfig::from_config_options(session.config_options())?.collect_metrics;
        run_scans_on_backends(&self.cluster, plan, &session.task_ctx(), collect_metrics)
    }
}

/// `plan` (as the distributed planner left it) with its tablet scans in stages on their
/// backend, when the planner put none there (no network boundary); else `plan` itself.
/// `context` encodes plans as the distributed engine will send them; with `collect_metrics`,
/// the backends report their operators' metrics (as the planner's own plans do).
pub fn run_scans_on_backends(
    cluster: &Cluster,
    plan: Arc<dyn ExecutionPlan>,
    context: &Arc<TaskContext>,
    collect_metrics: bool,
) -> Result<Arc<dyn ExecutionPlan>> {
    // EXPLAIN ANALYZE: its input.
    if let Some(analyze) = plan.downcast_ref::<AnalyzeExec>() {
        let input =
            run_scans_on_backends(cluster, analyze.input().clone(), context, collect_metrics)?;
        return plan.clone().replace_children(
            vec![input],
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        );
    }
    if plan.is::<DistributedExec>()
        || !has_tablet_scan(&plan)?
        || plan.exists(|node| Ok(node.is_network_boundary()))?
    {
        return Ok(plan);
    }
    // The distributed engine's head answers one partition.
    let plan = match plan.output_partitioning().partition_count() {
        1 => plan,
        _ => Arc::new(CoalescePartitionsExec::new(plan)) as Arc<dyn ExecutionPlan>,
    };
    let mut stages = Stages {
        cluster,
        context,
        query: uuid::Uuid::new_v4(),
        next: 1,
    };
    let mut plan = stages.place(plan)?;
    // The engine draws (and collects metrics of) the stages below its head's operators: a
    // gather of the whole plan gets a head above it (of one partition, it passes rows on).
    if plan.is_network_boundary() {
        plan = Arc::new(CoalescePartitionsExec::new(plan));
    }
    Ok(Arc::new(
        DistributedExec::new(plan).with_metrics_collection(collect_metrics),
    ))
}

/// Numbers the stages of one query.
struct Stages<'a> {
    cluster: &'a Cluster,
    context: &'a Arc<TaskContext>,
    query: uuid::Uuid,
    next: usize,
}

impl Stages<'_> {
    /// `plan`, its largest parts that contain a tablet scan and can travel each made a stage.
    fn place(&mut self, plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
        if !has_tablet_scan(&plan)? {
            return Ok(plan);
        }
        if travels(&plan, self.context)? {
            return self.stage(plan);
        }
        let children = plan
            .children()
            .into_iter()
            .map(|c| self.place(c.clone()))
            .collect::<Result<Vec<_>>>()?;
        plan.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    /// `plan` as one task on the backend holding its tablets, gathered to the frontend.
    fn stage(&mut self, plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
        // A repartition at the top of a stage is the engine's to set (its producer head): a
        // worker runs the stage without it. It stays here, above the gather.
        if let Some(repartition) = plan.downcast_ref::<RepartitionExec>() {
            let input = self.stage(repartition.input().clone())?;
            return plan.clone().replace_children(
                vec![input],
                ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
            );
        }
        let cluster = self.cluster;
        let placed = plan
            .transform_up(|node| match node.downcast_ref::<TabletScanExec>() {
                Some(scan) => Ok(Transformed::yes(split_scan(cluster, &node, scan, 1)?)),
                None => Ok(Transformed::no(node)),
            })?
            .data;
        let gather = NetworkCoalesceExec::try_new(placed, 1, 1)?;
        // The stage is named as the distributed planner names its own: the query's id and a
        // number of its own (workers key tasks by both).
        let Stage::Local(mut stage) = gather.input_stage().clone() else {
            return internal_err!("a new gather's stage is remote");
        };
        stage.query_id = self.query;
        stage.num = self.next;
        self.next += 1;
        let gather = gather.with_input_stage(Stage::Local(stage))?;
        Ok(gather as Arc<dyn ExecutionPlan>)
    }
}

fn has_tablet_scan(plan: &Arc<dyn ExecutionPlan>) -> Result<bool> {
    plan.exists(|node| Ok(node.is::<TabletScanExec>()))
}

/// Whether every operator of `plan` can run on a backend: its leaves are tablet scans or
/// constant rows, none is one that stays on the frontend (a subquery evaluated per outer
/// row, which plans queries of its own; an async function; grouping sets without a grouping
/// column: the last two do not survive the wire form), and the plan has a wire form (a
/// load's sink, for one, has none) a backend can read.
fn travels(plan: &Arc<dyn ExecutionPlan>, context: &Arc<TaskContext>) -> Result<bool> {
    let mut travels = true;
    plan.apply(|node| {
        // Constant rows of several partitions come back from the wire form in one.
        let constant = node.is::<PlaceholderRowExec>() || node.is::<EmptyExec>();
        let leaf_ok = !node.children().is_empty()
            || node.is::<TabletScanExec>()
            || (constant && node.output_partitioning().partition_count() == 1);
        if !leaf_ok || stays_on_frontend(node.as_ref()) {
            travels = false;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    if !travels {
        return Ok(false);
    }
    // Encoded, and decodable: protobuf decoding refuses messages nested deeper than 100
    // levels, which a plan of nested joins and subqueries reaches on its way to a backend.
    Ok(MaybeEncoded::Decoded(plan.clone())
        .encode(context)
        .is_ok_and(|bytes| PhysicalPlanNode::decode(bytes.as_slice()).is_ok()))
}

pub(crate) fn stays_on_frontend(plan: &dyn ExecutionPlan) -> bool {
    if plan.is::<SubqueryApplyExec>() || plan.is::<AsyncFuncExec>() {
        return true;
    }
    plan.downcast_ref::<AggregateExec>().is_some_and(|a| {
        let group_by = a.group_expr();
        group_by.has_grouping_set() && group_by.expr().is_empty()
    })
}
