//! Keeps tablet scans off the frontend under operators that must run in a single task (a
//! null-aware anti join, i.e. `NOT IN`; a nested-loop join that emits unmatched left rows; an
//! aggregation over grouping sets without grouping columns; a subquery evaluated per outer
//! row; an async function such as SLEEP; a UNION of a single-partition input and a spread one): such a stage is folded into the frontend's own part of the plan, and the frontend
//! holds no tablets. Gathering each input of those operators makes their inputs stages of
//! their own, which run on the backends; the operator itself then runs on the frontend, as
//! it would have anyway. Where gathering loses an order an operator above requires, a sort
//! restores it.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{JoinType, Result};
use datafusion::config::ConfigOptions;
use datafusion::physical_expr_common::sort_expr::{LexOrdering, OrderingRequirements};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::joins::{HashJoinExec, NestedLoopJoinExec, PartitionMode};
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct GatherSingleTaskInputs;

/// Join types whose left (build) side may be split over tasks: they emit no unmatched left row.
fn left_side_splittable(join_type: &JoinType) -> bool {
    matches!(
        join_type,
        JoinType::Inner | JoinType::Right | JoinType::RightSemi | JoinType::RightAnti
    )
}

pub(crate) fn runs_in_one_task(plan: &dyn ExecutionPlan) -> bool {
    // A subquery run per outer row, an async function (SLEEP) and grouping sets without a
    // grouping column run on the frontend (see `frontend_scans::stays_on_frontend`).
    if crate::frontend_scans::stays_on_frontend(plan) {
        return true;
    }
    if let Some(join) = plan.downcast_ref::<HashJoinExec>() {
        return join.mode == PartitionMode::CollectLeft
            && (join.null_aware || !left_side_splittable(join.join_type()));
    }
    if let Some(join) = plan.downcast_ref::<NestedLoopJoinExec>() {
        return !left_side_splittable(join.join_type());
    }
    // A UNION of an input held to one partition (a final aggregate: `SELECT x FROM t UNION
    // ALL SELECT count(*) FROM t`) and one spread over partitions would put a tablet scan in
    // a stage of one task, on the frontend: its inputs become stages of their own instead.
    if plan.is::<UnionExec>() {
        let partitions: Vec<usize> = plan
            .children()
            .iter()
            .map(|c| c.output_partitioning().partition_count())
            .collect();
        return partitions.contains(&1) && partitions.iter().any(|p| *p > 1);
    }
    false
}

/// Sorts again where gathering lost an order an operator above requires: each partition of a
/// UNION of constants is sorted, their concatenation in one partition is not, and a merge
/// above that relied on the partitions' order would pass the rows on unsorted.
fn restore_required_orderings(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let requirements = node.required_input_ordering();
        let mut changed = false;
        let mut children = Vec::with_capacity(requirements.len());
        for (child, requirement) in node.children().into_iter().zip(requirements) {
            let Some(OrderingRequirements::Hard(alternatives)) = requirement else {
                children.push(child.clone());
                continue;
            };
            let properties = child.equivalence_properties();
            let satisfied = alternatives.iter().any(|r| {
                properties
                    .ordering_satisfy_requirement(r.clone())
                    .unwrap_or(false)
            });
            match alternatives.into_iter().next() {
                Some(required) if !satisfied => {
                    changed = true;
                    let sort = SortExec::new(LexOrdering::from(required), child.clone())
                        .with_preserve_partitioning(true);
                    children.push(Arc::new(sort) as Arc<dyn ExecutionPlan>);
                }
                _ => children.push(child.clone()),
            }
        }
        if !changed {
            return Ok(Transformed::no(node));
        }
        Ok(Transformed::yes(node.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )?))
    })
    .map(|t| t.data)
}

impl PhysicalOptimizerRule for GatherSingleTaskInputs {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            if !runs_in_one_task(node.as_ref()) {
                return Ok(Transformed::no(node));
            }
            let mut changed = false;
            let children = node
                .children()
                .into_iter()
                .map(|c| {
                    if c.is::<CoalescePartitionsExec>() || c.is::<SortPreservingMergeExec>() {
                        return c.clone();
                    }
                    changed = true;
                    // Sorted input stays sorted (the operator may pass the order up to a
                    // merge that relies on it).
                    match c.output_ordering() {
                        Some(ordering) => {
                            Arc::new(SortPreservingMergeExec::new(ordering.clone(), c.clone()))
                                as Arc<dyn ExecutionPlan>
                        }
                        None => Arc::new(CoalescePartitionsExec::new(c.clone())),
                    }
                })
                .collect();
            if !changed {
                return Ok(Transformed::no(node));
            }
            // The inputs are gathered into one partition each: recompute what the join offers.
            Ok(Transformed::yes(node.replace_children(
                children,
                ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
            )?))
        })
        .map(|t| t.data)
        .and_then(restore_required_orderings)
    }

    fn name(&self) -> &str {
        "basalt_gather_single_task_inputs"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
