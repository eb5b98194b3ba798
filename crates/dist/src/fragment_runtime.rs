//! Plan fragments run on a runtime of their own, apart from the one that answers heartbeats,
//! point reads and loads. Fragments are CPU-bound: on the runtime that also served the segment
//! service, a busy backend left heartbeats unanswered for seconds, and the frontend marked a
//! live backend dead. [`OnRuntime`] wraps a gRPC service so that each call, and the streaming
//! of its answer, runs on the given runtime; the connection itself stays where it was accepted.

use bytes::Bytes;
use http_body_util::BodyExt;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tonic::body::Body;
use tonic::server::NamedService;

/// Frames of an answer in flight between the runtimes (the stream pauses when they pile up).
const FRAMES_IN_FLIGHT: usize = 4;

/// `S`, each of whose calls runs on `runtime`.
#[derive(Clone)]
pub struct OnRuntime<S> {
    inner: S,
    runtime: Handle,
}

impl<S> OnRuntime<S> {
    pub fn new(inner: S, runtime: Handle) -> OnRuntime<S> {
        OnRuntime { inner, runtime }
    }
}

impl<S: NamedService> NamedService for OnRuntime<S> {
    const NAME: &'static str = S::NAME;
}

type Frame = Result<http_body::Frame<Bytes>, tonic::Status>;

impl<S> tower::Service<http::Request<Body>> for OnRuntime<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The clone is the one polled ready: take it, leave the fresh clone behind.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let runtime = self.runtime.clone();
        Box::pin(async move {
            let answered = runtime.spawn(async move { inner.call(request).await });
            // A client gone before the answer began cancels the call too.
            let _cancel = AbortOnDrop(answered.abort_handle());
            let response = match answered.await {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                Err(e) => return Ok(failed(e)),
            };
            let (parts, body) = response.into_parts();
            let (frames, received) = mpsc::channel(FRAMES_IN_FLIGHT);
            let pump = runtime.spawn(pump(body, frames));
            let body = Body::new(ForwardedBody {
                received,
                _pump: AbortOnDrop(pump.abort_handle()),
            });
            Ok(http::Response::from_parts(parts, body))
        })
    }
}

/// An answer whose call panicked or was cancelled on the other runtime: an internal error.
fn failed(e: tokio::task::JoinError) -> http::Response<Body> {
    tonic::Status::internal(format!("a plan fragment's call failed: {e}")).into_http()
}

/// Reads `body` to its end (data, then trailers with the gRPC status) into `frames`; stops
/// when the receiver is gone (the client went away), which drops the body and the fragment's
/// streams with it.
async fn pump(mut body: Body, frames: mpsc::Sender<Frame>) {
    while let Some(frame) = body.frame().await {
        if frames.send(frame).await.is_err() {
            return;
        }
    }
}

/// A task on the other runtime, cancelled when this is dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An answer's body as the pump forwards it.
struct ForwardedBody {
    received: mpsc::Receiver<Frame>,
    _pump: AbortOnDrop,
}

impl http_body::Body for ForwardedBody {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, tonic::Status>>> {
        self.received.poll_recv(cx)
    }
}
