//! A cluster query whose backend dies: the frontend holds back a query's result until its
//! first rows (or its end) arrive, so a failure before then has sent the client nothing and
//! the query may run again. On such a failure the backends believed live are probed; those
//! that no longer answer are marked dead at once (scans and workers skip them) and the query
//! is planned and run once more. A failure after rows were sent, or a second one, ends the
//! query with an error naming the backends that stopped answering.

use basalt_catalog::{BackendId, BackendMeta};
use basalt_common::df_error::from_df;
use basalt_common::BasaltError;
use basalt_dist::Cluster;
use datafusion::arrow::array::RecordBatch;
use datafusion::common::DataFusionError;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;

/// How a query's stream began: its first rows (and any empty batches before them) and the
/// rest, or the failure before any row.
pub(crate) async fn first_rows(
    mut stream: SendableRecordBatchStream,
) -> Result<SendableRecordBatchStream, DataFusionError> {
    let mut held: Vec<RecordBatch> = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        let has_rows = batch.num_rows() > 0;
        held.push(batch);
        if has_rows {
            break;
        }
    }
    let schema = stream.schema();
    let rest = futures::stream::iter(held.into_iter().map(Ok)).chain(stream);
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, rest)))
}

/// What to do after a query failed before sending rows.
pub(crate) enum AfterFailure {
    /// Backends stopped answering and were marked dead: plan and run again.
    RunAgain(BasaltError),
    /// Fail with this error.
    Fail(BasaltError),
}

/// The backends live when a query was planned: those that die while it runs are the ones
/// its failure is blamed on.
#[derive(Clone)]
pub(crate) struct LiveAtStart(Vec<BackendId>);

impl LiveAtStart {
    pub(crate) fn now(cluster: &Cluster) -> LiveAtStart {
        LiveAtStart(cluster.live_backends().iter().map(|b| b.id).collect())
    }

    /// Probes the backends (marking dead those that no longer answer) and returns those
    /// that were live at the start and are dead now.
    async fn lost(&self, cluster: &Cluster) -> Vec<BackendMeta> {
        cluster.probe_live_backends().await;
        cluster
            .backends()
            .into_iter()
            .filter(|b| self.0.contains(&b.id) && !cluster.is_live(b.id))
            .collect()
    }
}

/// Decides about `error`, a query's failure before any row was sent: when backends it may
/// have run on stopped answering, runs it again (unless `retried`); else fails with `error`.
pub(crate) async fn after_failure(
    cluster: &Cluster,
    live: &LiveAtStart,
    error: DataFusionError,
    retried: bool,
) -> AfterFailure {
    let error = from_df(error);
    if stopped_by_client(&error) {
        return AfterFailure::Fail(error);
    }
    let lost = live.lost(cluster).await;
    if lost.is_empty() {
        return AfterFailure::Fail(error);
    }
    let named = backend_failure(&lost, &error);
    match retried {
        false => AfterFailure::RunAgain(named),
        true => AfterFailure::Fail(named),
    }
}

/// `error` of a query some rows of which the client may have had, naming the backends it may
/// have run on that stopped answering, if any.
pub(crate) async fn explain_failure(
    cluster: &Cluster,
    live: &LiveAtStart,
    error: BasaltError,
) -> BasaltError {
    if stopped_by_client(&error) {
        return error;
    }
    let lost = live.lost(cluster).await;
    match lost.is_empty() {
        true => error,
        false => backend_failure(&lost, &error),
    }
}

/// KILL, a time limit or a workload policy: no backend's fault.
fn stopped_by_client(error: &BasaltError) -> bool {
    matches!(
        error,
        BasaltError::QueryInterrupted
            | BasaltError::QueryCancelled(_)
            | BasaltError::QueryTimeout(_)
    )
}

fn backend_failure(dead: &[BackendMeta], error: &BasaltError) -> BasaltError {
    let names: Vec<String> = dead
        .iter()
        .map(|b| format!("{} ({})", b.id, b.address()))
        .collect();
    BasaltError::BackendUnavailable(format!(
        "the query failed because backend {} stopped answering: {error}",
        names.join(", ")
    ))
}
