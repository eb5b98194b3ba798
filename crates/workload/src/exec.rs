//! Accounting and CPU throttling inside a query's physical plan: every operator is wrapped so
//! that each poll of its stream runs inside a [`PollFrame`] (its thread CPU time is charged to
//! the query and its group) and, while the group's CPU bucket is in debt, the stream pauses
//! instead of polling its input. Because every operator is wrapped, work in tasks DataFusion
//! spawns (repartitioning, merging) is charged and paused too, on whatever thread runs it.
//!
//! The wrapper is invisible to the rest of DataFusion: it reports the wrapped operator's name,
//! properties, children, metrics and display, and delegates downcasts to it, so `EXPLAIN
//! ANALYZE` and plan inspection look as before.

use crate::accounting::{PollFrame, QueryAccount};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Result, Statistics};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::execution_plan::{ChildrenPropertiesMode, ReplaceChildrenOptions};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::Stream;
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Wraps every operator of `plan` so that running it charges `account` (and is paused by its
/// group's CPU limit).
pub fn account_plan(
    plan: Arc<dyn ExecutionPlan>,
    account: &Arc<QueryAccount>,
) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let wrapped: Arc<dyn ExecutionPlan> = Arc::new(AccountedExec {
            inner: node,
            account: account.clone(),
        });
        Ok(Transformed::yes(wrapped))
    })
    .map(|t| t.data)
}

#[derive(Debug)]
struct AccountedExec {
    inner: Arc<dyn ExecutionPlan>,
    account: Arc<QueryAccount>,
}

impl DisplayAs for AccountedExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt_as(t, f)
    }
}

impl ExecutionPlan for AccountedExec {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn downcast_delegate(&self) -> Option<&dyn ExecutionPlan> {
        Some(self.inner.as_ref())
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.inner.children()
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        self.inner.apply_expressions(f)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // The children are already wrapped: the operator keeps its properties.
        let inner = self.inner.clone().replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Keep),
        )?;
        Ok(Arc::new(AccountedExec {
            inner,
            account: self.account.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let inner = {
            let _frame = PollFrame::enter(&self.account);
            self.inner.execute(partition, context)?
        };
        Ok(Box::pin(AccountedStream {
            inner,
            account: self.account.clone(),
            pause: None,
            leaf: self.inner.children().is_empty(),
        }))
    }

    // A recursive CTE hands its work table to the WorkTableExec of its recursive term, and
    // resets that term's operators before each iteration: both must reach the wrapped
    // operator (without them every recursive query failed with "Unexpected empty work table").
    fn with_new_state(&self, state: Arc<dyn Any + Send + Sync>) -> Option<Arc<dyn ExecutionPlan>> {
        let inner = self.inner.with_new_state(state)?;
        Some(Arc::new(AccountedExec {
            inner,
            account: self.account.clone(),
        }))
    }

    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(AccountedExec {
            inner: self.inner.clone().reset_state()?,
            account: self.account.clone(),
        }))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        self.inner.metrics()
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        #[allow(deprecated)]
        self.inner.partition_statistics(partition)
    }
}

struct AccountedStream {
    inner: SendableRecordBatchStream,
    account: Arc<QueryAccount>,
    /// Set while the stream waits out its group's CPU debt.
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
    /// A scan (or other source): its rows count as scanned.
    leaf: bool,
}

impl Stream for AccountedStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(pause) = this.pause.as_mut() {
                if pause.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.pause = None;
            }
            let frame = PollFrame::enter(&this.account);
            // Nested polls look at the group's CPU debt only when they charged time.
            let delay = if frame.charged {
                this.account.cpu_delay()
            } else {
                None
            };
            match delay {
                Some(delay) => {
                    drop(frame);
                    this.pause = Some(Box::pin(tokio::time::sleep(delay)));
                }
                None => {
                    let next = this.inner.as_mut().poll_next(cx);
                    if let (true, Poll::Ready(Some(Ok(batch)))) = (this.leaf, &next) {
                        this.account.add_scan_rows(batch.num_rows() as u64);
                    }
                    return next;
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl RecordBatchStream for AccountedStream {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GroupSettings, WorkloadManager};
    use datafusion::prelude::SessionContext;
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    fn manager() -> WorkloadManager {
        let base = Arc::new(datafusion::execution::runtime_env::RuntimeEnv::default());
        WorkloadManager::new(Vec::new(), base, 1 << 30).unwrap()
    }

    async fn run(sql: &str, account: &Arc<QueryAccount>) -> (Vec<RecordBatch>, String) {
        let ctx = SessionContext::new();
        let df = ctx.sql(sql).await.unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let before = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(false)
            .to_string();
        let plan = account_plan(plan, account).unwrap();
        let after = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(false)
            .to_string();
        assert_eq!(before, after, "the wrapper does not show in plans");
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap();
        (batches, after)
    }

    const HEAVY: &str = "SELECT COUNT(DISTINCT v % 1000003), SUM(v * 7 % 13) \
                         FROM generate_series(1, 3000000) AS t(v)";

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queries_are_charged_their_cpu_time() {
        let m = manager();
        let account = QueryAccount::new(m.get("normal").unwrap(), "root", Default::default());
        let started = Instant::now();
        let (batches, _) = run(HEAVY, &account).await;
        let wall = started.elapsed();
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
        let cpu = account.cpu_time();
        // All of the work is charged (on 2 threads it cannot exceed twice the wall time).
        assert!(cpu > Duration::from_millis(20), "cpu {cpu:?}");
        assert!(
            cpu <= wall * 2 + Duration::from_millis(50),
            "cpu {cpu:?} wall {wall:?}"
        );
        assert_eq!(m.get("normal").unwrap().usage().cpu_time(), cpu);
        assert_eq!(account.scan_rows(), 3_000_000);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cpu_hard_limit_holds_the_group_to_its_share() {
        let m = manager();
        let props = BTreeMap::from([("cpu_hard_limit".to_string(), "10%".to_string())]);
        let settings = GroupSettings::default().with(&props).unwrap();
        m.apply(7, "slow", settings).unwrap();
        let account = QueryAccount::new(m.get("slow").unwrap(), "root", Default::default());
        let started = Instant::now();
        run(HEAVY, &account).await;
        let wall = started.elapsed();
        let cpu = account.cpu_time();
        // 10% of all cores; noise can only make the ratio lower.
        let cores = crate::cpu_cores() as f64;
        let share = cpu.as_secs_f64() / (wall.as_secs_f64() * cores);
        assert!(
            share < 0.10 * 1.5,
            "used {share:.3} of the cores, cpu {cpu:?} wall {wall:?}"
        );
    }
}
