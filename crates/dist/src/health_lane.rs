//! The frontend asks its backends how they are on a thread of its own. Heartbeats, probes
//! after a failed read and re-checks of backends found dead run on a one-thread runtime apart
//! from the frontend's, over connections of their own (a gRPC connection's tasks run on the
//! runtime that opened it). A frontend whose runtime is busy with the head stages of queries
//! (final aggregations, sorts, joins) would otherwise read a late answer as no answer and call
//! a live backend dead, failing the queries that need it.

use crate::channels::SecretChannelResolver;
use crate::cluster::backend_url;
use crate::secret::ClusterSecret;
use crate::segment_protocol::{BackendStatus, STATUS};
use arrow_flight::{Action, FlightClient};
use basalt_catalog::BackendMeta;
use basalt_common::{BasaltError, Result};
use futures::TryStreamExt;
use std::time::Duration;

/// What asking a backend how it is gave.
pub(crate) enum StatusAnswer {
    /// It answered in time.
    Answered(BackendStatus),
    /// It refused or failed (not listening, wrong secret, a broken answer).
    Failed(BasaltError),
    /// It said nothing in time (busy, frozen, or its machine gone).
    Silent,
}

/// The health lane: its runtime's handle and its connections. Dropping it ends the thread.
pub(crate) struct HealthLane {
    runtime: tokio::runtime::Handle,
    channels: SecretChannelResolver,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl HealthLane {
    /// Starts the lane's thread and runtime.
    pub(crate) fn start(secret: ClusterSecret) -> Result<HealthLane> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("basalt-health".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = handle_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = handle_tx.send(Ok(runtime.handle().clone()));
                // Runs the lane's tasks until the lane is dropped.
                let _ = runtime.block_on(stopped);
            })
            .map_err(|e| BasaltError::Internal(format!("cannot start the health thread: {e}")))?;
        let runtime = handle_rx
            .recv()
            .map_err(|e| BasaltError::Internal(format!("the health thread ended: {e}")))?
            .map_err(|e| BasaltError::Internal(format!("cannot start the health runtime: {e}")))?;
        Ok(HealthLane {
            runtime,
            channels: SecretChannelResolver::new(secret),
            _stop: stop,
        })
    }

    /// The lane's runtime (the heartbeat rounds run on it too, so a busy frontend delays
    /// neither a round nor its verdicts).
    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// Asks `backend` how it is; no answer within `within` (timed on the lane) is
    /// [`StatusAnswer::Silent`].
    pub(crate) async fn status(&self, backend: &BackendMeta, within: Duration) -> StatusAnswer {
        let channels = self.channels.clone();
        let backend = backend.clone();
        let ask = async move {
            match tokio::time::timeout(within, ask_status(&channels, &backend)).await {
                Ok(Ok(status)) => StatusAnswer::Answered(status),
                Ok(Err(e)) => StatusAnswer::Failed(e),
                Err(_) => StatusAnswer::Silent,
            }
        };
        match self.runtime.spawn(ask).await {
            Ok(answer) => answer,
            Err(e) => StatusAnswer::Failed(BasaltError::Internal(format!("health check: {e}"))),
        }
    }
}

/// One STATUS call on `backend`'s segment service, its answer read to the end.
async fn ask_status(
    channels: &SecretChannelResolver,
    backend: &BackendMeta,
) -> Result<BackendStatus> {
    let failed = |e: &dyn std::fmt::Display| {
        BasaltError::Execution(format!("{STATUS} on backend {}: {e}", backend.address()))
    };
    let channel = channels
        .channel(&backend_url(backend)?)
        .await
        .map_err(|e| failed(&e))?;
    let answers = FlightClient::new(channel)
        .do_action(Action::new(STATUS.to_string(), Vec::new()))
        .await
        .map_err(|e| failed(&e))?;
    let all: Vec<bytes::Bytes> = answers.try_collect().await.map_err(|e| failed(&e))?;
    let body = all.into_iter().next().ok_or_else(|| failed(&"no answer"))?;
    serde_json::from_slice(&body).map_err(|e| failed(&e))
}
