//! Planning that can be stopped. DataFusion's analyzer, optimizer and physical optimizer run
//! rule after rule with no way to interrupt them; Basalt puts a checkpoint before every rule.
//! The checkpoint fails the planning when the statement has been cancelled (KILL, its time
//! limit, a closed connection) or when planning has run past its own limit
//! (`nereids_timeout_second`), so neither a killed statement nor an endless optimization holds
//! a thread (or the planning lane) for longer than one rule takes.
//!
//! The budget of the statement being planned travels with the planning future (a task-local),
//! so the session's shared rule lists need no per-statement state.

use basalt_common::BasaltError;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::LogicalPlan;
use datafusion::optimizer::{AnalyzerRule, OptimizerConfig, OptimizerRule};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What may stop a statement's planning.
#[derive(Debug, Clone, Default)]
pub struct PlanningBudget {
    /// The statement's cancellation token.
    pub cancel: Option<CancellationToken>,
    /// How long planning may take, and the error's explanation when it takes longer.
    pub limit: Option<(Duration, String)>,
}

/// A budget being spent: the limit turned into a deadline when planning began.
#[derive(Debug)]
struct Spending {
    cancel: Option<CancellationToken>,
    deadline: Option<(Instant, String)>,
}

tokio::task_local! {
    static SPENDING: Spending;
}

impl PlanningBudget {
    /// Runs `work` (planning) under this budget; its clock starts now.
    pub async fn spend<F: Future>(self, work: F) -> F::Output {
        let spending = Spending {
            cancel: self.cancel,
            // A limit too far away to represent is no limit.
            deadline: self.limit.and_then(|(limit, what)| {
                Instant::now()
                    .checked_add(limit)
                    .map(|deadline| (deadline, what))
            }),
        };
        SPENDING.scope(spending, work).await
    }
}

/// Fails when the budget of the planning in progress is spent; outside a budget, passes.
fn check() -> Result<()> {
    SPENDING
        .try_with(|s| {
            if s.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                return Err(BasaltError::QueryInterrupted);
            }
            match &s.deadline {
                Some((deadline, what)) if Instant::now() >= *deadline => {
                    Err(BasaltError::QueryTimeout(what.clone()))
                }
                _ => Ok(()),
            }
        })
        .unwrap_or(Ok(()))
        .map_err(|e| DataFusionError::External(Box::new(e)))
}

/// The checkpoint, as a rule of each of the three kinds; it never changes the plan.
#[derive(Debug)]
pub struct PlanningCheckpoint;

/// The checkpoint's rule name (EXPLAIN VERBOSE leaves its steps out).
pub const CHECKPOINT_NAME: &str = "basalt_planning_checkpoint";

impl AnalyzerRule for PlanningCheckpoint {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        check().map(|_| plan)
    }

    fn name(&self) -> &str {
        CHECKPOINT_NAME
    }
}

impl OptimizerRule for PlanningCheckpoint {
    fn name(&self) -> &str {
        CHECKPOINT_NAME
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        check().map(|_| Transformed::no(plan))
    }
}

impl PhysicalOptimizerRule for PlanningCheckpoint {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        check().map(|_| plan)
    }

    fn name(&self) -> &str {
        CHECKPOINT_NAME
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `rules` with `checkpoint` before each of them.
pub fn with_checkpoints<R: ?Sized>(rules: Vec<Arc<R>>, checkpoint: Arc<R>) -> Vec<Arc<R>> {
    rules
        .into_iter()
        .flat_map(|rule| [checkpoint.clone(), rule])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_spent_budget_fails_the_checkpoint() {
        assert!(check().is_ok(), "outside a budget every checkpoint passes");
        let cancel = CancellationToken::new();
        let budget = PlanningBudget {
            cancel: Some(cancel.clone()),
            limit: Some((Duration::from_millis(50), "too long".into())),
        };
        budget
            .spend(async {
                assert!(check().is_ok());
                tokio::time::sleep(Duration::from_millis(60)).await;
                let e = basalt_common::df_error::from_df(check().unwrap_err());
                assert_eq!(e.mysql_code(), 3024, "{e}");
            })
            .await;
        let killed = PlanningBudget {
            cancel: Some(cancel.clone()),
            limit: None,
        };
        cancel.cancel();
        let endless = PlanningBudget {
            cancel: None,
            limit: Some((Duration::from_secs(u64::MAX), "never".into())),
        };
        endless.spend(async { assert!(check().is_ok()) }).await;
        killed
            .spend(async {
                let e = basalt_common::df_error::from_df(check().unwrap_err());
                assert!(matches!(e, BasaltError::QueryInterrupted), "{e}");
            })
            .await;
    }
}
