//! MySQL's `@@cte_max_recursion_depth` on recursive CTEs. DataFusion runs a recursive term
//! again for as long as its last run gave rows, with no limit, so a recursion that never ends
//! (`WITH RECURSIVE s AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM s) ..`) ran until memory
//! ran out. Each recursive query's terms get a shared count: its static term sets it to zero
//! when the query starts, and each run of its recursive term adds one; the run past the limit
//! fails with MySQL's 3636.
//!
//! A recursive CTE's LIMIT travels in its name ([`limited_recursion_name`]): a Limit node in
//! the logical plan would let DataFusion sort the recursion's rows before limiting them (a
//! LIMIT without ORDER BY may pick any rows), which reads a recursion that only the LIMIT
//! ends to its depth limit. Here the limit goes straight above the recursion, where it stops
//! reading (and so the recursion) after its rows, in the order they were made, as in MySQL.

use basalt_common::df_error::to_df;
use basalt_common::BasaltError;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{internal_err, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::limit::GlobalLimitExec;
use datafusion::physical_plan::recursive_query::RecursiveQueryExec;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The physical rule that counts the iterations of every recursive CTE.
#[derive(Debug, Default)]
pub struct RecursionDepth;

impl PhysicalOptimizerRule for RecursionDepth {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let limit = config
            .extensions
            .get::<basalt_functions::MySqlOptions>()
            .map_or(1000, |o| o.cte_max_recursion_depth);
        plan.transform_up(|node| {
            let Some(recursive) = node.downcast_ref::<RecursiveQueryExec>() else {
                return Ok(Transformed::no(node));
            };
            // Counted already (the term may sit under the projection DataFusion adds).
            let term = recursive.recursive_term();
            let counted = |p: &Arc<dyn ExecutionPlan>| {
                p.downcast_ref::<IterationCount>()
                    .is_some_and(|c| c.role == Role::Iteration)
            };
            if counted(term) || term.children().first().is_some_and(|c| counted(c)) {
                return Ok(Transformed::no(node));
            }
            let runs = Arc::new(AtomicU64::new(0));
            let count = |input: &Arc<dyn ExecutionPlan>, role| -> Arc<dyn ExecutionPlan> {
                Arc::new(IterationCount {
                    input: input.clone(),
                    runs: runs.clone(),
                    role,
                    limit,
                })
            };
            let counted: Arc<dyn ExecutionPlan> = Arc::new(RecursiveQueryExec::try_new(
                recursive.name().to_string(),
                recursive.schema(),
                count(recursive.static_term(), Role::Start),
                count(recursive.recursive_term(), Role::Iteration),
                recursive.is_distinct(),
            )?);
            Ok(Transformed::yes(match recursion_limit(recursive.name()) {
                Some((skip, fetch)) => Arc::new(GlobalLimitExec::new(counted, skip, Some(fetch))),
                None => counted,
            }))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "cte_max_recursion_depth"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// What marks a recursive CTE's name as carrying its LIMIT.
const LIMIT_MARK: &str = "__basalt_limit_";

/// The name a recursive CTE named `name` takes to carry `LIMIT skip, fetch`.
pub fn limited_recursion_name(name: &str, skip: usize, fetch: usize) -> String {
    format!("{name}{LIMIT_MARK}{skip}_{fetch}")
}

/// The `(skip, fetch)` a recursive CTE's name carries.
fn recursion_limit(name: &str) -> Option<(usize, usize)> {
    let (_, limit) = name.rsplit_once(LIMIT_MARK)?;
    let (skip, fetch) = limit.split_once('_')?;
    Some((skip.parse().ok()?, fetch.parse().ok()?))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Above the static term: a new run of the query starts counting from zero.
    Start,
    /// Above the recursive term: one more iteration.
    Iteration,
}

/// A pass-through node that counts the runs of the term beneath it.
#[derive(Debug)]
struct IterationCount {
    input: Arc<dyn ExecutionPlan>,
    runs: Arc<AtomicU64>,
    role: Role,
    limit: u64,
}

impl DisplayAs for IterationCount {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.role {
            Role::Start => write!(f, "RecursionStart"),
            Role::Iteration => write!(f, "RecursionIteration: max={}", self.limit),
        }
    }
}

impl ExecutionPlan for IterationCount {
    fn name(&self) -> &str {
        "IterationCount"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (Some(input), true) = (children.pop(), children.is_empty()) else {
            return internal_err!("IterationCount takes one input");
        };
        Ok(Arc::new(IterationCount {
            input,
            runs: self.runs.clone(),
            role: self.role,
            limit: self.limit,
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        match self.role {
            Role::Start => self.runs.store(0, Ordering::Relaxed),
            Role::Iteration => {
                let run = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
                if run > self.limit {
                    return Err(to_df(BasaltError::RecursionDepth(run)));
                }
            }
        }
        self.input.execute(partition, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_travels_in_the_name() {
        let name = limited_recursion_name("s", 3, 5);
        assert_eq!(recursion_limit(&name), Some((3, 5)));
        assert_eq!(recursion_limit("s"), None);
        assert_eq!(recursion_limit("s__basalt_limit_x_5"), None);
    }
}
