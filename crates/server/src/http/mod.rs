//! The HTTP door: Stream Load, load error logs, health check and Prometheus-style metrics.

mod auth;
mod stream_load;

use axum::routing::{get, put};
use axum::Router;
use basalt_query::QueryEngine;
use std::sync::Arc;

pub use stream_load::StreamLoadLimits;

pub fn router(engine: Arc<QueryEngine>, limits: StreamLoadLimits) -> Router {
    Router::new()
        .route("/api/health", get(health))
        .route("/health", get(health))
        .route("/metrics", get(metrics))
        .route("/api/{db}/{table}/_stream_load", put(stream_load::handle))
        .route("/api/_load_error_log", get(stream_load::error_log))
        .layer(axum::Extension(limits))
        .with_state(engine)
}

async fn health() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "status": "OK", "msg": "Basalt is running" }))
}

async fn metrics(axum::extract::State(engine): axum::extract::State<Arc<QueryEngine>>) -> String {
    let catalog = engine.catalog();
    let databases = catalog.databases();
    let mut tables = 0usize;
    let mut rows = 0u64;
    let mut bytes = 0u64;
    for db in &databases {
        for t in catalog.tables(&db.name).unwrap_or_default() {
            tables += 1;
            rows += t.num_rows();
            bytes += t.data_bytes();
        }
    }
    format!(
        "# HELP basalt_databases Number of databases.\n# TYPE basalt_databases gauge\nbasalt_databases {}\n\
         # HELP basalt_tables Number of tables.\n# TYPE basalt_tables gauge\nbasalt_tables {tables}\n\
         # HELP basalt_table_rows Rows stored in all tables.\n# TYPE basalt_table_rows gauge\nbasalt_table_rows {rows}\n\
         # HELP basalt_data_bytes Bytes of segment files.\n# TYPE basalt_data_bytes gauge\nbasalt_data_bytes {bytes}\n",
        databases.len()
    )
}
