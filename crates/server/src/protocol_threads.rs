//! Protocol threads: one per core, each a single-threaded tokio runtime with its own I/O driver,
//! serving the MySQL connections handed to it. A request is read, answered (when the
//! short-circuit path can) and written on the thread that was woken for it, without waking
//! another thread — the per-request cost that dominates OLTP point lookups. Statements that need
//! the execution engine are handed to the execution runtime by the session backend.

use crate::backend::SessionBackend;
use crate::mysql::{serve_connection, ConnectionOptions};
use basalt_common::{BasaltError, Result};
use basalt_frontend::QueryEngine;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::runtime::Handle;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

/// Stack of a protocol thread: parsing deeply nested SQL recurses (as on the execution runtime).
const STACK_BYTES: usize = 64 * 1024 * 1024;

struct Accepted {
    stream: std::net::TcpStream,
    peer: SocketAddr,
}

pub struct ProtocolThreads {
    threads: Vec<UnboundedSender<Accepted>>,
    next: AtomicUsize,
}

impl ProtocolThreads {
    /// Starts `count` threads serving connections with `engine`; `exec` runs everything that is
    /// not a short-circuit point query.
    pub fn start(count: usize, engine: Arc<QueryEngine>, exec: Handle) -> Result<ProtocolThreads> {
        let mut threads = Vec::with_capacity(count);
        for i in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (tx, mut rx) = unbounded_channel::<Accepted>();
            let engine = engine.clone();
            let exec = exec.clone();
            std::thread::Builder::new()
                .name(format!("basalt-mysql-{i}"))
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    runtime.block_on(async move {
                        while let Some(Accepted { stream, peer }) = rx.recv().await {
                            match tokio::net::TcpStream::from_std(stream) {
                                Ok(stream) => {
                                    tokio::spawn(serve(engine.clone(), exec.clone(), stream, peer));
                                }
                                Err(e) => tracing::warn!("connection from {peer} dropped: {e}"),
                            }
                        }
                    })
                })
                .map_err(|e| {
                    BasaltError::Internal(format!("cannot start a protocol thread: {e}"))
                })?;
            threads.push(tx);
        }
        Ok(ProtocolThreads {
            threads,
            next: AtomicUsize::new(0),
        })
    }

    /// Hands an accepted connection to the next thread (round robin).
    pub fn dispatch(&self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("connection from {peer} dropped: {e}");
                return;
            }
        };
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        if self.threads[i].send(Accepted { stream, peer }).is_err() {
            tracing::warn!("connection from {peer} dropped: protocol thread {i} has stopped");
        }
    }
}

async fn serve(
    engine: Arc<QueryEngine>,
    exec: Handle,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
) {
    let id = engine.next_connection_id();
    let backend = SessionBackend::new(engine, exec, id);
    let opts = ConnectionOptions {
        server_version: basalt_frontend::SERVER_VERSION.to_string(),
        connection_id: id,
        max_packet_size: 64 * 1024 * 1024,
    };
    let host = peer.ip().to_string();
    if let Err(e) = serve_connection(stream, host, opts, backend).await {
        tracing::debug!("connection {id} from {peer} ended: {e}");
    }
}
