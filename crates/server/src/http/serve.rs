//! Serving HTTP/1.1 connections with hyper directly (axum's `serve` sets no timer): a client
//! must send a request's headers within [`HEADER_TIMEOUT`], which also closes keep-alive
//! connections idle that long, so half-sent requests cannot pile up.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a client may take to send a request's headers, or stay idle between requests.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until `shutdown` completes, then waits for the requests in flight to
/// finish (the caller bounds how long).
pub async fn serve(listener: TcpListener, app: Router, shutdown: impl std::future::Future) {
    tokio::pin!(shutdown);
    let live = Arc::new(AtomicUsize::new(0));
    let mut failures = crate::accept_backoff::AcceptFailures::new("HTTP");
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                failures.record(&e).await;
                continue;
            }
        };
        let app = app
            .clone()
            .layer(axum::Extension(ConnectInfo::<SocketAddr>(peer)));
        live.fetch_add(1, Ordering::Relaxed);
        let live = live.clone();
        tokio::spawn(async move {
            let service = TowerToHyperService::new(app);
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                tracing::debug!("HTTP connection from {peer} ended: {e}");
            }
            live.fetch_sub(1, Ordering::Relaxed);
        });
    }
    while live.load(Ordering::Relaxed) > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
