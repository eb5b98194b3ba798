//! The doors: open the node (the frontend's engine over its data directory), accept MySQL and
//! HTTP connections, and stop cleanly on SIGTERM or Ctrl-C.

use crate::protocol_threads::ProtocolThreads;
use basalt_common::config::Config;
use basalt_common::{BasaltError, Result};
use basalt_frontend::QueryEngine;
use std::sync::Arc;
use tokio::net::TcpListener;

pub struct Server {
    pub engine: Arc<QueryEngine>,
}

impl Server {
    /// Opens all state under the configured data directory.
    pub fn open(config: Config) -> Result<Server> {
        Ok(Server {
            engine: QueryEngine::open_local(&config)?,
        })
    }
}

/// Completes on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// Runs the all-in-one server until a shutdown signal.
pub async fn run(config: Config) -> Result<()> {
    let server = Server::open(config.clone())?;
    serve(server, config).await
}

/// Runs a cluster's frontend (its tablets on `config.backends` and those added later) until a
/// shutdown signal.
pub async fn run_frontend(config: Config, secret: basalt_frontend::ClusterSecret) -> Result<()> {
    let server = Server {
        engine: QueryEngine::open_frontend(&config, &config.backends, secret)?,
    };
    serve(server, config).await
}

async fn serve(server: Server, config: Config) -> Result<()> {
    let mysql_addr = format!("{}:{}", config.bind, config.mysql_port);
    let http_addr = format!("{}:{}", config.bind, config.http_port);
    let mysql = TcpListener::bind(&mysql_addr)
        .await
        .map_err(|e| BasaltError::Internal(format!("cannot listen on {mysql_addr}: {e}")))?;
    let http = TcpListener::bind(&http_addr)
        .await
        .map_err(|e| BasaltError::Internal(format!("cannot listen on {http_addr}: {e}")))?;
    tracing::info!(
        "Basalt ready: MySQL protocol on {}, HTTP on {}, data in {}",
        mysql.local_addr()?,
        http.local_addr()?,
        config.data_dir.display()
    );

    server
        .engine
        .set_listen_addresses(mysql.local_addr()?, http.local_addr()?);
    let engine = server.engine.clone();
    let limits = crate::http::StreamLoadLimits {
        max_body_bytes: config.stream_load_max_mb.saturating_mul(1 << 20),
    };
    let http_task = tokio::spawn(async move {
        let app = crate::http::router(engine, limits);
        crate::http::serve(http, app, shutdown_signal()).await;
    });

    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let protocol = ProtocolThreads::start(
        threads,
        server.engine.clone(),
        tokio::runtime::Handle::current(),
    )?;
    let accept = async move {
        let mut failures = crate::accept_backoff::AcceptFailures::new("MySQL");
        loop {
            let (stream, peer) = match mysql.accept().await {
                Ok(x) => x,
                Err(e) => {
                    failures.record(&e).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            protocol.dispatch(stream, peer);
        }
    };
    tokio::select! {
        _ = accept => {},
        _ = shutdown_signal() => {
            tracing::info!("shutting down");
        }
    }
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), http_task).await;
    Ok(())
}
