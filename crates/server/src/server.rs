//! Process wiring: open the catalog, storage (with background compaction) and query engine on
//! the data directory, accept MySQL and HTTP connections, and stop cleanly on SIGTERM or Ctrl-C.

use crate::protocol_threads::ProtocolThreads;
use basalt_catalog::{Catalog, LocalCatalog};
use basalt_common::config::Config;
use basalt_common::{BasaltError, Result};
use basalt_frontend::{LoadDir, QueryEngine};
use basalt_storage::{CompactionPolicy, StorageEngine, WriteBufferLimits};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

pub struct Server {
    pub engine: Arc<QueryEngine>,
}

impl Server {
    /// Opens all state under the configured data directory.
    pub fn open(mut config: Config) -> Result<Server> {
        std::fs::create_dir_all(&config.data_dir)?;
        // Segment paths handed to the query engine must be absolute (a relative default like
        // ./basalt-data would otherwise be misread as an object-store path).
        config.data_dir = std::fs::canonicalize(&config.data_dir)?;
        let catalog = Arc::new(LocalCatalog::open(&config.data_dir.join("meta"))?);
        catalog.set_max_tablet_versions(config.max_tablet_versions);
        let storage = StorageEngine::open(
            &config.data_dir,
            catalog.clone(),
            WriteBufferLimits {
                rows_per_tablet: config.write_buffer_rows,
                bytes: config.write_buffer_mb.saturating_mul(1 << 20),
            },
            config.column_cache_bytes(),
            config
                .row_cache_bytes()
                .map_err(basalt_common::BasaltError::InvalidData)?,
        )?;
        let policy = CompactionPolicy {
            // Force merges well before loads hit the version bound.
            force_rowsets: CompactionPolicy::default()
                .force_rowsets
                .min(config.max_tablet_versions / 2)
                .max(2),
            ..CompactionPolicy::default()
        };
        storage.start_compaction(
            config.compaction_threads,
            Duration::from_millis(config.compaction_interval_ms.max(10)),
            policy,
        )?;
        let load_dir = LoadDir::open(&config.load_dir())?;
        tracing::info!("local() reads files under {}", load_dir.path().display());
        let query_memory = config
            .query_memory_bytes()
            .map_err(basalt_common::BasaltError::InvalidData)?;
        let engine = QueryEngine::new(catalog, storage, Some(load_dir), query_memory)?;
        Ok(Server { engine })
    }
}

async fn shutdown_signal() {
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

/// Runs the server until a shutdown signal.
pub async fn run(config: Config) -> Result<()> {
    let server = Server::open(config.clone())?;
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

    let engine = server.engine.clone();
    let limits = crate::http::StreamLoadLimits {
        max_body_bytes: config.stream_load_max_mb.saturating_mul(1 << 20),
    };
    let http_task = tokio::spawn(async move {
        let app = crate::http::router(engine, limits);
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        if let Err(e) = axum::serve(http, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
        {
            tracing::error!("HTTP server failed: {e}");
        }
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
        loop {
            let (stream, peer) = match mysql.accept().await {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
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
