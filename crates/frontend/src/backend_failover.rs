//! A cluster query whose backend dies: the frontend holds back a query's result until it has
//! ended or grown past [`HELD_BYTES`], so a failure before then has sent the client nothing
//! and the query may run again. That covers every aggregate and sorted answer of modest size,
//! and the distributed engine's epilogue too: once the last rows are out it still waits on
//! its connections to the workers, and a backend killed then fails the query after its rows.
//! On such a failure the backends believed live are probed; those that no longer answer are
//! marked dead at once (scans and workers skip them) and the query is planned and run once
//! more; so is one that failed on a broken connection to a backend (a transport error) when
//! the probe finds every backend answering (it came back, or the connection alone broke).
//! A failure after rows were sent, or a second one, ends the query with an error naming the
//! backends that stopped answering.

use basalt_catalog::{BackendId, BackendMeta};
use basalt_common::df_error::from_df;
use basalt_common::BasaltError;
use basalt_dist::Cluster;
use datafusion::arrow::array::RecordBatch;
use datafusion::common::DataFusionError;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;

/// How much of a query's result the frontend holds back before sending any (the answer is
/// sent whole when it ends within this): a query failing within it can run again.
const HELD_BYTES: usize = 4 << 20;

/// How a query's stream began: its result up to its end or [`HELD_BYTES`], and the rest; or
/// the failure before any of it could be sent.
pub(crate) async fn first_rows(
    mut stream: SendableRecordBatchStream,
) -> Result<SendableRecordBatchStream, DataFusionError> {
    let mut held: Vec<RecordBatch> = Vec::new();
    let mut held_bytes = 0;
    while held_bytes <= HELD_BYTES {
        let Some(batch) = stream.next().await else {
            // The whole answer: the stream is not polled again after its end.
            let schema = stream.schema();
            let whole = futures::stream::iter(held.into_iter().map(Ok));
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, whole)));
        };
        let batch = batch?;
        held_bytes += batch.get_array_memory_size();
        held.push(batch);
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
/// have run on stopped answering, or a connection to a backend broke, runs it again (unless
/// `retried`); else fails with `error`.
pub(crate) async fn after_failure(
    cluster: &Cluster,
    live: &LiveAtStart,
    error: DataFusionError,
    retried: bool,
) -> AfterFailure {
    let broken_connection = is_transport_failure(&error);
    let error = from_df(error);
    if stopped_by_client(&error) {
        return AfterFailure::Fail(error);
    }
    let lost = live.lost(cluster).await;
    let error = match (lost.is_empty(), broken_connection) {
        (false, _) => backend_failure(&lost, &error),
        (true, true) => BasaltError::BackendUnavailable(format!(
            "the query failed because its connection to a backend broke: {error}"
        )),
        (true, false) => return AfterFailure::Fail(error),
    };
    match retried {
        false => AfterFailure::RunAgain(error),
        true => AfterFailure::Fail(error),
    }
}

/// Whether `error` (or an error it wraps) is a connection to a backend breaking rather than
/// the query's own failure: the gRPC transport (a refused or reset connection, an HTTP/2
/// stream cut off mid-body), as a backend dying or restarting leaves it, on the frontend's
/// connection or relayed by another backend that read from it.
fn is_transport_failure(error: &DataFusionError) -> bool {
    const MARKS: &[&str] = &[
        "h2 protocol error",
        "transport error",
        "tcp connect error",
        "error trying to connect",
        "connection refused",
        "connection reset",
        "broken pipe",
        "the service is currently unavailable",
    ];
    let mut link: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = link {
        let text = e.to_string().to_ascii_lowercase();
        if MARKS.iter().any(|mark| text.contains(mark)) {
            return true;
        }
        link = e.source();
    }
    false
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

#[cfg(test)]
mod tests {
    use super::is_transport_failure;
    use datafusion::common::DataFusionError;

    #[test]
    fn broken_connections_are_transport_failures() {
        for text in [
            "code: 'Unknown error', message: \"h2 protocol error: error reading a body from \
             connection\", source: hyper::Error(Body, Error { kind: Io(Kind(ConnectionReset)) })",
            "code: 'Unknown error', message: \"transport error\"",
            "code: 'The service is currently unavailable', message: \"tcp connect error\"",
            "stream closed because of a broken pipe",
        ] {
            let error = DataFusionError::External(text.into());
            assert!(is_transport_failure(&error), "{text}");
            let wrapped = DataFusionError::Context("stage 1".into(), Box::new(error));
            assert!(is_transport_failure(&wrapped), "wrapped: {text}");
        }
    }

    #[test]
    fn a_query_s_own_errors_are_not() {
        for error in [
            DataFusionError::Execution("Divide by zero error".into()),
            DataFusionError::ResourcesExhausted("Failed to allocate 1 MB".into()),
            DataFusionError::Plan("column x not found".into()),
        ] {
            assert!(!is_transport_failure(&error), "{error}");
        }
    }
}
