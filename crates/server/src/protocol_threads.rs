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
    /// Open client sockets, authenticated or not.
    open: Arc<AtomicUsize>,
    engine: Arc<QueryEngine>,
}

/// Sockets allowed beyond `max_connections + 1` for handshakes still in progress; past that a
/// new connection is refused at once with 1040, before any work is spent on it.
const HANDSHAKE_HEADROOM: usize = 64;

impl ProtocolThreads {
    /// Starts `count` threads serving connections with `engine`; `exec` runs everything that is
    /// not a short-circuit point query.
    pub fn start(count: usize, engine: Arc<QueryEngine>, exec: Handle) -> Result<ProtocolThreads> {
        let mut threads = Vec::with_capacity(count);
        let open = Arc::new(AtomicUsize::new(0));
        for i in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (tx, mut rx) = unbounded_channel::<Accepted>();
            let engine = engine.clone();
            let exec = exec.clone();
            let open = open.clone();
            std::thread::Builder::new()
                .name(format!("basalt-mysql-{i}"))
                .stack_size(STACK_BYTES)
                .spawn(move || {
                    runtime.block_on(async move {
                        while let Some(Accepted { stream, peer }) = rx.recv().await {
                            match tokio::net::TcpStream::from_std(stream) {
                                Ok(stream) => {
                                    let guard = OpenSocket::new(&open);
                                    tokio::spawn(serve(
                                        engine.clone(),
                                        exec.clone(),
                                        stream,
                                        peer,
                                        guard,
                                    ));
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
            open,
            engine,
        })
    }

    /// Hands an accepted connection to the next thread (round robin), or refuses it with
    /// 1040 when far more sockets are open than `max_connections` allows.
    pub fn dispatch(&self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        let cap = self.engine.max_connections() + 1 + HANDSHAKE_HEADROOM;
        if self.open.load(Ordering::Relaxed) >= cap {
            tokio::spawn(refuse(stream));
            return;
        }
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

/// Counts an open client socket for as long as it lives.
struct OpenSocket(Arc<AtomicUsize>);

impl OpenSocket {
    fn new(open: &Arc<AtomicUsize>) -> OpenSocket {
        open.fetch_add(1, Ordering::Relaxed);
        OpenSocket(open.clone())
    }
}

impl Drop for OpenSocket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Sends MySQL's "Too many connections" in place of the handshake and closes.
async fn refuse(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let mut payload = Vec::new();
    crate::mysql::response::err(
        &mut payload,
        &crate::mysql::response::ErrorReply::new(1040, "08004", "Too many connections"),
    );
    let mut packet = Vec::with_capacity(payload.len() + 4);
    crate::mysql::wire::put_u24(&mut packet, payload.len() as u32);
    packet.push(0);
    packet.extend_from_slice(&payload);
    let _ =
        tokio::time::timeout(std::time::Duration::from_secs(1), stream.write_all(&packet)).await;
}

async fn serve(
    engine: Arc<QueryEngine>,
    exec: Handle,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    _open: OpenSocket,
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
