//! Where statements are planned. Planning is CPU work that cannot be interrupted, and its cost
//! grows with the statement: a statement of hundreds of thousands of expressions (within every
//! shape limit) plans for seconds. Planned on the execution threads, a few of them at once
//! would leave no thread for other sessions' queries. So a statement with more than
//! [`LARGE_STATEMENT_EXPRESSIONS`] expressions is planned on a blocking thread, one such
//! statement at a time; every other statement plans where it runs, at no extra cost. Either
//! way planning spends the statement's [`PlanningBudget`]: a killed or timed-out statement
//! stops planning at the next rule and frees the lane.

use crate::planning_budget::PlanningBudget;
use basalt_common::{BasaltError, Result};
use std::future::Future;
use tokio::sync::Semaphore;

/// Statements with more expressions than this are planned in the lane.
pub const LARGE_STATEMENT_EXPRESSIONS: usize = 20_000;

/// One large statement plans at a time.
static LANE: Semaphore = Semaphore::const_new(1);

/// Runs the planning step `work` of a statement with `expressions` expressions under its
/// `budget`: inline for an ordinary statement, in the lane for a large one. A session that
/// stops waiting (KILL, a closed connection) leaves the lane held until the planning it
/// started reaches its next checkpoint.
pub async fn plan<T: Send + 'static>(
    expressions: usize,
    budget: PlanningBudget,
    work: impl Future<Output = T> + Send + 'static,
) -> Result<T> {
    let work = budget.spend(work);
    if expressions <= LARGE_STATEMENT_EXPRESSIONS {
        return Ok(work.await);
    }
    let permit = LANE
        .acquire()
        .await
        .map_err(|_| BasaltError::Internal("the planning lane is closed".into()))?;
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        runtime.block_on(work)
    })
    .await
    .map_err(|e| BasaltError::Internal(format!("planning failed: {e}")))
}
