//! `basalt backend`: the process that holds tablets and runs plan fragments. One gRPC port
//! serves the distributed engine's worker (plan fragments, shuffles) and the segment service
//! (loads' segment files, heartbeats); both admit only requests carrying the cluster secret.
//! Fragments run on a runtime of their own, so a busy backend still answers heartbeats.

use crate::backend_catalog::BackendCatalog;
use crate::channels::SecretChannelResolver;
use crate::fragment_runtime::OnRuntime;
use crate::scan_codec::TabletScanCodec;
use crate::secret::ClusterSecret;
use crate::segment_service::SegmentService;
use crate::workload_tag::{BackendWorkloads, WorkloadTag};
use arrow_flight::flight_service_server::FlightServiceServer;
use basalt_common::config::Config;
use basalt_common::{BasaltError, Result};
use basalt_query::BackendStorage;
use basalt_storage::StorageEngine;
use basalt_workload::{QueryAccount, WorkloadManager};
use datafusion::common::DataFusionError;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::SessionContext;
use datafusion_distributed::{
    DistributedExt, Worker, WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse,
    WorkerPlanRewriteHandler, WorkerQueryContext,
};
use futures::StreamExt;
use std::sync::Arc;
use tonic::service::interceptor::InterceptedService;

/// Largest gRPC message a backend accepts (a segment write's batches arrive split far below).
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// What a backend does to each fragment before running it: restores the function result
/// fields the protobuf form dropped ([`crate::fragment_fields`]), restores the orderings its
/// operators need, lets its JSON path functions read binary documents and applies Basalt's
/// LIKE kernel (the frontend leaves both out: the kernel's expressions do not travel, and a
/// scan's binary columns are chosen where it runs), then wraps its operators in the query's
/// workload accounting.
struct PrepareFragment;

impl WorkerPlanRewriteHandler for PrepareFragment {
    fn rewrite_worker_plan(
        &self,
        ev: WorkerPlanRewriteEvent,
    ) -> datafusion::common::Result<WorkerPlanRewriteEventResponse> {
        use datafusion::physical_optimizer::PhysicalOptimizerRule;
        let options = ev.session_config.options();
        let plan = crate::fragment_fields::restore_result_fields(ev.plan)?;
        // A network boundary forgets what the rows below it were known to be: sorts the
        // fragment's operators rely on are put back (and nothing else is changed).
        let plan = crate::required_orderings::restore_required_orderings(plan)?;
        // Binary JSON reads before the LIKE kernel, whose expressions hide their columns.
        let plan = basalt_query::BinaryJsonColumns.optimize(plan, options)?;
        let mut plan = basalt_query::FastLikeRule.optimize(plan, options)?;
        // Last, once the plan is final: every operator charges the query's workload group
        // here and is paused by its CPU limit on this node.
        if let Some(account) = ev.session_config.get_extension::<QueryAccount>() {
            plan = basalt_workload::account_plan(plan, &account)?;
        }
        Ok(WorkerPlanRewriteEventResponse::new(plan))
    }
}

/// Serves a backend on `config.bind`:`port` until `shutdown` completes. Plan fragments run on
/// `fragments`, a runtime apart from the caller's, which keeps answering heartbeats, point
/// reads and loads however busy the fragments keep their cores ([`crate::fragment_runtime`]).
pub async fn run_backend(
    config: &Config,
    port: u16,
    secret: ClusterSecret,
    fragments: tokio::runtime::Handle,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    std::fs::create_dir_all(&config.data_dir)?;
    let data_dir = std::fs::canonicalize(&config.data_dir)?;
    let storage = StorageEngine::open_backend(
        &data_dir,
        Arc::new(BackendCatalog::default()),
        config.column_cache_bytes(),
        config.row_cache_bytes().map_err(BasaltError::InvalidData)?,
    )?;
    storage.set_json_form(if config.json_binary_segments {
        basalt_storage::json_columns::JsonForm::Binary
    } else {
        basalt_storage::json_columns::JsonForm::Text
    });
    let runtime = Arc::new(RuntimeEnv::default());
    basalt_query::register_segment_store(&runtime, &storage);
    let workloads = Arc::new(BackendWorkloads::new(Arc::new(WorkloadManager::new(
        Vec::new(),
        runtime.clone(),
        config
            .query_memory_bytes()
            .map_err(BasaltError::InvalidData)?,
    )?)));
    workloads.manager().start_sampler();
    let backend_storage = Arc::new(BackendStorage::new(storage.clone()));
    let channels = SecretChannelResolver::new(secret.clone());
    let session_storage = backend_storage.clone();
    let session_workloads = workloads.clone();
    let worker = Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let storage = session_storage.clone();
        let channels = channels.clone();
        let workloads = session_workloads.clone();
        async move {
            // The query's workload group, memory pool and account on this node.
            let tag = WorkloadTag::from_headers(&ctx.headers)
                .map_err(|e| DataFusionError::External(Box::new(e)))?
                .unwrap_or_else(WorkloadTag::untagged);
            let query = workloads
                .join(&tag)
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
            let mut builder = ctx
                .builder
                .with_runtime_env(query.runtime.clone())
                .with_distributed_user_codec(TabletScanCodec)
                .with_distributed_channel_resolver(channels)
                .with_distributed_worker_plan_rewrite_handler(PrepareFragment);
            let config = builder.config().get_or_insert_default();
            config.set_extension(storage);
            config.set_extension(query.account.clone());
            config.set_extension(query);
            // Basalt's functions, so fragments that call them decode and run here.
            let functions = SessionContext::new_with_state(builder.build());
            basalt_functions::register_all(&functions);
            for f in fragment_functions() {
                functions.register_udf(f.clone());
            }
            Ok(functions.state())
        }
    })
    .with_runtime_env(runtime)
    .with_max_message_size(MAX_MESSAGE_BYTES);
    let check = secret.interceptor();
    let worker_service = InterceptedService::new(
        OnRuntime::new(worker.into_worker_server(), fragments),
        check.clone(),
    );
    let segments = FlightServiceServer::new(SegmentService::new(
        storage,
        backend_storage,
        workloads,
        SecretChannelResolver::new(secret.clone()),
    ))
    .max_decoding_message_size(MAX_MESSAGE_BYTES)
    .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let segment_service = InterceptedService::new(segments, check);
    let addr = format!("{}:{port}", config.bind);
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| BasaltError::Internal(format!("cannot listen on {addr}: {e}")))?;
    tracing::info!(
        "Basalt backend ready on {}, data in {}",
        listener.local_addr()?,
        data_dir.display()
    );
    tonic::transport::Server::builder()
        .add_service(worker_service)
        .add_service(segment_service)
        .serve_with_incoming_shutdown(
            // Without TCP_NODELAY, small gRPC messages wait for delayed ACKs (~40 ms a
            // round trip).
            tokio_stream::wrappers::TcpListenerStream::new(listener).map(|conn| {
                if let Ok(c) = &conn {
                    let _ = c.set_nodelay(true);
                }
                conn
            }),
            shutdown,
        )
        .await
        .map_err(|e| BasaltError::Internal(format!("backend server: {e}")))
}

/// The functions only plan fragments call (checked arithmetic, MySQL's casts), built once.
fn fragment_functions() -> &'static [datafusion::logical_expr::ScalarUDF] {
    static FUNCTIONS: std::sync::OnceLock<Vec<datafusion::logical_expr::ScalarUDF>> =
        std::sync::OnceLock::new();
    FUNCTIONS.get_or_init(basalt_functions::wire::fragment_functions)
}
