//! The physical planner sessions use: DataFusion's, with the planners of Basalt's own logical
//! nodes.

use crate::subquery_apply::SubqueryApplyPlanner;
use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::Result;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use std::sync::Arc;

/// DataFusion's physical planner that also plans [`crate::SubqueryApply`].
#[derive(Debug, Default)]
pub struct BasaltQueryPlanner;

#[async_trait]
impl QueryPlanner for BasaltQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(SubqueryApplyPlanner)])
            .create_physical_plan(logical_plan, session)
            .await
    }
}
