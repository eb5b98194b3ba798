//! Basalt's scale-out on datafusion-distributed (pinned exactly, named nowhere else): a frontend
//! plans and hands physical plans to the distributed engine, whose workers are the backends;
//! tablet scans travel with their own codec and run on the backends holding the tablets; loads
//! write their segments on those backends through the segment service; frontend and backends
//! authenticate each other with the cluster secret.

mod backend;
mod backend_catalog;
mod channels;
mod cluster;
mod fragment_fields;
mod fragment_runtime;
mod frontend_scans;
mod health_lane;
mod planning;
mod replica_balancer;
mod replica_choice;
mod replica_moves;
mod replica_repair;
mod replica_writes;
mod required_orderings;
mod reversed_windows;
mod scan_codec;
mod scan_tasks;
mod secret;
mod segment_client;
mod segment_copy;
mod segment_protocol;
mod segment_service;
mod single_task_inputs;
mod tablet_files;
mod workload_tag;

pub use backend::run_backend;

/// A distributed physical plan drawn as its stages and their tasks (EXPLAIN on a cluster).
pub fn display_distributed(plan: &dyn datafusion::physical_plan::ExecutionPlan) -> String {
    datafusion_distributed::display_plan_ascii(plan, false)
}
pub use cluster::{BackendHealth, Cluster};
pub use planning::distributed_session;
pub use replica_balancer::{start_replica_balancer, BalancerSettings};
pub use replica_repair::start_replica_repair;
pub use reversed_windows::PlainWindowFunctions;
pub use secret::ClusterSecret;
pub use segment_client::BackendSegments;
pub use segment_protocol::{BackendStatus, GroupUsageReport};
pub use single_task_inputs::GatherSingleTaskInputs;
pub use workload_tag::{QueryUsage, WorkloadTag};

/// `plan` with the metrics of the operators that ran on the backends (summed over their
/// tasks), once every task has reported them; `plan` itself if it is not distributed, or when
/// the metrics do not arrive within `wait`.
pub async fn with_backend_metrics(
    plan: std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    wait: std::time::Duration,
) -> std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    let rewritten = datafusion_distributed::rewrite_distributed_plan_with_metrics(
        plan.clone(),
        datafusion_distributed::DistributedMetricsFormat::Aggregated,
    );
    match tokio::time::timeout(wait, rewritten).await {
        Ok(Ok(with_metrics)) => with_metrics,
        _ => plan,
    }
}
