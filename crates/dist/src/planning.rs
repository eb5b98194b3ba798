//! A frontend's sessions plan with the distributed engine: scans become tablet scans on the
//! backends, hash repartitions network shuffles, small build sides broadcasts.

use crate::cluster::{BackendWorkers, Cluster};
use crate::frontend_scans::FrontendScansPlanner;
use crate::scan_codec::TabletScanCodec;
use crate::scan_tasks::ScanTasks;
use basalt_query::ClusterScans;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion_distributed::{DistributedExt, SessionStateBuilderExt};
use std::sync::Arc;

/// `builder` (a frontend session's, its query planner already set) planning for `cluster`.
pub fn distributed_session(
    builder: SessionStateBuilder,
    cluster: &Arc<Cluster>,
) -> SessionStateBuilder {
    let mut builder = builder
        .with_distributed_worker_resolver(BackendWorkers(cluster.clone()))
        .with_distributed_channel_resolver(cluster.channels().clone())
        .with_distributed_user_codec(TabletScanCodec)
        .with_distributed_desired_task_count_handler(ScanTasks(cluster.clone()))
        .with_distributed_scale_up_leaf_node_handler(ScanTasks(cluster.clone()))
        .with_distributed_route_tasks_handler(ScanTasks(cluster.clone()));
    // A UNION's children would each run on one task; a tablet scan needs every backend. (Only
    // fails when the distributed options are missing, which the resolver above added.)
    if let Err(e) = builder.set_distributed_children_isolator_unions(false) {
        tracing::error!("cannot keep UNION children on every backend: {e}");
    }
    builder
        .config()
        .get_or_insert_default()
        .set_extension(Arc::new(ClusterScans));
    let mut builder = builder.with_distributed_planner();
    // What the distributed planner leaves on the frontend (everything, with one backend) runs
    // its tablet scans on the backends all the same.
    match std::mem::take(builder.query_planner()) {
        Some(inner) => builder.with_query_planner(Arc::new(FrontendScansPlanner {
            inner,
            cluster: cluster.clone(),
        })),
        None => builder,
    }
}
